"""Lesson 02's exercise on where backprop stops: five inputs, each reaching the loss in its own way
(through an op, clone(), detach(), .data, .item(), torch.no_grad(), or created without
requires_grad). Which of them get a .grad? The expected set is read off what torch does; seed= picks
another arrangement."""
from __future__ import annotations

import torch

from ...i18n import N_, _
from ..choices import NamesForm
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import has_grad, run

NAMES = ["p", "q", "r", "s", "t"]
# way -> (how the input is made, the lines that use it, the term it adds to loss, why)
PASS = {
    "exp": ("", "{n}.exp()", N_("exp() is an ordinary differentiable op: the gradient flows back through it to {n}.")),
    "clone": ("", "{n}.clone() * 3", N_("clone() is recorded in the graph (CloneBackward0) and passes the gradient "
                                        "back to {n}.")),
    "square": ("", "{n} ** 2", N_("{n} ** 2 is an ordinary differentiable op: the gradient flows back through it.")),
}
STOP = {
    "detach": ("", "{n}.detach() * 2", N_("{n} is used only through {n}.detach(), a tensor outside the graph: no "
                                          "gradient flows back to {n}.")),
    "data": ("", "{n}.data * 2", N_("{n}.data is a tensor outside the graph (like detach(), but unsafe): no gradient "
                                    "flows back to {n}.")),
    "item": ("", "{n}.item() * 4", N_("{n}.item() is a Python number: autograd does not see it, so no gradient "
                                      "reaches {n}.")),
    "no_grad": ("with torch.no_grad():\n    {n}2 = {n} * 2\n", "{n}2",
                N_("{n}2 was computed under torch.no_grad(): nothing was recorded, so the graph of loss does not "
                   "reach {n}.")),
    "no_flag": ("", "{n} * 2", N_("{n} was created without requires_grad=True: autograd never tracks it and "
                                  "backward() gives it no .grad.")),
}
DEFAULT = ["exp", "detach", "clone", "data", "no_flag"]


def arrangement(seed) -> list[str]:
    """Which way each of p, q, r, s, t reaches the loss: two that pass, three that stop."""
    if seed is None:
        return DEFAULT
    gen = torch.Generator().manual_seed(int(seed))
    passing = [list(PASS)[i] for i in torch.randperm(len(PASS), generator=gen)[:2].tolist()]
    stopping = [list(STOP)[i] for i in torch.randperm(len(STOP), generator=gen)[:3].tolist()]
    ways = passing + stopping
    return [ways[i] for i in torch.randperm(len(ways), generator=gen).tolist()]


def code_for(ways: list[str], values: list[float]) -> str:
    lines, before, terms = [], [], []
    for n, way, v in zip(NAMES, ways, values, strict=True):
        flag = "" if way == "no_flag" else ", requires_grad=True"
        lines.append(f"{n} = torch.tensor({v}{flag})")
        make, use, _why = {**PASS, **STOP}[way]
        before.append(make.format(n=n))
        terms.append(use.format(n=n))
    return "\n".join(lines) + "\n" + "".join(before) + "loss = " + " + ".join(terms) + "\nloss.backward()"


@register("inputs_get_grad", N_("Which inputs get a gradient"), place=95)
def inputs_get_grad(seed=None) -> Exercise:
    ways = arrangement(seed)
    if seed is None:
        values = [1.5, -0.5, 2.0, 0.5, 3.0]
    else:
        gen = torch.Generator().manual_seed(int(seed) + 1)
        values = [round(float(v), 1) for v in torch.rand(5, generator=gen) * 4 - 2]
    setup = code_for(ways, values)
    ns = run(setup)
    expected = frozenset(n for n in NAMES if has_grad(ns, n))
    diagnosers = []
    for n, way in zip(NAMES, ways, strict=True):
        why = _({**PASS, **STOP}[way][2]).format(n=n)
        if n in expected:
            diagnosers.append(Diagnoser(why, when=lambda v, n=n: n not in v, key=f"missed_{way}"))
        else:
            diagnosers.append(Diagnoser(why, when=lambda v, n=n: n in v, key=f"through_{way}"))
    why_lines = "\n".join(_("{name}: {why}").format(name=n, why=_({**PASS, **STOP}[w][2]).format(n=n))
                          for n, w in zip(NAMES, ways, strict=True))
    receive = _("Receive a gradient: {names}.\n{why}") if expected else _("Receive a gradient: none.\n{why}")
    solution = receive.format(names=", ".join(sorted(expected)), why=why_lines)
    return Exercise(
        seed=seed, intro=_("Five inputs, each reaching the loss in its own way."), setup=setup,
        question=_("Which of {names} have a .grad that is not None after loss.backward()?").format(
            names=", ".join(NAMES)),
        answer_form=_("a set of names as strings (set() for none)"), form=NamesForm(NAMES), expected=expected,
        diagnosers=diagnosers, solution_text=solution, kind=_("the set of inputs"),
        hints=[_("For each input, follow its term to loss: is every step recorded by autograd?"),
               _("detach(), .data, .item() and torch.no_grad() leave the graph; a tensor created without "
                 "requires_grad=True was never in it.")],
        praise=_("A gradient reaches an input only along recorded, differentiable operations."))
