"""The trace-time freeze check (runtime/staging/random_freeze.py): a random draw made while a
function is traced, by code autostage does not stage, is a clear RandomStagingError naming the
function traced and the generator; generators created during the trace from a fixed seed (exact
when frozen) keep working, and so do staged draws."""

import contextlib
import copy
import functools
import gc
import pickle
import random
import tempfile
import threading

import numba
import numpy as np
import numpy.random.bit_generator as np_bit_generator
import pytest
from autostage.runtime.staging import random_freeze
from autostage.runtime.staging.random_draws import RandomStagingError

import autostage

# Generators made at import time (frozen by the suite: tests/conftest.py) must stay visible.
pytestmark = pytest.mark.sees_old_objects

TARGETS = ["interpreter", "cpu"]
HERE = __name__

G = np.random.default_rng(1)
LEGACY = np.random.RandomState(2)
BITS = np.random.PCG64(3)
PY_RNG = random.Random(4)


# A "library": functions autostage calls as they are, drawing from generators they hold.
@autostage.do_not_convert
def library_normal(n):
    return G.normal(size=n)


@autostage.do_not_convert
def library_legacy(n):
    return LEGACY.standard_normal(n)


@autostage.do_not_convert
def library_bits(n):
    return np.array([float(BITS.random_raw()) for _ in range(n)])


@autostage.do_not_convert
def library_stdlib(n):
    return np.array([random.random() for _ in range(n)])


@autostage.do_not_convert
def library_stdlib_instance(n):
    return np.array([PY_RNG.gauss(0.0, 1.0) for _ in range(n)])


@autostage.do_not_convert
def library_partial(n):
    return functools.partial(G.uniform, 0.0, 1.0)(size=n)


@autostage.do_not_convert
def library_unseeded(n):
    return np.random.default_rng().normal(size=n)


@autostage.do_not_convert
def library_unseeded_stdlib(n):
    return np.array([random.Random().random() for _ in range(n)])


_LAZY = None


@autostage.do_not_convert
def library_lazy(n):
    global _LAZY
    if _LAZY is None:
        _LAZY = np.random.default_rng(5)
    return _LAZY.normal(size=n)


@numba.njit(cache=False)
def numba_noise(n):
    return np.random.rand(n)


def uses(helper):
    def f(x):
        return x + helper(2)
    f.__name__ = f.__qualname__ = f"uses_{helper.__name__}"
    return f


def through_map(x):
    return x + np.array(list(map(library_normal, [1, 1]))).ravel()


@pytest.fixture(autouse=True)
def fresh_lazy():
    global _LAZY
    _LAZY = None
    yield
    _LAZY = None


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, words", [
    (uses(library_normal), ["numpy.random._generator.Generator", f"{HERE}.G"]),
    (uses(library_partial), ["numpy.random._generator.Generator", f"{HERE}.G"]),
    (through_map, ["numpy.random._generator.Generator", f"{HERE}.G"]),
    (uses(library_legacy), ["numpy.random.mtrand.RandomState", f"{HERE}.LEGACY"]),
    (uses(library_bits), ["numpy.random._pcg64.PCG64", f"{HERE}.BITS"]),
    (uses(library_stdlib), ["Python's random module", "not staged"]),
    (uses(library_stdlib_instance), ["random.Random", f"{HERE}.PY_RNG", "not staged"]),
    (uses(library_unseeded), ["created without a seed", "give it a seed"]),
    (uses(library_unseeded_stdlib), ["random.Random() created without a seed"]),
    (uses(library_lazy), ["created during the trace and kept", f"{HERE}._LAZY",
                          "create the generator before calling"]),
    (uses(numba_noise), ["Numba's internal np.random state"]),
])
def test_draws_in_code_autostage_does_not_stage_are_refused(target, fn, words):
    staged = autostage.convert(target=target)(fn)
    with pytest.raises(RandomStagingError) as info:
        staged(np.zeros(2))
    message = str(info.value)
    for word in [f"while {fn.__name__} was traced", "frozen into the trace", *words]:
        assert word in message
    assert staged.trace_count == 0
    # The watch ended with the trace: NumPy's and Python's seeding are their own again.
    assert np_bit_generator.randbits is random_freeze._originals["randbits"]
    assert random.Random.__dict__["seed"] is random_freeze._originals["seed"]


def reads_attribute(holder):
    def f(x):
        return x + holder.draw(2)
    return f


class Holder:
    """A "library" object (its method is not converted) holding a generator."""

    def __init__(self):
        self.legacy = np.random.RandomState(7)

    @autostage.do_not_convert
    def draw(self, n):
        return self.legacy.normal(size=n)


@pytest.mark.parametrize("target", TARGETS)
def test_the_message_names_the_path_the_trace_reached_it_by(target):
    # Reached through a global: the guarded path is named.
    staged = autostage.convert(target=target)(reads_attribute(Holder()))
    with pytest.raises(RandomStagingError, match=r"RandomState object \(.*legacy"):
        staged(np.zeros(2))


# -- what stays allowed --------------------------------------------------------------------------

