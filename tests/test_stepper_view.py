"""The stepper: moving from code and by buttons, prediction, --apply, deterministic faces."""
import re

import pytest
import torch

import autograd_lab as al

from helpers import checked, part


def test_moving_from_code(seed):
    s = al.step(seed["z"], names=seed)
    assert s.index == 0 and s.current is None
    assert s.next().next().index == 2 and s.current.name == "PowBackward0"
    assert s.prev().index == 1
    assert s.end().index == 3 and s.next().index == 3
    assert s.reset().index == 0 and s.prev().index == 0
    assert seed["x"].grad is None


def test_buttons_drive_the_panel(seed):
    s = al.step(seed["z"], names=seed)
    w = s.widget
    assert w is not None
    for _ in range(3):
        s.buttons["next"].click()
    panel = part(s, "agl-step-panel").value
    assert "Step 3 of 3: AccumulateGrad (x)" in panel
    assert "[0.6667, 1.3333, 2.0000]" in panel
    assert s.buttons["next"].disabled and not s.buttons["prev"].disabled
    assert "steps so far (3 of 3)" in part(s, "agl-walk").value and "MeanBackward0 (z)" in part(s, "agl-walk").value
    s.buttons["prev"].click()
    assert "Step 2 of 3: PowBackward0 (y)" in part(s, "agl-step-panel").value
    assert "AccumulateGrad" not in part(s, "agl-walk").value  # the log shows only what was revealed
    assert "to x: grad * 2 * x^(2 - 1)" in part(s, "agl-step-panel").value
    s.buttons["reset"].click()
    assert s.index == 0 and "Before backward" in part(s, "agl-step-panel").value
    part(s, "agl-slider").value = 2  # the slider and play button move the same index
    assert s.index == 2
    s.buttons["end"].click()
    assert s.index == 3 and part(s, "agl-slider").value == 3
    assert part(s, "agl-figure").value[:4] == b"\x89PNG"


def test_text_face_is_the_whole_walk_and_deterministic(seed):
    text = repr(al.step(seed["z"], names=seed))
    assert text.splitlines()[0] == "backward of z: 3 steps in the order the engine ran them"
    assert "MeanBackward0 (z)" in text and "x.grad: None -> [0.6667, 1.3333, 2.0000]" in text
    assert not re.search(r"0x[0-9a-f]{6,}", text)
    other = {"x": torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.double)}
    other["y"] = other["x"] ** 2
    other["z"] = other["y"].mean()
    assert repr(al.step(other["z"], names=other)) == text
    html = al.step(seed["z"], names=seed).html()
    assert html.startswith("<table") and "AccumulateGrad (x)" in html


def test_prediction_right_wrong_and_by_how_much(seed):
    s = al.step(seed["z"], predict=True, names=seed)
    assert "[0.3333" not in repr(s)  # nothing revealed yet
    right = s.predict([1 / 3, 1 / 3, 1 / 3])
    assert right.right and s.index == 1
    wrong = s.predict([1.0, 2.0, 3.0])
    assert not wrong.right and "(off by up to 1.)" in wrong.message  # 3 - 2 = 1, as torch prints tensor(1.)
    printed = s.predict([0.6667, 1.3333, 2.0])  # copied from what torch prints: right
    assert printed.right and s.index == 3


def test_prediction_box_in_the_widget(seed):
    s = al.step(seed["z"], predict=True, names=seed)
    _ = s.widget  # built: its controls exist
    assert "right" in checked(s, "[1/3, 1/3, 1/3]") and s.index == 1  # a fraction typed is exact
    assert "wrong" in checked(s, "[1, 1, 1]") and s.index == 2
    said = checked(s, "2 * x")  # text, never run: x is not looked up in the learner's names
    assert "not checked" in said and "x is a name" in said and "WrongForm" not in said and s.index == 2
    assert "is code" in checked(s, "torch.ones(3) / 3") and s.index == 2
    assert "not checked" in checked(s, "2 * ((") and s.index == 2
    assert "right" in checked(s, "tensor([0.6667, 1.3333, 2.0000], dtype=torch.float64, grad_fn=<MulBackward0>)")
    assert s.index == 3


def test_prediction_shape_mistake_is_named(seed):
    s = al.step(seed["z"], predict=True, names=seed)
    assert "shape" in s.predict(1.0).message


def test_apply_accumulates_at_the_end_like_backward(seed):
    from autograd_lab.stepper.view import Stepper

    (expected,) = torch.autograd.grad(seed["z"], seed["x"], retain_graph=True)
    s = Stepper(al.trace(seed["z"], names=seed), apply=True)
    s.next()
    assert seed["x"].grad is None
    s.end()
    torch.testing.assert_close(seed["x"].grad, expected)
    assert "applied: .grad accumulated for x" in repr(s)


