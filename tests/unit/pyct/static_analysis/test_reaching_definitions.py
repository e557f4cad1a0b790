"""Reaching definitions on small snippets.

Checks are ``(kind, line, ...)``: ``("use", line, name, defs)`` gives the lines of the definitions
that reach the loads of ``name`` on ``line`` (``pN``: a parameter declared on line N; ``?``: a
definition without a position); ``("in", line, names)`` and ``("must", line, names)`` give the
DEFINED_VARS_IN and MUST_DEFINED_VARS_IN of the statement on ``line``.
"""

import gast
import pytest

from autostage.pyct import anno, parser
from autostage.pyct.static_analysis import analyze, reaching_definitions

S = anno.Static


def _analyze(src: str) -> gast.AST:
    node = parser.parse_str(src.strip("\n"), single_node=False)
    analyze(node)
    return node


def _line(node: gast.AST) -> int | None:
    return getattr(node, "lineno", None) or getattr(getattr(node, "pattern", None), "lineno", None)


def _at(tree: gast.AST, line: int) -> gast.AST:
    for node in gast.walk(tree):
        if isinstance(node, (gast.stmt, gast.ExceptHandler, gast.match_case)) and (
                _line(node) == line):
            return node
    raise LookupError(f"no statement on line {line}")


def _render(definition: reaching_definitions.Definition) -> str:
    line = getattr(definition.node, "lineno", None)
    text = "?" if line is None else str(line)
    return "p" + text if definition.param_of is not None else text


def _uses(tree: gast.AST, line: int, name: str) -> str:
    found = set()
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id == name and getattr(node, "lineno", 0) == line \
                and isinstance(node.ctx, (gast.Load, gast.Del)):
            defs = anno.getanno(node, S.DEFINITIONS)
            found.add(" ".join(sorted({_render(d) for d in defs}, key=lambda s: (len(s), s))))
    assert len(found) == 1, f"loads of {name} on line {line} disagree or are missing: {found}"
    return found.pop()


def _names(symbols) -> str:
    return " ".join(sorted(str(s) for s in symbols))


def _check(tree: gast.AST, check: tuple) -> None:
    kind, line, *rest = check
    if kind == "use":
        name, expected = rest
        assert _uses(tree, line, name) == expected, check
    else:
        key = S.DEFINED_VARS_IN if kind == "in" else S.MUST_DEFINED_VARS_IN
        assert _names(anno.getanno(_at(tree, line), key)) == rest[0], check


