"""The trace-time check that no random draw is frozen into a trace.

A trace runs the user's Python code once. A draw made then from a random state that outlives the
trace (NumPy's global state, a ``Generator``, ``RandomState`` or bit generator, a
``random.Random`` such as the one behind Python's ``random`` module, Numba's internal states)
would be frozen into the trace: the same numbers at every call, where Python draws new ones.
Converted code stages NumPy's draws and refuses the standard library's at the call
(random_draws.py); this check catches the rest: a ``do_not_convert`` function, a library, a
method of an object autostage does not convert, a C callable.

``FreezeCheck`` snapshots, at the start of a trace, the state of every live random-state object
(found through the garbage collector, filtered by type), and compares at its end; a change is a
``RandomStagingError`` naming the function traced, the object and where it lives (a trace that
fails only because a shared state changed while other threads ran is traced again: see
``StagedFunction._trace_again_if_another_thread_drew``). Objects
created during the trace are not in the snapshot: one seeded with a fixed number gives the same
numbers at every call, so freezing its draws is exact, unless it is still alive when the trace
ends and was drawn from (Python would go on with its stream at the next call). One seeded from
the operating system's entropy (``np.random.default_rng()``, ``random.Random()``) is not exact:
while a trace runs, entropy seeding in the tracing thread is recorded
(``numpy.random.bit_generator.randbits`` and ``random.Random.seed``/``setstate`` are wrapped for
the duration; copies and ``tempfile``'s name generators do not count) and a draw from such a
generator is an error too. Draws straight from the operating system (``os.urandom``,
``secrets``, ``random.SystemRandom``) in unconverted code are not seen. The snapshot costs
~60 ns per object the garbage collector tracks (~6 ms with NumPy, Numba and SciPy imported),
once per trace; cache hits never run it.
"""

from __future__ import annotations

import gc
import inspect
import itertools
import os
import random
import re
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import numpy.random.bit_generator as _np_bit_generator

try:
    from autostage.runtime._live_objects import instances_of as _instances_of
except ImportError:  # (built without its C extension)
    _instances_of = None

_ROOTS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)
_NUMBA_STATES = ("np.random", "random")  # Numba's own states for its np.random and random


# --- Snapshots. ------------------------------------------------------------------------------

def _random_types() -> frozenset[type]:
    """Every class whose instances hold random state (SystemRandom has none)."""
    found: set[type] = set()
    todo = list(_ROOTS)
    while todo:
        kind = todo.pop()
        if kind not in found and not issubclass(kind, random.SystemRandom):
            found.add(kind)
            todo.extend(kind.__subclasses__())
    return frozenset(found)


def _live_objects() -> list:
    """The live instances of the random-state classes (C-level filtering of gc's list)."""
    found = [obj for obj in _of_kinds(_random_types(), None) if _constructed(obj)]
    known = {id(obj) for obj in found}
    # NumPy's and Python's global states, even where gc.freeze() hides them from gc.
    state = np.random.mtrand._rand
    return found + [obj for obj in (state, state._bit_generator, getattr(random, "_inst", None))
                    if obj is not None and id(obj) not in known]


def _of_kinds(kinds: frozenset, generations: tuple[int, ...] | None) -> list:
    """The live objects of ``kinds`` (in gc's ``generations``; None: all). gc's list holds
    every object of the process, those other threads are building too: held while another
    thread runs, it made a tuple being built there (``tuple(generator)``) fail with SystemError
    (its size cannot change while it has two references). The C scan (``_live_objects.c``)
    makes, filters and drops it in one call; without it, the list is filtered by C-level
    functions and dropped on return, which leaves a rare window."""
    if _instances_of is not None:
        return _instances_of(tuple(kinds), generations)
    objects = gc.get_objects() if generations is None else [
        obj for generation in generations for obj in gc.get_objects(generation)]
    return list(itertools.compress(objects, map(kinds.__contains__, map(type, objects))))


def _constructed(obj: Any) -> bool:
    """Whether ``obj`` is past its construction: another thread may be making a NumPy bit
    generator (``copy.deepcopy`` or unpickling one of a Generator seeds a new one first), whose
    state pointer is not set until its seed sequence is; reading its ``state`` then crashed the
    process. (Not drawn from yet: nothing to check.)"""
    return not isinstance(obj, np.random.BitGenerator) or obj._seed_seq is not None


