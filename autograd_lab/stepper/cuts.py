"""Where a backward graph is cut, named in the learner's words: frozen parameters
(requires_grad=False) of their modules, and which input of a node each saved constant was.

Code run under a grad mode leaves no node behind, so what can be shown is the cut: the input
position where a node recorded no edge (a stop), and, when the node saved that input for its own
backward, the value itself, compared by memory with the learner's tensors and parameters."""
from __future__ import annotations

import re
from collections.abc import Mapping

import torch

from ..graph import Graph, Node
from ..i18n import _
from ..names import learner_items, learner_tensors
from ..tensors import same_memory, shares_storage

_inputs_by_name: dict[str, tuple[str, ...] | None] = {}


def frozen_parameters(names: Mapping | None) -> list[tuple[str, str, torch.nn.Parameter]]:
    """(module name, parameter name, parameter) for each parameter that does not require grad in the
    learner's modules, once each, in their order.

    >>> layer = torch.nn.Linear(2, 1).requires_grad_(False)
    >>> [p for _m, p, _p in frozen_parameters({"layer": layer})]
    ['layer.weight', 'layer.bias']
    """
    seen, out = set(), []
    for name, value in learner_items(names):
        if isinstance(value, torch.nn.Module):
            for pname, p in value.named_parameters():
                if not p.requires_grad and id(p) not in seen:
                    seen.add(id(p))
                    out.append((name, f"{name}.{pname}", p))
    return out


def frozen_in(graph: Graph, names: Mapping | None) -> list[str]:
    """The learner's frozen parameters that take part in the graph: those of a module that has a
    leaf in it, or one that a node saved (a frozen weight used by a layer the gradient passes through).

    >>> D = torch.nn.Linear(2, 1).requires_grad_(False)
    >>> x = torch.ones(1, 2, requires_grad=True)
    >>> from autograd_lab.graph import snapshot
    >>> frozen_in(snapshot(D(x).sum()), {"D": D})
    ['D.weight', 'D.bias']
    """
    frozen = frozen_parameters(names)
    if not frozen:
        return []
    leaves = {id(n.leaf) for n in graph.leaves()}
    owners = {module for module, _label, _p in frozen
              if any(id(p) in leaves for p in _module(names, module).parameters())}
    saved = [v for n in graph.nodes if not n.is_accumulator
             for v in n.saved.values() if isinstance(v, torch.Tensor)]
    owners |= {module for module, _label, p in frozen if any(_is_param(v, p) for v in saved)}
    return [label for module, label, _p in frozen if module in owners]


def stop_reason(graph: Graph, node: Node, position: int, names: Mapping | None = None) -> str:
    """Why no gradient flows into input position of node: the saved value at that position when the
    op's inputs can be told apart, named as a frozen parameter or one of the learner's tensors; else
    the graph's own reason."""
    cause = stop_cause(graph, node, position, names)
    if cause is None:
        return _("an input that does not require grad (a constant, a tensor without requires_grad, or a detach())")
    kind, who = cause
    return {"frozen": _("{who}, a frozen parameter (requires_grad=False)"),
            "detach": _("a detach() of {who}: same memory, cut from the graph"),
            "tensor": _("{who}, which does not require grad"),
            "constant": _("the constant {who}")}[kind].format(who=who)


def stop_label(graph: Graph, node: Node, position: int, names: Mapping | None = None) -> str:
    """stop_reason in a few words, for a figure: 'stop: D.weight (frozen)', 'stop: detach() of fake'.

    >>> x = torch.ones(2, requires_grad=True)
    >>> from autograd_lab.graph import snapshot
    >>> g = snapshot((x * 3).sum())
    >>> stop_label(g, g.nodes[1], 1)
    'stop: 3'
    """
    cause = stop_cause(graph, node, position, names)
    if cause is None:
        return _("stop")
    kind, who = cause
    return {"frozen": _("stop: {who} (frozen)"), "detach": _("stop: detach() of {who}")}.get(
        kind, _("stop: {who}")).format(who=who)


