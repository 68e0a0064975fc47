"""The Python package of libcollective: `import collective` (numpy) and
`import collective.torch` (Horovod's PyTorch API).

Build libcollective first (cmake -S . -B build && cmake --build build),
then, with Debian's python3 and setuptools and no network:

    python3 -m pip install --no-build-isolation libcollective/python

The built library goes into the package, so the installed package needs
no COLLECTIVE_LIB. Another build folder: COLLECTIVE_LIB=.../libcollective.so
at install time.
"""
import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def built_library():
    path = os.environ.get("COLLECTIVE_LIB") or os.path.join(
        HERE, "..", "..", "build", "lib", "libcollective.so")
    if not os.path.exists(path):
        raise SystemExit(
            "libcollective is not built at %s: build it first (cmake -S . -B "
            "build && cmake --build build) or set COLLECTIVE_LIB" % path)
    return os.path.realpath(path)


class build_with_library(build_py):
    """Copies the built libcollective into the package."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "collective", "libcollective.so.0")
        shutil.copyfile(built_library(), target)


class WithLibrary(Distribution):
    """The package carries a compiled library: its wheel is for this
    platform, not py3-none-any."""

    def has_ext_modules(self):
        return True


setup(
    name="collective",
    version="0.1.0",
    description="libcollective for Python: numpy and Horovod's PyTorch API",
    packages=["collective", "collective.torch"],
    cmdclass={"build_py": build_with_library},
    distclass=WithLibrary,
    python_requires=">=3.9",
)
