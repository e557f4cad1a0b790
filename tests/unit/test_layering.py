"""The import layering of DESIGN.md, checked on the source: arrows go one way.

pyct ← converters ← autostage (top); operators → runtime; runtime never imports the compiler.
"""

import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
STDLIB = set(sys.stdlib_module_names)

# layer folder -> (its own package name, third-party / project modules it may import)
LAYERS = {
    "autostage/pyct": ("autostage.pyct", {"gast"}),
    "autostage/converters": ("autostage.converters", {"gast", "autostage.pyct"}),
    "autostage/operators": ("autostage.operators", {"numpy", "autostage.runtime"}),
    "runtime": ("autostage.runtime", {"numpy", "numba", "llvmlite"}),
}


def _package_of(path: pathlib.Path, own_package: str, layer_dir: pathlib.Path) -> str:
    # Both `pkg/__init__.py` and `pkg/mod.py` resolve relative imports against `pkg`.
    parts = path.relative_to(layer_dir).with_suffix("").parts[:-1]
    return ".".join([own_package, *parts])


def imported_modules(path: pathlib.Path, package: str) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _allowed(module: str, own_package: str, allowed: set[str]) -> bool:
    top = module.split(".")[0]
    if top in STDLIB or module == "__future__":
        return True
    for prefix in allowed | {own_package}:
        if module == prefix or module.startswith(prefix + "."):
            return True
    # `from autostage.pyct import anno` also names the module `autostage.pyct.anno`; the package
    # `autostage` itself is only allowed as the parent of an allowed subpackage.
    project = allowed | {own_package}
    return module == "autostage" and any(a.startswith("autostage.") for a in project)


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_layer_imports_only_what_the_design_allows(layer):
    own_package, allowed = LAYERS[layer]
    layer_dir = ROOT / layer
    files = sorted(layer_dir.rglob("*.py"))
    assert files, f"no source files found under {layer}"
    violations = []
    for path in files:
        package = _package_of(path, own_package, layer_dir)
        for module in imported_modules(path, package):
            if not _allowed(module, own_package, allowed):
                violations.append(f"{path.relative_to(ROOT)} imports {module}")
    assert violations == []


def test_the_checker_sees_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from autostage.converters import control_flow\nfrom . import sibling\n")
    modules = imported_modules(bad, "autostage.pyct")
    assert "autostage.converters.control_flow" in modules
    assert "autostage.pyct.sibling" in modules
    assert not _allowed("autostage.converters.control_flow", "autostage.pyct", {"gast"})
    assert not _allowed("numpy", "autostage.pyct", {"gast"})
    assert _allowed("gast", "autostage.pyct", {"gast"})
