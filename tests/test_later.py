"""Big gradients read when a learner first looks (stepper/later.py): the values are the engine's,
read before anything frees or changes the graph, LOST (and said so) when the graph changed anyway,
and never left for later where a second run could differ."""
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from torch.utils.checkpoint import checkpoint

from autograd_lab import trace
from autograd_lab.format import fmt
from autograd_lab.stepper.predict import compare
from autograd_lab.stepper.registry import STATE, install, settle, uninstall
from autograd_lab.tensors import KEEP_WHOLE, LOST, Summary
from helpers import Cube, assert_unchanged, hooks_on, state, walk

SIDE = 70  # 70 x 70 = 4,900 values: over KEEP_WHOLE, so summarised
assert SIDE * SIDE > KEEP_WHOLE


def engine_run(output, gradient=None):
    """The oracle: torch's own engine with one post-hook per node, every value kept whole."""
    seen, fns = [], walk(output.grad_fn)

    def hook(grad_inputs, grad_outputs):
        seen.append((torch._C._current_autograd_node(), grad_outputs, grad_inputs))
    handles = [fn.register_hook(hook) for fn in fns]
    try:
        torch.autograd.grad(output, [fn.variable for fn in fns if hasattr(fn, "variable")],
                            gradient, retain_graph=True, allow_unused=True)
    finally:
        for h in handles:
            h.remove()
    return seen


def assert_engines(t, seen):
    """Every step of the trace shows the engine's value: the same node in the same place, tensors
    equal, summaries with the tensor's own norm and first values."""
    steps = [s for s in t.steps if not s.node.is_accumulator]  # grad() runs no accumulator
    assert [s.node.fn for s in steps] == [fn for fn, _, _ in seen]
    for step, (_fn, outs, ins) in zip(steps, seen, strict=True):
        for shown, real in zip(step.grad_outputs + step.grad_inputs, outs + ins, strict=True):
            if real is None:
                assert shown is None
            elif isinstance(shown, Summary):
                assert real.numel() > KEEP_WHOLE
                assert shown.shape == tuple(real.shape)
                assert shown.norm == float(torch.linalg.vector_norm(real))
                assert shown.first == tuple(real[(0,) * (real.dim() - 1)][:4].tolist())
            else:
                assert torch.equal(shown, real)


def mlp(seed=0):
    torch.manual_seed(seed)
    w1 = torch.randn(SIDE, SIDE, requires_grad=True)
    w2 = torch.randn(SIDE, 3, requires_grad=True)
    x = torch.randn(SIDE, SIDE)
    h = torch.tanh(x @ w1)
    return w1, w2, h, (h @ w2).pow(2).mean()


def owed(t) -> int:
    return sum(s._owed is not None for s in t.steps)


def test_big_values_are_left_for_later_and_read_as_the_engine_computed_them():
    _w1, _w2, _h, loss = mlp()
    t = trace(loss, names={})
    assert owed(t) > 0 and STATE.owing
    assert_engines(t, engine_run(loss))
    assert owed(t) == 0 and not STATE.owing


def test_reading_later_changes_nothing_of_the_learners():
    w1, w2, h, loss = mlp()
    w1.grad = torch.ones_like(w1)
    h.retain_grad()
    before = state([w1, w2, h])
    hooks = hooks_on(loss.grad_fn)
    t = trace(loss, names={})
    for s in t.steps:
        s.grad_inputs  # noqa: B018 -- read
    assert_unchanged([w1, w2, h], before)
    assert hooks_on(loss.grad_fn) == hooks
    assert h.grad is None and torch.equal(w1.grad, torch.ones_like(w1))


def test_the_learners_backward_first_reads_what_is_owed_then_frees_the_graph():
    w1, w2, _h, loss = mlp()
    seen = engine_run(loss)
    expected = torch.autograd.grad(loss, [w1, w2], retain_graph=True)
    t = trace(loss, names={})
    loss.backward()  # frees the graph: the values were read just before
    assert not STATE.owing
    assert_engines(t, seen)
    assert torch.equal(w1.grad, expected[0]) and torch.equal(w2.grad, expected[1])
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_grad_and_a_new_hook_also_read_first():
    _w1, _w2, h, loss = mlp()
    seen = engine_run(loss)
    t = trace(loss, names={})
    h.register_hook(lambda g: g * 2)  # would change the second run: read before it is in place
    assert not STATE.owing
    assert_engines(t, seen)
    w1, _w2, h, loss = mlp(seed=1)
    seen = engine_run(loss)
    t = trace(loss, names={})
    torch.autograd.grad(loss, [w1], retain_graph=True)
    assert owed(t) and not STATE.owing  # read already: each step only picks its values up
    assert_engines(t, seen)


def test_a_saved_tensor_edited_through_data_makes_the_values_lost_and_says_so():
    w1, w2, _h, loss = mlp()
    t = trace(loss, names={})
    w2.data.mul_(2)  # no version bump: only the comparison with the first run can see it
    before = state([w1, w2])
    values = [g for s in t.steps for g in s.grad_outputs + s.grad_inputs]
    assert LOST in values
    assert all(not isinstance(g, Summary) for g in values)  # none of the second run's is shown
    assert_unchanged([w1, w2], before)
    assert fmt(LOST) == ("<not kept: the tensors of this graph changed after it was recorded; "
                         "record it again>")
    verdict = compare(1.0, LOST)
    assert not verdict.right and "record it again" in verdict.message


