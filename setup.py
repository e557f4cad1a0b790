"""Packaging that pyproject.toml cannot express: ``runtime/`` lives at the top of the repository
but is imported as ``autostage.runtime``, so the packages are found under two roots (every
subpackage, without a hand-kept list) and mapped by prefix. Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup


def _under(root: str, name: str) -> list[str]:
    return [name, *(f"{name}.{package}" for package in find_packages(root))]


setup(
    packages=_under("autostage", "autostage") + _under("runtime", "autostage.runtime"),
    package_dir={"autostage": "autostage", "autostage.runtime": "runtime"},
)
