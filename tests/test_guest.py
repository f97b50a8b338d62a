"""A guest in the learner's torch: real code that a recording must leave exactly as it was (threads,
hooks that remove themselves or read .grad, a Function's backward that runs a backward of its own or
writes a buffer, selective activation checkpointing, Ctrl-C at any point of a recording). For each,
the learner's own backward() after the recording is the oracle: it must give what it gives without
one."""
import gc
import signal
import sys
import threading

import pytest
import torch
from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.stepper import guard
from helpers import hooks_on, walk


def leaf(*values):
    return torch.tensor(values, requires_grad=True)


def test_a_hook_that_removes_itself_is_put_back_where_it_was():
    p = leaf(1., 2.)
    z = (p * 2).sum()

    def once(g):
        handle.remove()
        return g * 10

    handle = p.register_hook(once)
    t = al.trace(z, names={"p": p})
    assert t.grad(p).tolist() == [20., 20.]
    assert list(p._backward_hooks.values()) == [once]
    z.backward()
    assert p.grad.tolist() == [20., 20.]  # the hook ran once, in the learner's own backward
    assert not p._backward_hooks


def test_a_hook_that_reads_the_leafs_grad_sees_the_real_one():
    """Micro-batch code: a hook scales by what .grad already holds. A recording sets no .grad aside."""
    p = leaf(1., 2., 3.)
    p.grad = torch.tensor([0.5, 0.5, 0.5])
    y = p * 4
    seen = []
    y.register_hook(lambda g: seen.append(None if p.grad is None else p.grad.clone()) or g / p.grad.norm())
    z = y.sum()
    t = al.trace(z, names={"p": p})
    assert seen[-1].tolist() == [0.5, 0.5, 0.5]
    before = p.grad.clone()
    z.backward()
    torch.testing.assert_close(t.grad(p), p.grad - before)


def test_the_accumulator_steps_are_captured_and_marked():
    x = leaf(1., 2.)
    t = al.trace((x * x).sum(), names={"x": x})
    assert t.captured and [s.name for s in t.steps][-1] == "AccumulateGrad"
    assert x.grad is None


def test_post_accumulate_hooks_do_not_run_in_a_recording_and_run_in_backward():
    p = leaf(1., 2.)
    ran = []
    p.register_post_accumulate_grad_hook(lambda t: ran.append(t.grad.clone()))
    z = (p * 3).sum()
    al.trace(z, names={})
    assert ran == []
    z.backward()
    assert [g.tolist() for g in ran] == [[3., 3.]]


def test_node_hooks_on_a_leafs_accumulator_run_in_a_recording_as_in_backward_and_are_told():
    """The recording captures a leaf's gradient instead of running its accumulator: the learner's
    pre- and post-hooks on that AccumulateGrad node are run by the capture, in the engine's order
    (a pre-hook's result is what the accumulator adds); torch's backward() is the oracle."""
    def build():
        x = leaf(1., 2.)
        z = (x * 3).sum()
        acc = z.grad_fn.next_functions[0][0].next_functions[0][0]
        seen = []

        def doubles(grad_outputs):
            seen.append(("pre", grad_outputs[0].tolist()))
            return (grad_outputs[0] * 2,)

        def watches(grad_inputs, grad_outputs):
            seen.append(("post", len(grad_inputs), grad_outputs[0].tolist()))
        acc.register_prehook(doubles)
        acc.register_hook(watches)
        return x, z, seen

    x, z, seen = build()
    t = al.trace(z, names={"x": x})
    recorded = list(seen)
    assert x.grad is None
    x2, z2, oracle = build()
    z2.backward()
    assert recorded == oracle == [("pre", [3., 3.]), ("post", 0, [6., 6.])]
    assert t.grad(x).tolist() == x2.grad.tolist() == [6., 6.]
    assert t.steps[-1].grad_after.tolist() == [6., 6.]
    said = al.step(z, names={"x": x}).text()
    assert "2 runs of node hooks (doubles, watches)" in said
    before = len(seen)
    z.backward()  # the hooks are theirs again: the real backward runs them once, as without the lab
    assert seen[before:] == oracle and x.grad.tolist() == [6., 6.]


def test_under_record_a_grad_call_runs_no_accumulator_hook_as_grad_runs_none():
    x = leaf(1., 2.)
    z = (x * 3).sum()
    acc = z.grad_fn.next_functions[0][0].next_functions[0][0]
    seen = []
    acc.register_prehook(lambda grad_outputs: seen.append("pre"))
    oracle = torch.autograd.grad(z, x, retain_graph=True)
    assert seen == []  # torch's grad() runs no accumulator
    with al.record() as rec:
        got = torch.autograd.grad(z, x)
    assert seen == [] and rec.count == 1 and torch.equal(got[0], oracle[0])


