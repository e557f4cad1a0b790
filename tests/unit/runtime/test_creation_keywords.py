"""The keywords of np.array / np.asarray and the creation functions on staged values: ``ndmin``
prepends dims, ``copy`` True / None / False as NumPy 2 (False raises where a copy is needed),
``order='F'`` refused for 2 dimensions or more (staged arrays are C-ordered), NumPy's own
errors for a bad ``order`` or ``device``; ``np.nan_to_num(copy=False)`` refused. (Until the
twenty-ninth session these keywords were swallowed: ``np.array(a, ndmin=2)`` kept ``a``'s
shape, so ``np.tile(a, (1, 2))`` was 1-d.)"""

import numpy as np
import numpy.lib._shape_base_impl as shape_base
import pytest
from autostage.runtime.tensor import StagingTypeError

import autostage

TARGETS = ("interpreter", "cpu")


def ndmin_3(x):
    return np.array(x, ndmin=3)


def ndmin_view(x):
    return np.array(x, copy=False, ndmin=2)


def copied(x):
    return np.asarray(x, copy=True)


def not_copied(x):
    return np.asarray(x, copy=False)


def same_if_possible(x):
    return np.asarray(x)


def outcome(fn, x):
    try:
        result = fn(x)
    except Exception as e:  # noqa: BLE001 - compared with the converted outcome
        return type(e), str(e)
    return result.shape, result.dtype, result is x, np.shares_memory(result, x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [ndmin_3, ndmin_view, copied, not_copied, same_if_possible])
def test_shape_copy_and_sharing_are_numpys(fn, target):
    x = np.arange(3.0)
    assert outcome(autostage.convert(fn, target=target), x) == outcome(fn, x)


def cast_without_copy(x):
    return np.asarray(x, dtype=np.float32, copy=False)


def stack_without_copy(x):
    return np.array([x, x], copy=False)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [cast_without_copy, stack_without_copy])
def test_copy_false_raises_numpys_error_where_a_copy_is_needed(fn, target):
    with pytest.raises(ValueError, match="Unable to avoid copy while creating an array"):
        autostage.convert(fn, target=target)(np.arange(3.0))


def test_tile_of_numpys_own_source_has_numpys_shape():
    tile = shape_base.tile._implementation
    a = np.array([0, 1, 2])
    got = autostage.convert(tile)(a, (1, 2))
    np.testing.assert_array_equal(got, tile(a, (1, 2)), strict=True)


def fortran_zeros(x):
    return np.zeros((x.shape[0], 2), order="F")


def fortran_copy(x):
    return np.copy(x, order="F")


def fortran_1d(x):
    return np.zeros(x.shape, order="F") + np.array(x, order="F")


def bad_order(x):
    return np.array(x, order="X")


def gpu_arange(x):
    return np.arange(x.shape[0], device="gpu")


@pytest.mark.parametrize("fn, name", [(fortran_zeros, "np.zeros"), (fortran_copy, "np.copy")])
def test_a_fortran_ordered_result_is_refused_naming_the_call_and_line(fn, name):
    with pytest.raises(StagingTypeError, match=rf"{name}\(\.\.\., order='F'\) at .*"
                       r"test_creation_keywords.py:\d+: staged arrays are C-ordered"):
        autostage.convert(fn)(np.ones((3, 2)))


def test_order_f_of_one_dimension_is_c_order_too():
    x = np.arange(3.0)
    np.testing.assert_array_equal(autostage.convert(fortran_1d)(x), fortran_1d(x), strict=True)


@pytest.mark.parametrize("fn", [bad_order, gpu_arange])
def test_a_bad_order_or_device_raises_numpys_error(fn):
    x = np.arange(3.0)
    with pytest.raises(ValueError) as want:
        fn(x)
    with pytest.raises(ValueError) as got:
        autostage.convert(fn)(x)
    assert str(got.value) == str(want.value)


def astype_no_copy_method(x):
    y = x.astype(np.float64, copy=False)
    y[0] = 7.0
    return y


def astype_no_copy_function(x):
    y = np.astype(x, np.float64, copy=False)
    y[1] = 8.0
    return y


def astype_copy(x):
    y = x.astype(np.float64)
    y[0] = 7.0
    return y


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [astype_no_copy_method, astype_no_copy_function, astype_copy])
def test_astype_without_copy_of_the_same_dtype_is_the_array_itself(fn, target):
    # (the write went into a copy, leaving the caller's array unchanged, until this session)
    want_x, got_x = np.arange(3.0), np.arange(3.0)
    want = fn(want_x)
    got = autostage.convert(fn, target=target)(got_x)
    np.testing.assert_array_equal(got, want, strict=True)
    np.testing.assert_array_equal(got_x, want_x, strict=True)
    assert (got is got_x) == (want is want_x)


def astype_safe(x):
    return x.astype(np.int32, casting="safe")


