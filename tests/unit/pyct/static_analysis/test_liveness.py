"""Liveness on small snippets: exact LIVE_VARS_IN / LIVE_VARS_OUT of chosen statements.

Checks are ``(line, "in" | "out", names)`` for the outermost statement (or except clause, or
case) starting on ``line``; ``(0, "in", names)`` is what is live at the entry of the function
(the live-in of its first statement).
"""

import gast
import pytest

from autostage.pyct import anno, parser
from autostage.pyct.static_analysis import analyze

S = anno.Static


def _analyze(src: str) -> gast.AST:
    node = parser.parse_str(src.strip("\n"), single_node=False)
    analyze(node)
    return node


def _line(node: gast.AST) -> int | None:
    return getattr(node, "lineno", None) or getattr(getattr(node, "pattern", None), "lineno", None)


def _at(tree: gast.AST, line: int) -> gast.AST:
    if line == 0:
        return tree.body[0].body[0]
    for node in gast.walk(tree):
        if isinstance(node, (gast.stmt, gast.ExceptHandler, gast.match_case)) and (
                _line(node) == line) and node is not tree.body[0]:
            return node
    raise LookupError(f"no statement on line {line}")


def _names(symbols) -> str:
    return " ".join(sorted(str(s) for s in symbols))


CASES = [
    # Straight line code.
    ("def f(a, b):\n    c = a + 1\n    return c",
     [(0, "in", "a"), (2, "in", "a"), (2, "out", "c"), (3, "out", "")]),
    ("def f(a):\n    a = 1\n    return a", [(0, "in", ""), (2, "out", "a")]),
    ("def f(x):\n    x += 1\n    return x", [(2, "in", "x"), (2, "out", "x")]),
    ("def f():\n    x = 1\n    y = 2\n    print(x)", [(2, "out", "print x"), (3, "in", "print x"),
                                                      (3, "out", "print x")]),
    ("def f(a, b):\n    a, b = b, a\n    return a - b", [(2, "in", "a b"), (2, "out", "a b")]),
    # Branches.
    ("def f(c, a, b):\n    if c:\n        x = a\n    else:\n        x = b\n    return x",
     [(0, "in", "a b c"), (2, "in", "a b c"), (2, "out", "x"), (3, "in", "a"), (5, "out", "x")]),
    ("def f(c, x):\n    if c:\n        x = 1\n    return x", [(2, "in", "c x"), (3, "in", "")]),
    ("def f(c, x):\n    if c:\n        return x\n    y = 1\n    return y",
     [(2, "in", "c x"), (2, "out", ""), (3, "in", "x")]),
    # Loops.
    ("def f(n):\n    i = 0\n    s = 0\n    while i < n:\n        s += i\n        i += 1\n"
     "    return s",
     [(4, "in", "i n s"), (4, "out", "s"), (5, "in", "i n s"), (6, "out", "i n s")]),
    ("def f(xs):\n    t = 0\n    for x in xs:\n        t = t + x\n    return t",
     [(3, "in", "t xs"), (3, "out", "t"), (4, "in", "t x xs"), (4, "out", "t xs")]),
    ("def f(xs, y):\n    for x in xs:\n        y = x\n    return y",
     [(0, "in", "xs y"), (2, "out", "y"), (3, "in", "x xs")]),
    ("def f(xs):\n    for x in xs:\n        if x > 0:\n            break\n    return x",
     [(2, "in", "x xs"), (2, "out", "x"), (3, "out", "x xs"), (4, "in", "x"), (4, "out", "x")]),
    ("def f(xs):\n    s = 0\n    for x in xs:\n        if x:\n            continue\n"
     "        s += x\n"
     "    return s", [(3, "in", "s xs"), (4, "out", "s x xs"), (5, "in", "s xs")]),
    ("def f(xs):\n    for x in xs:\n        pass\n    else:\n        x = 0\n    return x",
     [(2, "in", "xs"), (2, "out", "x")]),
    ("def f(n):\n    for i in range(n):\n        for j in range(i):\n            if j > 2:\n"
     "                break\n            k = j\n        m = i\n    return m",
     [(2, "in", "m n range"), (3, "in", "i n range"), (3, "out", "i n range"),
      (7, "out", "m n range")]),
    ("def f(i):\n    while True:\n        i = i - 1\n        if i < 0:\n            return i",
     [(2, "in", "i"), (2, "out", ""), (3, "in", "i")]),
    # try / except / finally.
    ("def f(a):\n    try:\n        x = g(a)\n    except E as e:\n        return e\n    return x",
     [(2, "in", "E a g"), (2, "out", "x"), (3, "out", "E x"), (4, "in", "E"), (4, "out", "")]),
    ("def f():\n    x = 0\n    try:\n        x = g()\n    except E:\n        pass\n    return x",
     [(3, "in", "E g x"), (4, "in", "E g x"), (4, "out", "E x")]),
    # The finally is shared by the normal and the exceptional path: x is live before the try.
    ("def f():\n    try:\n        x = g()\n    finally:\n        h()\n    return x",
     [(2, "in", "g h x"), (3, "out", "h x"), (5, "in", "h x"), (5, "out", "x")]),
    ("def f(xs):\n    for x in xs:\n        try:\n            y = x\n            continue\n"
     "        finally:\n            print(y)", [(3, "in", "print x xs y"),
                                                 (7, "out", "print xs y")]),
    ("def f(e):\n    try:\n        pass\n    except E as e:\n        pass\n    return e",
     [(0, "in", "E e"), (4, "in", "E"), (4, "out", "")]),
    ("def f(x):\n    try:\n        x = g()\n    except E:\n        return x\n    return 0",
     [(0, "in", "E g x"), (3, "in", "E g x"), (3, "out", "E x")]),
    # del.
    ("def f(x):\n    del x\n    x = 1\n    return x", [(0, "in", ""), (2, "out", "")]),
    ("def f(a):\n    del a.b\n    return a.b", [(2, "in", "a"), (2, "out", "a a.b")]),
    # Composite symbols.
    ("def f(a):\n    a.b = 1\n    return a.b", [(2, "in", "a"), (2, "out", "a a.b")]),
    ("def f(a):\n    x = a.b\n    a.c = 1\n    return a.b + x",
     [(2, "in", "a a.b"), (3, "in", "a a.b x"), (3, "out", "a a.b x")]),
    ("def f(a):\n    y = a.b.c\n    a = g()\n    return a.b.c + y",
     [(2, "in", "a a.b a.b.c g"), (3, "in", "g y"), (3, "out", "a a.b a.b.c y")]),
    ("def f(a, i):\n    a[i] = 0\n    i = 1\n    return a[i]",
     [(2, "in", "a i"), (2, "out", "a"), (3, "out", "a a[i] i")]),
    ("def f(a):\n    a[0] += 1\n    return a[0]", [(2, "in", "a a[0]"), (2, "out", "a a[0]")]),
    # global / nonlocal escape at exit.
    ("def f():\n    global g\n    g = 1\n    g = 2",
     [(3, "out", ""), (4, "in", ""), (4, "out", "g")]),
    ("def f():\n    x = 0\n    def h():\n        nonlocal x\n        x = 1\n        y = 2\n"
     "    return h",
     [(5, "out", "x"), (6, "out", "x"), (3, "in", ""), (3, "out", "h")]),
    # Nested functions and closures: the def reads its free variables.
    ("def f(a):\n    b = 1\n    def g(c):\n        return a + b + c\n    return g",
     [(0, "in", "a"), (2, "out", "a b"), (3, "in", "a b"), (3, "out", "g"), (4, "in", "a b c")]),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        x += 1\n    g()\n    return x",
     [(3, "in", "x"), (3, "out", "g x"), (6, "in", "g x")]),
    ("def f():\n    def g():\n        return h()\n    def h():\n        return 1\n    return g",
     [(2, "in", "h"), (4, "in", "g"), (4, "out", "g")]),
    ("def f(k):\n    g = lambda x: x + k\n    return g", [(0, "in", "k"), (2, "out", "g")]),
    ("def f(d=a):\n    @deco(d)\n    def g(y=d):\n        return y\n    return g",
     [(0, "in", "d deco"), (3, "in", "d deco"), (3, "out", "g")]),
    # Comprehensions.
    ("def f(xs, k):\n    ys = [x * k for x in xs]\n    return ys",
     [(2, "in", "k xs"), (2, "out", "ys")]),
    ("def f(x):\n    ys = [x for x in x]\n    return ys", [(2, "in", "x")]),
    ("def f(xs):\n    ys = [y for x in xs if (y := x)]\n    return y, ys",
     [(2, "in", "xs y"), (2, "out", "y ys")]),
    ("def f(a):\n    if (n := len(a)) > 1:\n        return n\n    return 0",
     [(0, "in", "a len"), (2, "in", "a len"), (3, "in", "n")]),
    # with.
    ("def f(p):\n    with open(p) as fh:\n        data = fh.read()\n    return data",
     [(2, "in", "open p"), (2, "out", "data"), (3, "in", "fh fh.read")]),
    # Classes.
    ("def f(x):\n    class C:\n        y = x\n        def m(self):\n            return z\n"
     "    return C",
     [(0, "in", "x z"), (2, "in", "x z"), (2, "out", "C"), (3, "in", "x z"), (3, "out", "y z")]),
    ("class C:\n    a = 1\n    b = a + 1", [(2, "out", "a"), (3, "in", "a"), (3, "out", "a b")]),
    # match.
    ("def f(p, d):\n    match p:\n        case [a, b] if a > d:\n            r = b\n"
     "        case {'k': v}:\n            r = v\n        case _:\n            r = d\n    return r",
     [(2, "in", "d p"), (2, "out", "r"), (3, "in", "d"), (3, "out", "d r"), (5, "in", "d"),
      (7, "in", "d")]),
    # async.
    ("async def f(a):\n    async with a as b:\n        await b\n    async for i in a:\n"
     "        yield i", [(0, "in", "a"), (2, "out", "a"), (4, "in", "a")]),
]


@pytest.mark.parametrize("src, checks", CASES)
def test_liveness(src, checks):
    tree = _analyze(src)
    for line, which, expected in checks:
        key = S.LIVE_VARS_IN if which == "in" else S.LIVE_VARS_OUT
        assert _names(anno.getanno(_at(tree, line), key)) == expected, (line, which)


def test_root_function_gets_live_vars_at_entry():
    tree = parser.parse_str("def f(a, b):\n    if b:\n        return a\n    return c")
    analyze(tree)
    assert _names(anno.getanno(tree, S.LIVE_VARS_IN)) == "a b c"


def test_every_statement_is_annotated_with_frozensets():
    tree = _analyze("def f(a):\n    while a:\n        try:\n            a -= 1\n"
                    "        except E:\n            break\n    return a")
    for node in gast.walk(tree):
        if isinstance(node, gast.stmt) and node is not tree.body[0]:
            assert isinstance(anno.getanno(node, S.LIVE_VARS_IN), frozenset)
            assert isinstance(anno.getanno(node, S.LIVE_VARS_OUT), frozenset)