def test_two_recordings_from_two_threads_each_keep_their_own_steps_and_lose_nothing():
    x = leaf(1., 2., 3.)
    y = x
    for _ in range(200):
        y = y * 1.001
    z = y.sum()
    x.grad = torch.ones(3)
    results, errors = [], []

    def record():
        try:
            results.append(al.trace(z, names={}))
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=record) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    want = torch.autograd.grad(z, x, retain_graph=True)[0]
    for t in results:
        assert len(t.steps) == 202  # SumBackward0, 200 MulBackward0, the accumulator: none of the other run's
        torch.testing.assert_close(t.grad(x), want)
    assert x.grad.tolist() == [1., 1., 1.]


def test_a_recording_beside_another_threads_backward_on_the_same_leaf_loses_nothing():
    x = leaf(1., 2.)
    ys = [x * k for k in (2., 3.)]
    y = ys[0]
    for _ in range(300):
        y = y * 1.0
    z = y.sum()
    other = ys[1].sum()
    done = threading.Event()

    def theirs():
        for _ in range(50):
            other.backward(retain_graph=True)
        done.set()

    thread = threading.Thread(target=theirs)
    thread.start()
    traces = [al.trace(z, names={}) for _ in range(5)]
    thread.join()
    assert done.is_set()
    assert x.grad.tolist() == [150., 150.]  # all of the other thread's backward, nothing of the recordings
    for t in traces:
        assert t.grad(x).tolist() == [2., 2.] and len(t.steps) == 303


class Inner(torch.autograd.Function):
    """A Function whose backward runs a backward of its own, on a graph made in forward."""

    @staticmethod
    def forward(ctx, a, w):
        with torch.enable_grad():
            ctx.inner = (w * 3).sum()
        ctx.w = w
        return a * 2

    @staticmethod
    def backward(ctx, g):
        ctx.inner.backward()  # frees the inner graph, writes w.grad
        return g * 2, None


def test_a_backward_inside_a_functions_backward_writes_nothing_and_frees_nothing():
    a = leaf(1., 2.)
    w = leaf(5., 6.)
    z = Inner.apply(a, w).sum()
    t = al.trace(z, names={"a": a, "w": w})
    assert t.grad(a).tolist() == [2., 2.]
    assert w.grad is None and a.grad is None
    z.backward()  # the learner's own: the inner graph is still there to free
    assert w.grad.tolist() == [3., 3.] and a.grad.tolist() == [2., 2.]


class Counting(torch.autograd.Function):
    """A Function whose backward moves a module buffer (as a running statistic would)."""

    bn = torch.nn.BatchNorm1d(2)

    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, g):
        Counting.bn.running_mean.add_(1.)
        return g


def test_a_buffer_written_in_a_functions_backward_is_put_back_and_named():
    a = leaf(1., 2.)
    bn = Counting.bn
    before, version = bn.running_mean.clone(), bn.running_mean._version
    t = al.trace(Counting.apply(a).sum(), names={"bn": bn})
    assert torch.equal(bn.running_mean, before) and bn.running_mean._version == version
    assert t.put_back == ["bn.running_mean"]


class Reassigning(torch.autograd.Function):
    """A Function whose backward gives a module a new buffer tensor under the old name."""

    counter = torch.nn.Module()
    counter.register_buffer("steps", torch.zeros(()))

    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, g):
        Reassigning.counter.steps = Reassigning.counter.steps + 1
        return g


def test_a_buffer_reassigned_in_a_functions_backward_is_put_back_and_named():
    a = leaf(1., 2.)
    counter = Reassigning.counter
    before = counter.steps
    t = al.trace(Reassigning.apply(a).sum(), names={"counter": counter})
    assert counter.steps is before and float(before) == 0.
    assert t.put_back == ["counter.steps"]
    Reassigning.apply(a).sum().backward()  # the learner's own moves it
    assert float(counter.steps) == 1.


def test_every_random_state_a_run_may_advance_is_kept_cuda_too_once_in_use(monkeypatch):
    kept: dict = {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: ["state of device 0"])
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", lambda states: kept.setdefault("set", states))
    state = guard.rng_state()
    torch.rand(3)
    guard.set_rng_state(state)
    assert kept["set"] == ["state of device 0"] and torch.equal(torch.get_rng_state(), state[0])


def test_a_hook_that_calls_backward_on_its_own_graph_is_stopped_and_told():
    x = leaf(1., 2.)
    y = x * 2
    z = (y * y).sum()
    y.register_hook(lambda g: torch.autograd.grad(z, x, retain_graph=True)[0] * 0 + g)
    with pytest.raises(LabInputError) as err:
        al.trace(z, names={})
    assert "your hook a lambda" in str(err.value) and "calls backward on the graph it is part of" in str(err.value)
    assert len(str(err.value)) < 600
    assert x.grad is None


