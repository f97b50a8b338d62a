"""The recording of one backward: order, values, nothing of the learner's changed, teaching errors."""
import pytest
import torch

from autograd_lab import TraceError, trace
from helpers import assert_unchanged, hooks_on, state, walk


def seed():
    x = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.double)
    y = x ** 2
    z = y.mean()
    return x, y, z


def test_seed_example_steps_and_gradients():
    x, y, z = seed()
    t = trace(z, names={"x": x, "y": y, "z": z})
    assert [s.name for s in t.steps] == ["MeanBackward0", "PowBackward0", "AccumulateGrad"]
    (gx,) = torch.autograd.grad(z, x, retain_graph=True)
    torch.testing.assert_close(t.steps[1].grad_outputs[0], torch.full((3,), 1 / 3, dtype=torch.double))
    torch.testing.assert_close(t.steps[1].grad_inputs[0], gx)
    torch.testing.assert_close(t.grad(x), gx)
    assert t.steps[2].leaf is x and t.steps[0].leaf is None
    assert [s.node.label for s in t.steps] == ["z", "y", "x"]
    assert x.grad is None


def test_learner_can_still_backward_afterwards_and_gets_the_same_gradient():
    x, y, z = seed()
    t = trace(z, names={})
    z.backward()
    torch.testing.assert_close(x.grad, t.grad(x))


def test_existing_grad_is_kept_and_before_after_shown():
    x, y, z = seed()
    x.grad = torch.ones(3, dtype=torch.double)
    before = state([x])
    t = trace(z, names={})
    assert_unchanged([x], before)
    acc = t.steps[-1]
    torch.testing.assert_close(acc.grad_before, torch.ones(3, dtype=torch.double))
    torch.testing.assert_close(acc.grad_after, 1 + t.grad(x))


def test_retained_grad_of_a_named_non_leaf_is_protected():
    x, y, z = seed()
    y.retain_grad()
    trace(z, names={"y": y})
    assert y.grad is None


def test_no_hook_is_left_even_when_the_backward_fails():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    boom = y.sum()

    def fail(grad):
        raise KeyError("a learner's hook failed")

    y.register_hook(fail)
    with pytest.raises(TraceError, match="your hook fail on y raised KeyError"):
        trace(boom, names={"y": y})
    assert all(hooks_on(fn) == 0 for fn in walk(boom.grad_fn))
    assert x.grad is None


def test_no_hook_is_left_after_a_good_run():
    x, y, z = seed()
    trace(z, names={})
    assert all(hooks_on(fn) == 0 for fn in walk(z.grad_fn))


def test_gradient_argument_for_non_scalar_output():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * x
    g = torch.tensor([1., 10.])
    t = trace(y, g, names={})
    (expected,) = torch.autograd.grad(y, x, g, retain_graph=True)
    torch.testing.assert_close(t.grad(x), expected)


def test_grad_of_a_leaf_not_reached_is_none():
    x, y, z = seed()
    other = torch.ones(1, requires_grad=True)
    assert trace(z, names={}).grad(other) is None


@pytest.mark.parametrize("make, words", [
    (lambda: 3, ["int", "not a tensor"]),
    (lambda: torch.ones(3), ["no grad_fn", "requires_grad=True", "no_grad", "detach"]),
    (lambda: torch.ones(3, requires_grad=True), ["leaf"]),
    (lambda: (torch.ones(3, requires_grad=True) * 2), [".sum()", "ones_like"]),
])
def test_bad_input_teaches(make, words):
    with pytest.raises(TraceError) as err:
        trace(make(), names={})
    for word in words:
        assert word in str(err.value)


def test_no_grad_result_is_refused():
    x = torch.ones(3, requires_grad=True)
    with torch.no_grad():
        y = (x * 2).sum()
    with pytest.raises(TraceError, match="no_grad"):
        trace(y, names={})


def test_shape_mismatched_gradient_is_refused_and_changes_nothing():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    before = state([x])
    with pytest.raises(TraceError, match="shape"):
        trace(y, torch.ones(2), names={})
    assert_unchanged([x], before)


def test_freed_graph_is_explained():
    x = torch.ones(3, requires_grad=True)
    z = (x * x).sum()
    z.backward()
    with pytest.raises(TraceError) as err:
        trace(z, names={"z": z})
    assert "retain_graph=True" in str(err.value) and "Re-run" in str(err.value)


def test_graph_without_saved_values_can_be_traced_after_a_backward():
    # (x + 1).sum() saves nothing, so torch lets it run twice; the lab agrees
    x = torch.ones(3, requires_grad=True)
    z = (x + 1).sum()
    z.backward()
    assert trace(z, names={}).grad(x).tolist() == [1., 1., 1.]


def test_detach_in_the_middle_is_a_stop():
    x = torch.tensor([1., 2.], requires_grad=True)
    z = (x * x.detach()).sum()
    t = trace(z, names={})
    mul = t.steps[1].node
    assert mul.name == "MulBackward0" and mul.stops == [1]
    torch.testing.assert_close(t.grad(x), x.detach())


def test_engine_order_two_branches_created_last_runs_first():
    a = torch.tensor(1., requires_grad=True)
    b = torch.tensor(2., requires_grad=True)
    u = a.exp()  # created first
    v = b.sin()  # created last
    z = u + v
    t = trace(z, names={"u": u, "v": v, "a": a, "b": b})
    names = [s.node.title for s in t.steps]
    assert names.index("SinBackward0 (v)") < names.index("ExpBackward0 (u)")
    step = t.steps[1]
    assert {n.title for n in step.ready} == {"SinBackward0 (v)", "ExpBackward0 (u)"}


def test_big_gradients_are_summarised_but_leaf_gradients_kept_whole():
    from autograd_lab.tensors import KEEP_WHOLE, Summary

    x = torch.randn(KEEP_WHOLE + 1, requires_grad=True)
    t = trace((x * 2).sum(), names={})
    assert isinstance(t.steps[1].grad_outputs[0], Summary)  # arriving at MulBackward0: big
    assert isinstance(t.steps[0].grad_outputs[0], torch.Tensor)  # the scalar start: small
    torch.testing.assert_close(t.grad(x), torch.full_like(x, 2.0))
