"""The import layering of DESIGN.md, checked on the source: arrows go one way.

pyct ← converters ← autostage (top); operators → runtime; runtime never imports the compiler;
common (standard library only) is below both pyct and runtime.
"""

import ast
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
STDLIB = set(sys.stdlib_module_names)

# layer folder -> (its own package name, third-party / project modules it may import)
LAYERS = {
    "autostage/common": ("autostage.common", set()),
    "autostage/pyct": ("autostage.pyct", {"gast", "autostage.common"}),
    "autostage/converters": ("autostage.converters", {"gast", "autostage.pyct"}),
    "autostage/operators": ("autostage.operators", {"numpy", "autostage.runtime"}),
    # (the cuda backend's optional libraries, imported where used: cupy for cuBLAS products,
    # nvidia.cuda_nvcc for ptxas; numba.cuda is numba-cuda's)
    "runtime": ("autostage.runtime", {"numpy", "numba", "llvmlite", "autostage.common", "cupy",
                                      "nvidia.cuda_nvcc"}),
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


# --- No import cycles: the module graph of top-level imports is acyclic. ------------------------
#
# An import inside a function runs when the function does (deferred), so it closes no cycle at
# import time; such imports are allowed but counted, and their number may only go down.

# folder -> the package it is imported as
PACKAGES = {"runtime": "autostage.runtime", "autostage": "autostage"}
# Cycles left on purpose (each a sorted tuple of module names); empty: there is none.
KNOWN_CYCLES: list[tuple[str, ...]] = []
# Imports of project modules inside functions (not under ``if TYPE_CHECKING``), per folder
# (runtime: 35 since ``ir.parse`` defers to ``ir_text``, which imports ``ir``).
DEFERRED_IMPORT_BUDGET = {"runtime": 35, "autostage": 11}


def project_modules() -> dict[str, pathlib.Path]:
    """Every module of the project by its import name."""
    modules = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([package, *parts])] = path
    return modules


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _top_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The imports a module runs when it is imported (also under module-level if/try)."""
    found = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            found += _top_level_imports(node.body) + _top_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            found += _top_level_imports(node.body) + _top_level_imports(node.orelse)
            found += _top_level_imports(node.finalbody)
            for handler in node.handlers:
                found += _top_level_imports(handler.body)
    return found


def import_graph(modules: dict[str, pathlib.Path]) -> dict[str, set[str]]:
    """Module -> the project modules its top-level imports load. ``from pkg import name`` is an
    edge to ``pkg.name`` when that is a module, else to ``pkg`` (its ``__init__``)."""
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = set()
        for node in _top_level_imports(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = package.split(".")[:len(package.split(".")) - node.level + 1] if (
                    node.level) else []
                module = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules
                           else module for alias in node.names]
            edges.update(t for t in targets if t in modules and t != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a path back to its start) per strongly connected component of ``graph``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for successor in sorted(graph[node]):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(_path_back(graph, set(component), min(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _path_back(graph: dict[str, set[str]], component: set[str], start: str) -> list[str]:
    """A shortest path from ``start`` back to itself inside ``component`` (breadth first)."""
    parents: dict[str, str] = {}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for successor in sorted(graph[node] & component):
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if successor not in parents:
                parents[successor] = node
                todo.append(successor)
    return [start]


def test_no_import_cycles():
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    found = cycles(import_graph(project_modules()))
    unexpected = [" -> ".join(c) for c in found if tuple(sorted(set(c))) not in KNOWN_CYCLES]
    assert unexpected == [], "import cycles (top-level imports):\n" + "\n".join(unexpected)


def test_the_cycle_checker_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def deferred_imports(folder: str) -> list[str]:
    """The project imports inside functions of ``folder`` (``file:line module``)."""
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        top = {id(node) for node in _top_level_imports(tree.body)}
        checked = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and _is_type_checking(node) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in top | checked:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                "." * node.level + (node.module or "")]
            if any(n.startswith(("autostage", ".")) for n in names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {names[0]}")
    return found


@pytest.mark.parametrize("folder", sorted(DEFERRED_IMPORT_BUDGET))
def test_deferred_imports_stay_few(folder):
    found = deferred_imports(folder)
    assert len(found) <= DEFERRED_IMPORT_BUDGET[folder], "\n".join(found)
