"""The local rule of each common backward node: a formula a learner can read, written with the
values the node saved, and the same rule as code, so a test can check the formula against what the
engine really computed. Any other op gets a generic sentence."""
from __future__ import annotations

from dataclasses import dataclass
from string import Formatter
from typing import Callable

import torch

from ..graph import Node


@dataclass(frozen=True)
class Rule:
    formula: str  # one line per input, with {placeholders} for saved values and learner names
    compute: tuple = ()  # one function (grad, saved) -> gradient per input, aligned with next_functions


def _mean_grad(g, s):
    return ((g / s["self_sym_numel"]).expand(tuple(s["self_sym_sizes"])) if g.dim() == 0 or "dim" not in s
            else _unreduce(g, s) / (s["self_sym_numel"] / _kept_numel(s)),)


def _kept_numel(s):
    n = 1
    for size in _reduced_shape(s):
        n *= size
    return n


def _reduced_shape(s):
    sizes = list(s["self_sym_sizes"])
    dims = [d % len(sizes) for d in s["dim"]] if sizes else []
    return [size for i, size in enumerate(sizes) if i not in dims]


def _unreduce(g, s):
    sizes = tuple(s["self_sym_sizes"])
    if "dim" in s and not s["keepdim"]:
        for d in sorted(d % len(sizes) for d in s["dim"]):
            g = g.unsqueeze(d)
    return g.expand(sizes)


def _select(g, s):
    out = g.new_zeros(tuple(s["self_sym_sizes"]))
    out.select(s["dim"], s["index"]).copy_(g)
    return (out,)


def _slice(g, s):
    out = g.new_zeros(tuple(s["self_sym_sizes"]))
    end = min(s["end"], out.shape[s["dim"]])
    out.narrow(s["dim"], 0, out.shape[s["dim"]])[(slice(None),) * s["dim"] + (slice(s["start"], end, s["step"]),)] = g
    return (out,)


def _index(g, s):
    out = g.new_zeros(tuple(s["self_sym_sizes"]))
    return (out.index_put(tuple(s["indices"]), g, accumulate=True),)


RULES: dict[str, Rule] = {
    "AddBackward0": Rule("to {self}: grad\nto {other}: grad * {alpha}", (lambda g, s: g, lambda g, s: g * s["alpha"])),
    "SubBackward0": Rule("to {self}: grad\nto {other}: -grad * {alpha}", (lambda g, s: g, lambda g, s: -g * s["alpha"])),
    "RsubBackward1": Rule("to {self}: -grad * {alpha}", (lambda g, s: -g * s["alpha"],)),
    "MulBackward0": Rule("to {self}: grad * {other}\nto {other}: grad * {self}",
                         (lambda g, s: g * s["other"], lambda g, s: g * s["self"])),
    "DivBackward0": Rule("to {self}: grad / {other}\nto {other}: -grad * {self} / {other}^2",
                         (lambda g, s: g / s["other"], lambda g, s: -g * s["self"] / s["other"] ** 2)),
    "NegBackward0": Rule("to input: -grad", (lambda g, s: -g,)),
    "PowBackward0": Rule("to {self}: grad * {exponent} * {self}^({exponent} - 1)",
                         (lambda g, s: g * s["exponent"] * s["self"] ** (s["exponent"] - 1),)),
    "PowBackward1": Rule("to {self}: grad * {exponent} * {self}^({exponent} - 1)\n"
                         "to {exponent}: grad * {result} * log({self})",
                         (lambda g, s: g * s["exponent"] * s["self"] ** (s["exponent"] - 1), lambda g, s: g * s["result"] * s["self"].log())),
    "ExpBackward0": Rule("to input: grad * {result}   (exp is its own derivative)", (lambda g, s: g * s["result"],)),
    "LogBackward0": Rule("to {self}: grad / {self}", (lambda g, s: g / s["self"],)),
    "SinBackward0": Rule("to {self}: grad * cos({self})", (lambda g, s: g * s["self"].cos(),)),
    "CosBackward0": Rule("to {self}: -grad * sin({self})", (lambda g, s: -g * s["self"].sin(),)),
    "TanhBackward0": Rule("to input: grad * (1 - {result}^2)", (lambda g, s: g * (1 - s["result"] ** 2),)),
    "SigmoidBackward0": Rule("to input: grad * {result} * (1 - {result})",
                             (lambda g, s: g * s["result"] * (1 - s["result"]),)),
    "ReluBackward0": Rule("to input: grad where {result} > 0, else 0", (lambda g, s: g * (s["result"] > 0),)),
    "SqrtBackward0": Rule("to input: grad / (2 * {result})", (lambda g, s: g / (2 * s["result"]),)),
    "SumBackward0": Rule("to input: grad copied to every element (shape {self_sym_sizes})",
                         (lambda g, s: g.expand(tuple(s["self_sym_sizes"])),)),
    "SumBackward1": Rule("to input: grad copied along dim {dim} (shape {self_sym_sizes})",
                         (lambda g, s: _unreduce(g, s),)),
    "MeanBackward0": Rule("to input: grad / {self_sym_numel} for every element (shape {self_sym_sizes})", (lambda g, s: _mean_grad(g, s)[0],)),
    "MeanBackward1": Rule("to input: grad / (elements averaged) copied along dim {dim}", (lambda g, s: _mean_grad(g, s)[0],)),
    "MmBackward0": Rule("to {self}: grad @ {mat2}.T\nto {mat2}: {self}.T @ grad",
                        (lambda g, s: g @ s["mat2"].mT, lambda g, s: s["self"].mT @ g)),
    "MvBackward0": Rule("to {self}: outer(grad, {vec})\nto {vec}: {self}.T @ grad",
                        (lambda g, s: torch.outer(g, s["vec"]), lambda g, s: s["self"].mT @ g)),
    "AddmmBackward0": Rule("to bias: grad * {beta}, summed over the batch\nto {mat1}: {alpha} * grad @ {mat2}.T\n"
                           "to {mat2}: {alpha} * {mat1}.T @ grad",
                           (lambda g, s: g * s["beta"], lambda g, s: s["alpha"] * g @ s["mat2"].mT, lambda g, s: s["alpha"] * s["mat1"].mT @ g)),
    "TBackward0": Rule("to input: grad.T (transposed back)", (lambda g, s: g.mT,)),
    "TransposeBackward0": Rule("to input: grad.transpose({dim0}, {dim1})",
                               (lambda g, s: g.transpose(s["dim0"], s["dim1"]),)),
    "ViewBackward0": Rule("to input: grad reshaped back to {self_sym_sizes}",
                          (lambda g, s: g.reshape(tuple(s["self_sym_sizes"])),)),
    "UnsafeViewBackward0": Rule("to input: grad reshaped back to {self_sym_sizes}",
                                (lambda g, s: g.reshape(tuple(s["self_sym_sizes"])),)),
    "ExpandBackward0": Rule("to input: grad summed back to shape {self_sym_sizes}",
                            (lambda g, s: g.sum_to_size(tuple(s["self_sym_sizes"])),)),
    "SelectBackward0": Rule("to input: zeros of shape {self_sym_sizes}, grad placed at index {index} of dim {dim}", (lambda g, s: _select(g, s)[0],)),
    "SliceBackward0": Rule("to input: zeros of shape {self_sym_sizes}, grad placed in {start}:{end}:{step} of dim {dim}",
                           (lambda g, s: _slice(g, s)[0],)),
    "IndexBackward0": Rule("to input: zeros of shape {self_sym_sizes}, grad added at the indexed places", (lambda g, s: _index(g, s)[0],)),
    "CatBackward0": Rule("to each input: its own slice of grad along dim {dim}"),
    "CloneBackward0": Rule("to input: grad, unchanged (a copy passes gradients straight through)", (lambda g, s: g,)),
    "AccumulateGrad": Rule("{leaf}.grad += grad   (a leaf keeps what arrives; nothing is sent on)"),
}


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
        return Rule(f"your backward: the engine called {cls.__name__}.backward(ctx, grad) with the gradient "
                    f"arriving")
    return RULES.get(node.name) or Rule(
        f"to each input: grad times the local derivative of {op_name(node.name)}, by PyTorch's own "
        f"formula for {op_name(node.name)}")


