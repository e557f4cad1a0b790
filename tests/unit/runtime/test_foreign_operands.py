"""Operators of staged values with operands that are no numbers (``foreign_operands``): the value
or exception NumPy and Python give, or a clear refusal. ``x == "a"`` of an array was Python's
``False`` (NumPy: an array of them), ``x != None`` ``True``, and ``"abc" @ w`` a staging error
claiming Python would not raise."""

import importlib
import itertools
import sys

import numpy as np
import pytest
from autostage.runtime.tensor import StagingTypeError

import autostage

SYMBOLS = ["==", "!=", "<", "+", "@", "**"]
OTHERS = ["'abc'", "b'x'", "None", "{}", "O()", "len"]
ARGUMENTS = [np.ones(3), np.ones((2, 2), np.int32), np.array([True, False]), np.float64(2.0),
             np.int64(2), np.array(3.0)]
KINDS = ["value", "python number"]  # the argument, or its Python number (x.item())

HEADER = '''
import numpy as np


class O:
    pass


class WithEq:
    def __eq__(self, other):
        return True

    __hash__ = None


PLAIN = O()


class Seq:
    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return float(i)


SEQ = Seq()
'''


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """A module of one function per operator, operand, kind and side."""
    lines, names = [HEADER], {}
    for (i, symbol), (j, other), kind, reflected in itertools.product(
            enumerate(SYMBOLS), enumerate(OTHERS), KINDS, (False, True)):
        name = f"op_{i}_{j}_{KINDS.index(kind)}_{int(reflected)}"
        value = "x.item()" if kind == "python number" else "x"
        expression = f"other {symbol} v" if reflected else f"v {symbol} other"
        other = "PLAIN" if other == "O()" else other
        lines.append(f"def {name}(x):\n    other = {other}\n    v = {value}\n"
                     f"    return {expression}\n")
        names[(symbol, other, kind, reflected)] = name
    lines.append("def eq_with_eq(x):\n    return x == WithEq()\n")
    lines.append("def add_plain_first(x):\n    return PLAIN + x\n")
    lines.append("def len_plain(x):\n    return len(PLAIN) + x\n")
    lines.append("def str_less(x):\n    return 'abc' < x.item()\n")
    lines.append("def call_plain(x):\n    return PLAIN(x)\n")
    lines.append("def in_plain(x):\n    return 1.0 in PLAIN\n")
    lines.append("def iterate_sequence(x):\n    total = x * 0\n    for v in SEQ:\n"
                 "        total = total + v\n    return total, 1.0 in SEQ, 5.0 in SEQ\n")
    lines.append("def add_none_in_place(x):\n    y = x * 1.0\n    y += None\n    return y\n")
    lines.append("def matmul_str_in_place(x):\n    y = x * 1\n    y @= 'abc'\n    return y\n")
    lines.append("def divmod_str(x):\n    return divmod(x, 'a')\n")
    lines.append("def ufunc_of_none(x):\n    return np.equal(x, None)\n")
    path = tmp_path_factory.mktemp("foreign")
    (path / "foreign_ops.py").write_text("\n\n".join(lines))
    sys.path.insert(0, str(path))
    try:
        yield importlib.import_module("foreign_ops"), names
    finally:
        sys.path.remove(str(path))
        sys.modules.pop("foreign_ops", None)


def _outcome(fn, x):
    try:
        result = fn(x)
    except Exception as e:  # noqa: BLE001 - the outcome compared
        return type(e), str(e)
    return type(result), repr(result)


@pytest.mark.parametrize("symbol", SYMBOLS)
def test_numpys_and_pythons_outcome_or_a_clear_refusal(programs, symbol):
    module, names = programs
    refused = 0
    for (sym, _, kind, _), name in names.items():
        if sym != symbol:
            continue
        fn = getattr(module, name)
        for x in ARGUMENTS:
            if kind == "python number" and x.ndim > 0:
                continue
            want = _outcome(fn, x)
            got = _outcome(autostage.convert(fn, target="interpreter"), x)
            if got[0] is StagingTypeError:  # ("ab" * n: a str made from the value)
                assert "foreign_ops.py:" in got[1] and want[0] in (str, bytes), (name, x, got)
                refused += 1
                continue
            assert got == want, (name, x)
    assert refused <= 4


def test_compiled_comparisons_give_numpys_arrays(programs):
    module, names = programs
    x = np.arange(4.0).reshape(2, 2)
    for other in ("'abc'", "None", "PLAIN", "len"):
        for symbol in ("==", "!="):
            fn = getattr(module, names[(symbol, other, "value", False)])
            got = autostage.convert(fn, target="cpu")(x)
            assert type(got) is np.ndarray and got.dtype == np.bool_
            np.testing.assert_array_equal(got, fn(x))


def test_an_object_defining_the_operator_beside_an_array_is_refused(programs):
    module, _ = programs
    with pytest.raises(StagingTypeError, match=r"foreign_ops\.py:\d+: `==` of a staged NumPy "
                                               r"value and a WithEq object"):
        autostage.convert(module.eq_with_eq, target="interpreter")(np.ones(3))
    assert autostage.convert(module.eq_with_eq, target="interpreter")(np.float64(1.0).item()) \
        is True  # (a Python number: Python's own dispatch, WithEq.__eq__)


def test_a_global_object_without_the_method_is_pythons_type_error(programs):
    module, _ = programs
    for fn, x in ((module.add_plain_first, np.ones(2)), (module.len_plain, np.ones(2)),
                  (module.str_less, np.float64(2.0)), (module.call_plain, np.ones(2)),
                  (module.in_plain, np.ones(2))):
        want = _outcome(fn, x)
        assert want[0] is TypeError
        assert _outcome(autostage.convert(fn, target="interpreter"), x) == want


def test_a_global_sequence_with_only_getitem_iterates_as_python(programs):
    fn = programs[0].iterate_sequence
    total, has_one, has_five = autostage.convert(fn, target="cpu")(np.ones(2))
    np.testing.assert_array_equal(total, [3.0, 3.0])
    assert (has_one, has_five) == (True, False) == fn(np.ones(2))[1:]


@pytest.mark.parametrize("name", ["add_none_in_place", "matmul_str_in_place", "divmod_str"])
@pytest.mark.parametrize("x", [np.ones(3), np.float64(2.0)], ids=["array", "scalar"])
def test_in_place_operators_and_divmod_raise_numpys_and_pythons_errors(programs, name, x):
    fn = getattr(programs[0], name)
    want = _outcome(fn, x)
    assert issubclass(want[0], TypeError)
    for target in ("interpreter", "cpu"):
        assert _outcome(autostage.convert(fn, target=target), x) == want


def test_a_numpy_function_given_none_is_refused_naming_the_line(programs):
    with pytest.raises(StagingTypeError, match=r"a NumPy function was given NoneType None at "
                                               r".*foreign_ops\.py:\d+ beside a staged value"):
        autostage.convert(programs[0].ufunc_of_none, target="interpreter")(np.ones(3))
