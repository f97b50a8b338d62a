"""record() and %%record: the learner's own backward() and grad() calls, run as they are and recorded.
The oracle is the same code run without a recording: .grad, hook runs and the freed graph must be
what that gives, and every step's values the engine's."""
import threading

import pytest
import torch
from IPython.utils.capture import capture_output
from torch.utils.checkpoint import CheckpointPolicy, checkpoint, create_selective_checkpoint_contexts

import autograd_lab as al
from autograd_lab.stepper.record import KEEP_FIRST


def leaf(*values):
    return torch.tensor(values, requires_grad=True)


def test_their_backward_writes_grad_runs_hooks_once_and_frees_the_graph():
    x, twin = leaf(1., 2., 3.), leaf(1., 2., 3.)
    ran = []
    for t in (x, twin):
        y = t * 2
        y.register_hook(lambda g: ran.append(1) or g * 3)
        z = (y ** 2).sum()
        if t is x:
            with al.record() as rec:
                z.backward()
        else:
            z.backward()
    assert ran == [1, 1]  # once each: in the recorded backward, and in the plain one
    torch.testing.assert_close(x.grad, twin.grad)
    (stepper,) = rec.steppers
    assert stepper.trace.applied and stepper.trace.own and rec.count == 1
    torch.testing.assert_close(stepper.trace.grad(x), twin.grad)
    assert stepper.text().startswith("your own backward of z, run for real")
    with pytest.raises(RuntimeError, match="second time"):
        z.backward()  # freed, as their backward frees it


def test_a_grad_call_returns_its_gradients_writes_no_grad_and_shows_what_was_captured():
    x = leaf(1., 2.)
    z = (x ** 3).sum()
    with al.record() as rec:
        (g,) = torch.autograd.grad(z, x)
    assert g.tolist() == [3., 12.] and x.grad is None
    steps = rec.steppers[0].trace.steps
    assert [s.name for s in steps] == ["SumBackward0", "PowBackward0", "AccumulateGrad"]
    assert steps[-1].grad_outputs[0].tolist() == [3., 12.]


def test_the_first_calls_and_the_last_are_kept_and_the_rest_counted():
    x = leaf(1., 2.)
    with al.record() as rec:
        for k in range(1, 8):
            (x * k).sum().backward()
    assert rec.count == 7 and len(rec.steppers) == KEEP_FIRST + 1
    firsts = [s.trace.grad(x).tolist() for s in rec.steppers]
    assert firsts == [[1., 1.], [2., 2.], [3., 3.], [7., 7.]]
    assert x.grad.tolist() == [28., 28.]
    assert "the first 3 and the last; 3 more were recorded" in rec.text()


def test_their_own_errors_reach_them_unchanged():
    x = leaf(1., 2.)
    y = x * 2

    def broken(g):
        raise ValueError("my hook is broken")

    y.register_hook(broken)
    with pytest.raises(ValueError, match="my hook is broken"), al.record():
        y.sum().backward()
    z = (x * 3).sum()
    with pytest.raises(RuntimeError, match="second time"), al.record():
        z.backward()
        z.backward()


def test_nothing_is_left_after_the_block_and_another_threads_backward_is_not_recorded():
    x, w = leaf(1., 2.), leaf(3.)
    other = (w * 5).sum()
    with al.record() as rec:
        thread = threading.Thread(target=other.backward)
        thread.start()
        thread.join()
        (x * x).sum().backward()
    assert rec.count == 1 and w.grad.tolist() == [5.]
    assert torch._C._len_torch_function_stack() == 0
    (x * x).sum().backward()  # a plain backward after the block: not recorded
    assert rec.count == 1


