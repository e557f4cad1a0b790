"""Private name mangling of functions converted outside their class."""

import gast
import pytest

import autostage
from autostage.pyct import errors, mangling, parser, unparser


@pytest.mark.parametrize("qualname, owner", [
    ("f", None),
    ("f.<locals>.g", None),
    ("A.m", "A"),
    ("A.m.<locals>.g", "A"),
    ("A.m.<locals>.g.<locals>.<lambda>", "A"),
    ("f.<locals>.B.m", "B"),
    ("A.B.m", "B"),
    ("A.<lambda>", "A"),
])
def test_owning_class(qualname, owner):
    assert mangling.owning_class(qualname) == owner


@pytest.mark.parametrize("name, class_name, expected", [
    ("__x", "A", "_A__x"),
    ("__x", "_A", "_A__x"),
    ("__x", "__A_", "_A___x"),
    ("__x", "___", "__x"),
    ("__x__", "A", "__x__"),
    ("_x", "A", "_x"),
    ("__a.b", "A", "__a.b"),
])
def test_mangled_follows_python(name, class_name, expected):
    assert mangling.mangled(name, class_name) == expected
    if "." not in name and class_name.strip("_"):
        namespace = {}
        exec(f"class {class_name}:\n    {name} = 1", namespace)  # what Python itself does
        assert expected in vars(namespace[class_name])


def test_mangle_rewrites_names_attributes_params_and_imports_but_not_keywords():
    node = parser.parse_str("""
        def m(self, __p, *, __k=1):
            global __g
            import __mod as __alias
            from os import __n
            def __inner(__q):
                return __q
            class __B:
                def n(self):
                    return self.__c
            return f(__kw=__p), self.__a, __inner, __dunder__, __B
    """)
    mangling.mangle(node, "_A")
    assert unparser.unparse(node).strip() == "\n".join([
        "def m(self, _A__p, *, _A__k=1):",
        "    global _A__g",
        "    import _A__mod as _A__alias",
        "    from os import _A__n",
        "",
        "    def _A__inner(_A__q):",
        "        return _A__q",
        "",
        "    class __B:",
        "",
        "        def n(self):",
        "            return self.__c",
        "    _A__B = __B",
        "    del __B",
        "    return (f(__kw=_A__p), self._A__a, _A__inner, __dunder__, _A__B)",
    ])


def test_dotted_private_import_is_a_clear_error():
    node = parser.parse_str("def m(self):\n    import __a.b\n")
    with pytest.raises(errors.ConversionError, match="import __a.b.*'_A__a'"):
        mangling.mangle(node, "A")


def test_mangle_outside_a_class_changes_nothing():
    node = parser.parse_str("def f(__x):\n    return __x\n")
    before = gast.dump(node)
    mangling.mangle(node, None)
    assert gast.dump(node) == before


class _Account:
    __rate = 2

    def __init__(self, balance):
        self.__balance = balance

    def __bonus(self, amount):
        return amount * self.__rate

    def deposit(self, amount, *, __fee=1):
        def __checked(value):
            if value < 0:
                raise ValueError(f"negative deposit {value}")
            return value

        for _ in range(2):
            if amount > 10:
                self.__balance += self.__bonus(__checked(amount)) - __fee
            else:
                self.__balance += __checked(amount)
        return self.__balance, __checked.__name__, __checked.__qualname__

    def inner_class(self):
        class __Box:
            def __init__(self):
                self.__v = 5

            def get(self):
                return self.__v
        return __Box().get(), __Box.__name__, vars(__Box()).copy()


def test_converted_methods_see_private_names_as_python_does():
    plain, converted = _Account(1), _Account(1)
    expected = plain.deposit(20)
    assert autostage.to_graph(converted.deposit)(20) == expected == (
        79, "__checked", "_Account.deposit.<locals>.__checked")
    assert vars(converted) == vars(plain) == {"_Account__balance": 79}
    assert autostage.to_graph(converted.deposit)(3, _Account__fee=0)[0] == 85
    assert autostage.to_graph(_Account.inner_class)(plain) == plain.inner_class() == (
        5, "__Box", {"_Box__v": 5})
    with pytest.raises(ValueError, match="negative deposit -1"):
        autostage.to_graph(converted.deposit)(-1)
