"""The local rule of each common backward node: a formula a learner can read, written with the
values the node saved, and the same rule as code, so a test can check the formula against what the
engine really computed. Any other op gets a generic sentence."""
from __future__ import annotations

from collections.abc import Callable
from string import Formatter

import torch

from ..graph import Node
from ..i18n import _
from ..names import label
from ..saved import NotRead
from .rule_table import RULES, Rule


def learner_function(node: Node) -> type | None:
    """The learner's own torch.autograd.Function class behind a node, or None. torch's own Python
    Functions (a module's backward hook, a reentrant checkpoint) are not the learner's.

    >>> class Twice(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> from autograd_lab.graph import snapshot
    >>> learner_function(snapshot(Twice.apply(torch.ones(1, requires_grad=True))).root).__name__
    'Twice'
    """
    cls = getattr(node.fn, "_forward_cls", None)
    if cls is None or not isinstance(node.fn, torch.autograd.function.BackwardCFunction):
        return None
    return None if (getattr(cls, "__module__", None) or "").split(".")[0] == "torch" else cls


def saved_by_you(node: Node) -> int | None:
    """How many tensors the learner's Function saved with ctx.save_for_backward (counted as packed,
    not unpacked: unpacking could run a checkpoint's forward again); None for other nodes."""
    if learner_function(node) is None:
        return None
    try:
        return sum(1 for saved in node.fn._raw_saved_tensors if saved is not None)
    except RuntimeError:  # freed by a backward
        return None


def rule_for(node: Node) -> Rule:
    cls = learner_function(node)
    if cls is not None:
        # the engine calls the learner's code itself: there is no formula of ours to show or check
        return Rule(_("your backward: the engine called {function}.backward(ctx, grad) with the gradient "
                      "arriving").format(function=cls.__name__))
    known = RULES.get(node.name)
    if known is not None:
        return Rule(_(known.formula), known.compute)
    return Rule(_("to each input: grad times the local derivative of {op}, by PyTorch's own formula for "
                  "{op}").format(op=op_name(node.name)))


def op_name(node_name: str) -> str:
    """'PowBackward0' -> 'pow'."""
    base = node_name.split("Backward")[0]
    return base.lower() if base else node_name


def formula(node: Node, name_of: Callable[[object], str | None]) -> str:
    """The node's rule as text, with saved values shown by the learner's names or their values.

    name_of gives the learner's name for a saved tensor, or None. An input that needs no gradient
    is marked as the place where backprop stops."""
    rule = rule_for(node)  # in the current language
    if learner_function(node) is not None:
        return "\n".join([rule.formula] + [
            (_("to {input}: what your backward returned for it") if child is not None
             else _("to {input}: nothing (needs no gradient: backprop stops here)")).format(
                input=_input_name(node, i))
            for i, (child, _nr) in enumerate(node.next)])
    fields = {f for _text, f, _spec, _conv in Formatter().parse(rule.formula) if f}
    positions = _ADDMM_INPUTS if node.name == "AddmmBackward0" else _INPUTS
    values = {}
    for field in fields:
        saved = node.saved.get(field)
        if field == "input":  # the node's only input (the rules with {input} have one line)
            values[field] = _input_name(node, 0) if node.next else _("input")
        elif field == "leaf":
            values[field] = label(node.label) if node.label else _("the leaf")
        elif saved is not None and not isinstance(saved, NotRead):
            values[field] = _short(saved, name_of, field)
        elif field in positions and positions[field] < len(node.next):
            values[field] = _input_name(node, positions[field])
        else:
            values[field] = field
    lines = rule.formula.format(**values).split("\n")
    if len(lines) == len(node.next):
        lines = [_("{rule}   (needs no gradient: backprop stops here)").format(rule=line) if child is None else line
                 for line, (child, _nr) in zip(lines, node.next, strict=True)]
    return "\n".join(lines)


_INPUTS = {"self": 0, "other": 1, "vec": 1, "mat2": 1, "exponent": 1}
_ADDMM_INPUTS = {"mat1": 1, "mat2": 2}


def _input_name(node: Node, position: int) -> str:
    child = node.next[position][0]
    if child is not None and child.label:
        return label(child.label)
    return _("input") if len(node.next) == 1 else _("input {number}").format(number=position + 1)


def _short(value, name_of, field: str) -> str:
    if isinstance(value, torch.Tensor):
        name = name_of(value)
        if name:
            return name
        if value.numel() == 1:
            v = value.item()
            return f"{v:g}" if isinstance(v, float) else str(v)
        return field
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int) and value >= 2 ** 62:  # a slice's open end is stored as a huge number
        return ""
    if isinstance(value, (tuple, list)):
        if len(value) == 1 and not field.endswith("sizes"):
            return str(value[0])
        return str(tuple(value))
    return str(value)


def apply_rule(node: Node, grad) -> tuple | None:
    """What the rule says the node sends on for the incoming grad, reduced to each input's shape
    as the engine does; None when the rule has no code (generic ops, cat, accumulators)."""
    rule = rule_for(node)
    if not rule.compute or not isinstance(grad, torch.Tensor) or any(
            isinstance(v, NotRead) for v in node.saved.values()):
        return None
    shaped: list = []
    for compute, (child, _nr) in zip(rule.compute, node.next, strict=False):  # cat has more inputs
        if child is None:  # no gradient is wanted there, and the node may not have saved what it needs
            shaped.append(None)
            continue
        with torch.no_grad():
            g = compute(grad, node.saved)
        target = _input_shape(child)
        shaped.append(g.sum_to_size(target) if target is not None and g.shape != target else g)
    return tuple(shaped)


def _input_shape(child: Node):
    if child.leaf is not None:
        return child.leaf.shape
    meta = getattr(child.fn, "_input_metadata", None)
    return None if not meta else tuple(meta[0].shape)
