"""A snapshot of a backward graph: the nodes reachable from an output's grad_fn, with small stable
ids, their edges, what they saved, the leaves they feed and the learner's own names for them.

Ids are given in the order a depth-first walk from the output meets the nodes, following
next_functions in order, so the same code always gives the same ids (never addresses)."""
from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any
from dataclasses import dataclass, field

import torch

from .i18n import _
from .names import learner_labels, learner_tensors
from .tensors import same_memory

ACCUMULATE = "AccumulateGrad"
# How PyTorch's message starts when a backward reaches values an earlier backward freed.
FREED = "Trying to backward through the graph a second time"
_saved_attrs_by_type: dict[type, tuple[str, ...]] = {}


def freed_message(what: str) -> str:
    """What to tell a learner whose graph was freed by an earlier backward."""
    return _("{what}'s graph was already used by a backward() and freed: autograd releases the "
             "values a graph saved as soon as a backward has used them, to save memory. Re-run the "
             "cell that computed {what}; or, if you really need two backwards, call the first one as "
             "{what}.backward(retain_graph=True), which keeps the saved values alive.").format(what=what)


def walk(root: Any) -> Iterator[tuple[Any, tuple[tuple[Any, int], ...]]]:
    """Every node reachable from root (a tensor or a grad_fn), once each, with its next_functions.

    The one walk over a backward graph in the lab: depth first, children in next_functions order,
    iterative (a 10,000-step loop must not hit Python's recursion limit). A node is yielded once
    its parent is, so the same graph always gives the same order.

    >>> x = torch.ones(2, requires_grad=True)
    >>> [fn.name() for fn, _ in walk((x * 2).sum())]
    ['SumBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    """
    fn = root.grad_fn if isinstance(root, torch.Tensor) else root
    if fn is None:
        return
    seen, stack = {fn}, [fn]
    while stack:
        fn = stack.pop()
        edges = fn.next_functions
        yield fn, edges
        new = []
        for child, _nr in edges:
            if child is not None and child not in seen:
                seen.add(child)
                new.append(child)
        stack.extend(reversed(new))


def short_name(fn: Any) -> str:
    """The node's op name, with the accumulator's C++ namespace dropped."""
    name = fn.name()
    return ACCUMULATE if name.endswith("AccumulateGrad") else name


_names_by_type: dict[type, str] = {}


def _name_of_type(fn: Any) -> str:
    # one class per op: asking each node for its name costs more than the whole walk
    kind = type(fn)
    name = _names_by_type.get(kind)
    if name is None:
        name = _names_by_type[kind] = short_name(fn)
    return name


class Node:
    """One node of the backward graph. A plain class with slots: a big model has thousands, and
    the recording of a backward creates them all."""

    __slots__ = (
        "_saved",
        "consumers",
        "fn",
        "freed",
        "id",
        "is_accumulator",
        "label",
        "leaf",
        "name",
        "next",
        "seq",
    )

    def __init__(self, id: int, name: str, fn: Any, seq: int):
        self.id = id
        self.name = name
        self.fn = fn
        self.seq = seq
        self.next: list[tuple[Node | None, int]] = []  # [(Node or None, input_nr)], aligned with next_functions
        self.leaf: torch.Tensor | None = None
        self.label: str | None = None  # the learner's name for the tensor it produced (or the leaf)
        self.consumers: list[Node] = []  # nodes that send a gradient here
        self.freed = False  # its saved values were released by a backward
        self.is_accumulator = name == ACCUMULATE
        self._saved: dict[str, Any] | None = None

    def __repr__(self) -> str:
        return f"Node({self.id}, {self.title})"

    @property
    def saved(self) -> dict[str, Any]:
        """What the node saved for backward ("self" -> value, from its _saved_* attributes), read on
        first use: reading them for every node would slow every recording. Empty once freed."""
        if self._saved is None:
            self._saved, self.freed = saved_values(self.fn)
        return self._saved

    @property
    def title(self) -> str:
        """How the node is named to a learner: 'PowBackward0 (y)'."""
        return f"{self.name} ({self.label})" if self.label else self.name

    @property
    def stops(self) -> list[int]:
        """Positions of inputs that need no gradient: backprop stops there."""
        return [i for i, (child, _nr) in enumerate(self.next) if child is None]