@autostage.do_not_convert
def fresh_seeded(n):
    return np.random.default_rng(0).normal(size=n)


@autostage.do_not_convert
def fresh_seeded_stdlib(n):
    py_rng = random.Random(0)
    return np.array([py_rng.random() for _ in range(n)])


@autostage.do_not_convert
def from_copies(n):
    # Copies are made from the OS and then given the original's state: nothing random is drawn
    # that Python would not draw again at the next call (the originals do not change).
    copied, py_copied = copy.deepcopy(G), pickle.loads(pickle.dumps(PY_RNG))
    return copied.normal(size=n) + np.array([py_copied.random() for _ in range(n)])


def fresh_in_staged_loop(x, n):
    for _ in range(n):  # staged: the helper runs once, at trace time
        x = x + fresh_seeded(2) + fresh_seeded_stdlib(2) + from_copies(2)
    return x


@pytest.mark.parametrize("target", TARGETS)
def test_generators_created_during_the_trace_from_a_seed_are_exact(target):
    staged = autostage.convert(target=target)(fresh_in_staged_loop)
    x = np.zeros(2)
    expected = fresh_in_staged_loop(x, 3)
    for n in (3, 3, 1):
        np.testing.assert_array_equal(staged(x, np.int64(n)), fresh_in_staged_loop(x, n))
    np.testing.assert_array_equal(staged(x, np.int64(3)), expected)
    assert staged.trace_count == 1


def staged_and_global_draws(x, rng):
    return x + rng.normal(size=2) + np.random.rand(2) + library_unused_generator()


@autostage.do_not_convert
def library_unused_generator():
    random.Random()  # created from the OS, never drawn from: nothing is frozen
    return 0.0


@pytest.mark.parametrize("target", TARGETS)
def test_staged_draws_pass_the_check_and_keep_pythons_numbers(target):
    staged = autostage.convert(target=target)(staged_and_global_draws)
    x = np.zeros(2)
    rng, plain_rng = np.random.default_rng(8), np.random.default_rng(8)
    np.random.seed(9)
    got = [staged(x, rng), staged(x, rng)]
    np.random.seed(9)
    expected = [staged_and_global_draws(x, plain_rng), staged_and_global_draws(x, plain_rng)]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
    assert not np.array_equal(got[0], got[1])


@pytest.mark.parametrize("target", TARGETS)
def test_the_check_runs_once_per_trace_never_on_a_cache_hit(target, monkeypatch):
    made = []

    class Counting(random_freeze.FreezeCheck):
        __slots__ = ()

        def __init__(self):
            made.append(1)
            super().__init__()

    monkeypatch.setattr(random_freeze, "FreezeCheck", Counting)
    staged = autostage.convert(target=target)(lambda x: x + np.random.rand(2))
    staged(np.zeros(2))
    staged(np.zeros(2))
    assert len(made) == 1
    staged(np.zeros(2, dtype=np.float32))  # a retrace is checked again
    assert len(made) == 2


@autostage.convert
def inner_staged(x):
    return x * 2.0 + library_normal(2)


def outer_staged(x):
    return inner_staged(x) + 1.0


@pytest.mark.parametrize("target", TARGETS)
def test_a_draw_in_a_staged_callee_is_refused(target):
    staged = autostage.convert(target=target)(outer_staged)
    with pytest.raises(RandomStagingError, match=r"while outer_staged was traced.*Generator"):
        staged(np.zeros(2))


def test_states_compare_with_arrays_and_tuples():
    equal = random_freeze._equal
    state = np.random.MT19937(0).state
    assert equal(state, np.random.MT19937(0).state)
    assert not equal(state, np.random.MT19937(1).state)
    assert equal(random.Random(0).getstate(), random.Random(0).getstate())
    assert not equal((1, np.zeros(2)), (1, np.ones(2)))


@autostage.do_not_convert
def library_global_state(n):
    return np.random.standard_normal(n) + random.random()


def test_objects_hidden_by_gc_freeze_are_still_checked_for_the_global_states():
    staged = autostage.convert(target="interpreter")(uses(library_global_state))
    gc.freeze()  # hides every object alive now from gc.get_objects()
    try:
        with pytest.raises(RandomStagingError) as info:
            staged(np.zeros(2))
    finally:
        gc.unfreeze()
    assert "NumPy's global random state" in str(info.value)
    assert "Python's random module" in str(info.value)


@contextlib.contextmanager
def another_thread_running():
    """Another thread runs (waiting) for the duration, as on a Dask worker."""
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        yield
    finally:
        release.set()
        other.join()


def test_the_message_mentions_threads_when_others_run():
    staged = autostage.convert(target="interpreter")(uses(library_normal))
    with another_thread_running(), pytest.raises(RandomStagingError,
                                                 match="another thread drew from it"):
        staged(np.zeros(2))


FOREIGN_DRAWS = []  # the traces during which another thread drew