def _exempt() -> set[int]:
    """Generators whose draws never reach values: the one ``tempfile`` names files with (seeded
    from the OS; a trace that makes a temporary file must not be refused)."""
    tempfile = sys.modules.get("tempfile")
    names = getattr(tempfile, "_name_sequence", None)
    rng = getattr(names, "_rng", None) if names is not None else None
    return set() if rng is None else {id(rng)}


def _state(obj: Any) -> Any:
    """The state of ``obj`` that a draw changes (None for a Generator: it lives in its bit
    generator; the same for an object whose state cannot be read)."""
    try:
        if isinstance(obj, random.Random):
            return obj.getstate()
        if isinstance(obj, np.random.RandomState):  # with its cached Gaussian
            return obj.get_state(legacy=False)
        if isinstance(obj, np.random.BitGenerator):
            return obj.state
    except Exception:  # noqa: BLE001 - a user subclass whose state cannot be read: not checked
        return None
    return None


def _numba_states() -> list[tuple[str, Any]]:
    """Numba's states for this thread (np.random and random inside compiled functions)."""
    helperlib = sys.modules.get("numba._helperlib")
    if helperlib is None:
        return []
    return [(_NUMBA_STATES[0], helperlib.rnd_get_state(helperlib.rnd_get_np_state_ptr())),
            (_NUMBA_STATES[1], helperlib.rnd_get_state(helperlib.rnd_get_py_state_ptr()))]


