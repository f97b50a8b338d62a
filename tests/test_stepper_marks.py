"""The stepper's marks on special nodes: the learner's own torch.autograd.Function ("your backward")
and the step at which a non-reentrant checkpoint ran its forward again ("recomputed here").
Torch is the oracle: torch.autograd.grad for the values, and node hooks on a second real backward
for which node ran the forward again."""
import torch
from torch.utils.checkpoint import checkpoint

import autograd_lab as al
from autograd_lab.stepper.recompute import recomputations
from autograd_lab.stepper.rules import apply_rule, formula, learner_function


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, scale):
        ctx.save_for_backward(u)
        ctx.scale = scale
        return scale * u ** 3

    @staticmethod
    def backward(ctx, g):
        (u,) = ctx.saved_tensors
        return g * ctx.scale * 3 * u ** 2, None


def own_graph():
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.double, requires_grad=True)
    w = torch.tensor([1.0, 2.0, -3.0], dtype=torch.double, requires_grad=True)
    u = x * 2
    y = Cube.apply(u, 0.5)
    z = (y * w).sum()
    return x, w, u, y, z


def test_your_function_is_one_step_whose_values_are_the_engines():
    x, w, u, y, z = own_graph()
    names = {"x": x, "w": w, "u": u, "y": y, "z": z}
    t = al.trace(z, names=names)
    mine = [s for s in t.steps if learner_function(s.node) is not None]
    assert [s.name for s in mine] == ["CubeBackward"]
    step = mine[0]
    arriving, sent = torch.autograd.grad(z, [y, u], retain_graph=True)
    torch.testing.assert_close(step.grad_outputs[0], arriving)
    torch.testing.assert_close(step.grad_inputs[0], sent)
    assert len(step.grad_inputs) == 1  # the float scale has no edge
    assert apply_rule(step.node, step.grad_outputs[0]) is None  # the learner's code is the rule
    assert formula(step.node, lambda v: None) == (
        "your backward: the engine called Cube.backward(ctx, grad) with the gradient arriving\n"
        "to u: what your backward returned for it")
    assert x.grad is None and w.grad is None


def test_the_faces_name_your_backward():
    x, w, u, y, z = own_graph()
    s = al.step(z, names={"x": x, "w": w, "u": u, "y": y, "z": z})
    index = next(i for i, st in enumerate(s.trace.steps) if st.name == "CubeBackward") + 1
    text, html = repr(s), s.html()
    line = (f"your backward: CubeBackward (y) is Cube.backward (step {index}). The engine called it with the "
            f"gradient arriving and sent on what it returned (your torch.autograd.Function is one node)")
    assert line in text and line in html
    assert f"{index}  CubeBackward (y) [your backward]" in text
    assert "CubeBackward (y) [your backward]" in html
    s.goto(index)
    panel = s.panel()
    assert panel.startswith(f"Step {index} of {len(s.trace.steps)}: CubeBackward (y) [your backward]")
    assert "rule: your backward: the engine called Cube.backward(ctx, grad)" in panel
    assert "saved: 1 tensor with ctx.save_for_backward (your backward reads it as ctx.saved_tensors)" in panel
    assert "CubeBackward (y) [your backward]" in repr(al.show_graph(z, names={"x": x, "y": y, "z": z}))


def test_torchs_own_functions_are_not_yours():
    lin = torch.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda *args: None)
    out = lin(torch.ones(1, 2, requires_grad=True)).sum()
    t = al.trace(out, names={"lin": lin})
    assert any(s.name == "BackwardHookFunctionBackward" for s in t.steps)
    assert all(learner_function(s.node) is None for s in t.steps)
    assert "[your backward]" not in repr(al.step(out, names={"lin": lin}))


def engine_recomputes(trace, calls) -> set[int]:
    """The steps at which a real backward (a second one, on the retained graph) ran a checkpointed
    forward again: the nodes during whose run the count of forward calls went up."""
    counts: dict = {}
    handles = []
    for node in trace.graph.nodes:
        handles.append(node.fn.register_prehook(lambda g, fn=node.fn: counts.__setitem__(fn, [len(calls)])))
        handles.append(node.fn.register_hook(lambda gi, go, fn=node.fn: counts[fn].append(len(calls))))
    try:
        before = len(calls)
        trace.output.backward(retain_graph=True)
        assert len(calls) > before
    finally:
        for h in handles:
            h.remove()
    ran = {fn for fn, (pre, post) in counts.items() if post > pre}
    return {s.index for s in trace.steps if s.node.fn in ran}