@autostage.do_not_convert
def another_thread_draws_once(n):
    """What a Dask worker does while a task traces: its own thread samples with Python's
    ``random`` (here during the first trace only)."""
    if not FOREIGN_DRAWS:
        worker = threading.Thread(target=lambda: FOREIGN_DRAWS.append(random.random()))
        worker.start()
        worker.join()
    return 1.0


@pytest.fixture
def traces(monkeypatch):
    """The traces run from here on (failed ones too)."""
    from autostage.runtime.staged_function import StagedFunction
    run, traced = StagedFunction._trace, []

    def counted(self, *args):
        traced.append(self.name)
        return run(self, *args)

    monkeypatch.setattr(StagedFunction, "_trace", counted)
    return traced


@pytest.mark.parametrize("target", TARGETS)
def test_a_draw_by_another_thread_while_tracing_traces_again(target, traces):
    FOREIGN_DRAWS.clear()

    def f(x):
        return x * another_thread_draws_once(2)

    staged = autostage.convert(target=target)(f)
    with another_thread_running():
        np.testing.assert_array_equal(staged(np.arange(3.0)), np.arange(3.0))
    assert len(FOREIGN_DRAWS) == 1 and len(traces) == 2


def test_a_draw_of_the_traced_code_is_raised_after_the_retries(traces):
    def f(x):
        return x + library_normal(2)

    staged = autostage.convert(target="interpreter")(f)
    with another_thread_running(), pytest.raises(RandomStagingError, match="NumPy"):
        staged(np.zeros(2))
    from autostage.runtime.staged_function import RANDOM_RETRIES
    assert len(traces) == RANDOM_RETRIES + 1


def test_alone_a_changed_state_is_raised_at_once(traces):
    def f(x):
        return x + library_normal(2)

    with pytest.raises(RandomStagingError):
        autostage.convert(target="interpreter")(f)(np.zeros(2))
    assert len(traces) == 1


@autostage.do_not_convert
def library_writing_a_temporary_file(n):
    with tempfile.NamedTemporaryFile() as handle:
        handle.write(b"log")
    return 1.0


@pytest.mark.parametrize("first_use", [False, True])
def test_temporary_file_names_are_not_refused(first_use, monkeypatch):
    if first_use:  # tempfile makes its name generator (from the OS) during the trace
        monkeypatch.setattr(tempfile, "_name_sequence", None)
        monkeypatch.setattr(tempfile, "tempdir", None)
    staged = autostage.convert(target="interpreter")(uses(library_writing_a_temporary_file))
    np.testing.assert_array_equal(staged(np.zeros(2)), np.ones(2))


def frozen_distribution_draw(x):
    return x + DIST.rvs(size=2)  # a SciPy object: its method runs as it is, at trace time


@pytest.mark.parametrize("target", TARGETS)
def test_a_library_object_holding_a_generator_is_named_by_its_attributes(target):
    global DIST
    stats = pytest.importorskip("scipy.stats")
    DIST = stats.norm(0.0, 1.0)
    DIST.random_state = np.random.default_rng(3)
    staged = autostage.convert(target=target)(frozen_distribution_draw)
    with pytest.raises(RandomStagingError) as info:
        staged(np.zeros(2))
    assert "Generator object (global DIST.dist._random_state)" in str(info.value)
    assert "while frozen_distribution_draw was traced" in str(info.value)


CONSTRUCTING = '''
import copy, sys, threading, time
import numpy as np
from autostage.runtime.staging import random_freeze

stop = threading.Event()

def copying():  # each copy of a Generator first makes a bit generator seeded from the OS
    g = np.random.default_rng(3)
    while not stop.is_set():
        try:
            copy.deepcopy((g, 1))
        except SystemError:  # (see random_freeze._of_kinds)
            pass

thread = threading.Thread(target=copying)
thread.start()
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    random_freeze.FreezeCheck().close()
stop.set()
thread.join()
print("done")
'''


def test_a_bit_generator_another_thread_is_constructing_is_not_read(tmp_path):
    """A trace's check begins while another thread copies (or unpickles) a Generator: the
    check saw the new bit generator before its state pointer was set and read its state (the
    process crashed within seconds); it leaves it until constructed."""
    import subprocess
    import sys

    script = tmp_path / "constructing.py"
    script.write_text(CONSTRUCTING)
    done = subprocess.run([sys.executable, "-X", "faulthandler", str(script), "8"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["done"], done.stderr[-3000:]


def test_the_c_scan_finds_what_the_python_scan_finds(monkeypatch):
    from autostage.runtime.staging import random_freeze

    assert random_freeze._instances_of is not None  # (built by pip install)
    kept = [np.random.default_rng(3), random.Random(4)]  # noqa: F841 - alive during the scans
    kinds = random_freeze._random_types()
    for generations in (None, (0, 1), (2,)):
        with_c = random_freeze._of_kinds(kinds, generations)
        monkeypatch.setattr(random_freeze, "_instances_of", None)
        in_python = random_freeze._of_kinds(kinds, generations)
        monkeypatch.undo()
        assert {id(obj) for obj in with_c} == {id(obj) for obj in in_python}
        assert generations is not None or all(
            any(found is obj for found in with_c) for obj in kept)