def test_astype_casting_rule_raises_numpys_error():
    with pytest.raises(TypeError, match=r"Cannot cast array data from dtype\('float64'\) to "
                       r"dtype\('int32'\) according to the rule 'safe'"):
        autostage.convert(astype_safe)(np.arange(3.0))


def copy_method_keeping_order(x):
    return x.copy(order="K") * 2


def copy_method_fortran(x):
    return x.copy("F")


def test_copy_method_takes_order():
    x = np.ones((2, 3))
    np.testing.assert_array_equal(autostage.convert(copy_method_keeping_order)(x),
                                  copy_method_keeping_order(x), strict=True)
    with pytest.raises(StagingTypeError, match=r"ndarray.copy\(\.\.\., order='F'\) at "):
        autostage.convert(copy_method_fortran)(x)


def ravel_f_positional(x):
    return np.ravel(x, "F")


def ravel_f_method(x):
    return x.ravel(order="F")


def flatten_f(x):
    return x.flatten("F")


def ravel_k_of_1d(x):
    return np.ravel(x[0, 0], order="K")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [ravel_f_positional, ravel_f_method, flatten_f, ravel_k_of_1d])
def test_ravel_and_flatten_take_their_order(fn, target):
    # (np.ravel(x, "F") was C order until the twenty-ninth session; the methods' order= an
    # internal TypeError)
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(autostage.convert(fn, target=target)(x), fn(x), strict=True)


def ravel_k(x):
    return np.ravel(x.T, order="K")


def clip_out(x):
    y = x.copy()
    y.clip(0.0, 1.0, out=y)
    return y


def test_memory_order_of_a_view_and_method_arguments_not_staged_are_clear_errors():
    x = np.ones((2, 3))
    with pytest.raises(StagingTypeError, match=r"ravel\(order='K'\) at .*: its memory order"):
        autostage.convert(ravel_k)(x)
    with pytest.raises(StagingTypeError, match=r"ndarray.clip\(\) at .*test_creation_keywords"
                       r".py:\d+ on staged values: got an unexpected keyword argument 'out'"):
        autostage.convert(clip_out)(x)


def nan_to_num_in_place(x):
    y = x.copy()
    np.nan_to_num(y, copy=False, nan=0.0)
    return y.sum()


def test_nan_to_num_in_place_is_refused_with_the_rewrite():
    # (copy=False was ignored: the NaNs stayed and the sum was nan)
    with pytest.raises(StagingTypeError, match=r"np.nan_to_num\(\.\.\., copy=False\) at .*\d "
                       r"writes into its argument in place.*y = np.nan_to_num\(y\)"):
        autostage.convert(nan_to_num_in_place)(np.array([1.5, np.nan, 3.0]))


def conj_of_real(x):
    return x.conj(), x.conjugate(), (x * 1j).conj()


def arange_positional_dtype(x):
    return np.arange(0, x.shape[0], 1, np.float32)


@pytest.mark.parametrize("target", TARGETS)
def test_conj_of_a_real_array_is_itself_and_arange_takes_a_positional_dtype(target):
    x = np.arange(3.0)
    a, b, c = autostage.convert(conj_of_real, target=target)(x)
    assert a is x and b is x
    np.testing.assert_array_equal(c, (x * 1j).conj(), strict=True)
    np.testing.assert_array_equal(autostage.convert(arange_positional_dtype, target=target)(x),
                                  arange_positional_dtype(x), strict=True)


def einsum_optimized(a):
    return np.einsum("ij,jk->ik", a, a.T, optimize=True)


def dot_into(a):
    buf = np.empty((a.shape[0], a.shape[0]))
    np.dot(a, a.T, out=buf)
    return buf


def test_numpy_functions_given_arguments_staged_code_does_not_take():
    # einsum's optimize= only orders the sums (taken); out= is a clear error naming the call and
    # line (both were Python's TypeError naming autostage's function)
    a = np.random.default_rng(0).random((4, 6))
    np.testing.assert_allclose(autostage.convert(einsum_optimized)(a), einsum_optimized(a),
                               rtol=1e-12)
    with pytest.raises(StagingTypeError, match=r"np.dot\(\) at .*test_creation_keywords.py:\d+ "
                       r"on staged values: got an unexpected keyword argument 'out'"):
        autostage.convert(dot_into)(a)


def reshape_with_copy(x):
    return x.reshape(-1, copy=True)


def test_a_wrapped_method_given_an_argument_it_does_not_take_names_itself():
    # (reshape is wrapped to keep 0-d results arrays: the check saw only the wrapper, and
    # Python's error named autostage's _reshape)
    with pytest.raises(StagingTypeError, match=r"ndarray.reshape\(\) at .*test_creation_keywords"
                       r".py:\d+ on staged values: got an unexpected keyword argument 'copy'"):
        autostage.convert(reshape_with_copy)(np.ones((2, 2)))