def test_apply_without_a_widget_applies_at_once(seed):
    (expected,) = torch.autograd.grad(seed["z"], seed["x"], retain_graph=True)
    s = al.step(seed["z"], apply=True, names=seed)
    assert s.index == 3
    torch.testing.assert_close(seed["x"].grad, expected)


def test_graph_view_marks_stops():
    x = torch.tensor([1., 2.], requires_grad=True)
    c = torch.tensor([3., 4.])
    g = al.show_graph((x * c).sum(), names={"x": x, "c": c})
    text = repr(g)
    assert "1 leaf, 1 place where backprop stops" in text
    mul_row = next(line for line in text.splitlines() if "MulBackward0" in line)
    assert mul_row.split()[-1] == "stop"
    assert g.figure() is not None
    assert "stop at input 2 of node 1 (MulBackward0): c, which does not require grad" in text


@pytest.mark.parametrize("make, reason", [
    (lambda x, h: (x * x.detach()).sum(), "a detach() of x"),
    (lambda x, h: (x * h.detach()).sum(), "a detach() of h"),
    (lambda x, h: (x * 2).sum(), "the constant 2"),
])
def test_graph_view_says_why_backprop_stops(make, reason):
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 3  # not a leaf: its detach() is still "a detach() of h", not "h, which does not require grad"
    text = repr(al.show_graph(make(x, h), names={"x": x, "h": h}))
    assert reason in text and "which does not require grad" not in text


def test_big_graph_traces_steps_and_draws_a_neighbourhood():
    torch.manual_seed(0)
    layers = []
    for _ in range(300):
        layers += [torch.nn.Linear(8, 8), torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers)
    loss = model(torch.randn(4, 8)).pow(2).mean()
    s = al.step(loss, names={"model": model})
    assert len(s.trace.graph.nodes) > 1000
    _ = s.widget  # built: its controls exist
    for _ in range(5):
        s.buttons["next"].click()
    fig = s.figure()
    assert f"of {len(s.trace.graph.nodes)} nodes" in fig.get_suptitle()
    assert len(fig.axes[0].texts) < 200
    assert s.trace.grad(model[0].weight) is not None
    text = repr(s)
    assert "AccumulateGrad (model.0.weight)" in text and "AccumulateGrad (model.598.bias)" in text


def test_the_fast_figure_colours_current_done_and_ready_boxes(seed):
    import io

    from PIL import Image

    from autograd_lab.stepper.draw import COLORS

    s = al.step(seed["z"], names=seed)
    _ = s.widget  # built: its controls exist
    s.next().next()  # PowBackward0 is current, MeanBackward0 done, AccumulateGrad ready next
    img = Image.open(io.BytesIO(part(s, "agl-figure").value)).convert("RGB")
    drawing = s.drawing

    def colour_inside(node):
        r0, _r1, c0, _c1 = drawing.box_pixels[drawing.nodes.index(node)]
        return "#{:02x}{:02x}{:02x}".format(*img.getpixel((c0 + 3, r0 + 2)))

    mean, pow_, acc = (st.node for st in s.trace.steps)
    assert colour_inside(pow_) == COLORS["current"]
    assert colour_inside(mean) == COLORS["done"]
    assert colour_inside(acc) == COLORS["ready"]
    s.reset()
    img = Image.open(io.BytesIO(part(s, "agl-figure").value)).convert("RGB")
    assert colour_inside(pow_) == COLORS["waiting"]


def test_saved_values_shown_and_a_later_backward_is_said_to_have_freed_them(seed):
    shown = al.step(seed["z"], names=seed)
    assert "saved: exponent=2, self=x" in shown.goto(2).panel()
    later = al.step(seed["z"], names=seed)
    seed["z"].backward()  # the learner's own backward frees what the graph saved
    assert "saved: freed by a later backward()" in later.goto(2).panel()


@pytest.mark.parametrize("answer", ["abc", None, [1.0, 2.0], [[1.0, 2.0, 3.0]], object()])
def test_an_answer_that_cannot_be_compared_reveals_nothing(seed, answer):
    s = al.step(seed["z"], predict=True, names=seed)
    verdict = s.predict(answer)
    assert not verdict.right and "nothing revealed" in verdict.message
    assert s.index == 0 and "[0.3333" not in repr(s) and 1 not in s.verdicts


def test_a_wrong_but_readable_answer_still_reveals_the_step(seed):
    s = al.step(seed["z"], predict=True, names=seed)
    assert not s.predict([1.0, 1.0, 1.0]).right and s.index == 1