def _equal(a: Any, b: Any) -> bool:
    """Equality of two states: nested dicts, tuples, numbers and arrays (bit generators)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and bool(np.array_equal(a, b))
    try:
        return bool(a == b)  # random.Random states: tuples of ints, compared in C
    except ValueError:  # a sequence holding arrays
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))


# --- Entropy seeding while a trace runs. -------------------------------------------------------

_watch_lock = threading.Lock()
_watchers = 0  # traces running (any thread); the wrappers are installed while this is > 0
_seeded = threading.local()  # .depth: traces in this thread; .events: seeding events
_originals: dict[str, Any] = {}


def _events() -> list:
    """This thread's seeding events: ["numpy", None, None] for a numpy SeedSequence seeded from
    the OS; ["random", obj, state] for ``random.Random`` seeding or ``setstate`` (obj: the
    object while its last seeding was from the OS, else its id; state: right after it)."""
    events = getattr(_seeded, "events", None)
    if events is None:
        events = _seeded.events = []
    return events


def _watching() -> bool:
    return bool(getattr(_seeded, "depth", 0))


_UNPICKLING = os.path.join("numpy", "random", "_pickle.py")
_TEMPFILE = os.path.join("", "tempfile.py")


def _called_from(frame: Any, filename: str) -> bool:
    """Whether a frame of ``filename`` is among the innermost callers from ``frame``: NumPy's
    unpickling (also ``copy.deepcopy``) makes a bit generator from the OS and then sets the
    copied state; ``tempfile`` names files with generators seeded from the OS."""
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_filename.endswith(filename):
            return True
        frame = frame.f_back
    return False


def _numpy_randbits(bits: int) -> int:
    # A SeedSequence seeded from the OS: a numpy generator without a seed.
    if _watching() and not _called_from(sys._getframe(1), _UNPICKLING):
        _events().append(["numpy", None, None])
    return _originals["randbits"](bits)


def _random_event(obj: random.Random, from_the_os: bool) -> None:
    """Records that ``obj`` was (re)seeded; an earlier seeding from the OS no longer counts (and
    the event stops holding the object)."""
    events = _events()
    for event in events:
        if event[1] is obj:
            event[1] = id(obj)
    events.append(["random", obj if from_the_os else id(obj), obj.getstate()])


def _random_seed(self: random.Random, a: Any = None, version: int = 2) -> None:
    _originals["seed"](self, a, version)
    if _watching() and not _called_from(sys._getframe(1), _TEMPFILE):
        _random_event(self, a is None)


def _random_setstate(self: random.Random, state: tuple) -> None:
    _originals["setstate"](self, state)
    if _watching():  # a copy or a restored state: as if seeded with a fixed number
        _random_event(self, False)


def _install() -> None:
    global _watchers
    with _watch_lock:
        if _watchers == 0:
            _originals["randbits"] = _np_bit_generator.randbits
            _originals["seed"] = random.Random.__dict__["seed"]
            _originals["setstate"] = random.Random.__dict__["setstate"]
            _np_bit_generator.randbits = _numpy_randbits
            random.Random.seed = _random_seed
            random.Random.setstate = _random_setstate
        _watchers += 1


def _uninstall() -> None:
    global _watchers
    with _watch_lock:
        _watchers -= 1
        if _watchers == 0:
            _np_bit_generator.randbits = _originals["randbits"]
            random.Random.seed = _originals["seed"]
            random.Random.setstate = _originals["setstate"]


# --- Generators created during the trace and kept. ---------------------------------------------

def _from_the_os(events: list) -> list:
    """The events of generators seeded from the OS (and not seeded or given a state since)."""
    return [e for e in events if e[0] == "numpy" or type(e[1]) is not int]


def _collections() -> tuple[int, ...]:
    return tuple(generation["collections"] for generation in gc.get_stats()[1:])


def _created_since(check: FreezeCheck) -> list:
    """Random-state objects alive now that were not when ``check`` began. Without a collection
    of generation 1 or 2 since then, new objects are all in generations 0 and 1 (small)."""
    known = {id(obj) for obj, _ in check.before}
    generations = (0, 1) if _collections() == check.collections else None
    return [obj for obj in _of_kinds(_random_types(), generations)
            if id(obj) not in known and _constructed(obj)]


def _drawn_since_seeding(obj: Any, seeded: dict[int, Any]) -> bool:
    """Whether ``obj``, created during the trace, may have been drawn from (True when unknown):
    a bit generator is compared with a new one from its SeedSequence; a ``random.Random`` with
    its state when it was last seeded."""
    if isinstance(obj, random.Random):
        state = seeded.get(id(obj))
        return state is None or not _equal(state, obj.getstate())
    if isinstance(obj, np.random.BitGenerator):
        try:
            sequence = obj.seed_seq
            return not (isinstance(sequence, np.random.SeedSequence)
                        and _equal(type(obj)(sequence).state, obj.state))
        except Exception:  # noqa: BLE001 - a bit generator we cannot rebuild: unknown
            return True
    return False  # a Generator or RandomState: its bit generator is checked


def _kept(check: FreezeCheck, events: list) -> tuple[list, list]:
    """Generators created during the trace from a seed, drawn from and still alive: Python would
    continue their streams at the next call, the trace froze the first numbers. Returns them
    and every random-state object created during the trace (to name them by their owner)."""
    seeded = {e[1]: e[2] for e in events if e[0] == "random" and type(e[1]) is int}
    held = {id(e[1]) for e in events if e[0] == "random" and type(e[1]) is not int}

    held |= _exempt()

    def find() -> tuple[list, list]:
        created = [obj for obj in _created_since(check) if id(obj) not in held]
        return [obj for obj in created if _drawn_since_seeding(obj, seeded)], created

    kept, created = find()
    if kept:  # perhaps garbage in reference cycles: collect it and look again (rare)
        kept = created = []
        gc.collect()
        check.collections = ()
        kept, created = find()
    return kept, created


# --- The check. --------------------------------------------------------------------------------

class FreezeCheck:
    """Raises at the end of a trace if a random draw ran while tracing (it would be frozen).

    Use: ``check = FreezeCheck()`` before the trace, ``check.check(name, where)`` after it (it
    also ends the watch), or ``check.close()`` on the way out of a failed trace.
    """

    __slots__ = ("before", "numba", "events", "collections", "closed")

    def __init__(self):
        exempt = _exempt()
        self.before = [(obj, None if id(obj) in exempt else _state(obj))
                       for obj in _live_objects()]
        self.numba = _numba_states()
        self.events = len(_events())
        self.collections = _collections()
        self.closed = False
        _install()
        _seeded.depth = getattr(_seeded, "depth", 0) + 1

    def close(self) -> list:
        """Ends the watch; returns this trace's seeding events."""
        if self.closed:
            return []
        self.closed = True
        _seeded.depth -= 1
        _uninstall()
        events = _events()
        mine = events[self.events:]
        if not _seeded.depth:
            events.clear()
        return mine

    def check(self, name: str, where: Callable[[Any], list[str]] | None = None) -> None:
        """Raises ``RandomStagingError`` naming ``name`` (the function traced) if a random state
        changed; ``where(obj)`` gives the names the trace reached an object by."""
        events = self.close()
        changed = [obj for obj, state in self.before
                   if state is not None and not _equal(state, _state(obj))]
        numba = [kind for (kind, state), (_, now) in zip(self.numba, _numba_states(),
                                                          strict=False) if state != now]
        exempt = _exempt()
        drawn = [e[0] for e in _from_the_os(events) if e[0] == "numpy" or (
            id(e[1]) not in exempt and not _equal(e[2], e[1].getstate()))]
        kept, created = _kept(self, events)
        if changed or numba or drawn or kept:
            error = _error(name, changed, [obj for obj, _ in self.before] + created, numba,
                           drawn, kept, where or (lambda obj: []))
            # Only a shared state changed, and another thread may have drawn from it: the
            # trace may pass when run again (Numba's states and seeding events are this
            # thread's own).
            error.another_thread_may_have_drawn = bool(changed) and not (
                numba or drawn or kept) and _other_threads()
            raise error