CASES = [
    # Straight line, parameters, reassignment.
    ("def f(a):\n    b = a\n    a = 2\n    return a + b",
     [("use", 2, "a", "p1"), ("use", 4, "a", "3"), ("use", 4, "b", "2"), ("in", 4, "a b")]),
    ("def f(a, *args, k=1, **kw):\n    return a, args, k, kw",
     [("use", 2, "args", "p1"), ("use", 2, "kw", "p1"), ("must", 2, "a args k kw")]),
    ("def f():\n    x = 1\n    x = x + 1\n    return x",
     [("use", 3, "x", "2"), ("use", 4, "x", "3")]),
    ("def f():\n    return y", [("use", 2, "y", ""), ("in", 2, "")]),
    # Branches.
    ("def f(c):\n    if c:\n        x = 1\n    else:\n        x = 2\n    return x",
     [("use", 6, "x", "3 5"), ("must", 6, "c x")]),
    ("def f(c):\n    if c:\n        x = 1\n    return x",
     [("use", 4, "x", "3"), ("in", 4, "c x"), ("must", 4, "c")]),
    ("def f(c):\n    x = 0\n    if c:\n        x = 1\n    elif c > 1:\n        y = x\n    return x",
     [("use", 6, "x", "2"), ("use", 7, "x", "2 4"), ("in", 7, "c x y"), ("must", 7, "c x")]),
    ("def f(c):\n    if c:\n        return 1\n    else:\n        x = 2\n    return x",
     [("use", 6, "x", "5"), ("must", 6, "c x")]),
    # Loops: back edges, break, continue, else.
    ("def f(n):\n    i = 0\n    while i < n:\n        i = i + 1\n    return i",
     [("use", 3, "i", "2 4"), ("use", 4, "i", "2 4"), ("use", 5, "i", "2 4"),
      ("in", 3, "i n"), ("must", 3, "i n")]),
    ("def f(xs):\n    for x in xs:\n        y = x\n    return y",
     [("use", 3, "x", "2"), ("use", 4, "y", "3"), ("in", 2, "xs"), ("must", 4, "xs")]),
    ("def f(xs):\n    for x in xs:\n        if x:\n            r = 1\n            break\n"
     "        r = 2\n    else:\n        r = 3\n    return r",
     [("use", 9, "r", "4 8"), ("must", 9, "r xs")]),
    ("def f(xs):\n    s = 0\n    for x in xs:\n        if x:\n            continue\n        s = x\n"
     "    return s",
     [("use", 7, "s", "2 6"), ("use", 6, "x", "3"), ("in", 4, "s x xs")]),
    ("def f(n):\n    for i in range(n):\n        for j in range(i):\n            if j:\n"
     "                break\n            k = j\n        m = k\n    return m",
     [("use", 7, "k", "6"), ("use", 8, "m", "7"), ("must", 7, "i n")]),
    # The graph does not special-case `while True`: its header may fall through.
    ("def f():\n    while True:\n        x = 1\n        if x:\n            break\n    return x",
     [("use", 6, "x", "3"), ("must", 6, "")]),
    # try / except / finally.
    ("def f():\n    try:\n        x = g()\n    except E:\n        x = None\n    return x",
     [("use", 6, "x", "3 5"), ("must", 6, "x")]),
    ("def f():\n    x = 0\n    try:\n        x = g()\n        y = 1\n    except E:\n"
     "        z = x\n    return y",
     [("use", 7, "x", "2 4"), ("in", 4, "x"), ("must", 8, "x")]),
    ("def f():\n    try:\n        x = 1\n        return x\n    finally:\n        y = x",
     [("use", 6, "x", "3"), ("in", 6, "x"), ("must", 6, "")]),
    ("def f(xs):\n    for x in xs:\n        try:\n            continue\n        finally:\n"
     "            z = x\n    return z",
     [("use", 6, "x", "2"), ("use", 7, "z", "6"), ("must", 7, "xs")]),
    ("def f():\n    e = 1\n    try:\n        pass\n    except E as e:\n        y = e\n    return e",
     [("use", 6, "e", "?"), ("use", 7, "e", "2"), ("in", 7, "e y"), ("must", 7, "")]),
    ("def f():\n    try:\n        x = g()\n    except E as err:\n        raise X() from err\n"
     "    return x",
     [("use", 5, "err", "?"), ("use", 6, "x", "3"), ("must", 6, "x")]),
    # del.
    ("def f():\n    x = 1\n    del x\n    return x",
     [("use", 3, "x", "2"), ("use", 4, "x", ""), ("in", 4, "")]),
    ("def f(c):\n    x = 1\n    if c:\n        del x\n    return x",
     [("use", 5, "x", "2"), ("must", 5, "c")]),
    ("def f(a):\n    a.b = 1\n    del a.b\n    return a",
     [("in", 3, "a a.b"), ("in", 4, "a"), ("use", 4, "a", "p1")]),
    # Composite symbols.
    ("def f(a):\n    a.b = 1\n    a.c = a.b\n    a = g()\n    return a.b",
     [("in", 3, "a a.b"), ("in", 4, "a a.b a.c"), ("in", 5, "a")]),
    ("def f(a, i):\n    a[i] = 1\n    i = 2\n    return a[i]",
     [("in", 3, "a a[i] i"), ("in", 4, "a i")]),
    ("def f(a):\n    a[0] += 1\n    return a", [("in", 3, "a a[0]"), ("use", 3, "a", "p1")]),
    # Unpacking, augmented, annotated assignment, imports, with.
    ("def f(p):\n    a, (b, *c) = p\n    return a, b, c",
     [("use", 3, "a", "2"), ("use", 3, "c", "2"), ("must", 3, "a b c p")]),
    ("def f():\n    x = 1\n    x += 2\n    return x", [("use", 4, "x", "3"), ("in", 3, "x")]),
    ("def f():\n    x: int\n    y: int = 1\n    return x, y",
     [("use", 4, "x", ""), ("use", 4, "y", "3"), ("in", 4, "y")]),
    ("def f():\n    import os.path\n    from m import a as b\n    return os, b",
     [("use", 4, "os", "2"), ("use", 4, "b", "3")]),
    ("def f(p):\n    with open(p) as fh:\n        data = fh.read()\n    return data, fh",
     [("use", 3, "fh", "2"), ("use", 4, "fh", "2"), ("must", 4, "data fh p")]),
    # Walrus.
    ("def f(a):\n    if (n := len(a)) > 1:\n        return n\n    return 0",
     [("use", 3, "n", "2"), ("must", 3, "a n")]),
    ("def f(a):\n    if a and (m := g(a)):\n        return m\n    return 1",
     [("use", 3, "m", "2"), ("in", 3, "a m"), ("must", 3, "a")]),
    ("def f(xs):\n    ys = [y for x in xs if (y := x)]\n    return y",
     [("use", 2, "x", "2"), ("use", 3, "y", "2"), ("in", 3, "xs y ys"), ("must", 3, "xs ys")]),
    # Comprehensions and lambdas: their own locals.
    ("def f(x):\n    ys = [x for x in x]\n    return x",
     [("use", 3, "x", "p1"), ("in", 3, "x ys")]),
    ("def f(k):\n    g = lambda x, y=k: x + y + k\n    return g",
     [("use", 2, "x", "p2"), ("use", 2, "y", "p2"), ("use", 2, "k", "p1")]),
    ("def f(d):\n    return {k: v for k, vs in d.items() for v in vs}",
     [("use", 2, "k", "2"), ("use", 2, "vs", "2"), ("use", 2, "d", "p1")]),
    # Nested functions and closures.
    ("def f():\n    x = 1\n    def g(y):\n        return x + y\n    x = 2\n    return g",
     [("use", 4, "x", "2"), ("use", 4, "y", "p3"), ("in", 4, "x y"), ("use", 6, "g", "3")]),
    ("def f(c):\n    if c:\n        x = 1\n    def g():\n        x = 2\n        return x\n"
     "    return g",
     [("use", 6, "x", "5"), ("in", 5, "c")]),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        x = 2\n    g()\n    return x",
     [("use", 7, "x", "2 3"), ("use", 6, "g", "3"), ("in", 5, "x")]),
    ("def f(d=v):\n    @deco(d)\n    def g(a=d):\n        return a\n    return g",
     [("use", 1, "v", ""), ("use", 2, "d", "p1"), ("use", 3, "d", "p1")]),
    # global.
    ("def f():\n    global G\n    G = 1\n    return G", [("use", 4, "G", "3")]),
    ("x = 1\ndef f():\n    global x\n    return x\ny = x",
     [("use", 4, "x", "1"), ("use", 5, "x", "1")]),
    # Classes: own namespace; methods skip it.
    ("def f():\n    x = 1\n    class C:\n        y = x\n        x = 2\n        def m(self):\n"
     "            return x\n    return C",
     [("use", 4, "x", "2"), ("use", 7, "x", "2"), ("in", 5, "x y")]),
    # match.
    ("def f(p):\n    match p:\n        case [a, b] if a > b:\n            r = a\n"
     "        case {'k': v}:\n            r = v\n        case _:\n            r = 0\n    return r",
     [("use", 3, "a", "3"), ("use", 4, "a", "3"), ("use", 6, "v", "5"), ("use", 9, "r", "4 6 8"),
      ("must", 9, "p r")]),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        del x\n    return x",
     [("use", 6, "x", "2"), ("must", 6, "g x")]),
    ("def f(xs):\n    for x in xs:\n        pass\n    for x in xs:\n        y = x\n    return x",
     [("use", 5, "x", "4"), ("use", 6, "x", "2 4"), ("must", 6, "xs")]),
    # Unreachable code: definitions flow between dead statements; nothing is must-defined.
    ("def f():\n    return 1\n    x = 2\n    return x", [("use", 4, "x", "3"), ("must", 4, "")]),
]


