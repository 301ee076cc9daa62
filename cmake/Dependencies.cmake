# Build-time dependencies of the C++ project. Python packages are pinned in pyproject.toml; GoogleTest
# comes from the system (Debian's libgtest-dev), found through CMake's GTest module.
if(FGEMM_BUILD_TESTS)
  find_package(GTest 1.12 REQUIRED)
endif()
