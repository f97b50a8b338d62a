"""The walls a recording meets before it starts or when the engine fails: a graph too deep to hook
(plain PyTorch crashes freeing a very long hooked chain: scripts/measure_depth.py), node names
without C++ namespaces, and the engine's sparse and meta errors told apart. Torch is the oracle:
its own edges, names and errors."""
import pytest
import torch
import torch.nn.functional as F

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.graph import CRASH_DEPTH, MAX_DEPTH, _name_of_type, deeper_than, short_name, snapshot
from autograd_lab.stepper.failures import explain
from helpers import Bad, assert_chinese


def chain(nodes: int):
    """(x, z): z's graph is one chain of exactly `nodes` nodes (nodes - 1 MulBackward0, then x's
    AccumulateGrad)."""
    x = torch.ones(1, requires_grad=True)
    z = x
    for _ in range(nodes - 1):
        z = z * 1.0001
    return x, z


def longest_by_torch(root) -> int:
    """The oracle: the longest root-to-leaf path over torch's own next_functions, memoized (small graphs)."""
    memo: dict = {}

    def down(fn) -> int:
        if fn not in memo:
            memo[fn] = 1 + max((down(child) for child, _nr in fn.next_functions if child is not None), default=0)
        return memo[fn]
    return down(root.grad_fn)


# ---- depth ---------------------------------------------------------------------------------------

def test_the_limit_is_a_third_of_the_measured_crash_and_lets_common_graphs_through():
    assert MAX_DEPTH == CRASH_DEPTH // 3
    assert 10_000 < MAX_DEPTH < CRASH_DEPTH


def depth(z) -> int:
    """The graph's depth as the lab measures it: the smallest limit deeper_than(z, limit) is not past."""
    n = 1
    while deeper_than(z, n):
        n += 1
    return n


def test_the_depth_of_a_chain_is_its_number_of_nodes():
    _x, z = chain(50)
    assert depth(z) == len(snapshot(z).nodes) == longest_by_torch(z) == 50


def test_the_depth_is_the_longest_branch():
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    long = x.exp().sin().cos()
    z = (long * w).sum() + x.sum()  # the shortest path: Add, Sum, AccumulateGrad
    # Add, Sum, Mul, Cos, Sin, Exp, x's AccumulateGrad
    assert depth(z) == longest_by_torch(z) == 7


def test_the_depth_is_found_where_the_paths_are_exponentially_many():
    x = torch.ones(1, requires_grad=True)
    a = x
    for _ in range(100):  # each step doubles the paths: 2**100 of them; a walk of paths never ends
        a = a * 2 + a
    assert deeper_than(a, 2 * 100) and not deeper_than(a, 2 * 100 + 1)  # Add, Mul, ..., AccumulateGrad
    assert longest_by_torch(a) == 2 * 100 + 1


def test_a_10000_node_chain_is_accepted():
    x, z = chain(10_000)
    assert not deeper_than(z, MAX_DEPTH) and deeper_than(z, 9_999) and not deeper_than(z, 10_000)
    assert len(al.trace(z, names={}).steps) == 10_000 and x.grad is None


def test_trace_refuses_a_graph_deeper_than_the_limit_before_reaching_its_deeper_nodes():
    x, z = chain(MAX_DEPTH + 1)
    assert deeper_than(z, MAX_DEPTH) and not deeper_than(z, MAX_DEPTH + 1)
    with pytest.raises(LabInputError) as err:
        al.trace(z, names={"z": z})
    said = str(err.value)
    assert said.startswith(f"z's graph is more than {MAX_DEPTH} nodes deep") and "nothing was changed" in said
    assert len(said) < 400 and "\n" not in said
    (g,) = torch.autograd.grad(z, x)  # the learner's graph still runs
    assert g.shape == x.shape and x.grad is None