@pytest.mark.parametrize("src, checks", CASES)
def test_reaching_definitions(src, checks):
    tree = _analyze(src)
    for check in checks:
        _check(tree, check)


def test_root_function_gets_what_is_defined_at_entry():
    tree = parser.parse_str("def f(a, *b):\n    return a")
    analyze(tree)
    assert _names(anno.getanno(tree, S.DEFINED_VARS_IN)) == "a b"
    assert _names(anno.getanno(tree, S.MUST_DEFINED_VARS_IN)) == "a b"


def test_statement_annotations_are_frozensets():
    tree = _analyze("def f(c):\n    if c:\n        x = 1\n    return x")
    for node in gast.walk(tree.body[0]):
        if isinstance(node, gast.stmt):
            assert type(anno.getanno(node, S.DEFINED_VARS_IN)) is frozenset
            assert type(anno.getanno(node, S.MUST_DEFINED_VARS_IN)) is frozenset


def test_stores_get_their_own_definition():
    tree = _analyze("def f():\n    x = 1\n    x = 2")
    stores = [n for n in gast.walk(tree) if isinstance(n, gast.Name) and n.id == "x"]
    defs = [anno.getanno(n, S.DEFINITIONS) for n in stores]
    assert all(len(d) == 1 and d[0].node is n for d, n in zip(defs, stores, strict=True))
    assert defs[0][0] is not defs[1][0]


def test_parameter_definitions_know_their_function():
    tree = _analyze("def f(a):\n    return a")
    (definition,) = anno.getanno(tree.body[0].body[0].value, S.DEFINITIONS)
    assert definition.param_of is tree.body[0] and str(definition.symbol) == "a"


def test_every_name_load_is_annotated():
    tree = _analyze("def f(a, b=c):\n    for i in a:\n        while b:\n"
                    "            b = [j for j in i]\n    return (lambda q: q + b)(i)")
    for node in gast.walk(tree):
        if isinstance(node, gast.Name):
            assert anno.hasanno(node, S.DEFINITIONS), node.id
