"""Which array sizes are equal at run time, though tracing left them unknown (``f64[?]``).

Traces are shape-generic, so an element-wise loop over ``k1`` and ``y`` (both ``f64[?]``) must
test at run time that their sizes broadcast and keep a second, clamping loop for when they do
not. Often the program itself proves them equal: ``k1 = np.empty_like(y)``, ``y + h * k1``, a
loop that carries ``y`` and yields an array of its size. This analysis names each axis of each
array value by a *symbol*: an int for a size the type knows, otherwise a hashable token shared by
every axis proven to have the same size as it in any one run of the region that defines it.

Rules (anything else gets a token of its own per axis):

* element-wise ops and ``fused`` loops broadcast their operands' symbols: an output axis whose
  operands' axes are all one symbol (static 1s aside) has that symbol;
* ``full_like``, ``copy``, ``setitem``, ``scatter_add`` keep their array operand's symbols,
  ``sum_to`` its ``like`` operand's (or its staged sizes', as ``full``); reductions keep those
  of the axes they do not reduce, ``transpose`` permutes them, a 2-d ``matmul`` has its rows'
  and columns' operands' symbols, ``stack`` its first part's (it checks that the others have
  them) with the new axis;
  ``full`` takes each staged size from its operand (``x.shape[0]``, a ``dim`` op, has ``x``'s
  symbol); basic ``getitem`` keeps the symbols of the axes it takes whole (``x[:, 0]``,
  ``x[..., None]``);
* a ``while`` carries a value's symbols into the loop when its body yields the same symbols
  (a fixpoint: an axis that may change between iterations gets the loop's own token, still
  equal across the values of one iteration); a ``cond`` result keeps the symbols both branches
  agree on.

The cpu lowering of ``fused`` uses it to drop the broadcast test and the clamping loop
(``lower_fused``), those of ``matmul`` and ``stack`` to drop size tests of axes it proves equal
(``x.T @ x``; ``np.stack([e, t * e])``); it never changes the IR.
"""

from __future__ import annotations

from autostage.runtime import ir
from autostage.runtime.ops.fused import is_fusible_reduction, per_element
from autostage.runtime.ops.indexing import ELLIPSIS
from autostage.runtime.types import TensorType

Symbol = object  # an int (a static size) or a hashable token
_SAME_SHAPE = frozenset({"full_like", "copy", "setitem", "scatter_add"})
_REDUCTIONS = frozenset({"sum", "prod", "mean", "max", "min", "any", "all", "std", "var"})
_FULL_SLICE = (None, None, None)