def names_in_trace(trace: Any, labels: Iterable[str] = (), leaves: Iterable = ()
                   ) -> Callable[[Any], list[str]]:
    """How the trace reached an object (for the message; evaluated on the error path only):
    arguments, globals and closure variables it read, and paths through objects
    (``self.rng``)."""
    def where(obj: Any) -> list[str]:
        names = [f"argument '{label}'" for label, leaf in zip(labels, leaves, strict=False)
                 if leaf is obj] or _argument_names(trace, obj)
        names += [f"{source.kind} variable '{source.name}'" for source in
                  getattr(trace, "sources", ()) if source.read() is obj]
        reads = getattr(getattr(trace, "shared", None), "reads", None) or {}
        names += [str(path) for path in reads if path.example is obj]
        return names

    return where


def _argument_names(trace: Any, obj: Any) -> list[str]:
    """The parameters of the traced function that received ``obj`` (from ``trace.roots``)."""
    fn, values = getattr(trace, "roots", None) or (None, ())
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return []
    return [f"argument '{n}'" for n, v in zip(names, values, strict=False) if v is obj]


# --- The message. --------------------------------------------------------------------------------

_FIX = {
    "numpy": "draw in converted code from NumPy's global functions (np.random.normal...) or from "
             "a np.random.Generator passed in (an argument, a global, or an attribute such as "
             "self.rng), where autostage stages the draw; or draw outside the staged function "
             "and pass the numbers in",
    "random": "Python's random module is not staged: use np.random.* or a np.random.Generator "
              "passed in, or draw outside the staged function and pass the numbers in",
    "numba": "draw in converted code instead of in a Numba-compiled function, or outside the "
             "staged function and pass the numbers in",
    "kept": "create the generator before calling the staged function, and pass it in or let "
            "converted code draw from it",
    "entropy": "give it a seed (a fixed seed gives the same numbers at every call, as in "
               "Python), or pass a np.random.Generator created outside the staged function",
}


def _bit_generator(obj: Any) -> Any:
    if isinstance(obj, np.random.Generator):
        return obj.bit_generator
    if isinstance(obj, np.random.RandomState):
        return obj._bit_generator
    return None


def _shown(changed: list, objects: list) -> list[tuple[Any, list]]:
    """The objects to name, each with what else holds the same state: a Generator or
    RandomState (from ``objects``, the snapshot) rather than its bit generator."""
    owners: dict[int, list] = {}
    for obj in objects:
        bits = _bit_generator(obj)
        if bits is not None:
            owners.setdefault(id(bits), []).append(obj)
    shown, covered = [], set()
    for obj in changed:
        if isinstance(obj, np.random.RandomState):
            covered.add(id(obj._bit_generator))
    for obj in changed:
        if id(obj) in covered:
            continue
        holders = owners.get(id(obj), [])
        if isinstance(obj, np.random.BitGenerator) and holders:
            shown.append((holders[0], holders[1:] + [obj]))
        else:
            shown.append((obj, []))
    return shown


def _module_names(obj: Any) -> list[str]:
    """Module globals holding ``obj`` (the error path only: scans every module)."""
    names = []
    for module_name, module in list(sys.modules.items()):
        for key, value in list(getattr(module, "__dict__", {}).items()):
            if value is obj:
                names.append(f"global {module_name}.{key}")
    return names


