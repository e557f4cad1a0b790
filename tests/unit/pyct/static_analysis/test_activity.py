"""Activity analysis on small snippets: exact read / modified / deleted sets of chosen scopes."""

import gast
import pytest

from autostage.pyct import anno, parser
from autostage.pyct.static_analysis import activity

S = anno.Static
FIELDS = ("read", "modified", "deleted")


def _analyze(src: str) -> gast.AST:
    node = parser.parse_str(src.strip("\n"), single_node=False)
    return activity.resolve(node)


def _at(tree: gast.AST, line: int) -> gast.AST:
    """The outermost statement, handler or case that starts on ``line``."""
    for node in gast.walk(tree):
        start = getattr(node, "lineno", None) or getattr(getattr(node, "pattern", None), "lineno",
                                                         None)  # match_case has no position
        if isinstance(node, (gast.stmt, gast.ExceptHandler, gast.match_case)) and start == line:
            return node
    raise LookupError(f"no statement on line {line}")


def _names(symbols) -> str:
    return " ".join(sorted(str(s) for s in symbols))


def _check(scope: activity.Scope, expected: dict) -> None:
    actual = {f: _names(getattr(scope, f)) for f in FIELDS + tuple(expected)}
    wanted = {f: "" for f in FIELDS}
    wanted.update(expected)
    assert actual == wanted


