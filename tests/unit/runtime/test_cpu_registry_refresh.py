"""Numba's registry refresh reduced to the registries that grew (backends/cpu/registry_refresh.py):
a refresh that would find nothing imports and installs nothing; declarations added after earlier
compiles (an ``@overload``, an ``@intrinsic``, a ``lower_builtin``) are still found."""

import numba
import pytest
from autostage.runtime.backends.cpu import registry_refresh
from numba.core import base, cpu, imputils, types
from numba.core.registry import cpu_target
from numba.core.typing import context as typing_context
from numba.extending import intrinsic, overload


@pytest.fixture
def context():
    registry_refresh.install()
    numba.njit(lambda x: x + 1)(1)  # compiled once: the first, full refresh has run
    return cpu_target.target_context


def test_both_contexts_refresh_reduced(context):
    assert base.BaseContext.refresh.reduced and typing_context.BaseContext.refresh.reduced
    installed = base.BaseContext.refresh, typing_context.BaseContext.refresh
    registry_refresh.install()  # idempotent: not wrapped twice
    assert (base.BaseContext.refresh, typing_context.BaseContext.refresh) == installed


def test_a_refresh_that_would_find_nothing_imports_and_installs_nothing(context, monkeypatch):
    calls = []
    monkeypatch.setattr(cpu.CPUContext, "load_additional_registries",
                        lambda self: calls.append("load"))
    monkeypatch.setattr(base.BaseContext, "install_registry",
                        lambda self, registry: calls.append(registry))
    context.refresh()
    context.refresh()
    assert calls == []


def test_a_lowering_registered_later_is_installed_by_the_next_refresh(context):
    def marker():
        pass

    def impl(context_, builder, signature, args):
        return context_.get_constant(types.int64, 7)

    imputils.lower_builtin(marker)(impl)
    context.refresh()
    assert [found for _, found in context._defns[marker].versions] == [impl]


def test_an_overload_defined_after_compiles_is_found(context):
    def twice(x):
        raise NotImplementedError

    @overload(twice)
    def _twice(x):
        return lambda x: 2 * x

    @numba.njit
    def uses(x):
        return twice(x) + 1

    assert uses(3) == 7
    assert uses(1.5) == 4.0  # a second signature: the template registers another lowering


def test_an_intrinsic_defined_after_compiles_is_found(context):
    @intrinsic
    def plus_one(typingctx, x):
        def codegen(context_, builder, signature, args):
            return builder.add(args[0], context_.get_constant(signature.return_type, 1))
        return x(x), codegen

    @numba.njit
    def uses(x):
        return plus_one(x)

    assert uses(41) == 42