def test_selective_activation_checkpointing_is_refused_before_anything_runs():
    x = leaf(1., 2.)

    def policy(ctx, op, *args, **kwargs):
        from torch.utils.checkpoint import CheckpointPolicy
        return CheckpointPolicy.MUST_SAVE

    z = checkpoint(lambda t: (t.sin() * 2).sum(), x, use_reentrant=False,
                   context_fn=lambda: create_selective_checkpoint_contexts(policy)).sum()
    with pytest.raises(LabInputError) as err:
        al.trace(z, names={"z": z})
    assert "%%record" in str(err.value) and "Nothing of yours was changed" in str(err.value)
    z.backward()  # its one backward is still there
    torch.testing.assert_close(x.grad, 2 * x.detach().cos())


def _learners_graph():
    """A graph with everything a recording must put back: a retained tensor, tensor and node hooks,
    a leaf that holds a .grad."""
    x = leaf(1., 2., 3.)
    x.grad = torch.full((3,), 0.5)
    y = x * 2
    y.retain_grad()
    y.grad = torch.ones(3)
    ran = []
    y.register_hook(lambda g: ran.append(1))
    w = y.exp()
    w.grad_fn.register_prehook(lambda g: None)
    return x, y, w.sum(), ran


def _state(x, y, z):
    fns = list(walk(z.grad_fn))
    return (x.grad, x.grad.clone(), x.grad._version, y.grad, y.grad.clone(), dict(y._backward_hooks),
            [hooks_on(fn) for fn in fns], x._backward_hooks)


def _same(a, b):
    assert a[0] is b[0] and torch.equal(a[1], b[1]) and a[2] == b[2]
    assert a[3] is b[3] and torch.equal(a[4], b[4])
    assert a[5] == b[5] and a[6] == b[6] and a[7] == b[7]


# The pass over the kernel's objects reads and changes nothing, and its length depends on how many
# objects the process holds: its lines are not counted (an interrupt there is one at its caller's).
_NOT_COUNTED = {guard.find.__code__, guard.subclasses.__code__}


def _counting(at: int, count: list):
    """A trace function counting the recording's lines; at the line numbered at, Ctrl-C."""
    def tracer(frame, event, arg):
        if event == "line" and frame.f_code not in _NOT_COUNTED:
            count[0] += 1
            if count[0] == at:
                signal.getsignal(signal.SIGINT)(signal.SIGINT, frame)
        return tracer
    return tracer


def _lines_of_a_recording() -> int:
    x, y, z, _ran = _learners_graph()
    al.trace(z, names={"x": x, "y": y})  # what a first recording imports is not counted
    count = [0]
    sys.settrace(_counting(0, count))
    try:
        al.trace(z, names={"x": x, "y": y})
    finally:
        sys.settrace(None)
    return count[0]


def test_ctrl_c_at_any_point_of_a_recording_leaves_everything_as_it_was():
    """A simulated SIGINT (the handler in place at that moment, called as Python would) at every
    7th line a recording runs. Afterwards every piece of the learner's state is as it was, the
    collector is on, no hook of the lab's is left, Ctrl-C's own handler is back, and the interrupt
    reached the learner."""
    total = _lines_of_a_recording()
    assert total > 100
    points = range(1, total + 1, 7)
    interrupted = 0
    for at in points:
        x, y, z, _ran = _learners_graph()
        before = _state(x, y, z)
        sys.settrace(_counting(at, [0]))
        try:
            al.trace(z, names={"x": x, "y": y})
        except KeyboardInterrupt:
            interrupted += 1
        finally:
            sys.settrace(None)
        assert gc.isenabled()
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        _same(before, _state(x, y, z))
        z.backward()  # the learner's own backward works, hooks once
        torch.testing.assert_close(x.grad, 0.5 + 2 * torch.tensor([1., 2., 3.]).mul(2).exp())
    assert interrupted == len(points)  # every interrupt reached the learner, none was lost


def test_jacobian_uses_the_same_guard_and_writes_no_retained_grad_however_it_is_held():
    x = leaf(1., 2.)
    held = [x * 2]
    held[0].retain_grad()
    jac = al.jacobian(held[0] ** 2, x, names={})
    torch.testing.assert_close(jac.matrix, torch.autograd.functional.jacobian(lambda t: (t * 2) ** 2, x.detach()))
    assert held[0].grad is None and x.grad is None


def test_a_trace_and_its_steps_make_no_cycle_so_the_graph_is_freed_with_the_last_name():
    import weakref

    x = leaf(1., 2.)
    z = (x.exp() * 2).sum()
    t = al.trace(z, names={})
    assert [s.name for s in t.steps] and t.steps[0].trace is t and t.steps[0].ready
    kept, output = weakref.ref(t), weakref.ref(z)
    gc.disable()
    try:
        del t, z
        assert kept() is None and output() is None  # freed by reference counting alone, no collector needed
    finally:
        gc.enable()