# (source, line, annotation key, expected fields; read/modified/deleted default to empty)
CASES = [
    # Simple statements and composite symbols.
    ("x = y + 1", 1, S.SCOPE, {"read": "y", "modified": "x", "bound": "x"}),
    ("x = a.b", 1, S.SCOPE, {"read": "a a.b", "modified": "x"}),
    ("a.b = x", 1, S.SCOPE, {"read": "a x", "modified": "a.b", "bound": ""}),
    ("a.b.c = 1", 1, S.SCOPE, {"read": "a a.b", "modified": "a.b.c"}),
    ("a[i] += 1", 1, S.SCOPE, {"read": "a a[i] i", "modified": "a[i]"}),
    ("a[0] = f(x)", 1, S.SCOPE, {"read": "a f x", "modified": "a[0]"}),
    ("a[i + 1] = 2", 1, S.SCOPE, {"read": "a i"}),
    ("x += 1", 1, S.SCOPE, {"read": "x", "modified": "x"}),
    ("del a.b", 1, S.SCOPE, {"read": "a", "deleted": "a.b"}),
    ("del x, y[0]", 1, S.SCOPE, {"read": "y", "deleted": "x y[0]"}),
    ("a, (b, *c) = d", 1, S.SCOPE, {"read": "d", "modified": "a b c"}),
    ("x = y = z", 1, S.SCOPE, {"read": "z", "modified": "x y"}),
    ("x: int = y", 1, S.SCOPE, {"read": "y", "modified": "x", "annotations": "int"}),
    ("x: int", 1, S.SCOPE, {"bound": "", "annotations": "int"}),
    ("a.b: int", 1, S.SCOPE, {"read": "a"}),
    ("import os.path, numpy as np", 1, S.SCOPE, {"modified": "np os"}),
    ("from m import a, b as c", 1, S.SCOPE, {"modified": "a c"}),
    ("print(f(x).y)", 1, S.SCOPE, {"read": "f print x"}),
    ("assert x, msg", 1, S.SCOPE, {"read": "msg x"}),
    ("raise E(x) from e", 1, S.SCOPE, {"read": "E e x"}),
    ("y = (n := f(x)) + n", 1, S.SCOPE, {"read": "f n x", "modified": "n y"}),
    # Compound statements and their parts.
    ("if x > 0:\n    y = 1\nelse:\n    z = w", 1, S.SCOPE, {"read": "w x", "modified": "y z"}),
    ("if x > 0:\n    y = 1\nelse:\n    z = w", 1, S.COND_SCOPE, {"read": "x"}),
    ("if x > 0:\n    y = 1\nelse:\n    z = w", 1, S.BODY_SCOPE, {"modified": "y"}),
    ("if x > 0:\n    y = 1\nelse:\n    z = w", 1, S.ORELSE_SCOPE, {"read": "w", "modified": "z"}),
    ("while i < n:\n    i += 1\nelse:\n    done = 1", 1, S.COND_SCOPE, {"read": "i n"}),
    ("while i < n:\n    i += 1\nelse:\n    done = 1", 1, S.BODY_SCOPE,
     {"read": "i", "modified": "i"}),
    ("while i < n:\n    i += 1\nelse:\n    done = 1", 1, S.SCOPE,
     {"read": "i n", "modified": "done i"}),
    ("for i, a.b in items:\n    s += i", 1, S.ITERATE_SCOPE,
     {"read": "a items", "modified": "a.b i"}),
    ("for i in r:\n    if i:\n        break\n    s = s + i\nelse:\n    t = 0", 1, S.SCOPE,
     {"read": "i r s", "modified": "i s t"}),
    ("for i in r:\n    for j in i:\n        continue", 1, S.BODY_SCOPE,
     {"read": "i", "modified": "j"}),
    ("try:\n    x = f()\nexcept E as e:\n    y = e\nelse:\n    z = 1\nfinally:\n    w = 2",
     1, S.SCOPE, {"read": "E e f", "modified": "e w x y z", "deleted": "e"}),
    ("try:\n    x = f()\nexcept E as e:\n    y = e\nelse:\n    z = 1\nfinally:\n    w = 2",
     1, S.BODY_SCOPE, {"read": "f", "modified": "x"}),
    ("try:\n    x = f()\nexcept E as e:\n    y = e\nelse:\n    z = 1\nfinally:\n    w = 2",
     1, S.ORELSE_SCOPE, {"modified": "z"}),
    ("try:\n    pass\nexcept (A, B) as e:\n    y = e", 3, S.NODE_SCOPE,
     {"read": "A B", "modified": "e"}),
    ("try:\n    pass\nexcept (A, B) as e:\n    y = e", 3, S.BODY_SCOPE,
     {"read": "e", "modified": "y"}),
    ("with open(p) as f, g() as (a, b):\n    x = f.read()", 1, S.NODE_SCOPE,
     {"read": "g open p", "modified": "a b f"}),
    ("with open(p) as f:\n    x = f.read()", 1, S.BODY_SCOPE,
     {"read": "f f.read", "modified": "x"}),
    ("match p:\n    case [a, *r] if a > k:\n        y = a\n    case {'k': v, **kw}:\n"
     "        y = v\n    case Pt(x=0, y=q) as pt:\n        y = q\n    case C.RED:\n        pass",
     1, S.SCOPE, {"read": "C C.RED Pt a k p q v", "modified": "a kw pt q r v y"}),
    ("match p:\n    case [a, *r] if a > k:\n        y = a", 2, S.NODE_SCOPE,
     {"read": "a k", "modified": "a r"}),
    # Global and nonlocal.
    ("def f():\n    global g\n    g = 1\n    h = g", 1, S.BODY_SCOPE,
     {"read": "g", "modified": "g h", "globals": "g", "params": ""}),
    ("def f():\n    global g\n    g = 1", 1, S.SCOPE, {"modified": "f"}),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        x += 1", 3, S.SCOPE,
     {"read": "x", "modified": "g x"}),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        x += 1", 3, S.BODY_SCOPE,
     {"read": "x", "modified": "x", "nonlocals": "x"}),
    ("def f():\n    x = 1\n    def g():\n        nonlocal x\n        del x", 3, S.SCOPE,
     {"modified": "g", "deleted": "x"}),
    # Functions, closures, lambdas.
    ("@dec(a)\ndef f(x, y=d, *args, z: T = e, **kw) -> R:\n    return x + w", 2, S.SCOPE,
     {"read": "a d dec e w", "modified": "f", "annotations": "R T"}),
    ("def f(x, y=d, *args, z=e, **kw):\n    return x + w", 1, S.ARGS_SCOPE,
     {"modified": "args kw x y z", "params": "args kw x y z"}),
    ("def f(x, y=d, *args, z=e, **kw):\n    return x + w", 1, S.BODY_SCOPE,
     {"read": "w x", "params": "args kw x y z"}),
    # Writing through a free object reads it; the write itself does not escape.
    ("def f(x):\n    x.y = 1\n    z.w = 2", 1, S.SCOPE, {"read": "z", "modified": "f"}),
    ("def f():\n    def g():\n        return a.b + h()\n    def h():\n        return c\n    a = 1",
     1, S.SCOPE, {"read": "c", "modified": "f"}),
    ("def f():\n    def g():\n        return a.b + h()\n    def h():\n        return c\n    a = 1",
     2, S.SCOPE, {"read": "a a.b h", "modified": "g"}),
    ("f = lambda x, y=d: x + y + z", 1, S.SCOPE, {"read": "d z", "modified": "f"}),
    ("f = lambda x, y=d: x + y + z", 1, S.NODE_SCOPE, {"read": "d z", "modified": "f"}),
    ("def f():\n    return lambda: (q := 1) + w", 1, S.SCOPE, {"read": "w", "modified": "f"}),
    # Comprehensions.
    ("y = [x * k for x in xs if x]", 1, S.SCOPE, {"read": "k xs", "modified": "y"}),
    ("y = [x for x in x]", 1, S.SCOPE, {"read": "x", "modified": "y"}),
    ("y = {k: v for k, v in d.items() for w in v}", 1, S.SCOPE,
     {"read": "d d.items", "modified": "y"}),
    ("y = [z for x in xs if (z := x)]", 1, S.SCOPE,
     {"read": "xs z", "modified": "y z", "bound": "y z"}),
    ("y = [[z for z in x if (w := z)] for x in xs]", 1, S.SCOPE,
     {"read": "xs", "modified": "w y"}),
    ("s = sum(x for x in range(n))", 1, S.SCOPE, {"read": "n range sum", "modified": "s"}),
    # Classes.
    ("class C(B, metaclass=M):\n    x = 1\n    y = x + z\n    def m(self):\n        return x",
     1, S.SCOPE, {"read": "B M x z", "modified": "C"}),
    ("class C(B, metaclass=M):\n    x = 1\n    y = x + z\n    def m(self):\n        return x",
     1, S.BODY_SCOPE, {"read": "x z", "modified": "m x y", "nested_free": "x"}),
    ("class C:\n    x = 1\n    ys = [x for _ in r]", 1, S.SCOPE, {"read": "r x", "modified": "C"}),
    ("class C:\n    x = 1\n    y = x", 1, S.SCOPE, {"modified": "C"}),
    # Async.
    ("async def f():\n    async with a as b:\n        await b\n    async for i in b:\n"
     "        yield i", 1, S.BODY_SCOPE, {"read": "a b i", "modified": "b i"}),
]