@dataclass(eq=False)
class Graph:
    nodes: list[Node]
    _by_fn: dict[Any, Node] = field(default_factory=dict, repr=False)

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def node_of(self, fn: Any) -> Node | None:
        return self._by_fn.get(fn)

    def leaves(self) -> list[Node]:
        return [n for n in self.nodes if n.is_accumulator]

    def stops(self) -> list[tuple[Node, int]]:
        return [(n, i) for n in self.nodes for i in n.stops]

    def dependencies(self) -> dict[Node, int]:
        """How many gradients each node waits for before it can run (one per incoming edge)."""
        return {n: len(n.consumers) for n in self.nodes}

    def topological(self) -> Iterator[Node]:
        """Nodes so that each comes after every node that sends it a gradient (breadth first)."""
        waiting = self.dependencies()
        queue = deque([self.root])
        while queue:
            node = queue.popleft()
            yield node
            for child, _nr in node.next:
                if child is not None:
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        queue.append(child)


def snapshot(output: torch.Tensor, names: Mapping[str, object] | None = None) -> Graph:
    """Walk output.grad_fn and record the graph. names maps the learner's variable names to values.

    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> [n.name for n in snapshot((x * x).sum(), {"x": x}).nodes]
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    root_fn = output.grad_fn
    if root_fn is None:
        raise ValueError(_("the tensor has no grad_fn"))
    node_labels, leaf_labels = learner_labels(names)
    nodes: list[Node] = []
    by_fn: dict[Any, Node] = {}
    get, add, name_of = by_fn.get, nodes.append, _names_by_type.get

    def visit(fn: Any) -> Node:
        node = Node(len(nodes), name_of(type(fn)) or _name_of_type(fn), fn, fn._sequence_nr())
        by_fn[fn] = node
        add(node)
        if node.is_accumulator:
            node.leaf = fn.variable
            node.label = leaf_labels.get(id(node.leaf))
        elif node_labels:
            node.label = node_labels.get(fn)
        return node

    # walk()'s order fused with making the Nodes (one pass over the edges: every recording starts
    # here); a node is made on the edge that first meets it, which gives its id (held to walk()'s
    # by tests/test_trace_property.py)
    stack = [visit(root_fn)]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        out, new = node.next, []
        for child_fn, input_nr in node.fn.next_functions:
            if child_fn is None:
                out.append((None, input_nr))
                continue
            child = get(child_fn)
            if child is None:
                child = visit(child_fn)
                new.append(child)
            child.consumers.append(node)
            out.append((child, input_nr))
        push(reversed(new))
    return Graph(nodes, by_fn)


def saved_values(fn: Any) -> tuple[dict[str, Any], bool]:
    """What a node saved for backward ({"self": x, ...} from its _saved_* attributes), and whether
    an earlier backward freed them. Errors other than "freed" (a saved value edited in place since)
    are raised.

    >>> x = torch.ones(2, requires_grad=True)
    >>> sorted(saved_values((x * x).grad_fn)[0])
    ['other', 'self']
    """
    attrs = _saved_attrs_by_type.get(type(fn))
    if attrs is None:
        attrs = tuple(a for a in dir(fn) if a.startswith("_saved_"))
        _saved_attrs_by_type[type(fn)] = attrs
    saved, freed = {}, False
    for attr in attrs:
        try:
            saved[attr[len("_saved_"):]] = getattr(fn, attr)
        except RuntimeError as err:
            if FREED in str(err):
                freed = True
            else:
                raise
    return saved, freed


def label_of(value: object, graph: Graph, names: Mapping[str, object] | None = None) -> str | None:
    """The learner's name for a saved tensor, if it is one of theirs (same memory, same view)."""
    if not isinstance(value, torch.Tensor):
        return None
    for name, candidate in learner_tensors(names):
        if same_memory(candidate, value):
            return name
    for node in graph.nodes:
        if node.leaf is not None and node.label and same_memory(node.leaf, value):
            return node.label
    return None