class ShapeFacts:
    """The size symbols of every array value of one function."""

    def __init__(self, function: ir.Function) -> None:
        self._dims: dict[ir.Value, tuple[Symbol, ...]] = {}
        self._sizes: dict[ir.Value, Symbol] = {}  # 0-d int values that are a size
        for value in function.body.args:
            self._set(value, None)
        self._region(function.body)

    def dims(self, value: ir.Value) -> tuple[Symbol, ...]:
        """The symbols of ``value``'s axes (ints where its size is static)."""
        known = self._dims.get(value)
        if known is None:
            known = self._set(value, None)
        return known

    def size(self, value: ir.Value) -> Symbol | None:
        """The symbol of the axis a 0-d int ``value`` is the size of (a ``dim``), or None."""
        return self._sizes.get(value)

    def broadcast(self, operands: list[ir.Value], rank: int) -> tuple[Symbol | None, ...]:
        """The symbols of the broadcast of ``operands`` (right-aligned to ``rank`` axes), with
        None for an axis whose operands may differ (or be 1 only at run time)."""
        out: list[Symbol | None] = []
        for axis in range(rank):
            seen = {self.dims(v)[axis - rank + v.type.ndim]
                    for v in operands if axis - rank + v.type.ndim >= 0}
            if len(seen) > 1:
                seen.discard(1)  # a static 1 broadcasts against the other
            out.append(seen.pop() if len(seen) == 1 else None)
        return tuple(out)

    # -- the walk ---------------------------------------------------------------------------------

    def _set(self, value: ir.Value, dims: tuple | None) -> tuple:
        """Records ``dims`` for ``value`` (a token per axis where None), static sizes winning."""
        t = value.type
        if not isinstance(t, TensorType):
            return ()
        if dims is None or len(dims) != t.ndim:
            dims = tuple((value, k) for k in range(t.ndim))
        dims = tuple(d if size is None else size for d, size in zip(dims, t.shape, strict=True))
        self._dims[value] = dims
        return dims

    def _region(self, region: ir.Region) -> None:
        for op in region.ops:
            self._op(op)

    def _op(self, op: ir.Op) -> None:
        if op.name == "while":
            self._while(op)
            return
        if op.name == "cond":
            self._cond(op)
            return
        if op.name == "dim" and op.operands[0].type.ndim > op.attrs["axis"]:
            self._sizes[op.results[0]] = self.dims(op.operands[0])[op.attrs["axis"]]
        dims = self._rule(op) if len(op.results) == 1 else None
        for value in op.results:
            self._set(value, dims)

    def _rule(self, op: ir.Op) -> tuple | None:
        (result,) = op.results
        if not isinstance(result.type, TensorType) or not op.operands:
            return None
        rank = result.type.ndim
        if op.name in _SAME_SHAPE:
            return self.dims(op.operands[0])
        if per_element(op):
            return _tokens(self.broadcast(list(op.operands), rank), result)
        if op.name == "fused":
            last = op.regions[0].ops[-1]
            if not is_fusible_reduction(last):
                return _tokens(self.broadcast([v for v in op.operands if v.type.ndim], rank),
                               result)
            full = last.operands[0].type.ndim
            dims = self.broadcast([v for v in op.operands if v.type.ndim], full)
            outer = () if last.attrs.get("axis") is None else dims[:-1]
            kept = (1,) * (full - len(outer)) if last.attrs.get("keepdims") else ()
            return _tokens((*outer, *kept), result)
        if op.name == "full" or op.name == "sum_to" and "shape" in op.attrs:
            sizes = iter(op.operands[1:])
            return tuple(self._size(next(sizes)) if d is None else d
                         for d in op.attrs["shape"])
        if op.name == "getitem":
            return self._basic_index(op)
        if op.name == "sum_to":
            return self.dims(op.operands[1])
        if op.name == "transpose":
            dims = self.dims(op.operands[0])
            return tuple(dims[a] for a in op.attrs["axes"])
        if op.name in _REDUCTIONS and isinstance(op.attrs.get("axis", 0), tuple | None):
            return self._reduced(op)
        if op.name == "stack":  # its parts' axes (which it checks are equal), a new one
            dims = list(self.dims(op.operands[0]))
            dims.insert(op.attrs["axis"], len(op.operands))
            return tuple(dims)
        if op.name == "matmul" and op.operands[0].type.ndim == op.operands[1].type.ndim == 2:
            return (self.dims(op.operands[0])[0], self.dims(op.operands[1])[1])
        return None

    def _reduced(self, op: ir.Op) -> tuple:
        """A reduction keeps the symbols of the axes it does not reduce (1 where kept)."""
        dims, axis = self.dims(op.operands[0]), op.attrs["axis"]
        axes = range(len(dims)) if axis is None else axis
        if op.attrs["keepdims"]:
            return tuple(1 if i in axes else d for i, d in enumerate(dims))
        return tuple(d for i, d in enumerate(dims) if i not in axes)

    def _size(self, value: ir.Value) -> Symbol:
        return self._sizes.setdefault(value, ("size", value))

    def _basic_index(self, op: ir.Op) -> tuple | None:
        """The symbols of a basic index's result: whole axes keep theirs, newaxis is 1."""
        x, staged = op.operands[0], op.operands[1:]
        if any(v.type.ndim for v in staged):
            return None  # advanced indexing
        index = op.attrs["index"]
        consumed = sum(entry is not None and entry != ELLIPSIS for entry in index)
        source, out = iter(self.dims(x)), []
        for entry in index:
            if entry is None:
                out.append(1)
            elif entry == ELLIPSIS:
                out += [next(source) for _ in range(x.type.ndim - consumed)]
            elif entry == _FULL_SLICE:
                out.append(next(source))
            elif isinstance(entry, tuple):
                next(source)
                out.append(None)  # a partial slice: a size of its own
            else:  # an int, or a staged 0-d int
                next(source)
        out += list(source)
        return _tokens(tuple(out), op.results[0])

    def _while(self, op: ir.Op) -> None:
        cond, body = op.regions
        carried = [self.dims(v) for v in op.operands]
        # Each round that changes anything makes at least one more axis the loop's own (for
        # good): at most one round per axis, and one that changes nothing, settle it.
        for _ in range(sum(len(dims) for dims in carried) + 2):
            for k, dims in enumerate(carried):
                for region in (cond, body):
                    self._set(region.args[k], dims)
            self._region(cond)
            self._region(body)
            yielded = [self.dims(v) for v in body.results]
            settled = [tuple(a if a == b else ("loop", op, k, j)
                             for j, (a, b) in enumerate(zip(old, new, strict=True)))
                       for k, (old, new) in enumerate(zip(carried, yielded, strict=True))]
            if settled == carried:
                break
            carried = settled
        for value, dims in zip(op.results, carried, strict=True):
            self._set(value, dims)

    def _cond(self, op: ir.Op) -> None:
        for region in op.regions:
            self._region(region)
        for k, value in enumerate(op.results):
            if not isinstance(value.type, TensorType):
                continue
            branches = [self.dims(region.results[k]) for region in op.regions]
            agreed = tuple(a if all(b[j] == a for b in branches) else None
                           for j, a in enumerate(branches[0]))
            self._set(value, _tokens(agreed, value))


def _tokens(dims: tuple, value: ir.Value) -> tuple:
    """``dims`` with a token of ``value``'s own in place of each unknown (None) axis."""
    return tuple((value, k) if d is None else d for k, d in enumerate(dims))
