"""Static analyses over pyct ASTs: activity, reaching definitions and liveness.

``analyze(node)`` runs them all in their required order and returns the control-flow graphs.
"""

from __future__ import annotations

import gast

from autostage.pyct import cfg, qual_names
from autostage.pyct.static_analysis import activity, liveness, reaching_definitions


def analyze(node: gast.AST, ctx: object = None) -> dict[gast.AST, cfg.Graph]:
    """Runs qual_names, activity, cfg.build_all, reaching definitions and liveness on ``node``.

    Args:
      node: a FunctionDef/AsyncFunctionDef, ClassDef or Module, annotated in place.
      ctx: the conversion context, passed on to the analyses.

    Returns:
      ``cfg.build_all(node)``: the graph of ``node`` and of every function or class nested in it.
    """
    qual_names.resolve(node)
    activity.resolve(node, ctx)  # every later analysis reads its scopes
    graphs = cfg.build_all(node)
    reaching_definitions.resolve(node, graphs, ctx)
    liveness.resolve(node, graphs, ctx)
    return graphs