@pytest.mark.parametrize("src, line, key, expected", CASES)
def test_scopes(src, line, key, expected):
    tree = _analyze(src)
    _check(anno.getanno(_at(tree, line), key), expected)


def test_every_statement_gets_a_scope():
    tree = _analyze("def f(a):\n    if a:\n        for i in a:\n            try:\n"
                    "                x = i\n            except E:\n                pass\n"
                    "    return x")
    for node in gast.walk(tree):
        if isinstance(node, gast.stmt):
            assert isinstance(anno.getanno(node, S.SCOPE), activity.Scope)


def test_function_scope_is_isolated_and_locals_exclude_declarations():
    tree = _analyze("def f(a):\n    global g\n    g = a\n    b = 1")
    scope = anno.getanno(tree.body[0], S.BODY_SCOPE)
    assert scope.isolated and scope.kind == activity.FUNCTION
    assert _names(scope.local_names) == "a b"


def test_statement_scopes_chain_to_parent():
    tree = _analyze("def f():\n    x = 1")
    stmt_scope = anno.getanno(tree.body[0].body[0], S.SCOPE)
    assert stmt_scope.parent is anno.getanno(tree.body[0], S.BODY_SCOPE)
    assert not stmt_scope.isolated


def test_runs_qual_names_itself():
    tree = gast.parse("x = a.b")
    activity.resolve(tree)
    assert anno.hasanno(tree.body[0].value, anno.Basic.QN)
