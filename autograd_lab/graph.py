"""A snapshot of a backward graph: the nodes reachable from an output's grad_fn, with small stable
ids, their edges, what they saved (saved.py reads it), the leaves they feed and the learner's own
names for them.

Ids are given in the order a depth-first walk from the output meets the nodes, following
next_functions in order, so the same code always gives the same ids (never addresses)."""
from __future__ import annotations

import gc
import re
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch

from .i18n import _
from .names import label, learner_labels
from .saved import saved_values

ACCUMULATE = "AccumulateGrad"
ACCUMULATOR = torch._C._functions.AccumulateGrad  # type: ignore[attr-defined]  # its class

# Freeing a long chain of nodes that were each given a hook (and the hook removed again, as a
# recording does) crashes plain PyTorch: the C++ destructors of the nodes call one another, a stack
# frame set per node, and the process dies by SIGSEGV (with a 16 MiB stack a chain of 60,000 is freed
# and one of 85,000 crashes). Measured with scripts/measure_depth.py (each try a fresh process:
# y = x * 1.0001 N times, a post-hook registered and removed on every node, the graph dropped;
# bisected three times, the smallest kept): 40,285 nodes (the three gave 40,289, 40,285 and 40,290)
# with torch 2.13.0+cpu, Python 3.11.7, Linux x86_64 (glibc 2.36), an 8 MiB stack (ulimit -s 8192).
# The hook is not what arms it: a chain whose nodes were only reached from Python (next_functions, as
# walk() does) crashes from the same depth (--no-hooks: 40,282 and 40,290), one that Python never
# touched is freed at 200,000. A kernel frees a graph deeper in its own stack, and other builds
# differ: the lab records a third of it at most.
CRASH_DEPTH = 40_285
MAX_DEPTH = CRASH_DEPTH // 3
# a C++ node's name is its demangled class: torch::autograd::CopySlices, (anonymous namespace)::X,
# torch::autograd::CppNode<ns::MyFunction>; every namespace is dropped, inside <> too
NAMESPACE = re.compile(r"(?:\(anonymous namespace\)|[A-Za-z_]\w*)::")


def root_fns(root: Any) -> list[Any]:
    """The node functions a backward starts from: of one tensor or grad_fn, or of several (a
    tuple or list of them, as torch.autograd.backward takes), each once, in order, None left out.

    >>> x = torch.ones(2, requires_grad=True)
    >>> y = x * 2
    >>> [fn.name() for fn in root_fns((y.sum(), y, x))]
    ['SumBackward0', 'MulBackward0']
    """
    out: list[Any] = []
    for item in root if isinstance(root, (tuple, list)) else (root,):
        fn = item.grad_fn if isinstance(item, torch.Tensor) else item
        if fn is not None and fn not in out:
            out.append(fn)
    return out


def deeper_than(root: Any, limit: int) -> bool:
    """Whether a path down the graph from root (a tensor or a grad_fn) is longer than limit nodes:
    the longest path counts, not the shortest (a chain whose every node also feeds the root
    directly, as torch.stack(steps).sum() does, is as deep as the chain). Depth first, each node
    once: a node's height (the nodes on the longest path down from it) is known once its children's
    are, and the walk stops as soon as the path it is on, or that path and a height below it, is
    longer than limit, before the nodes further down are reached from Python (reaching them is what
    makes a very deep graph crash PyTorch when it is freed).

    >>> x = torch.ones(1, requires_grad=True)
    >>> (deeper_than((x * 2).sum(), 3), deeper_than((x * 2).sum(), 2))
    (False, True)
    >>> h = x
    >>> steps = [h := h * 2 for _ in range(5)]
    >>> deeper_than(torch.stack(steps).sum(), 7), deeper_than(torch.stack(steps).sum(), 8)
    (True, False)
    """
    height: dict[Any, int] = {}
    for top in root_fns(root):
        if top in height:
            continue
        fns, edges, at = [top], [top.next_functions], [0]  # the path: its nodes, their edges, the next edge
        while fns:
            children, i = edges[-1], at[-1]
            while i < len(children) and (children[i][0] is None or children[i][0] in height):
                if children[i][0] is not None and len(fns) + height[children[i][0]] > limit:
                    return True
                i += 1
            if i < len(children):
                at[-1] = i + 1
                if len(fns) + 1 > limit:
                    return True
                child = children[i][0]
                fns.append(child)
                edges.append(child.next_functions)
                at.append(0)
                continue
            fn = fns.pop()
            edges.pop()
            at.pop()
            height[fn] = 1 + max((height[c] for c, _nr in children if c is not None), default=0)
        if height[top] > limit:
            return True
    return False


