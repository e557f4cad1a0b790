"""Packaging that pyproject.toml cannot express: ``runtime/`` lives at the top of the repository
but is imported as ``autostage.runtime``, so the packages are found under two roots (every
subpackage, without a hand-kept list) and mapped by prefix; and the C level of a staged call
(``runtime/_fastcall.c``), built against NumPy's headers for the array object's layout, the C
level of the LLVM worker thread (``runtime/_llvm_worker.c``) and a scan of gc's objects in one C
call (``runtime/_live_objects.c``). All are optional: without a C compiler autostage installs and
runs, its calls through Python (``runtime/call_slot.py``), a compile's LLVM work on its own
thread, the scan in Python. Everything else is in pyproject.toml.
"""

import numpy
from setuptools import Extension, find_packages, setup


def _under(root: str, name: str) -> list[str]:
    return [name, *(f"{name}.{package}" for package in find_packages(root))]


setup(
    packages=_under("autostage", "autostage") + _under("runtime", "autostage.runtime"),
    package_dir={"autostage": "autostage", "autostage.runtime": "runtime"},
    ext_modules=[Extension("autostage.runtime._fastcall", ["runtime/_fastcall.c"],
                           include_dirs=[numpy.get_include()], optional=True),
                 Extension("autostage.runtime._llvm_worker", ["runtime/_llvm_worker.c"],
                           optional=True),
                 Extension("autostage.runtime._live_objects", ["runtime/_live_objects.c"],
                           optional=True)],
)