_VARIABLE = re.compile(r"^(global|nonlocal|argument) (?:variable )?'(.+)'$")


def _attribute_names(obj: Any, where: Callable[[Any], list[str]], depth: int = 3) -> list[str]:
    """Attributes holding ``obj`` (``DIST.dist._random_state``), named from where their owner
    lives, up to ``depth`` attributes deep (the error path only)."""
    names = []
    for holder in gc.get_referrers(obj):
        owners = [holder] if not isinstance(holder, dict) else [
            o for o in gc.get_referrers(holder) if getattr(o, "__dict__", None) is holder]
        for owner in owners:
            if isinstance(owner, type | dict) or not hasattr(owner, "__dict__"):
                continue
            keys = [k for k, v in vars(owner).items() if v is obj]
            if not keys:
                continue
            kind = type(owner)
            places = where(owner) or _module_names(owner) or (
                _attribute_names(owner, where, depth - 1) if depth > 1 else []) or [
                f"a {kind.__module__}.{kind.__qualname__} object"]
            names += [_VARIABLE.sub(r"\1 \2", place) + f".{key}" for place in places
                      for key in keys]
    return names


def _describe(obj: Any, also: list, where: Callable[[Any], list[str]]) -> str:
    if obj is np.random.mtrand._rand:
        return "NumPy's global random state (np.random.*)"
    if obj is getattr(random, "_inst", None):
        return "the state of Python's random module (random.random(), random.gauss()...)"
    kind = type(obj)
    names = [name for o in (obj, *also) for name in where(o)]
    if not names:
        names = [name for o in (obj, *also) for name in _module_names(o)]
    if not names:
        names = [name for o in (obj, *also) for name in _attribute_names(o, where)]
    text = f"a {kind.__module__}.{kind.__qualname__} object"
    return text + (f" ({', '.join(dict.fromkeys(names))})" if names else "")


def _other_threads() -> bool:
    """Whether threads besides this one may run Python code that draws (autostage's own
    threads that only run LLVM, marked ``runs_no_user_code``, do not)."""
    return any(thread is not threading.current_thread()
               and not getattr(thread, "runs_no_user_code", False)
               for thread in threading.enumerate())


def _error(name: str, changed: list, objects: list, numba: list, drawn: list, kept: list,
           where: Callable[[Any], list[str]]) -> Exception:
    from autostage.runtime.staging.random_draws import RandomStagingError

    shown = _shown(changed, objects)
    threads = (" (If another thread drew from it while the function was traced, trace it "
               "first: call it once before such threads start.)"
               if changed and _other_threads() else "")
    if [obj for obj, _ in shown] == [np.random.mtrand._rand] and not (numba or drawn or kept):
        return RandomStagingError(  # the common case, worded as users search for it
            f"NumPy's global random state changed while {name} was traced: code that "
            "autostage does not stage (a do_not_convert function, a library, a method called on "
            "an object) drew random numbers at trace time, which would freeze them into the "
            f"trace. Fix: {_FIX['numpy']}{threads}")
    parts, fixes = [], []
    for obj, also in shown:
        parts.append(_describe(obj, also, where))
        fixes.append(_FIX["random" if isinstance(obj, random.Random) else "numpy"])
    for kind in numba:
        parts.append(f"Numba's internal {kind} state (drawn in a Numba-compiled function)")
        fixes.append(_FIX["numba"])
    for kind in dict.fromkeys(drawn):
        parts.append("a np.random generator created without a seed (seeded from the operating "
                     "system)" if kind == "numpy" else "a random.Random() created without a "
                     "seed (seeded from the operating system)")
        fixes.append(_FIX["entropy"])
    for obj, also in _shown(kept, objects):
        parts.append(_describe(obj, also, where) + " created during the trace and kept (Python "
                     "would go on with its numbers at the next call)")
        fixes.append(_FIX["kept"])
    return RandomStagingError(
        f"random numbers were drawn at trace time while {name} was traced, from "
        f"{'; '.join(parts)}: code that autostage does not stage (a do_not_convert function, a "
        "library, a method of an object, a C function) drew them, and they would be frozen into "
        "the trace (the same numbers at every call, where Python draws new ones). Fix: "
        + "; or ".join(dict.fromkeys(fixes)) + threads)
