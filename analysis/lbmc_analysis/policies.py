"""Policy facts read from the results file, not from a list kept here.

lbmc's policy table (the C side's registry) is the one source of policy names and of each
policy's message count (docs/model.md, "Policies"). A results file carries them as
attributes of ``/points/policy_name``:

``allowed`` (list of str)
    the policy families the program knows (``random``, ``jsq``, ``pull``, ...);
``messages_per_arrival`` (list of str, one per entry of ``allowed``)
    the router-server messages per arrival each family should use, as an arithmetic
    expression in ``d`` (the policy's parameter, ``/points/d``) and ``n``, e.g. ``"2*d"``,
    ``"0"``, ``"1"`` (PULL's n -> infinity limit).

Files written before these attributes existed are read with the rules of docs/model.md
("Policies") as they stood then (:data:`DOC_MESSAGES`); a policy those rules do not know
gets NaN (no reference drawn), never an error.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import Mapping

__all__ = ["DOC_MESSAGES", "allowed_policies", "as_list", "message_rules", "expected_messages"]

#: messages per arrival of docs/model.md ("Policies"), for files without the attribute.
DOC_MESSAGES = {"random": "0", "jsq": "2*d", "pull": "1", "balanced": "2*d", "lwl": "2*d"}

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}


def as_list(v):
    """An attribute value (str, bytes, array or list of them) -> list of str; None stays None."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):
        v = [v]
    return [x.decode("utf-8", errors="replace") if isinstance(x, bytes) else str(x) for x in list(v)]


def allowed_policies(attrs: Mapping) -> list | None:
    """The policy families listed in ``/points/policy_name``'s ``allowed`` attribute (None if absent)."""
    return as_list(attrs.get("allowed"))


def message_rules(attrs: Mapping) -> dict:
    """{policy family: expression} from the attributes of ``/points/policy_name``; the
    docs/model.md rules for a file that has none."""
    names, rules = allowed_policies(attrs), as_list(attrs.get("messages_per_arrival"))
    if names and rules and len(names) == len(rules):
        return dict(zip(names, rules))
    return dict(DOC_MESSAGES)


def _eval(node, env):
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id in env:
        return float(env[node.id])
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand, env))
    raise ValueError("not an arithmetic expression in d and n")


def expected_messages(policy_name, d=None, n=None, rules: Mapping | None = None) -> float:
    """Messages per arrival the policy family should use at a point (NaN if unknown).

    ``rules`` from :func:`message_rules` (default: docs/model.md's). An expression that
    needs ``d`` or ``n`` when they are missing, or that does not parse, gives NaN.
    """
    rule = (rules if rules is not None else DOC_MESSAGES).get(str(policy_name))
    if rule is None:
        return math.nan
    env = {k: v for k, v in (("d", d), ("n", n)) if v is not None and not (isinstance(v, float) and math.isnan(v))}
    try:
        return float(_eval(ast.parse(str(rule), mode="eval"), env))
    except (ValueError, SyntaxError, ZeroDivisionError, TypeError):
        return math.nan
