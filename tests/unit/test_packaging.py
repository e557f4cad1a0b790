"""Every package directory of the source tree is installed under its import name.

``runtime/`` is imported as ``autostage.runtime`` (setup.py finds the packages under both roots);
a new subpackage needs no packaging edit, and one without an ``__init__.py`` would be left out of
the wheel, so both are checked here against the installed (editable) package.
"""

import importlib
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROOTS = {"autostage": ROOT / "autostage", "autostage.runtime": ROOT / "runtime"}


def _package_dirs():
    for name, base in ROOTS.items():
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts or "corpus_data" in path.parts:
                continue
            folder = path.parent
            relative = folder.relative_to(base).parts
            if name == "autostage" and relative[:1] == ("runtime",):
                continue
            yield ".".join((name, *relative)), folder


@pytest.mark.parametrize("package,folder", sorted(set(_package_dirs())))
def test_each_source_package_is_installed_from_its_folder(package, folder):
    assert (folder / "__init__.py").is_file(), f"{folder} has modules but no __init__.py"
    module = importlib.import_module(package)
    assert pathlib.Path(module.__file__).resolve().parent == folder.resolve()
