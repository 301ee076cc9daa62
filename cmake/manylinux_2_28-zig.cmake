# A toolchain file for wheels that load on glibc 2.28 and later (manylinux_2_28, the floor of torch's own
# wheels): the C++ compiler is the clang inside Zig (PyPI package "ziglang", pinned in pyproject.toml's
# "wheel" extra), which links against the symbol versions of the glibc release it is told to target and
# carries its own C++ runtime (libc++, linked statically), so the extension needs no libstdc++ at all.
#
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/manylinux_2_28-zig.cmake -DFGEMM_ZIG=<zig executable> ...
#
# .ci/check_wheel builds the wheel this way; `auditwheel show` finds it consistent with manylinux_2_24 (the
# measurements are in README.md's Install section).
# The target is x86-64 Linux as everywhere else; only the glibc release it is built against differs.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(FGEMM_ZIG "" CACHE FILEPATH "The zig executable (python -m ziglang's)")
if(NOT FGEMM_ZIG)
  message(FATAL_ERROR "manylinux_2_28-zig.cmake: set FGEMM_ZIG to the zig executable, e.g. -DFGEMM_ZIG=$("
                      "python -c 'import ziglang, pathlib; print(pathlib.Path(ziglang.__file__).parent / \"zig\")')")
endif()
# CMake's compiler checks configure small projects of their own, which see only the variables listed here.
set(CMAKE_TRY_COMPILE_PLATFORM_VARIABLES FGEMM_ZIG FGEMM_LIBGCC)

set(CMAKE_C_COMPILER "${FGEMM_ZIG}" cc -target x86_64-linux-gnu.2.28)
set(CMAKE_CXX_COMPILER "${FGEMM_ZIG}" c++ -target x86_64-linux-gnu.2.28)

# __builtin_cpu_supports, which picks the CPU backend's instruction set, reads __cpu_model and
# __cpu_features2. Zig's compiler runtime does not define them (Zig issue 18074), so they come from GCC's
# runtime library, whose layout of both is the one clang's code expects; only that object of the archive
# is linked, with hidden symbols.
if(NOT FGEMM_LIBGCC)
  execute_process(COMMAND gcc -print-libgcc-file-name OUTPUT_VARIABLE FGEMM_LIBGCC
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  set(FGEMM_LIBGCC "${FGEMM_LIBGCC}" CACHE FILEPATH "GCC's libgcc.a, for __cpu_model")
endif()
set(CMAKE_CXX_STANDARD_LIBRARIES "${FGEMM_LIBGCC}")