def stop_cause(graph: Graph, node: Node, position: int, names: Mapping | None = None) -> tuple[str, str] | None:
    """(kind, who) of a stop: ('frozen', 'D.weight'), ('detach', 'fake'), ('tensor', 'ones') or
    ('constant', '0.5'); None when the graph does not tell."""
    value = input_value(node, position)
    if value is not None:
        cause = _frozen(value, names) or constant_cause(graph, value, names)
        if cause is not None:
            return cause
    constants = [v for v in node.saved.values() if isinstance(v, torch.Tensor) and not v.requires_grad]
    if value is None and len(node.stops) == 1 and len(constants) == 1:
        cause = _frozen(constants[0], names)
        if cause is not None:
            return cause
    if len(node.stops) == 1 and len(constants) == 1:
        return constant_cause(graph, constants[0], names)
    return None


def constant_cause(graph: Graph, value: torch.Tensor, names: Mapping | None = None) -> tuple[str, str] | None:
    for leaf in graph.leaves():
        if leaf.leaf is not None and same_memory(leaf.leaf, value):
            return "detach", leaf.label or _("a leaf")
    for name, candidate in learner_tensors(names):
        if same_memory(candidate, value):
            # the learner's tensor is in a graph; the saved one is not
            return ("detach", name) if candidate.requires_grad else ("tensor", name)
    if value.numel() == 1 and not value.is_complex():
        return "constant", f"{value.item():g}"
    return None


def input_value(node: Node, position: int) -> torch.Tensor | None:
    """The value the node saved for its input at position, when the op's schema tells its inputs
    apart and what the node saved agrees with its stops; else None."""
    inputs = input_names(node)
    if inputs is None:
        return None
    value = node.saved.get(inputs[position])
    return value if isinstance(value, torch.Tensor) else None


def input_names(node: Node) -> tuple[str, ...] | None:
    """The names of the node's inputs in next_functions order (('self', 'mat1', 'mat2') for
    AddmmBackward0), read from the ATen schema of its op; None when the overloads disagree or what
    the node saved contradicts its stops (the op's inputs are then not known for sure)."""
    if node.is_accumulator:
        return None
    names = _schema_inputs(node.name, len(node.next))
    if names is None:
        return None
    for position, (child, _nr) in enumerate(node.next):
        value = node.saved.get(names[position])
        if isinstance(value, torch.Tensor) and value.requires_grad != (child is not None):
            return None
    return names


def _schema_inputs(node_name: str, count: int) -> tuple[str, ...] | None:
    key = f"{node_name}/{count}"
    if key not in _inputs_by_name:
        _inputs_by_name[key] = _read_schema(node_name, count)
    return _inputs_by_name[key]


def _read_schema(node_name: str, count: int) -> tuple[str, ...] | None:
    base = re.sub(r"Backward\d*$", "", node_name)
    op = re.sub(r"(?<!^)(?=[A-Z])", "_", base).lower()
    try:
        packet = getattr(torch.ops.aten, op)
        overloads = [getattr(packet, o)._schema for o in packet.overloads()]
    except (AttributeError, RuntimeError):
        return None
    found = set()
    for schema in overloads:
        args = [a.name for a in schema.arguments if str(a.type) in ("Tensor", "Optional[Tensor]")]
        if schema.is_mutable or any(a.is_out for a in schema.arguments):
            continue
        if len(args) == count:
            found.add(tuple(args))
    return found.pop() if len(found) == 1 else None


def _frozen(value: torch.Tensor, names: Mapping | None) -> tuple[str, str] | None:
    for _module_name, label, p in frozen_parameters(names):
        if _is_param(value, p):
            return "frozen", label
    return None


def _is_param(value: torch.Tensor, p: torch.Tensor) -> bool:
    # a layer may save its weight transposed (Linear saves weight.t()): same memory, other window
    return value.numel() == p.numel() and shares_storage(value, p)


def _module(names: Mapping | None, name: str) -> torch.nn.Module:
    module = dict(learner_items(names))[name]
    assert isinstance(module, torch.nn.Module)
    return module
