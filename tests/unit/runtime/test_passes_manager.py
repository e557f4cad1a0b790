"""The pass manager: order, timings, errors named by pass, verification, IR dumps."""

import numpy as np
import pytest
from autostage.runtime.passes import PassError, optimize
from autostage.runtime.passes.pass_manager import Pass, PassManager, checks, checks_enabled
from test_passes_support import optimized, staged

X = np.arange(3, dtype=np.float32)


def small(x):
    a = x * 2.0
    b = x * 2.0
    return a + b


def test_runs_passes_in_order_and_times_them():
    seen = []
    manager = PassManager([Pass("one", lambda m: seen.append(1)),
                           Pass("two", lambda m: seen.append(2))], verify=True)
    module = staged(small, X)
    assert manager.run(module) is module
    assert seen == [1, 2] and [name for name, _ in manager.timings] == ["one", "two"]


def test_wraps_errors_with_the_pass_name():
    def broken(module):
        raise KeyError("boom")

    with pytest.raises(PassError, match="pass 'broken' failed: KeyError") as info:
        PassManager([Pass("broken", broken)]).run(staged(small, X))
    assert info.value.pass_name == "broken"


def test_verifies_after_each_pass_when_checks_are_on():
    def breaks_ir(module):
        module.main.body.ops.reverse()

    manager = PassManager([Pass("reverse", breaks_ir)])
    with checks(True), pytest.raises(PassError, match="pass 'reverse' left invalid IR"):
        manager.run(staged(small, X))
    with checks(False):
        manager.run(staged(small, X))  # unchecked: nobody notices


def test_checks_follow_the_environment(monkeypatch):
    monkeypatch.setenv("AUTOSTAGE_VERIFY", "1")
    assert checks_enabled()
    monkeypatch.setenv("AUTOSTAGE_VERIFY", "0")
    assert not checks_enabled()


def test_dumps_ir_after_named_passes(monkeypatch, capsys):
    monkeypatch.setenv("AUTOSTAGE_DUMP_AFTER", "cse")
    optimize(staged(small, X), ["cse", "dce"], verify=True)
    err = capsys.readouterr().err
    assert "// IR after cse" in err and "after dce" not in err
    assert "multiply" in err


def test_default_pipeline_on_a_real_function():
    module = staged(small, X)
    after = optimized(module, ("constant_folding", "cse", "dce", "fusion"), (X,))
    # one product after CSE, read twice by the add, which it fuses into
    assert after.count("multiply") == 1 and after.count("fused") == 1
    assert after.index("fused") < after.index("multiply")


def test_unknown_pass_names_are_errors():
    with pytest.raises(KeyError, match="unknown passes"):
        optimize(staged(small, X), ["nope"])
