"""Lesson 01's exercise on the engine's order: in which order can backward() run the nodes of a
graph with two branches? What the engine guarantees is graded: a node runs after every gradient it
waits for has arrived (each node after the nodes that send to it). Which of the ready nodes goes
first is the engine's choice, not a guarantee, so any order that respects the waits is right. The
order shown is the one the engine really ran, recorded with a prehook on every node (never typed
in)."""
from __future__ import annotations

import torch

from ...graph import ACCUMULATE, short_name, walk
from ...words import words_of
from ..exercise import Diagnoser, Exercise
from ..registry import register
from ..run import run
from ..sequences import OrderForm
from .common import stated

W = words_of(__name__)

# (op code, its node's name): ops whose nodes have distinct names, defined for any real input
OPS = [("exp()", "ExpBackward0"), ("sin()", "SinBackward0"), ("cos()", "CosBackward0"),
       ("tanh()", "TanhBackward0"), ("sigmoid()", "SigmoidBackward0")]
LEAVES = "a = torch.tensor({a}, dtype=torch.double, requires_grad=True)\n" \
         "b = torch.tensor({b}, dtype=torch.double, requires_grad=True)\n"


def engine_order(code: str, output: str = "s") -> tuple[list[str], dict[str, list[str]], list[str]]:
    """Run code, then backward() from `output` with a prehook on every node: the labels of the nodes
    in the order the engine ran them, the other words that name each node, and the op nodes in the
    order the forward pass created them (waits() gives what each node waits for).

    >>> engine_order("x = torch.ones(1, requires_grad=True)\\ns = (x * 2).sum()")[0]
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad(x)']
    """
    ns = run(code)
    labels: dict = {}
    aliases: dict[str, list[str]] = {}
    tensors = {name: value for name, value in ns.items() if isinstance(value, torch.Tensor)}
    for fn, _edge in walk(ns[output]):
        name = short_name(fn)
        if name == ACCUMULATE:
            leaf = next((n for n, t in tensors.items() if t is fn.variable), "?")
            labels[fn] = f"{ACCUMULATE}({leaf})"
            aliases[labels[fn]] = [f"{ACCUMULATE} ({leaf})", f"{leaf}.grad", leaf]
        else:
            labels[fn] = name
            owner = [n for n, t in tensors.items() if t.grad_fn is fn]
            aliases[name] = owner + [name.rstrip("0123456789"), name.split("Backward")[0]]
    created = [labels[fn] for fn in sorted(labels, key=lambda f: f._sequence_nr())
               if not labels[fn].startswith(ACCUMULATE)]
    order: list[str] = []
    handles = [fn.register_prehook(lambda grads, fn=fn: order.append(labels[fn])) for fn in labels]
    try:
        ns[output].backward()
    finally:
        for h in handles:
            h.remove()
    return order, aliases, created


def waits(code: str, output: str = "s") -> dict[str, set[str]]:
    """Each node's label (as engine_order names it) and the labels of the nodes that send it a
    gradient: it runs only after all of them.

    >>> waits("x = torch.ones(1, requires_grad=True); s = (x * 2).sum()")["AccumulateGrad(x)"]
    {'MulBackward0'}
    """
    ns = run(code)
    tensors = {name: value for name, value in ns.items() if isinstance(value, torch.Tensor)}

    def label(fn) -> str:
        if short_name(fn) == ACCUMULATE:
            return f"{ACCUMULATE}({next((n for n, t in tensors.items() if t is fn.variable), '?')})"
        return short_name(fn)

    found: dict[str, set[str]] = {}
    for fn, edges in walk(ns[output]):
        found.setdefault(label(fn), set())
        for child, _slot in edges:
            if child is not None:
                found.setdefault(label(child), set()).add(label(fn))
    return found


def _code(a_op: str, b_op: str, a_first: bool, a: float, b: float, twice: bool) -> str:
    u = f"u = a.{a_op}" + (" * 3" if twice else "")
    v = f"v = b.{b_op}"
    first, second = (u, v) if a_first else (v, u)
    return LEAVES.format(a=a, b=b) + f"{first}\n{second}\ns = u + v\n"


@register("engine_order", W["engine_order"]["title"], lesson=1)
def engine_order_exercise(seed=None) -> Exercise:
    t = W["engine_order"]
    d = t["diagnoses"]
    if seed is None:  # not lesson 01's example (exp and sin), which shows the engine's order
        a_op, b_op, a_first, a, b, twice = "cos()", "tanh()", False, 1.5, 0.4, True
    else:
        gen = torch.Generator().manual_seed(int(seed))
        i, j = torch.randperm(len(OPS), generator=gen)[:2].tolist()
        a_op, b_op = OPS[i][0], OPS[j][0]
        a_first, twice = bool(torch.randint(0, 2, (1,), generator=gen)), bool(torch.randint(0, 2, (1,), generator=gen))
        a, b = (round(float(v), 1) for v in torch.rand(2, generator=gen) * 3)
    code = _code(a_op, b_op, a_first, a, b, twice)
    order, aliases, created = engine_order(code)
    diagnosers = [Diagnoser(
        d("forward_order"), when=lambda v: [n for n in v if not n.startswith(ACCUMULATE)] == created,
        key="forward_order")]
    return Exercise(
        seed=seed, setup=code + "s.backward()", form=OrderForm(order, aliases, waits(code)), expected=tuple(order),
        solution_text=t("solution").format(order=", ".join(order)), diagnosers=diagnosers,
        example='ex.check("AddBackward0, ...")', **stated(t))


def _distinct(mistakes, expected) -> list[Diagnoser]:
    """One diagnoser per wrong order; two mistakes that give the same order are named together,
    never one alone (a diagnosis must not rest on a coincidence)."""
    by_value: dict[tuple, list[tuple[str, str]]] = {}
    for key, message, value in mistakes:
        if value != expected:
            by_value.setdefault(value, []).append((key, message))
    found = []
    for value, group in by_value.items():
        message = group[0][1]
        if len(group) > 1:
            for _key, another in group[1:]:
                message = W["several_mistakes"]("one_more").format(mistakes=message, another=another)
            message = W["several_mistakes"]("fits").format(mistakes=message)
        found.append(Diagnoser(message, when=lambda v, value=value: v == value,
                               key="+".join(key for key, _message in group)))
    return found