def test_a_saved_tensor_edited_in_place_makes_the_values_lost_without_an_error():
    _w1, w2, _h, loss = mlp()
    t = trace(loss, names={})
    with torch.no_grad():
        w2.mul_(2)  # saved by h @ w2: the engine refuses the second run (version changed)
    assert LOST in [g for s in t.steps for g in s.grad_outputs]


def test_nothing_is_left_for_later_where_a_second_run_could_differ():
    w1, w2, h, loss = mlp()
    assert owed(trace(loss, names={}, apply=True, retain_graph=True)) == 0  # the learner's backward
    w1.grad = None
    w2.grad = None
    handle = h.register_hook(lambda g: g)
    assert owed(trace(loss, names={})) == 0  # a hook of the learner's runs in it
    handle.remove()
    big = torch.randn(SIDE, SIDE, requires_grad=True)
    assert owed(trace(Cube.apply(big * 1.0).sum(), names={})) == 0  # a backward in Python
    lin = torch.nn.Linear(SIDE, SIDE)
    out = checkpoint(lambda a: torch.tanh(lin(a)), big, use_reentrant=False)
    assert owed(trace((out * out).sum(), names={})) == 0  # a forward run again
    assert owed(trace((big * big).tanh().sum(), names={})) > 0  # and otherwise, it is


def test_uninstalling_the_lab_reads_what_is_owed():
    _w1, _w2, _h, loss = mlp()
    seen = engine_run(loss)
    t = trace(loss, names={})
    try:
        uninstall()
        assert not STATE.owing
        loss.backward()  # torch's own backward again
    finally:
        install()
    assert_engines(t, seen)


UNARY = [torch.tanh, torch.sigmoid, lambda a: a * a, lambda a: (a * 0.1).exp(), torch.relu]
BINARY = [torch.add, torch.mul, lambda a, b: a @ b * 0.01, lambda a, b: a * b.sum(0, keepdim=True),
          lambda a, b: torch.cat([a[:10], b[10:]])]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 16), st.lists(st.tuples(st.booleans(), st.integers(0, 4), st.integers(0, 9),
                                                   st.integers(0, 9)), min_size=1, max_size=6),
       st.sampled_from(["sum", "mean", "gradient"]))
def test_on_random_graphs_of_big_tensors_the_values_read_later_are_the_engines(seed, ops, finish):
    gen = torch.Generator().manual_seed(seed)
    leaves = [torch.randn(SIDE, SIDE, generator=gen, dtype=torch.double).requires_grad_() for _ in range(2)]
    pool = list(leaves)
    for unary, k, i, j in ops:
        a, b = pool[i % len(pool)], pool[j % len(pool)]
        pool.append(UNARY[k](a) if unary else BINARY[k](a, b))
    out = pool[-1] if pool[-1].grad_fn is not None else pool[-1] * leaves[0]
    gradient = None
    if finish == "gradient":
        gradient = torch.randn(out.shape, generator=gen, dtype=torch.double)
    else:
        out = out.sum() if finish == "sum" else out.mean()
    seen = engine_run(out, gradient)
    before = state(leaves)
    t = trace(out, gradient, names={})
    assert_engines(t, seen)
    assert_unchanged(leaves, before)
    settle()


def test_a_backward_inside_a_recording_reads_nothing_owed_until_the_recording_is_done():
    """A learner's hook that runs a backward of its own fires inside the lab's run of the engine:
    what other recordings owe waits (a second run must not land inside the first)."""
    a = torch.ones(3, requires_grad=True)
    b = a * 2
    inner = []

    def peek(g):
        with torch.enable_grad():  # the engine runs hooks without grad mode
            inner.append(torch.autograd.grad((a * 3).sum(), a)[0])
    b.register_hook(peek)
    _w1, _w2, _h, loss = mlp()
    seen = engine_run(loss)
    t = trace(loss, names={})
    assert STATE.owing
    hooked = trace((b * b).sum(), names={})
    assert [s.name for s in hooked.steps] == ["SumBackward0", "MulBackward0", "MulBackward0", "AccumulateGrad"]
    assert len(inner) == 1 and torch.equal(inner[0], torch.full((3,), 3.0))
    assert STATE.owing  # still owed: read at the first look
    assert_engines(t, seen)


def test_the_learners_failing_backward_shows_no_frame_of_the_lab(ip, capsys):
    """The wrapper around torch.autograd.backward stays out of the learner's traceback."""
    ip.run_cell("import torch\nx = torch.ones(2, requires_grad=True)\nz = (x * x).sum()\nz.backward()")
    capsys.readouterr()
    result = ip.run_cell("z.backward()")
    shown = capsys.readouterr()
    assert isinstance(result.error_in_exec, RuntimeError)
    text = shown.out + shown.err
    assert "Trying to backward through the graph a second time" in text
    assert "autograd/__init__.py" in text and "registry.py" not in text