def test_a_chain_at_the_limit_is_accepted_and_one_node_more_is_refused():
    x, z = chain(MAX_DEPTH)
    assert not deeper_than(z, MAX_DEPTH)
    del x, z
    x, z = chain(MAX_DEPTH + 1)
    with pytest.raises(LabInputError) as err:
        al.trace(z, names={"x": x, "z": z})
    said = str(err.value)
    assert said.startswith(f"z's graph is more than {MAX_DEPTH} nodes deep")
    assert "nothing was changed" in said and "shorter part" in said and ".detach()" in said
    assert "\n" not in said and "0x" not in said and len(said) < 300
    # nothing was changed: no .grad, and the learner's graph still runs
    assert x.grad is None
    (g,) = torch.autograd.grad(z, x)
    assert g.shape == x.shape


def test_too_deep_speaks_chinese(zh):
    _x, z = chain(MAX_DEPTH + 1)
    with pytest.raises(LabInputError) as err:
        al.trace(z, names={"z": z})
    assert_chinese(str(err.value), allowed=("t.detach().requires_grad_()",))
    assert str(MAX_DEPTH) in str(err.value)


# ---- names ---------------------------------------------------------------------------------------

def test_an_in_place_edit_through_a_view_gives_copyslices_without_namespace():
    a = torch.ones(3, requires_grad=True)
    b = a.clone()
    b[0].mul_(2)
    z = b.sum()
    assert "::" in b.grad_fn.name()  # torch's own name is namespaced: torch::autograd::CopySlices
    graph = snapshot(z, {"a": a, "b": b})
    names = [n.name for n in graph.nodes]
    assert all("::" not in name for name in names), names
    assert names == ["SumBackward0", "CopySlices", "CloneBackward0", "AccumulateGrad"]
    assert [n.is_accumulator for n in graph.nodes] == [False, False, False, True]
    assert _name_of_type(b.grad_fn) == short_name(b.grad_fn) == "CopySlices"


def test_a_copy_into_a_plain_tensor_gives_copybackwards_without_namespace():
    x = torch.ones(3, requires_grad=True)
    y = torch.zeros(3)
    y.copy_(x)
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards"
    assert [n.name for n in snapshot(y.sum()).nodes] == ["SumBackward0", "CopyBackwards", "AccumulateGrad"]


def test_torchs_own_namespaced_nodes_lose_their_namespace():
    nodes = [torch._C._functions.DelayedError("no second derivative", 1), torch._C._functions.UndefinedGrad()]
    assert [n.name() for n in nodes] == ["torch::autograd::DelayedError", "torch::autograd::UndefinedGrad"]
    assert [short_name(n) for n in nodes] == ["DelayedError", "UndefinedGrad"]


@pytest.mark.parametrize("name, short", [
    ("torch::autograd::GraphRoot", "GraphRoot"),
    ("torch::autograd::AccumulateGrad", "AccumulateGrad"),
    ("torch::distributed::autograd::SendRpcBackward", "SendRpcBackward"),
    ("torch::autograd::CppNode<my_ext::Square>", "CppNode<Square>"),
    ("torch::autograd::(anonymous namespace)::Identity", "Identity"),
    ("MulBackward0", "MulBackward0"),
    ("SquareBackward", "SquareBackward"),
])
def test_every_namespace_is_dropped(name, short):
    # a class per name: names are cached by class
    kind = type(f"Node_{abs(hash(name))}", (), {"name": lambda self: name})
    assert short_name(kind()) == _name_of_type(kind()) == short
    assert "::" not in _name_of_type(kind())


# ---- sparse and meta errors ----------------------------------------------------------------------

def caught(run) -> BaseException:
    try:
        run()
    except Exception as err:
        return err
    raise AssertionError("torch raised nothing")


def sparse_tanh():
    s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2), requires_grad=True,
                                check_invariants=True)
    z = s.tanh().to_dense().sum()
    return s, z


