"""fgemm.__version__: CMakeLists.txt's project() version, compiled into the extension, so that a package put
together from a build tree (no installed metadata of its own) shows it too."""

import pathlib
import re
import shutil
import subprocess
import sys

import fgemm

REPOSITORY = pathlib.Path(__file__).parents[2]


def project_version():
    cmake_lists = (REPOSITORY / "CMakeLists.txt").read_text()
    return re.search(r"project\(fgemm VERSION ([0-9.]+)", cmake_lists).group(1)


def test_the_extension_carries_the_projects_version():
    assert fgemm._C.__version__ == project_version()
    assert fgemm.__version__ == fgemm._C.__version__


def test_a_package_assembled_from_a_build_tree_shows_the_version(tmp_path):
    # The Python sources as they are in the repository, beside the extension as the build made it.
    package = tmp_path / "fgemm"
    shutil.copytree(REPOSITORY / "python" / "fgemm", package, ignore=shutil.ignore_patterns("__pycache__", "_C*"))
    shutil.copy2(fgemm._C.__file__, package)
    program = "import fgemm; print(fgemm.__file__); print(fgemm.__version__)"
    result = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                            check=True)
    imported_from, version = result.stdout.split()
    assert pathlib.Path(imported_from).parent == package
    assert version == project_version()
