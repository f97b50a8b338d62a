"""Property-based: on random graphs, the recording agrees with torch and changes nothing.

Graphs mix elementwise ops, reductions with broadcasting, matmul, indexing, cat, tensors used
several times, detach() in the middle and non-leaf tensors that retain_grad()."""
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

from autograd_lab import trace
from helpers import assert_unchanged, hooks_on, state, walk

UNARY = {
    "exp": lambda a: (a * 0.5).exp(), "sin": torch.sin, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "relu": torch.relu, "neg": torch.neg, "square": lambda a: a ** 2, "clone": torch.clone,
}
BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": lambda a, b: a / (1 + b * b),
    "bcast_sum": lambda a, b: a * b.sum(0, keepdim=True),
    "bcast_mean": lambda a, b: a + b.mean(1, keepdim=True),
    "matmul": lambda a, b: a @ (b.t() @ b) * 0.1,
    "cat": lambda a, b: torch.cat([a[:1], b[1:]]),
    "index": lambda a, b: a[[1, 0]] * b,
    "select": lambda a, b: a[0].expand(2, 3) + b,
    "detach": lambda a, b: a.detach() * b,
    "view": lambda a, b: (a.reshape(-1) + b.view(-1)).view(2, 3),
}
op = st.one_of(
    st.tuples(st.just("u"), st.sampled_from(sorted(UNARY)), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("b"), st.sampled_from(sorted(BINARY)), st.integers(0, 99), st.integers(0, 99)),
)


@st.composite
def graphs(draw):
    n_leaves = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 16))
    ops = draw(st.lists(op, min_size=1, max_size=8))
    retain = draw(st.lists(st.booleans(), min_size=len(ops), max_size=len(ops)))
    finish = draw(st.sampled_from(["sum", "mean", "gradient"]))
    return n_leaves, seed, ops, retain, finish


def build(n_leaves, seed, ops, retain, finish):
    gen = torch.Generator().manual_seed(seed)
    leaves = [torch.randn(2, 3, generator=gen, dtype=torch.double).requires_grad_() for _ in range(n_leaves)]
    pool = list(leaves) + [torch.randn(2, 3, generator=gen, dtype=torch.double)]  # a constant too
    names = {f"leaf{i}": t for i, t in enumerate(leaves)}
    for k, ((kind, name, i, j), keep) in enumerate(zip(ops, retain, strict=False)):
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        t = UNARY[name](a) if kind == "u" else BINARY[name](a, b)
        if keep and t.grad_fn is not None:
            t.retain_grad()
            names[f"t{k}"] = t
        pool.append(t)
    out = sum(pool[n_leaves + 1:])  # every computed tensor takes part: tensors are used several times
    gradient = None
    if finish == "sum":
        out = out.sum()
    elif finish == "mean":
        out = out.mean()
    else:
        gradient = torch.randn(out.shape, generator=gen, dtype=torch.double)
    return leaves, out, gradient, names


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_trace_agrees_with_torch_and_changes_nothing(spec):
    leaves, out, gradient, names = build(*spec)
    if out.grad_fn is None:  # every path was detached: nothing to record, and the lab says so
        return
    owned = leaves + [t for k, t in names.items() if k.startswith("t")]
    before = state(owned)

    t = trace(out, gradient, names=names)

    assert_unchanged(owned, before)
    nodes = walk(out.grad_fn)
    assert all(hooks_on(fn) == 0 for fn in nodes)
    expected = torch.autograd.grad(out, leaves, gradient, retain_graph=True, allow_unused=True)
    for leaf, g in zip(leaves, expected, strict=False):
        if g is None:
            assert t.grad(leaf) is None
        else:
            torch.testing.assert_close(t.grad(leaf), g)

    # the order seen by the test's own pre-hooks during a real backward
    seen = []
    handles = [fn.register_prehook(lambda grads, fn=fn: seen.append(fn)) for fn in nodes]
    try:
        torch.autograd.backward(out, gradient, retain_graph=True)
    finally:
        for h in handles:
            h.remove()
    assert [s.node.fn for s in t.steps] == seen


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_the_snapshot_holds_the_nodes_the_walk_meets_numbered_as_their_edges_meet_them(spec):
    """graph.snapshot walks on its own (fused with making the Nodes): the same nodes as graph.walk,
    each numbered in the order the walk's edges first meet it, its edges and consumers as torch's."""
    from autograd_lab.graph import snapshot, walk as graph_walk
    _leaves, out, _gradient, names = build(*spec)
    if out.grad_fn is None:
        return
    met = [out.grad_fn]
    for _fn, edges in graph_walk(out):
        for child, _nr in edges:
            if child is not None and child not in met:
                met.append(child)
    graph = snapshot(out, names)
    assert [n.fn for n in graph.nodes] == met
    assert [n.id for n in graph.nodes] == list(range(len(met)))
    walked = [graph.node_of(fn) for fn, _edges in graph_walk(out)]  # the walk's order
    for node in graph.nodes:
        assert [(c.fn if c is not None else None, nr) for c, nr in node.next] == list(node.fn.next_functions)
        assert node.consumers == [n for n in walked for c, _nr in n.next if c is node]
