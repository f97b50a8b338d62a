"""Accessible faces and widgets: table headers with scopes, Chinese faces that say their language,
every control of the stepper with a name, and a labelled Play button that drives autoplay."""
import re

import ipywidgets as w

import autograd_lab as al
from autograd_lab.text import html_table

from helpers import part, widgets


def test_table_headers_have_column_scope():
    table = html_table(["node", "grad"], [["a", "1"], ["b", "2"]])
    headers = re.findall(r"<th\b[^>]*>", table)
    assert len(headers) == 2 and all(h == '<th scope="col">' for h in headers)
    assert "<td" in table and 'scope="col"' not in table.split("<tbody>")[1]


def test_chinese_faces_say_their_language(zh, seed):
    s = al.step(seed["z"], names=seed)
    assert s.static_html().startswith('<div lang="zh">') and s.static_html().endswith("</div>")
    _ = s.widget
    s.next()  # a value written after the widget was built is marked too, once
    for part_ in widgets(s.widget):
        if isinstance(part_, w.HTML) and part_.value:
            assert part_.value.startswith('<div lang="zh">'), part_.value[:80]
            assert part_.value.count('<div lang="zh">') == 1


def test_english_faces_are_not_wrapped(seed):
    s = al.step(seed["z"], names=seed)
    assert 'lang="' not in s.static_html()
    _ = s.widget
    assert all('lang="' not in p.value for p in widgets(s.widget) if isinstance(p, w.HTML))


def test_every_control_of_the_stepper_has_a_name(seed):
    s = al.step(seed["z"], predict=True, names=seed)
    controls = [c for c in widgets(s.widget) if isinstance(c, (w.Button, w.Text, w.BoundedIntText))]
    assert len(controls) >= 8  # reset, previous, next, end, play, step, the answer, check
    assert all(c.description.strip() for c in controls)
    assert part(s, "agl-predict").description == "prediction"
    play = part(s, "agl-play")
    assert isinstance(play, w.Play) and play.layout.display == "none"  # icons without names: hidden


def test_the_play_button_starts_and_pauses_autoplay(seed):
    from autograd_lab.stepper.view import playing_trait

    s = al.step(seed["z"], names=seed)
    button, play = part(s, "agl-autoplay"), part(s, "agl-play")
    name = playing_trait(play)  # playing (ipywidgets 8) or _playing (7, Colab's)
    assert play.has_trait(name)

    def playing():
        return getattr(play, name)

    assert button.description == "Play" and not playing()
    button.click()
    assert playing() and button.description == "Pause"
    play.value = 2  # the front end's timer moves the hidden Play: the stepper follows (jslink in a browser)
    part(s, "agl-slider").value = 2
    assert s.index == 2
    button.click()
    assert not playing() and button.description == "Play"
    setattr(play, name, True)  # the front end stops at the end by itself: the label follows
    setattr(play, name, False)
    assert button.description == "Play"
    s.end()
    button.click()  # from the end it starts over
    assert s.index == 0 and playing()


def _img_alt(html: str) -> str:
    [found] = re.findall(r'<img [^>]*alt="([^"]*)"', html)
    return found


def test_the_stepper_alt_says_what_flowed(seed):
    import torch

    s = al.step(seed["z"], names=seed)
    assert "nothing has flowed yet" in _img_alt(s.static_html())
    s.next().next()  # PowBackward0: the mean's 1/3 arrives, 2x/3 is sent on to x
    words = _img_alt(s.static_html())
    expected = torch.autograd.grad(seed["z"], seed["x"], retain_graph=True)[0]  # torch is the oracle
    assert "step 2 of 3" in words and "PowBackward0" in words
    assert "0.3333" in words and f"{expected[2].item():.4f}" in words
    assert words == _img_alt(s.static_html())  # deterministic


def test_alt_text_is_bounded(seed):
    import torch

    x = torch.arange(60.0, requires_grad=True)
    many = sum((x[i] * x[i + 1] for i in range(40)), torch.zeros(()))  # a wide AddBackward chain
    s = al.step(many, names={"x": x, "many": many})
    for _ in range(len(s.trace.steps)):
        s.next()
        assert len(al.display.alt(s.alt_text())) <= al.display.ALT
    assert len(_img_alt(s.static_html())) <= al.display.ALT + 40  # escaped entities may add a few


def test_the_graph_alt_names_output_and_size(seed):
    from autograd_lab.stepper.graph_view import show_graph

    g = show_graph(seed["z"], names=seed)
    words = g.alt_text()
    assert "output z" in words and f"{len(g.graph.nodes)} nodes" in words
    assert _img_alt(g.static_html()) == words


def test_chinese_alt(zh, seed):
    from helpers import assert_chinese

    s = al.step(seed["z"], names=seed)
    s.next()
    assert_chinese(s.alt_text())