def test_a_sparse_backward_without_a_kernel_is_told_as_sparse_not_meta():
    s, z = sparse_tanh()
    err = caught(lambda: z.backward(retain_graph=True))
    assert isinstance(err, NotImplementedError) and "meta" in str(err).lower()  # torch lists the Meta backend
    first = "Could not run 'aten::tanh_backward' with arguments from the 'SparseCPU' backend."
    assert str(err).startswith(first)
    said = explain(err, "z", snapshot(z, {"s": s, "z": z}), {"s": s, "z": z})
    assert "meta" not in said.lower()
    assert f'"{first}"' in said and "sparse" in said and ".to_dense()" in said
    assert "Nothing of yours was changed" in said
    assert "registered at" not in said and "\n" not in said and len(said) < 400
    applied = explain(err, "z", snapshot(z), applied=True)
    assert first in applied and "Nothing of yours" not in applied


def test_a_long_first_line_is_shortened():
    _s, z = sparse_tanh()
    err = NotImplementedError("Could not run 'aten::" + "x" * 300 + "' with arguments from the 'SparseCPU' backend.")
    said = explain(err, "z", snapshot(z))
    assert "sparse" in said and "…" in said and len(said) < 400


def test_the_sparse_message_speaks_chinese(zh):
    _s, z = sparse_tanh()
    err = caught(lambda: z.backward(retain_graph=True))
    first = "Could not run 'aten::tanh_backward' with arguments from the 'SparseCPU' backend."
    said = explain(err, "z", snapshot(z))
    assert first in said
    assert_chinese(said, allowed=(first,))


def test_a_meta_tensors_backward_runs_and_one_without_a_meta_kernel_is_told_as_meta():
    m = torch.ones(3, device="meta", requires_grad=True)
    (m * 2).sum().backward()  # torch: a meta tensor's backward runs, on shapes
    assert m.grad.device.type == "meta"
    scores = torch.ones(2, 3, device="meta", requires_grad=True)
    loss = F.multi_margin_loss(scores, torch.zeros(2, dtype=torch.long, device="meta"))
    err = caught(lambda: loss.backward(retain_graph=True))
    assert "with Meta tensors" in str(err)  # aten::multi_margin_loss_backward has no meta kernel
    said = explain(err, "loss", snapshot(loss))
    assert "lives on the meta device" in said and "device='cpu'" in said


def test_a_custom_backward_reading_a_meta_tensors_values_is_told_as_meta():
    class Listed(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return torch.tensor(g.tolist(), device=g.device)

    m = torch.ones(3, device="meta", requires_grad=True)
    z = Listed.apply(m).sum()
    err = caught(lambda: z.backward(retain_graph=True))
    assert "meta tensor" in str(err)  # Cannot copy out of meta tensor; no data!
    assert "lives on the meta device" in explain(err, "z", snapshot(z))


def test_a_gradient_sent_to_meta_is_not_told_as_a_meta_output():
    x = torch.ones(3, requires_grad=True)
    z = Bad.apply(x).sum()
    err = caught(lambda: z.backward(retain_graph=True))
    assert "got meta" in str(err)  # expected device cpu but got meta: z itself is on the cpu
    said = explain(err, "z", snapshot(z))
    assert "lives on the meta device" not in said and "BadBackward" in said


def test_a_nested_tensor_is_one_short_message():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch says nested tensors are a prototype
        nt = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], requires_grad=True)
    y = nt * 2
    with pytest.raises(LabInputError) as err:
        al.trace(y, names={"y": y})
    said = str(err.value)
    assert said.startswith("y is a nested tensor") and "to_padded_tensor" in said and "\n" not in said


def test_the_depth_that_counts_is_the_longest_path_not_a_shortcut_to_the_root():
    x = torch.ones(1, requires_grad=True)
    h, steps = x, []
    for _ in range(50):
        h = h * 1.0001
        steps.append(h)
    z = torch.stack(steps).sum()  # every step also feeds the root: the shortest path is 3 nodes
    assert deeper_than(z, 52) and not deeper_than(z, 53)  # sum, stack, 50 steps, x's accumulator
    y = x * 2
    assert not deeper_than(y + y * 3, 4) and deeper_than(y + y * 3, 3)  # add, mul, mul, accumulator
