"""``Module``: a base class for models that finds its Variables (``tf.Module``'s design).

A Module holds Variables and other Modules in its attributes, directly or in lists, tuples and
dicts; ``variables``, ``trainable_variables`` and ``submodules`` walk them. ``walk`` is the one
walker, shared with ``Checkpoint`` (which also walks the attributes of plain user objects): it
yields each Variable once, with the attribute path of its first sighting, in a deterministic
order (an object's attributes sorted by name, dict items by sorted key; an object's own
Variables before those of the objects it holds, as ``tf.Module`` does). Each object is visited
once, so cycles end and a Variable shared by two layers is reported once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from autostage.runtime import captures
from autostage.runtime.state import Variable

Path = tuple  # attribute names, list indices and dict keys from a root


class Module:
    """Base class for models: subclass it, keep Variables (and sub-Modules) in attributes.

    Example::

        class Dense(autostage.Module):
            def __init__(self, n_in, n_out, name=None):
                super().__init__(name=name)
                self.w = autostage.Variable(np.zeros((n_in, n_out)))
                self.b = autostage.Variable(np.zeros(n_out))

            @autostage.convert
            def __call__(self, x):
                return x @ self.w + self.b

    ``Dense(3, 2).trainable_variables`` is ``(b, w)`` (attribute order, sorted by name). A
    staged method reads the Variables at each call, so assignments outside are seen.
    """

    def __init__(self, name: str | None = None):
        if name is not None and not (isinstance(name, str) and name.isidentifier()):
            raise ValueError(f"a Module's name must be a Python identifier, got {name!r}")
        self._name = name if name is not None else _snake_case(type(self).__name__)

    @property
    def name(self) -> str:
        return self._name

    @property
    def variables(self) -> tuple[Variable, ...]:
        """The Variables of this Module and of the Modules it holds, each once."""
        return tuple(var for _, var in walk(self))

    @property
    def trainable_variables(self) -> tuple[Variable, ...]:
        """``variables`` whose ``trainable`` is True (what a GradientTape watches)."""
        return tuple(var for _, var in walk(self) if var.trainable)

    @property
    def submodules(self) -> tuple[Module, ...]:
        """The Modules this Module holds, directly or not (itself excluded), each once."""
        found: list[Module] = []
        for _ in walk(self, on_object=found.append):
            pass
        return tuple(m for m in found if isinstance(m, Module) and m is not self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._name!r}>"


def walk(root: object, path: Path = (), plain_objects: bool = False, seen: set | None = None,
         on_object: Any = None) -> Iterator[tuple[Path, Variable]]:
    """``(path, variable)`` for each Variable reachable from ``root``, once each.

    Args:
      root: a Module, Variable, list, tuple or dict (or a plain user object, with
        ``plain_objects``).
      path: the path of ``root`` itself.
      plain_objects: also walk the attributes of plain user objects (classes defined in Python,
        outside autostage, NumPy and the standard library), as ``Checkpoint`` does.
      seen: ids of the objects already visited (shared between the roots of one walk).
      on_object: called with each Module or plain object found below ``root``, in walk order.
    """
    seen = set() if seen is None else seen
    yield from _walk_object(root, path, plain_objects, seen, on_object, _found)


def _walk_object(obj: object, path: Path, plain_objects: bool, seen: set, on_object: Any,
                 found: Any) -> Iterator[tuple[Path, Variable]]:
    """The Variables ``obj`` holds (``found`` lists them and the objects it holds), then those
    of the objects it holds, in order."""
    held: list[tuple[Path, object]] = []
    for leaf_path, leaf in found(obj, path, plain_objects, seen):
        if isinstance(leaf, Variable):
            yield leaf_path, leaf
        else:
            held.append((leaf_path, leaf))
    for held_path, held_obj in held:
        if on_object is not None:
            on_object(held_obj)
        yield from _walk_object(held_obj, held_path, plain_objects, seen, on_object, _attributes)


def _attributes(obj: object, path: Path, plain_objects: bool, seen: set
                ) -> Iterator[tuple[Path, object]]:
    attributes = vars(obj)
    for name in sorted(attributes):
        yield from _found(attributes[name], (*path, name), plain_objects, seen)


def _found(value: object, path: Path, plain_objects: bool, seen: set
           ) -> Iterator[tuple[Path, object]]:
    """``value`` if it is a Variable or an object to walk; the Variables and objects in it if it
    is a container (flattened); nothing if seen before or anything else."""
    value = captures.unwrap(value)  # (a stand-in, when walked inside a trace)
    if id(value) in seen:
        return
    if isinstance(value, list | tuple | dict):
        seen.add(id(value))
        for key, item in _items(value):
            yield from _found(item, (*path, key), plain_objects, seen)
    elif isinstance(value, Variable) or _is_object(value, plain_objects):
        seen.add(id(value))
        yield path, value


def _items(container: list | tuple | dict) -> list[tuple[Any, object]]:
    if not isinstance(container, dict):
        return list(enumerate(container))
    try:
        keys = sorted(container)
    except TypeError:  # keys of different types: their insertion order
        keys = list(container)
    return [(key, container[key]) for key in keys]


def _is_object(value: object, plain_objects: bool) -> bool:
    return isinstance(value, Module) or (plain_objects and captures.is_user_object(value)
                                         and hasattr(value, "__dict__"))


def _snake_case(name: str) -> str:
    """``DenseLayer`` -> ``dense_layer``, ``MLP`` -> ``mlp`` (TensorFlow's default names)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