def test_the_step_that_recomputed_is_the_engines():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3, requires_grad=True)
    calls = []

    def block(t):
        calls.append(1)
        return torch.tanh(lin(t))

    h = checkpoint(block, x, use_reentrant=False)
    out = (h * 2).pow(2).sum()
    names = {"lin": lin, "x": x, "h": h, "out": out}
    s = al.step(out, names=names)
    ran = len(calls)
    marks = recomputations(s.trace)
    text, html = repr(s), s.html()
    assert len(calls) == ran  # marking reads the packed holders: it ran nothing again
    assert set(marks) == engine_recomputes(s.trace, calls) == {3}
    assert s.trace.steps[3].name == "TanhBackward0"
    assert "4  TanhBackward0 (h) [recomputed here]" in text
    line = "recomputed here: step 4 (TanhBackward0 (h)) ran the forward of the checkpoint of block."
    assert line in text and line in html
    s.goto(4)
    panel = s.panel()
    assert "recomputed here: unpacking what this node saved ran the forward of the checkpoint of block again" in panel
    s.goto(3)
    assert "recomputed" not in s.panel()
    for got, want in zip([s.trace.grad(p) for p in (x, lin.weight)],
                         torch.autograd.grad(out, [x, lin.weight], retain_graph=True), strict=True):
        torch.testing.assert_close(got, want)


def test_each_of_several_checkpoints_is_marked_where_the_engine_recomputes_it():
    torch.manual_seed(0)
    blocks = torch.nn.ModuleList(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh()) for _ in range(3))
    calls = []

    def run(block, h):
        calls.append(1)
        return block(h)

    h = torch.randn(2, 4, requires_grad=True)
    for block in blocks:
        h = checkpoint(run, block, h, use_reentrant=False)
    loss = h.pow(2).mean()
    s = al.step(loss, names={"blocks": blocks, "loss": loss})
    marks = recomputations(s.trace)
    assert set(marks) == engine_recomputes(s.trace, calls)
    # the engine walks backward: the last checkpoint of the forward is recomputed first
    assert [marks[i].number for i in sorted(marks)] == [3, 2, 1]
    assert {m.which for m in marks.values()} == {f"checkpoint {k} of 3 of run" for k in (1, 2, 3)}
    assert repr(s).count("[recomputed here]") == 3


def test_a_checkpointed_module_is_named_by_the_learners_name():
    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 2)
    out = checkpoint(lin, torch.ones(1, 2, requires_grad=True), use_reentrant=False).exp().sum()
    marks = recomputations(al.trace(out, names={"lin": lin}))
    assert [m.which for m in marks.values()] == ["the checkpoint of lin"]


def test_no_checkpoint_no_mark():
    x = torch.ones(3, requires_grad=True)
    s = al.step((x.sin() * x).sum(), names={"x": x})
    assert recomputations(s.trace) == {}
    assert "recomputed" not in repr(s) and "your backward" not in repr(s)


def test_after_apply_the_mark_comes_from_the_holders_read_before_the_run():
    def build():
        torch.manual_seed(0)
        lin = torch.nn.Linear(2, 2)
        out = checkpoint(lin, torch.ones(1, 2, requires_grad=True), use_reentrant=False).tanh().sum()
        return lin, out

    lin, out = build()
    kept = recomputations(al.trace(out, names={"lin": lin}))
    lin, out = build()
    applied = al.trace(out, names={"lin": lin}, apply=True)
    assert lin.weight.grad is not None  # --apply ran the learner's backward
    assert applied.checkpoint_holders  # read before backward() released them
    marks = recomputations(applied)
    assert len(kept) == 1 and {i: r.which for i, r in marks.items()} == {i: r.which for i, r in kept.items()}


class Product(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


def test_a_function_of_two_tensors_sends_each_its_own_gradient():
    a = torch.tensor([1.0, -2.0], dtype=torch.double, requires_grad=True)
    b = torch.tensor([3.0, 0.5], dtype=torch.double, requires_grad=True)
    ea, eb = a.exp(), b.sin()
    p = Product.apply(ea, eb)
    z = (p ** 2).sum()
    t = al.trace(z, names={"a": a, "b": b, "ea": ea, "eb": eb, "p": p})
    (step,) = [s for s in t.steps if learner_function(s.node) is Product]
    want = torch.autograd.grad(z, [p, ea, eb], retain_graph=True)
    torch.testing.assert_close(step.grad_outputs[0], want[0])
    for got, expected in zip(step.grad_inputs, want[1:], strict=True):
        torch.testing.assert_close(got, expected)
    assert formula(step.node, lambda v: None).splitlines()[1:] == [
        "to ea: what your backward returned for it", "to eb: what your backward returned for it"]
    s = al.step(z, names={"a": a, "b": b, "ea": ea, "eb": eb, "p": p})
    s.goto(step.index + 1)
    assert "saved: 2 tensors with ctx.save_for_backward (your backward reads them as ctx.saved_tensors)" in s.panel()
