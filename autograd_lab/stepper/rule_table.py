"""The table of local rules: for each common backward node, the formula a learner reads (one line
per input, with {placeholders} for what the node saved) and the same rule as code, one function
(grad, saved) -> gradient per input, so a test can check each formula against the engine."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..i18n import N_


@dataclass(frozen=True)
class Rule:
    formula: str  # one line per input, with {placeholders} for saved values and learner names ({input}: the
    # node's only input), in English, marked N_(): rules.formula translates it
    compute: tuple = ()  # one function (grad, saved) -> gradient per input, aligned with the node's inputs


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
    "AddBackward0": Rule(N_("to {self}: grad\nto {other}: grad * {alpha}"),
                         (lambda g, s: g, lambda g, s: g * s["alpha"])),
    "SubBackward0": Rule(N_("to {self}: grad\nto {other}: -grad * {alpha}"),
                         (lambda g, s: g, lambda g, s: -g * s["alpha"])),
    "RsubBackward1": Rule(N_("to {self}: -grad * {alpha}"), (lambda g, s: -g * s["alpha"],)),
    "MulBackward0": Rule(N_("to {self}: grad * {other}\nto {other}: grad * {self}"),
                         (lambda g, s: g * s["other"], lambda g, s: g * s["self"])),
    "DivBackward0": Rule(N_("to {self}: grad / {other}\nto {other}: -grad * {self} / {other}^2"),
                         (lambda g, s: g / s["other"], lambda g, s: -g * s["self"] / s["other"] ** 2)),
    "NegBackward0": Rule(N_("to {input}: -grad"), (lambda g, s: -g,)),
    "PowBackward0": Rule(N_("to {self}: grad * {exponent} * {self}^({exponent} - 1)"),
                         (lambda g, s: g * s["exponent"] * s["self"] ** (s["exponent"] - 1),)),
    "PowBackward1": Rule(N_("to {self}: grad * {exponent} * {self}^({exponent} - 1)\n"
                         "to {exponent}: grad * {result} * log({self})"),
                         (lambda g, s: g * s["exponent"] * s["self"] ** (s["exponent"] - 1),
                          lambda g, s: g * s["result"] * s["self"].log())),
    "ExpBackward0": Rule(N_("to {input}: grad * {result}   (exp is its own derivative)"),
                         (lambda g, s: g * s["result"],)),
    "LogBackward0": Rule(N_("to {self}: grad / {self}"), (lambda g, s: g / s["self"],)),
    "SinBackward0": Rule(N_("to {self}: grad * cos({self})"), (lambda g, s: g * s["self"].cos(),)),
    "CosBackward0": Rule(N_("to {self}: -grad * sin({self})"), (lambda g, s: -g * s["self"].sin(),)),
    "TanhBackward0": Rule(N_("to {input}: grad * (1 - {result}^2)"), (lambda g, s: g * (1 - s["result"] ** 2),)),
    "SigmoidBackward0": Rule(N_("to {input}: grad * {result} * (1 - {result})"),
                             (lambda g, s: g * s["result"] * (1 - s["result"]),)),
    "ReluBackward0": Rule(N_("to {input}: grad where {result} > 0, else 0"), (lambda g, s: g * (s["result"] > 0),)),
    "SqrtBackward0": Rule(N_("to {input}: grad / (2 * {result})"), (lambda g, s: g / (2 * s["result"]),)),
    "SumBackward0": Rule(N_("to {input}: grad copied to every element (shape {self_sym_sizes})"),
                         (lambda g, s: g.expand(tuple(s["self_sym_sizes"])),)),
    "SumBackward1": Rule(N_("to {input}: grad copied along dim {dim} (shape {self_sym_sizes})"),
                         (lambda g, s: _unreduce(g, s),)),
    "MeanBackward0": Rule(N_("to {input}: grad / {self_sym_numel} for every element (shape {self_sym_sizes})"),
                          (lambda g, s: _mean_grad(g, s)[0],)),
    "MeanBackward1": Rule(N_("to {input}: grad / (elements averaged) copied along dim {dim}"),
                          (lambda g, s: _mean_grad(g, s)[0],)),
    "MmBackward0": Rule(N_("to {self}: grad @ {mat2}.T\nto {mat2}: {self}.T @ grad"),
                        (lambda g, s: g @ s["mat2"].mT, lambda g, s: s["self"].mT @ g)),
    "MvBackward0": Rule(N_("to {self}: outer(grad, {vec})\nto {vec}: {self}.T @ grad"),
                        (lambda g, s: torch.outer(g, s["vec"]), lambda g, s: s["self"].mT @ g)),
    "AddmmBackward0": Rule(N_("to bias: grad * {beta}, summed over the batch\nto {mat1}: {alpha} * grad @ {mat2}.T\n"
                           "to {mat2}: {alpha} * {mat1}.T @ grad"),
                           (lambda g, s: g * s["beta"],
                            lambda g, s: s["alpha"] * g @ s["mat2"].mT, lambda g, s: s["alpha"] * s["mat1"].mT @ g)),
    "TBackward0": Rule(N_("to {input}: grad.T (transposed back)"), (lambda g, s: g.mT,)),
    "TransposeBackward0": Rule(N_("to {input}: grad.transpose({dim0}, {dim1})"),
                               (lambda g, s: g.transpose(s["dim0"], s["dim1"]),)),
    "ViewBackward0": Rule(N_("to {input}: grad reshaped back to {self_sym_sizes}"),
                          (lambda g, s: g.reshape(tuple(s["self_sym_sizes"])),)),
    "UnsafeViewBackward0": Rule(N_("to {input}: grad reshaped back to {self_sym_sizes}"),
                                (lambda g, s: g.reshape(tuple(s["self_sym_sizes"])),)),
    "ExpandBackward0": Rule(N_("to {input}: grad summed back to shape {self_sym_sizes}"),
                            (lambda g, s: g.sum_to_size(tuple(s["self_sym_sizes"])),)),
    "SelectBackward0": Rule(N_("to {input}: zeros of shape {self_sym_sizes}, grad placed at index {index} of dim "
                               "{dim}"),
                            (lambda g, s: _select(g, s)[0],)),
    "SliceBackward0": Rule(N_("to {input}: zeros of shape {self_sym_sizes}, grad placed in {start}:{end}:{step} "
                           "of dim {dim}"),
                           (lambda g, s: _slice(g, s)[0],)),
    "IndexBackward0": Rule(N_("to {input}: zeros of shape {self_sym_sizes}, grad added at the indexed places"),
                           (lambda g, s: _index(g, s)[0],)),
    "CatBackward0": Rule(N_("to each input: its own slice of grad along dim {dim}")),
    "CloneBackward0": Rule(N_("to {input}: grad, unchanged (a copy passes gradients straight through)"),
                           (lambda g, s: g,)),
    "AccumulateGrad": Rule(N_("{leaf}.grad += grad   (a leaf keeps what arrives; nothing is sent on)")),
}