def walk(root: Any) -> Iterator[tuple[Any, tuple[tuple[Any, int], ...]]]:
    """Every node reachable from root (a tensor or a grad_fn, or several: root_fns), once each,
    with its next_functions.

    The one walk over a backward graph in the lab: depth first, children in next_functions order,
    iterative (a 10,000-step loop must not hit Python's recursion limit). A node is yielded once
    its parent is, so the same graph always gives the same order.

    >>> x = torch.ones(2, requires_grad=True)
    >>> [fn.name() for fn, _ in walk((x * 2).sum())]
    ['SumBackward0', 'MulBackward0', 'torch::autograd::AccumulateGrad']
    """
    roots = root_fns(root)
    seen, stack = set(roots), list(reversed(roots))
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
    """The node's op name, with every C++ namespace dropped.

    >>> a = torch.ones(2, requires_grad=True)
    >>> b = a.clone()
    >>> _ = b[0].mul_(2)  # an in-place edit through a view
    >>> b.grad_fn.name(), short_name(b.grad_fn)
    ('torch::autograd::CopySlices', 'CopySlices')
    """
    name: str = fn.name()
    return NAMESPACE.sub("", name) if "::" in name else name


_names_by_type: dict[type, str] = {}


def _name_of_type(fn: Any) -> str:
    # one class per op: asking each node for its name costs more than the whole walk
    kind = type(fn)
    name = _names_by_type.get(kind)
    if name is None:
        name = _names_by_type[kind] = short_name(fn)
    return name


class Node:
    """One node of the backward graph. A plain class with slots: a big model has thousands."""

    __slots__ = ("_saved", "consumers", "fn", "freed", "id", "is_accumulator", "label", "leaf", "name", "next",
                 "seq")

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
        """How the node is named to a learner: 'PowBackward0 (y)', a long name or label shortened
        (names.label: the node keeps them whole)."""
        name = label(self.name)
        return f"{name} ({label(self.label)})" if self.label else name

    @property
    def stops(self) -> list[int]:
        """Positions of inputs that need no gradient: backprop stops there."""
        return [i for i, (child, _nr) in enumerate(self.next) if child is None]


class Graph:
    """The backward graph of one tensor, or of several outputs backwarded together. fns (every node
    function, in walk order) and kinds are there at once: a recording needs no more. The Nodes
    (ids, names, labels, edges) are made when first asked for (nodes, node_of, leaves...): a
    recording that no one looks at never makes them."""

    def __init__(self, root_fn: Any, labels: tuple[dict[Any, str], dict[int, str]]):
        self._root_fns, self._labels = root_fns(root_fn), labels
        self.fns: dict[Any, None] = dict.fromkeys([fn for fn, _edges in walk(self._root_fns)])
        self._nodes: list[Node] | None = None
        self._node_by_fn: dict[Any, Node] = {}
        self._accumulators: list[Any] | None = None
        self._kinds: set[type] | None = None

    def __repr__(self) -> str:
        return f"<Graph: {len(self.fns)} nodes>"

    @property
    def nodes(self) -> list[Node]:
        if self._nodes is None:
            with collector_paused():
                self._nodes = _made(self._root_fns, self._labels, self._node_by_fn)
        return self._nodes

    @property
    def _by_fn(self) -> dict[Any, Node]:
        if self._nodes is None:
            self.nodes  # noqa: B018 -- made on first use
        return self._node_by_fn

    @property
    def kinds(self) -> set[type]:
        """The node classes in the graph (one per op)."""
        if self._kinds is None:
            self._kinds = {type(fn) for fn in self.fns}
        return self._kinds

    def accumulators(self) -> list[Any]:
        """The leaves' AccumulateGrad functions, in walk order (fn.variable is the leaf)."""
        if self._accumulators is None:
            self._accumulators = [fn for fn in self.fns if type(fn) is ACCUMULATOR]
        return self._accumulators

    @property
    def root(self) -> Node:
        """The node of the (first) output."""
        return self.nodes[0]

    @property
    def roots(self) -> list[Node]:
        """The nodes of the outputs, in the order given (one unless several outputs were backwarded)."""
        by_fn = self._by_fn
        return [by_fn[fn] for fn in self._root_fns]

    def node_of(self, fn: Any) -> Node | None:
        return self._by_fn.get(fn) if fn in self.fns else None

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
        queue = deque(root for root in self.roots if waiting[root] == 0)
        while queue:
            node = queue.popleft()
            yield node
            for child, _nr in node.next:
                if child is not None:
                    waiting[child] -= 1
                    if waiting[child] == 0:
                        queue.append(child)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while thousands of objects are made and none is garbage:
    otherwise it would run many times over the learner's whole kernel meanwhile."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def snapshot(output: Any, names: Mapping[str, object] | None = None) -> Graph:
    """Walk output.grad_fn (or, for a tuple of outputs, each one's) and record the graph. names maps
    the learner's variable names to values.

    >>> x = torch.tensor([1., 2.], requires_grad=True)
    >>> [n.name for n in snapshot((x * x).sum(), {"x": x}).nodes]
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    """
    if not root_fns(output):
        raise ValueError(_("the tensor has no grad_fn"))
    return Graph(output, learner_labels(names))


def _made(roots: list[Any], labels: tuple[dict[Any, str], dict[int, str]], by_fn: dict[Any, Node]) -> list[Node]:
    """The graph's Nodes: walk()'s order fused with making them (one pass over the edges); a node is
    made on the edge that first meets it, which gives its id (held to walk()'s by
    tests/test_trace_property.py)."""
    node_labels, leaf_labels = labels
    nodes: list[Node] = []
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

    stack = list(reversed([visit(fn) for fn in roots]))
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
    return nodes
