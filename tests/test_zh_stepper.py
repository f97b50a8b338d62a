"""The stepper in Chinese: every face of %backward, step(), trace(), %graph and show_graph (walk,
panel, predictions and their verdicts, the widget's controls, the figures' titles and labels, the
hooks' and checkpoints' lines, TraceError messages) speaks Chinese with no English sentence left,
over the promises' zoo of graphs; Chinese labels fit their figure; and the English faces are
pinned where no other test pins them (the English lessons compare them byte for byte)."""
import re

import pytest
import torch
from IPython.core.error import UsageError
from torch.utils.checkpoint import checkpoint

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.format import width
from autograd_lab.stepper.panel_faces import next_prompt
from autograd_lab.stepper.predict import NOT_COMPARED, compare
from helpers import CHINESE, Cube, assert_chinese, checked, english_words, part
from test_graph_marks import gan
from test_promises import ZOO

# 'stop' is the lab's mark where backprop stops (the Chinese lessons quote it as `stop`); None is Python's
MARKS = re.compile(r"\b(?:stop|None)\b")


def leftover(text: str) -> list[str]:
    """Runs of English words left in a face that should be Chinese (an HTML face read as its text)."""
    return english_words(MARKS.sub(" ", text))


def chinese(text: str) -> None:
    assert_chinese(MARKS.sub(" ", text))


def figure_texts(fig) -> list:
    return [t for t in fig.texts + fig.axes[0].texts if t.get_text()]


def custom():
    a = torch.tensor([1., 2.], requires_grad=True)
    loss = (Cube.apply(a) * 3).sum()
    return loss, {"a": a, "loss": loss}


def checkpointed():
    h = torch.tensor([1., 2.], requires_grad=True)

    def tanh_layer(t):
        return torch.tanh(t * 2)
    out = checkpoint(tanh_layer, h, use_reentrant=False).sum()
    return out, {"h": h, "out": out, "tanh_layer": tanh_layer}


def hooked():
    w = torch.tensor([1., 2.], requires_grad=True)
    q = w * 3
    q.register_hook(lambda g: g * 2)
    r = q.exp().sum()
    return r, {"w": w, "q": q, "r": r}


