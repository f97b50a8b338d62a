"""The recording of one backward: order, values, nothing of the learner's changed, teaching errors."""
import pytest
import torch

from autograd_lab import TraceError, trace
from autograd_lab.errors import LabInputError
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
    x, _y, z = seed()
    t = trace(z, names={})
    z.backward()
    torch.testing.assert_close(x.grad, t.grad(x))


def test_existing_grad_is_kept_and_before_after_shown():
    x, _y, z = seed()
    x.grad = torch.ones(3, dtype=torch.double)
    before = state([x])
    t = trace(z, names={})
    assert_unchanged([x], before)
    acc = t.steps[-1]
    torch.testing.assert_close(acc.grad_before, torch.ones(3, dtype=torch.double))
    torch.testing.assert_close(acc.grad_after, 1 + t.grad(x))


def test_retained_grad_of_a_named_non_leaf_is_protected():
    _x, y, z = seed()
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
    _x, _y, z = seed()
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
    _x, _y, z = seed()
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


def test_apply_runs_the_engine_once_and_frees_the_graph_as_backward_does():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 3
    calls = []
    y.register_hook(lambda g: calls.append(1))
    z = (y * y).sum()
    t = trace(z, names={"y": y}, apply=True)
    assert calls == [1] and t.applied
    (expected,) = torch.autograd.grad((x * 3 * x * 3).sum(), x)
    torch.testing.assert_close(x.grad, expected)
    with pytest.raises(TraceError, match="already used by a backward"):  # freed, as backward() leaves it
        trace(z, names={})
    mul = t.steps[1].node
    assert mul.name == "MulBackward0" and set(mul.saved) >= {"self", "other"} and not mul.freed


def test_apply_keeps_the_grad_before_as_it_was():
    x = torch.tensor([1., 2.], requires_grad=True)
    x.grad = torch.ones(2)
    t = trace((x * 2).sum(), names={}, apply=True)
    acc = t.steps[-1]
    assert acc.grad_before.tolist() == [1., 1.] and acc.grad_after.tolist() == [3., 3.]
    assert x.grad.tolist() == [3., 3.]


def test_apply_runs_the_optimizer_hook_once_a_recording_never():
    p = torch.nn.Parameter(torch.tensor([1., 2., 3.]))
    def sgd(q):
        q.data.add_(q.grad, alpha=-0.1)
    p.register_post_accumulate_grad_hook(sgd)
    loss = (p ** 2).sum()
    trace(loss, names={})
    assert p.tolist() == [1., 2., 3.] and p._version == 0 and p.grad is None
    trace(loss, names={}, apply=True)
    torch.testing.assert_close(p.detach(), torch.tensor([0.8, 1.6, 2.4]))


@pytest.mark.parametrize("label, words", [
    ("y * 2", ["%backward (y * 2).sum()", "y * 2 has shape (2,)"]),
    ("h.out", ["%backward h.out.sum()"]),
])
def test_messages_use_the_expression_the_learner_typed(label, words):
    y = torch.ones(2, requires_grad=True) * 2
    with pytest.raises(TraceError) as err:
        trace(y * 2, names={}, label=label)
    for word in words:
        assert word in str(err.value)
    assert "the output" not in str(err.value)


def test_an_integer_result_has_no_gradient():
    x = torch.tensor([1., 3., 2.], requires_grad=True)
    with pytest.raises(TraceError, match="integer") as err:
        trace(x.argmax(), names={}, label="x.argmax()")
    assert "no input" not in str(err.value) and "x.max()" in str(err.value)


@pytest.mark.parametrize("gradient, words", [
    (torch.ones(2, dtype=torch.cfloat), "complex"),
    (torch.ones(2, device="meta"), "meta device"),
])
def test_a_gradient_of_the_wrong_kind_is_refused_in_words(gradient, words):
    x = torch.ones(2, requires_grad=True)
    with pytest.raises(TraceError, match=words):
        trace(x * 2, gradient, names={}, label="x * 2")
    assert x.grad is None


def test_version_error_is_one_paragraph_with_the_fix():
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    z = y.sum() * y.sum()
    y.add_(1)
    with pytest.raises(TraceError) as err:
        trace(z, names={"y": y}, label="z")
    text = str(err.value)
    assert "changed in place" in text and "out of place" in text and "\n" not in text