def test_a_selective_checkpoint_refused_by_trace_is_recorded_by_record():
    x = leaf(1., 2.)
    z = checkpoint(lambda t: (t.sin() * 2).sum(), x, use_reentrant=False,
                   context_fn=lambda: create_selective_checkpoint_contexts(lambda *a, **k: CheckpointPolicy.MUST_SAVE))
    with al.record() as rec:
        z.backward()
    torch.testing.assert_close(x.grad, 2 * x.detach().cos())
    torch.testing.assert_close(rec.steppers[0].trace.grad(x), x.grad)


def test_the_cell_magic_runs_the_cell_as_it_is_and_shows_its_backward(ip):
    ip.run_cell("import torch\nw = torch.tensor([1., 2.], requires_grad=True)")
    with capture_output() as shown:
        result = ip.run_cell("%%record\nloss = (w * w).sum()\nloss.backward()\nloss.item()")
    assert result.success and result.result == 5.0
    assert ip.user_ns["w"].grad.tolist() == [2., 4.]
    text = shown.outputs[0].data["text/plain"]
    assert text.startswith("1 backward or grad call of yours ran, for real")
    assert "your own backward of loss, run for real" in text


def test_what_ran_of_theirs_is_told_by_kind_in_the_first_lines():
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def scale(g):
        return g * 1

    x = leaf(1., 2.)
    packed = []  # the oracle: every value saved under the hooks is unpacked once when its node runs
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t, lambda t: t):
        y = Twice.apply(x) ** 2
    y.register_hook(scale)
    stepper = al.step(y.sum(), names={"x": x, "y": y})
    kinds = {r.kind: (r.count, r.names) for r in stepper.trace.yours}
    assert kinds == {"tensor": (1, ("scale",)), "function": (1, ("Twice",)), "unpack": (len(packed), ())}
    second = stepper.text().splitlines()[1]
    assert second.startswith("your code ran in this recording") and "Your own backward() runs it again" in second
    assert "agl-yours" in stepper.html()


def test_a_recorded_backward_keeps_the_gradient_it_showed_when_the_next_backward_adds_to_grad():
    x = leaf(1., 2.)
    with al.record() as rec:
        (x * x).sum().backward()
        (x * 3).sum().backward()
    assert [s.trace.grad(x).tolist() for s in rec.steppers] == [[2., 4.], [3., 3.]]
    assert x.grad.tolist() == [5., 7.]


def test_a_recorded_grad_call_says_it_writes_no_grad():
    x = leaf(1., 2.)
    with al.record() as rec:
        torch.autograd.grad((x * x).sum(), x)
    text = rec.steppers[0].text()
    assert "torch.autograd.grad call" in text and "writes no .grad" in text and "applied:" not in text
    assert x.grad is None


def test_the_labs_own_engine_runs_inside_a_block_are_not_the_learners():
    x = leaf(1., 2.)
    with al.record() as rec:
        al.trace((x * x).sum(), names={})
        al.jacobian(x * 2, x, names={})
    assert rec.count == 0 and rec.steppers == [] and x.grad is None


def _torch_error(run) -> str:
    with pytest.raises(RuntimeError) as err:
        run()
    return str(err.value)


def test_a_hook_returning_a_wrong_shape_gives_torchs_own_error_in_their_backward():
    def build():
        x = leaf(1., 2.)
        y = x * 2
        y.register_hook(lambda g: torch.ones(3))
        return y, y.sum()

    plain = _torch_error(lambda: build()[1].backward())
    _y, z = build()  # y held: the lab finds the hook and wraps it for the run
    with al.record() as rec:
        recorded = _torch_error(z.backward)
    assert recorded == plain and "<lambda>" in plain and rec.count == 1


def test_a_module_hook_returning_a_wrong_shape_gives_torchs_own_error_in_their_backward():
    def build():
        torch.manual_seed(0)
        lin = torch.nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: (torch.ones(5),))
        return lin(leaf(1., 2.)).sum()

    plain = _torch_error(lambda: build().backward())
    z = build()
    with al.record():
        recorded = _torch_error(z.backward)
    assert recorded == plain
