"""Lesson 02's exercise on where backprop stops: five inputs, each reaching the loss in its own way
(through an op, clone(), detach(), .data, .item(), torch.no_grad(), or created without
requires_grad). Which of them get a .grad? The expected set is read off what torch does; seed= picks
another arrangement. The sentences are in stops.toml."""
from __future__ import annotations

import torch

from ...i18n import _
from ...words import words_of
from ..choices import NamesForm
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import has_grad, run
from .common import stated

W = words_of(__name__)
WHY = W["inputs_get_grad"]["diagnoses"]
NAMES = ["p", "q", "r", "s", "t"]
# way -> (how the input is made, the term it adds to loss, why: the English sentence, translated where it is shown)
PASS = {
    "exp": ("", "{n}.exp()", WHY["missed_exp"]),
    "clone": ("", "{n}.clone() * 3", WHY["missed_clone"]),
    "square": ("", "{n} ** 2", WHY["missed_square"]),
}
STOP = {
    "detach": ("", "{n}.detach() * 2", WHY["through_detach"]),
    "data": ("", "{n}.data * 2", WHY["through_data"]),
    "item": ("", "{n}.item() * 4", WHY["through_item"]),
    "no_grad": ("with torch.no_grad():\n    {n}2 = {n} * 2\n", "{n}2", WHY["through_no_grad"]),
    "no_flag": ("", "{n} * 2", WHY["through_no_flag"]),
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


@register("inputs_get_grad", W["inputs_get_grad"]["title"], lesson=2)
def inputs_get_grad(seed=None) -> Exercise:
    t = W["inputs_get_grad"]
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
    why_lines = "\n".join(t("why_line").format(name=n, why=_({**PASS, **STOP}[w][2]).format(n=n))
                          for n, w in zip(NAMES, ways, strict=True))
    receive = t("solution") if expected else t("solution_none")
    solution = receive.format(names=", ".join(sorted(expected)), why=why_lines)
    return Exercise(seed=seed, setup=setup, form=NamesForm(NAMES), expected=expected, diagnosers=diagnosers,
                    solution_text=solution, **stated(t, question=t("question").format(names=", ".join(NAMES))))