# --- Chinese ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", list(ZOO))
def test_every_face_of_the_zoo_speaks_chinese(zh, kind):
    case = ZOO[kind]()
    anomaly = torch.autograd.set_detect_anomaly(True) if getattr(case, "anomaly", False) else None
    try:
        if case.refused:
            with pytest.raises(LabInputError) as err:
                al.step(case.output, gradient=case.gradient, names=case.names)
            chinese(str(err.value))
            return
        s = al.step(case.output, gradient=case.gradient, names=case.names, label=kind.split()[0])
        n = len(s.trace.steps)
        for index in sorted({0, 1, n // 2, n}):
            s.goto(index)
            for face in (repr(s), s.html(), s.panel()):
                chinese(face)
            if index < n:
                chinese(next_prompt(s.trace, index))
        chinese(s.figure_title())
        graph = al.show_graph(case.output, names=case.names, label=kind.split()[0])
        chinese(repr(graph))
        words = [t.get_text() for t in figure_texts(graph.figure())]
        chinese(words[0])  # the title
        assert all(leftover(w) == [] for w in words), words
    finally:
        if anomaly is not None:
            torch.autograd.set_detect_anomaly(False)


def test_the_walk_and_panel_of_the_seed_example(zh, seed):
    s = al.step(seed["z"], names=seed)
    text = repr(s.goto(2))
    assert text.splitlines()[0] == "z 的反向传播：共 3 步，按引擎运行的顺序排列"
    assert "> 2  PowBackward0 (y)" in text and "各叶子张量的梯度：x: [0.6667, 1.3333, 2.0000]" in text
    # the columns are aligned by display width (a Chinese character takes two): each header starts
    # where its column's dashes do
    head, rule = text.splitlines()[1:3]
    starts = [m.start() for m in re.finditer(r"-+", rule)]
    assert [width(head[:head.index(h)]) for h in ("节点", "到达的梯度", "继续发出的梯度")] == starts[1:]
    panel = s.panel()
    assert panel.splitlines()[0] == "第 2 步（共 3 步）：PowBackward0 (y)"
    assert "规则：传给 x：grad * 2 * x^(2 - 1)" in panel and "保存的值：exponent=2, self=x" in panel
    assert "为什么是现在：它是唯一就绪的节点" in panel
    assert s.goto(0).panel().startswith("反向传播之前：共 3 步。backward() 从 MeanBackward0 (z) 开始")
    chinese(s.html())


def test_own_backward_checkpoint_and_hooks_lines(zh):
    loss, names = custom()
    s = al.step(loss, names=names)
    assert "CubeBackward [你自己写的反向函数]" in repr(s)
    assert "你自己写的反向函数：CubeBackward 就是 Cube.backward（第 3 步）" in repr(s)
    panel = s.goto(3).panel()
    assert "传给 a：你的反向函数为它返回的值" in panel and "保存了 1 个张量" in panel
    chinese(panel)
    out, names = checkpointed()
    s = al.step(out, names=names)
    assert "TanhBackward0 [在此重新计算]" in repr(s) and "再次运行了包裹 tanh_layer 的检查点内的前向传播" in repr(s)
    chinese(repr(s))
    chinese(s.goto(2).panel())
    r, names = hooked()
    s = al.step(r, names=names)
    assert "和 backward() 中一样，你的钩子运行了：你在 q 上的钩子 lambda" in repr(s)
    chinese(repr(s))


def test_a_long_walk_says_where_the_rest_is_in_chinese(zh):
    x = torch.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(200):
        y = y * 1.001
    s = al.step(y.sum(), names={"x": x})
    s.goto(100)
    chinese(repr(s))
    assert "全部 202 步都在 stepper.trace.steps 中" in repr(s) and "步未显示" in repr(s)
    chinese(s.html())


def test_predictions_and_their_verdicts(zh, seed):
    s = al.step(seed["z"], predict=True, names=seed)
    assert "[0.3333" not in repr(s)
    chinese(repr(s))
    for answer in ("abc", None, [1.0, 2.0], [[1.0, 2.0, 3.0]]):  # cannot be compared: nothing revealed
        verdict = s.predict(answer)
        chinese(verdict.message)
        assert not verdict.right and "没有揭晓任何一步" in verdict.message and s.index == 0
    wrong = s.predict([1.0, 1.0, 1.0])
    assert not wrong.right and s.index == 1 and "最多相差" in wrong.message
    right = s.predict([0.6667, 1.3333, 2.0])
    assert right.right and s.index == 2
    chinese(right.message)
    s.end()
    finished = s.predict(1.0)
    chinese(finished.message)


def test_the_usual_mistakes_are_named_in_chinese(zh, seed):
    trace = al.trace(seed["z"], names=seed)
    mean_step, pow_step = trace.steps[0], trace.steps[1]
    (dz_dy,) = torch.autograd.grad(seed["z"], seed["y"], retain_graph=True)
    (dz_dx,) = torch.autograd.grad(seed["z"], seed["x"], retain_graph=True)
    found = {
        "arriving": compare(dz_dy.tolist(), pow_step.grad_inputs, pow_step),
        "next_node": compare(dz_dx.tolist(), mean_step.grad_inputs, mean_step),
        "local_only": compare((dz_dx / dz_dy).tolist(), pow_step.grad_inputs, pow_step),
        "factor": compare((dz_dx / 2).tolist(), pow_step.grad_inputs, pow_step),
        "too_few_digits": compare([0.67, 1.33, 2], pow_step.grad_inputs, pow_step),
    }
    for key, verdict in found.items():
        assert verdict.diagnosis == key and not verdict.right
        chinese(verdict.message)
    assert found["too_few_digits"].message == "很接近：请给出三位有效数字"
    several = compare((1.0, "abc"), (torch.ones(2), torch.ones(2)))
    chinese(several.message)
    assert several.diagnosis in NOT_COMPARED  # an input that could not be compared: nor was the answer
    chinese(compare([1.0], (torch.ones(2), torch.ones(2))).message)


def test_the_widget_speaks_chinese(zh, seed):
    s = al.step(seed["z"], predict=True, names=seed)
    _ = s.widget  # built: its controls exist
    assert [b.description for b in s.buttons.values()] == ["回到开头", "上一步", "下一步", "到末尾", "检查"]
    assert part(s, "agl-slider").description == "步"
    chinese(part(s, "agl-predict").placeholder)
    chinese(part(s, "agl-step-panel").value)
    # too few digits: close, said once
    assert checked(s, "[0.33, 0.33, 0.33]") == "<b>很接近</b>：请给出三位有效数字" and s.index == 1
    chinese(part(s, "agl-walk").value)
    chinese(part(s, "agl-step-panel").value)
    assert checked(s, "[2/3, 4/3, 2]") == "<b>正确</b>：与引擎的结果一致" and s.index == 2
    assert checked(s, "[5.0, 1.0, 7.0]") == "<b>不正确</b>：最多相差 5." and s.index == 3
    unread = checked(s, "2 * ((")  # code is not read: the box takes numbers as typed
    assert unread.startswith("<b>未检查</b>：") and "2 * ((" in unread and s.index == 3
    s.release()
    chinese(s.widget.children[0].value)
    chinese(repr(s))
    chinese(s.predict([1.0]).message)


def test_apply_says_what_it_wrote_in_chinese(zh, seed):
    s = al.step(seed["z"], apply=True, names=seed)
    assert repr(s).splitlines()[-1] == "已应用：和 backward() 一样，梯度已累加进 x 的 .grad"


@pytest.mark.parametrize("make", [
    lambda x: 3,
    lambda x: x,
    lambda x: x.detach() * 2,
    lambda x: x * 2,
    lambda x: x.argmax(),
])
def test_trace_refusals_speak_chinese(zh, make):
    x = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(LabInputError) as err:
        al.trace(make(x), names={"x": x})
    chinese(str(err.value))
    assert x.grad is None


@pytest.mark.parametrize("gradient", ["a", torch.ones(3), torch.ones(2, dtype=torch.cfloat)])
def test_a_bad_starting_gradient_is_refused_in_chinese(zh, gradient):
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 2
    with pytest.raises(LabInputError) as err:
        al.trace(y, gradient=gradient, names={"x": x, "y": y})
    chinese(str(err.value))


def test_an_unnamed_output_is_called_the_output_in_chinese(zh):
    x = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(LabInputError) as err:
        al.trace(x * 2, names={})
    assert str(err.value).startswith("输出的形状是 (2,)") and "%backward output.sum()" in str(err.value)


def test_the_magics_refuse_in_chinese(zh, seeded):
    for magic, line in (("backward", "x"), ("backward", "y"), ("graph", "torch.ones(2)")):
        with pytest.raises(UsageError) as err:
            seeded.run_line_magic(magic, line)
        assert CHINESE.search(str(err.value)), str(err.value)
        assert leftover(str(err.value).split("Usage:")[0]) == [], str(err.value)
    assert seeded.user_ns["x"].grad is None


def test_the_magics_show_chinese(zh, seeded):
    from IPython.utils.capture import capture_output

    for magic in ("backward", "graph"):
        with capture_output() as out:
            seeded.run_line_magic(magic, "z")
        assert out.stderr == ""
        chinese(out.outputs[-1].data["text/plain"])
        chinese(out.outputs[-1].data["text/html"])


# --- the figures ---------------------------------------------------------------------------------

def rendered(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # a missing glyph would warn, and a warning fails the test
    return canvas.get_renderer()


def assert_fits(fig):
    """Every text inside the figure; every node label inside its box; no two labels overlapping."""
    renderer = rendered(fig)
    ax = fig.axes[0]
    texts = figure_texts(fig)
    boxes = [t.get_window_extent(renderer) for t in texts]
    for t, box in zip(texts, boxes, strict=True):
        assert fig.bbox.x0 - 1 <= box.x0 and box.x1 <= fig.bbox.x1 + 1, t.get_text()
    for t, box in zip(texts, boxes, strict=True):
        if t in ax.texts and t.get_ha() == "center":  # a node's label, centred in its box 0.92 columns wide
            x, y = t.get_position()
            (left, _), (right, _) = ax.transData.transform([(x - 0.46, y), (x + 0.46, y)])
            assert left <= box.x0 and box.x1 <= right, t.get_text()
    inner = [b for t, b in zip(texts, boxes, strict=True) if t in ax.texts]
    assert not any(a.overlaps(b) for i, a in enumerate(inner) for b in inner[i + 1:])


def test_the_graph_figure_names_frozen_parameters_and_cuts_in_chinese(zh):
    import torch.nn.functional as F

    G, D, noise, ones = gan()
    D.requires_grad_(False)
    fake = G(noise)
    g_loss = F.binary_cross_entropy_with_logits(D(fake), ones)
    names = {"G": G, "D": D, "noise": noise, "ones": ones, "fake": fake, "g_loss": g_loss}
    view = al.show_graph(g_loss, names=names)
    fig = view.figure()
    words = [t.get_text() for t in figure_texts(fig)]
    assert words[0] == "g_loss 的反向图\n已冻结（没有节点，没有 .grad）：D.weight, D.bias"
    assert {"stop：D.weight（已冻结）", "stop：ones", "stop：noise"} <= set(words)
    assert_fits(fig)
    text = repr(view)
    assert "已冻结（requires_grad=False，所以没有节点，也没有 .grad）：D.weight, D.bias" in text
    assert "D.weight，一个被冻结的参数（requires_grad=False）" in text
    chinese(text)
    G, D, noise, _ = gan()
    fake = G(noise)
    d_loss = F.binary_cross_entropy_with_logits(D(fake.detach()), torch.zeros(4, 1))
    fig = al.show_graph(d_loss, names={"G": G, "D": D, "fake": fake, "d_loss": d_loss}).figure()
    assert "stop：fake 的 detach()" in [t.get_text() for t in figure_texts(fig)]
    assert_fits(fig)


def test_a_module_hooks_node_is_labelled_in_chinese_and_fits_its_box(zh):
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    out = lin(torch.randn(4, 3, requires_grad=True)).pow(2).sum()
    s = al.step(out, names={"lin": lin})
    assert "BackwardHookFunctionBackward (lin 的反向钩子)" in repr(s)
    assert "你在模块 lin 上的反向钩子 lambda" in repr(s)
    labels = [t.get_text() for t in s.figure().axes[0].texts]
    assert any("lin 的反向钩子" in label for label in labels)
    assert_fits(s.figure())
    assert s.figure_png()[:4] == b"\x89PNG"


def test_long_chinese_notes_and_stop_labels_are_clipped_to_fit(zh):
    from autograd_lab.stepper.draw import NOTE
    from autograd_lab.stepper.draw_labels import clip

    layers = [torch.nn.Linear(2, 2).requires_grad_(False) for _ in range(12)]
    names = {f"a_rather_long_layer_name_{i}": layer for i, layer in enumerate(layers)}
    x = torch.ones(1, 2, requires_grad=True)
    h = x
    for layer in layers:
        h = layer(h)
    names["x"] = x
    fig = al.show_graph(h.sum(), names=names).figure()
    note = fig.texts[0].get_text().splitlines()[1]
    assert note.endswith("...") and width(note) <= NOTE
    assert_fits(fig)
    assert clip("梯度" * 20, 9) == "梯度梯..."


def test_a_big_graph_heading_and_a_crowded_node_in_chinese(zh):
    x = torch.ones(1, requires_grad=True)
    out = torch.cat([x] + [torch.full((1,), float(i)) for i in range(50)]).sum()
    fig = al.show_graph(out, names={"x": x, "out": out}).figure()
    words = [t.get_text() for t in figure_texts(fig)]
    assert words.count("stop") == 2 and "另有 48 个 stop" in words
    assert_fits(fig)
    y = x
    for _ in range(120):
        y = y * 1.01
    s = al.step(y.sum(), names={"x": x})
    s.goto(60)
    heading = s.figure().get_suptitle() if s.figure().texts else ""
    graph_fig = al.show_graph(y.sum(), names={"x": x}).figure()
    title = graph_fig.texts[0].get_text()
    assert "（显示了 122 个节点中的 60 个）" in title
    chinese(title)
    assert leftover(heading) == []
    rendered(graph_fig)


# --- English, unchanged ---------------------------------------------------------------------------

SEED_WALK = """\
backward of z: 3 steps in the order the engine ran them
  #  node                gradient arriving (grad_outputs)  sent on (grad_inputs)
  -  ------------------  --------------------------------  ----------------------------------------
  1  MeanBackward0 (z)   1.                                [0.3333, 0.3333, 0.3333] -> y
> 2  PowBackward0 (y)    [0.3333, 0.3333, 0.3333]          [0.6667, 1.3333, 2.0000] -> x
  3  AccumulateGrad (x)  [0.6667, 1.3333, 2.0000]          x.grad: None -> [0.6667, 1.3333, 2.0000]
gradients for the leaves: x: [0.6667, 1.3333, 2.0000]"""

SEED_PANEL = """\
Step 2 of 3: PowBackward0 (y)
rule: to x: grad * 2 * x^(2 - 1)
arriving: [0.3333, 0.3333, 0.3333]
sent on: [0.6667, 1.3333, 2.0000] -> x
saved: exponent=2, self=x
why now: It is the only node ready: every gradient it waits for has arrived."""


def test_the_english_walk_and_panels_are_unchanged(seed):
    s = al.step(seed["z"], names=seed)
    assert repr(s.goto(2)) == SEED_WALK
    assert s.panel() == SEED_PANEL
    assert s.goto(0).panel() == ("Before backward: 3 steps to go. backward() starts at MeanBackward0 (z), with "
                                 "gradient 1 (d output / d output).")
    assert next_prompt(s.trace, 0) == ("<p><i>Next: MeanBackward0 (z). Predict what it sends on, then press "
                                       "Check.</i></p>")
    assert next_prompt(s.trace, 2) == ("<p><i>Next: AccumulateGrad (x). Predict what x.grad holds after it, then "
                                       "press Check.</i></p>")
    assert s.figure_title() == "backward graph of z"


def test_the_english_lines_of_own_backward_checkpoint_and_hooks_are_unchanged():
    loss, names = custom()
    s = al.step(loss, names=names)
    assert repr(s).splitlines()[-1] == (
        "your backward: CubeBackward is Cube.backward (step 3). The engine called it with the gradient arriving "
        "and sent on what it returned (your torch.autograd.Function is one node)")
    assert s.goto(3).panel().splitlines()[1:3] == [
        "rule: your backward: the engine called Cube.backward(ctx, grad) with the gradient arriving",
        "to a: what your backward returned for it"]
    assert "saved: 1 tensor with ctx.save_for_backward (your backward reads it as ctx.saved_tensors)" in s.panel()
    out, names = checkpointed()
    s = al.step(out, names=names)
    assert repr(s).splitlines()[-1] == (
        "recomputed here: step 2 (TanhBackward0) ran the forward of the checkpoint of tanh_layer. "
        "torch.utils.checkpoint(use_reentrant=False) kept no values of that forward; the first node to unpack one "
        "ran the forward again through saved-tensor hooks, which adds no nodes to the graph")
    assert "TanhBackward0 [recomputed here]" in repr(s)
    panel = s.goto(2).panel()
    assert "rule: to input: grad * (1 - result^2)" in panel
    assert ("recomputed here: unpacking what this node saved ran the forward of the checkpoint of tanh_layer again "
            "(torch.utils.checkpoint, use_reentrant=False, kept none of its values); the recomputation runs "
            "through saved-tensor hooks and adds no nodes") in panel
    assert "to 2: grad * h   (needs no gradient: backprop stops here)" in s.goto(3).panel()
    r, names = hooked()
    s = al.step(r, names=names)
    assert repr(s).splitlines()[-1] == "your hooks ran, as in backward(): your hook a lambda on q"
    assert "rule: to q: grad * result   (exp is its own derivative)" in s.goto(2).panel()


def test_the_english_verdicts_are_unchanged(seed):
    s = al.step(seed["z"], predict=True, names=seed)
    assert s.predict("abc").message == (
        "could not read str as numbers: type a number, a list like [1.0, 2.0], or an expression (Cannot read this "
        "text as numbers: give a list of numbers, or the text PyTorch printed.) (nothing revealed: try again)")
    assert s.predict([1.0, 2.0]).message == (
        "wrong shape: you gave (2,), the gradient has shape (3,) (one value per element of the input) "
        "(nothing revealed: try again)")
    _ = s.widget  # built: its controls exist
    assert [b.description for b in s.buttons.values()] == ["Reset", "Previous", "Next", "End", "Check"]
    assert part(s, "agl-predict").placeholder == "what does the next node send on? e.g. [0.5, 1.0]"
    assert checked(s, "[0.33, 0.33, 0.33]") == "<b>close</b>: give three significant digits"
    assert checked(s, "[2/3, 4/3, 2]") == "<b>right</b>: matches the engine"
    assert checked(s, "[5.0, 1.0, 7.0]") == "<b>wrong</b>: off by up to 5."
    unread = checked(s, "2 * ((")  # code is not read: the box takes numbers as typed
    assert unread.startswith("<b>not checked</b>: ") and "2 * ((" in unread
    several = compare((1.0, "abc"), (torch.ones(2), torch.ones(2)))
    assert several.message.startswith("not for input 1, 2: wrong shape: you gave (), the gradient has shape (2,)")


@pytest.mark.parametrize("make, message", [
    (lambda x: 3, "the output is of type int, not a tensor. Pass the tensor you would call .backward() on, e.g. "
                  "z = (x ** 2).mean(), then %backward z."),
    (lambda x: x.detach() * 2, "the output has no grad_fn, so autograd recorded no graph for it. Either none of "
                               "its inputs has requires_grad=True, or it was computed under torch.no_grad(), or it "
                               "comes from .detach(). Create the input with requires_grad=True, e.g. "
                               "x = torch.tensor([1., 2., 3.], requires_grad=True), and compute the output again."),
    (lambda x: x * 2, "the output has shape (2,), and backward() can only start by itself from a single number. "
                      "Reduce it first: %backward output.sum() (or .mean()), or give the starting gradient: "
                      "%backward the output --gradient torch.ones_like(the output)"),
])
def test_the_english_refusals_are_unchanged(make, message):
    x = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(LabInputError) as err:
        al.trace(make(x), names={})
    assert str(err.value) == message