def op_name(node_name: str) -> str:
    """'PowBackward0' -> 'pow'."""
    base = node_name.split("Backward")[0]
    return base.lower() if base else node_name


def formula(node: Node, name_of: Callable[[object], str | None]) -> str:
    """The node's rule as text, with saved values shown by the learner's names or their values.

    name_of gives the learner's name for a saved tensor, or None. An input that needs no gradient
    is marked as the place where backprop stops."""
    rule = rule_for(node)
    if learner_function(node) is not None:
        return "\n".join([rule.formula] + [
            f"to {_input_name(node, i)}: " + ("what your backward returned for it" if child is not None
                                               else "nothing (needs no gradient: backprop stops here)")
            for i, (child, _) in enumerate(node.next)])
    fields = {f for _, f, _, _ in Formatter().parse(rule.formula) if f}
    positions = _ADDMM_INPUTS if node.name == "AddmmBackward0" else _INPUTS
    values = {}
    for field in fields:
        saved = node.saved.get(field)
        if field == "leaf":
            values[field] = node.label or "the leaf"
        elif saved is not None:
            values[field] = _short(saved, name_of, field)
        elif field in positions and positions[field] < len(node.next):
            values[field] = _input_name(node, positions[field])
        else:
            values[field] = field
    lines = rule.formula.format(**values).split("\n")
    lines = [line.replace("to input:", f"to {_input_name(node, i)}:", 1) if i < len(node.next) else line
             for i, line in enumerate(lines)]
    if len(lines) == len(node.next):
        lines = [line + ("   (needs no gradient: backprop stops here)" if child is None else "")
                 for line, (child, _) in zip(lines, node.next)]
    return "\n".join(lines)


_INPUTS = {"self": 0, "other": 1, "vec": 1, "mat2": 1, "exponent": 1}
_ADDMM_INPUTS = {"mat1": 1, "mat2": 2}


def _input_name(node: Node, position: int) -> str:
    child = node.next[position][0]
    if child is not None and child.label:
        return child.label
    return "input" if len(node.next) == 1 else f"input {position + 1}"


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
    if not rule.compute or not isinstance(grad, torch.Tensor):
        return None
    shaped: list = []
    for compute, (child, _) in zip(rule.compute, node.next):
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