def test_an_optimizer_hook_that_returns_a_value_is_named_not_a_traceback():
    p = torch.nn.Parameter(torch.tensor([1., 2.]))
    p.register_post_accumulate_grad_hook(lambda q: q.data.add_(q.grad, alpha=-0.1))  # returns a tensor
    with pytest.raises(TraceError, match="must return None"):
        trace((p ** 2).sum(), names={}, apply=True)


def test_big_gradients_are_summaries_of_what_the_engine_sent_and_received():
    from autograd_lab.tensors import Summary

    torch.manual_seed(0)
    x = torch.randn(80, 80, requires_grad=True)  # 6400 elements: kept as summaries
    y = x * 2
    u = y.exp()
    z = (u * 3).sum()
    t = trace(z, names={})
    assert [s.name for s in t.steps] == ["SumBackward0", "MulBackward0", "ExpBackward0", "MulBackward0",
                                         "AccumulateGrad"]
    gu, gy = torch.autograd.grad(z, [u, y], retain_graph=True)
    _, mul_u, exp, mul_x, _ = t.steps
    assert mul_u.grad_inputs[0] == Summary.of(gu) == exp.grad_outputs[0]  # sent, then received
    assert exp.grad_inputs[0] == Summary.of(gy) == mul_x.grad_outputs[0]
    torch.testing.assert_close(t.grad(x), torch.autograd.grad(z, x, retain_graph=True)[0])


def test_ready_sets_are_replayed_only_as_far_as_a_step_is_looked_at():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x
    for _ in range(50):
        y = y * 1.5
    t = trace(y.sum(), names={})
    assert [n.name for n in t.steps[0].ready] == ["SumBackward0"]
    assert len(t._ready.sets) == 1  # opening the walk replays one step, not 52
    assert t.steps[10].ready == t.ready_sets()[10] and len(t.ready_sets()) == len(t.steps) == 52


def test_big_gradients_are_summarised_in_the_one_run_and_an_edit_afterwards_changes_nothing_shown():
    """Every value a step shows comes from the recording's run: a .data edit of a tensor the graph
    saved, made after the recording, does not change what the steps show (the engine sent 0.5 per
    entry on from DivBackward0); and each summary's norm is the norm of what torch computes."""
    from autograd_lab.tensors import Summary

    torch.manual_seed(0)
    x = torch.randn(5000, requires_grad=True)
    c = torch.full((5000,), 2.)
    z = (x * c / c).sum()
    t = trace(z, names={})
    c.data.fill_(4.)
    div = next(s for s in t.steps if s.name == "DivBackward0")
    sent = div.grad_inputs[0]
    assert isinstance(sent, Summary) and sent.first == (0.5, 0.5, 0.5, 0.5)
    assert abs(sent.norm - float(torch.full((5000,), 0.5).norm())) < 1e-3
    assert x.grad is None


def test_a_sparse_embedding_graph_shows_its_big_gradients():
    emb = torch.nn.Embedding(3000, 8, sparse=True)
    idx = torch.arange(0, 3000, 3)
    z = emb(idx).pow(2).sum()
    t = trace(z, names={})
    want = torch.autograd.grad(emb(idx).pow(2).sum(), emb.weight)[0].to_dense()
    got = t.grad(emb.weight)
    got = got.to_dense() if isinstance(got, torch.Tensor) and got.layout != torch.strided else got
    torch.testing.assert_close(got, want)
    assert all("not kept" not in repr(s.grad_outputs) for s in t.steps)
    assert emb.weight.grad is None


# -- backward(inputs=...): only the nodes on a path to the inputs run -------------------------------

def _two_leaves():
    a = torch.tensor([1., 2.], requires_grad=True)
    b = torch.tensor([3., 4.], requires_grad=True)
    part = a * 1

    def outside(g):
        raise ValueError("a hook outside b's part of the graph")

    part.register_hook(outside)  # backward(inputs=[b]) never runs it
    return a, b, (part * b).sum() + (b ** 2).sum()


def test_inputs_records_only_what_leads_to_them_with_the_engines_gradients():
    a, b, z = _two_leaves()
    t = trace(z, names={"a": a, "b": b}, inputs=[b])
    assert t.grad(b).tolist() == torch.autograd.grad(z, b, retain_graph=True)[0].tolist()
    assert t.grad(a) is None and a.grad is None and b.grad is None
    ran = {s.node for s in t.steps}
    assert all(node in ran for ready in t.ready_sets() for node in ready)
    assert "MulBackward0" in [s.name for s in t.steps] and len(ran) < len(t.graph.nodes)