def test_a_saved_value_edited_after_the_recording_is_told_in_the_panel_and_the_widget_keeps_going():
    x = leaf(1., 2., 3.)
    stepper = al.step((x ** 2).sum(), names={"x": x})
    widget = stepper.widget
    with torch.no_grad():
        x.mul_(10)
    for index in range(1, len(stepper.trace.steps) + 1):
        stepper.buttons["next"].click()
        assert stepper.index == index and f"Step {index} of" in stepper._panel.value
    stepper.goto(2)
    assert "self=(changed in place since it was saved" in stepper.panel()
    assert widget is stepper.widget


def test_an_expression_that_raises_keyboardinterrupt_is_one_short_message(ip):
    from IPython.core.error import UsageError

    ip.user_ns["stop"] = lambda: (_ for _ in ()).throw(KeyboardInterrupt)
    with pytest.raises(UsageError) as err:
        ip.run_line_magic("backward", "stop()")
    assert "raised KeyboardInterrupt" in str(err.value) and "\n" not in str(err.value)


def test_a_hook_running_after_a_leafs_accumulator_is_told_where_it_reads_the_old_grad():
    """In backward(), a hook that runs after p's accumulator sees the new p.grad; in a recording
    (the leaves' gradients captured) the old one: the panel of that step says so."""
    p = leaf(1., 2.)
    q = leaf(3., 4.)
    late = q * 1
    z = (p * 2).sum() + (late * 5).sum()
    seen = []
    late.register_hook(lambda g: seen.append(p.grad))
    stepper = al.step(z, names={"p": p, "q": q})
    order = [s.name for s in stepper.trace.steps]
    hooked = next(s.index for s in stepper.trace.steps if s.node.fn is late.grad_fn)
    assert "AccumulateGrad" in order[:hooked]  # p's accumulator ran before the hooked node
    stepper.goto(hooked + 1)
    assert "p already got a gradient in this backward" in stepper.panel()
    stepper.goto(1)
    assert "already got a gradient" not in stepper.panel()
    z.backward()
    assert seen[-1] is not None and seen[0] is None  # backward() saw the new p.grad; the recording, None


def test_a_hook_that_calls_grad_several_times_one_after_another_is_not_refused():
    x = leaf(1., 2.)
    y = x * 2
    z = (y * y).sum()
    w = x * 1
    side = (w * 3).sum()
    y.register_hook(lambda g: [torch.autograd.grad(side, x, retain_graph=True) for _ in range(10)] and g)
    t = al.trace(z, names={})
    torch.testing.assert_close(t.grad(x), 8 * x.detach())
    assert x.grad is None


def test_a_lazy_module_in_the_kernel_breaks_no_recording():
    lazy = torch.nn.LazyBatchNorm1d()
    x = leaf(1., 2.)
    y = x * 2
    y.register_hook(lambda g: g)  # learner code runs: every module's buffers are kept
    t = al.trace(y.sum(), names={})
    assert t.grad(x).tolist() == [2., 2.] and lazy.has_uninitialized_params()


def test_the_panels_never_run_the_learners_unpack_hooks_again():
    unpacked = []
    x = leaf(1., 2.)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(1) or t):
        z = (x.exp() * 2).sum()
    stepper = al.step(z, names={"x": x})
    during = len(unpacked)
    for index in range(len(stepper.trace.steps) + 1):
        stepper.goto(index)
        stepper.panel()
        stepper.html()
    assert during >= 1 and len(unpacked) == during
    stepper.goto(3)
    assert "packed by your saved-tensor hooks" in stepper.panel()


def test_wrapping_the_learners_hooks_that_fails_partway_unwraps_what_it_wrapped():
    from autograd_lab.stepper.guard import find
    from autograd_lab.stepper.hooks import LearnerHooks
    from autograd_lab.stepper.trace import snapshot

    class Interrupting:
        """A hook whose name cannot be read: wrapping it is interrupted."""

        @property
        def __name__(self):
            raise KeyboardInterrupt

        def __call__(self, g):
            return g

    x = torch.tensor([1., 2.], requires_grad=True)
    a, b = x * 2, x * 3

    def first(g):
        return g

    a.register_hook(first)
    b.register_hook(Interrupting())
    z = (a + b).sum()
    before = [dict(t._backward_hooks) for t in (a, b)]
    graph = snapshot(z, {"a": a, "b": b, "x": x})
    hooked = sorted(find(graph).hooked, key=lambda t: t is b)  # a first: it is wrapped before b fails
    with pytest.raises(KeyboardInterrupt):
        LearnerHooks(graph, hooked, {}, [])
    assert [dict(t._backward_hooks) for t in (a, b)] == before
