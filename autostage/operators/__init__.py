"""Dynamic-dispatch functions that converted code calls (control flow, logical ops, builtins).

Converted code reaches them through the flat alias ``ag__`` (``autostage.ag``). On Python values
each keeps Python's semantics exactly; a staged value goes to the runtime through
``autostage.runtime.stage_operator`` under the operator's name.
"""

from autostage.operators.control_flow import for_stmt, if_branch, if_stmt, while_stmt
from autostage.operators.data_structures import (
    ListBox,
    box_append,
    box_pop,
    list_append,
    list_comp,
    list_pop,
    list_reverse,
)
from autostage.operators.exceptions import assert_stmt, try_region, with_region
from autostage.operators.logical import (
    and_,
    and_test,
    compare_chain,
    eq,
    if_exp,
    if_exp_branch,
    in_,
    is_,
    is_not,
    ne,
    not_,
    not_in,
    or_,
    or_test,
    python_operand,
    truth,
)
from autostage.operators.math_overloads import OVERLOADS as _MATH_OVERLOADS
from autostage.operators.nondeterministic import OVERLOADS as _NONDETERMINISTIC_OVERLOADS
from autostage.operators.numpy_overloads import SEQUENCE_REDUCTIONS as _SEQUENCE_REDUCTIONS
from autostage.operators.numpy_overloads import (
    np_arange,
    np_array,
    np_as_strided,
    np_asanyarray,
    np_asarray,
    np_ascontiguousarray,
    np_bool,
    np_broadcast_to,
    np_complex64,
    np_complex128,
    np_concatenate,
    np_empty,
    np_eye,
    np_float16,
    np_float32,
    np_float64,
    np_full,
    np_identity,
    np_int8,
    np_int16,
    np_int32,
    np_int64,
    np_isscalar,
    np_linspace,
    np_ndenumerate,
    np_nditer,
    np_ones,
    np_poly,
    np_repeat,
    np_reshape,
    np_roots,
    np_tile,
    np_tri,
    np_uint8,
    np_uint16,
    np_uint32,
    np_uint64,
    np_unravel_index,
    np_zeros,
)
from autostage.operators.py_builtins import (
    BUILTINS,
    abs_,
    all_,
    any_,
    bool_,
    callable_,
    class_of,
    complex_,
    enumerate_,
    field,
    filter_,
    float_,
    format_,
    fstring,
    int_,
    isinstance_,
    len_,
    list_,
    map_,
    max_,
    min_,
    percent_format,
    print_,
    range_,
    repr_,
    reversed_,
    sorted_,
    str_,
    str_format,
    sum_,
    type_,
    zip_,
)
from autostage.operators.random_overloads import OVERLOADS as _RANDOM_OVERLOADS
from autostage.operators.random_overloads import method_overload as random_method
from autostage.operators.slices import (
    getitem,
    iadd,
    iand,
    ifloordiv,
    ilshift,
    imatmul,
    imod,
    imul,
    ior,
    ipow,
    irshift,
    isub,
    itruediv,
    ixor,
    setitem,
    setitem_of,
)
from autostage.operators.variables import (
    Undefined,
    UndefinedReturnValue,
    is_undefined,
    ld,
    ld_shared,
    retval,
)

__all__ = [
    # control flow
    "if_stmt", "if_branch", "while_stmt", "for_stmt",
    # logical expressions
    "and_", "or_", "and_test", "or_test", "truth", "not_", "compare_chain", "if_exp",
    "if_exp_branch", "is_", "is_not", "python_operand",
    "eq", "ne", "in_", "not_in",
    # data structures and subscripts
    "ListBox", "box_append", "box_pop", "list_append", "list_comp", "list_pop",
    "list_reverse", "getitem",
    "setitem", "setitem_of",
    "iadd", "isub", "imul", "imatmul", "itruediv", "ifloordiv", "imod", "ipow",
    "ilshift", "irshift", "iand", "ixor", "ior",
    # builtins
    "BUILTINS", "print_", "percent_format", "fstring", "field", "str_", "repr_", "format_",
    "str_format", "len_", "list_", "range_", "enumerate_", "zip_", "map_",
    "filter_", "int_", "float_", "bool_", "complex_", "abs_", "min_", "max_", "sum_",
    "isinstance_", "any_", "all_", "sorted_", "reversed_", "type_", "class_of", "callable_",
    # NumPy functions that cannot dispatch on staged tensors (BUILTINS maps them too)
    "np_array", "np_asarray", "np_asanyarray", "np_ascontiguousarray",
    "np_zeros", "np_ones", "np_empty", "np_full", "np_arange",
    "np_eye", "np_concatenate", "np_float64", "np_float32", "np_float16", "np_int64",
    "np_int32", "np_int16",
    "np_int8", "np_uint64", "np_uint32", "np_uint16", "np_uint8", "np_bool", "np_complex128",
    "np_complex64", "np_identity", "np_tri", "np_linspace", "np_isscalar", "np_roots",
    "np_poly", "np_nditer", "np_ndenumerate", "np_as_strided", "np_broadcast_to", "np_reshape",
    "np_tile", "np_repeat",
    "np_unravel_index",
    # assertions and variables
    "assert_stmt", "try_region", "with_region",
    "Undefined", "UndefinedReturnValue", "is_undefined", "ld", "ld_shared",
    "retval",
    # NumPy's global random functions (np_random_rand...), staged while tracing
    "random_method", *_RANDOM_OVERLOADS,
    # clocks and OS randomness (time_time, os_urandom...), refused while tracing
    *_NONDETERMINISTIC_OVERLOADS,
    # NumPy reductions of a list holding staged values (np_max...)
    *_SEQUENCE_REDUCTIONS,
    # Python's math functions (math_exp...), staged on staged values
    *_MATH_OVERLOADS,
]
globals().update(_RANDOM_OVERLOADS)
globals().update(_NONDETERMINISTIC_OVERLOADS)
globals().update(_SEQUENCE_REDUCTIONS)
globals().update(_MATH_OVERLOADS)