def test_inputs_with_apply_writes_the_grad_of_the_inputs_alone_as_backward_does():
    from autograd_lab import step

    a, b, z = _two_leaves()
    _a2, b2, z2 = _two_leaves()
    z2.backward(inputs=[b2])
    step(z, names={"a": a, "b": b}, inputs=b, apply=True)
    assert a.grad is None and b.grad.tolist() == b2.grad.tolist()


def test_the_magic_takes_inputs(ip):
    from IPython.utils.capture import capture_output

    a, b, z = _two_leaves()
    ip.user_ns.update(a=a, b=b, z=z)
    with capture_output() as shown:
        ip.run_line_magic("backward", "z --inputs b")
    text = "\n".join(o.data["text/plain"] for o in shown.outputs)
    assert "gradients for the leaves: b: [7., 10.]" in text and "(a)" not in text and b.grad is None


@pytest.mark.parametrize(("inputs", "words"), [(3, "inputs takes a tensor or a list"),
                                                (torch.ones(2, requires_grad=True), "is not in the graph of"),
                                                (torch.ones(2, requires_grad=True) * 2, "it has a grad_fn")])
def test_inputs_that_are_not_in_the_graph_are_one_short_message(inputs, words):
    a, b, z = _two_leaves()
    with pytest.raises(LabInputError) as err:
        trace(z, names={"a": a, "b": b}, inputs=inputs)
    assert words in str(err.value) and "Nothing was changed" in str(err.value) and a.grad is None


# -- several outputs with their gradients, as torch.autograd.backward(tensors, grad_tensors) --------

def test_several_outputs_are_recorded_with_the_engines_gradients():
    x = torch.tensor([1., 2.], requires_grad=True)
    a, b = x * 2, x ** 3
    y = a.sum()  # an output that another output (a) feeds
    for outputs, grads in (((a, b), (torch.ones(2), torch.tensor([1., 10.]))), ((y, a), (None, torch.ones(2)))):
        t = trace(outputs, gradient=grads, names={"x": x, "a": a, "b": b, "y": y})
        torch.testing.assert_close(t.grad(x), torch.autograd.grad(outputs, x, grads, retain_graph=True)[0])
        assert [s.name for s in t.steps][-1] == "AccumulateGrad" and x.grad is None
        assert len(t.steps) == len(t.graph.nodes) == 3


def test_several_outputs_need_one_gradient_each_and_the_magic_takes_a_tuple(ip):
    from IPython.utils.capture import capture_output

    x = torch.tensor([1., 2.], requires_grad=True)
    a, b = x * 2, x ** 3
    with pytest.raises(LabInputError) as err:
        trace((a, b), gradient=torch.ones(2), names={})
    assert "give one gradient for each" in str(err.value)
    ip.user_ns.update(x=x, a=a, b=b, torch=torch)
    with capture_output() as shown:
        ip.run_line_magic("backward", "(a, b) --gradient (torch.ones(2), torch.ones(2)) --apply")
    text = "\n".join(o.data["text/plain"] for o in shown.outputs)
    assert "gradients for the leaves: x: [5., 14.]" in text and x.grad.tolist() == [5., 14.]


@pytest.mark.parametrize("hooked", [False, True])
def test_a_complex_number_output_is_refused_alike_with_and_without_hooks(hooked):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * (1 + 1j)
    if hooked:
        y.register_hook(lambda g: g)
    z = y.sum()
    with pytest.raises(RuntimeError, match="real scalar"):  # what torch's own backward says
        z.backward(retain_graph=True)
    with pytest.raises(TraceError, match="one complex number") as err:
        trace(z, names={"z": z, "y": y}, label="z")
    assert "z.abs()" in str(err.value) and x.grad is None
    # with a gradient given, it is recorded, as backward() takes it
    t = trace(z, torch.tensor(1 + 0j), names={"z": z}, label="z")
    (acc,) = [s for s in t.steps if s.leaf is x]
    engine = torch.autograd.grad(z, x, torch.tensor(1 + 0j), retain_graph=True)[0]
    torch.testing.assert_close(acc.grad_outputs[0], engine)