def test_step_with_apply_runs_the_engine_once(seed):
    calls = []
    seed["y"].register_hook(lambda g: calls.append(1))
    s = al.step(seed["z"], apply=True, names=seed)
    assert calls == [1] and s.applied
    assert "saved: exponent=2, self=x" in s.goto(2).panel()  # read before backward() freed them
    assert "applied: .grad accumulated for x" in repr(s)


def test_a_released_stepper_says_so_and_lets_go_of_its_trace(seed):
    import gc
    import weakref

    s = al.step(seed["z"], names=seed)
    _ = s.widget  # built: its controls exist
    s.next()
    graph = weakref.ref(s.trace.graph)
    s.release()
    gc.collect()
    assert graph() is None
    assert "released" in repr(s) and "Re-run the cell" in s.widget.children[0].value
    assert len(s.widget.children) == 1 and s.next().index == 1
    assert "released" in s.predict([1.0]).message


def test_a_new_stepper_of_the_same_cell_releases_the_old_one_in_a_kernel(seed, monkeypatch):
    from autograd_lab.stepper import live_view, view

    monkeypatch.setattr(view, "live", lambda: True)
    monkeypatch.setattr(live_view, "_current", {})
    old = al.step(seed["z"], names=seed, label="z")
    other = al.step(seed["y"].sum(), names=seed, label="y.sum()")
    new = al.step(seed["z"], names=seed, label="z")
    assert old.released and not new.released and not other.released


def test_the_next_window_drawn_between_clicks_is_the_one_a_click_would_draw():
    x = torch.tensor([0.5, 1.5], requires_grad=True)
    y = x
    for _ in range(80):
        y = y * 1.01
    plain, ahead = al.step(y.sum(), names={}), al.step(y.sum(), names={})
    _ = plain.widget, ahead.widget
    assert not ahead.ahead.enabled  # off outside a live kernel: tests draw as before
    ahead.ahead.enabled = True
    taken = 0
    for _ in range(60):
        window = ahead.drawing
        ahead.ahead.wait()  # as if the learner paused: the next window is drawn meanwhile
        planned = ahead.ahead.planned
        plain.buttons["next"].click()
        ahead.buttons["next"].click()
        if ahead.drawing is not window:
            assert ahead.drawing is planned  # the window move took the drawing made in advance
            taken += 1
        assert part(ahead, "agl-figure").value == part(plain, "agl-figure").value  # same pixels, click after click
    assert taken >= 1
    ahead.release()
    assert not ahead.ahead.waiting


def test_the_panel_wraps_between_words(seed):
    """JupyterLab breaks a <pre> anywhere ("has arriv / ed"): the panel asks for breaks between words."""
    s = al.step(seed["z"], names=seed)
    _ = s.widget
    s.end()
    panel = part(s, "agl-step-panel").value
    cells = re.findall(r"<pre style='([^']*)'>", panel)
    assert cells and all("word-break:normal" in c and "white-space:pre-wrap" in c for c in cells)


def test_opening_renders_only_the_texts_of_its_first_picture_and_the_rest_between_clicks(monkeypatch):
    """Opening a stepper renders the values of no step ahead (they were most of opening a big
    graph); a live stepper renders them once the kernel is idle, so a click then renders no text."""
    from autograd_lab.stepper import draw

    x = torch.tensor([1., 2.], requires_grad=True)
    y = x
    for _ in range(6):
        y = y * 1.5
    s = al.step(y.sum(), names={"x": x})
    rendered: list[list] = []
    real = draw.Drawing._render_sprites

    def counting(self, new):
        rendered.append(list(new))
        return real(self, new)

    monkeypatch.setattr(draw.Drawing, "_render_sprites", counting)
    _ = s.widget
    values = [text for step in s.trace.steps for text, *_ in s.drawing.value_labels(step.node)]
    assert values and not any(kind == "value" for batch in rendered for kind, _t in batch)
    assert not s.drawing.prepared
    s.ahead.enabled = True
    s.buttons["next"].click()  # a click stamps its node's values: rendered now, in one figure
    assert [kind for kind, _t in rendered[-1]].count("value") == len(s.drawing.value_labels(s.current.node))
    s.ahead.wait()  # the learner pauses: the drawing's other texts are rendered meanwhile
    assert s.drawing.prepared
    before = len(rendered)
    for _ in range(3):
        s.buttons["next"].click()
    assert len(rendered) == before  # the clicks stamped texts rendered ahead
    s.release()


def test_rendering_texts_ahead_stops_when_asked():
    x = torch.tensor([1., 2.], requires_grad=True)
    s = al.step((x * 2 * 3).sum(), names={"x": x})
    _ = s.widget
    s.drawing.prepare(stop=lambda: True)
    assert not s.drawing.prepared
    s.drawing.prepare()
    assert s.drawing.prepared
