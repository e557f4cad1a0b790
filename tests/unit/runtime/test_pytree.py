"""pytree: flatten nested tuples/lists/dicts/namedtuples to leaves and a hashable treedef."""

import collections

import pytest
from autostage.runtime import pytree

Point = collections.namedtuple("Point", "x y")


@pytest.mark.parametrize("tree", [
    1, (), [], {}, (1, 2), [1, (2, 3)], {"a": 1, "b": [2, {"c": 3}]}, Point(1, (2, 3)),
    ((), [None, "s"], {"k": ()}),
])
def test_flatten_unflatten_round_trip(tree):
    leaves, treedef = pytree.flatten(tree)
    rebuilt = pytree.unflatten(treedef, leaves)
    assert rebuilt == tree
    assert type(rebuilt) is type(tree)
    assert pytree.num_leaves(treedef) == len(leaves)
    hash(treedef)


def test_leaves_in_order_and_treedef_describes_structure():
    leaves, treedef = pytree.flatten({"w": [1, 2], "b": (3,)})
    assert leaves == [1, 2, 3]
    assert pytree.describe(treedef) == "{'w': [*, *], 'b': (*,)}"
    assert pytree.leaf_paths(treedef) == ["['w'][0]", "['w'][1]", "['b'][0]"]
    assert pytree.leaf_paths(pytree.flatten(Point(1, 2))[1]) == [".x", ".y"]


def test_list_and_tuple_differ_and_dict_order_matters():
    assert pytree.flatten([1])[1] != pytree.flatten((1,))[1]
    assert pytree.flatten({"a": 1, "b": 2})[1] != pytree.flatten({"b": 2, "a": 1})[1]
    assert pytree.flatten((1, 2))[1] == pytree.flatten(("x", None))[1]


def test_subclasses_and_objects_are_leaves():
    ordered = collections.OrderedDict(a=1)
    leaves, treedef = pytree.flatten([ordered, object])
    assert leaves == [ordered, object]


def test_unflatten_checks_the_number_of_leaves():
    _, treedef = pytree.flatten((1, 2))
    with pytest.raises(ValueError, match="fewer leaves"):
        pytree.unflatten(treedef, [1])
    with pytest.raises(ValueError, match="more leaves"):
        pytree.unflatten(treedef, [1, 2, 3])
