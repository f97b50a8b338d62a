"""The colours of autograd_lab/text.py: every verdict an exercise can give has its own colour,
readable as text on white, and the verdict's face uses it."""
import pytest

from autograd_lab.practice.checking import STATUS_LABELS, Result
from autograd_lab.practice.digits import CLOSE, RIGHT, WRONG
from autograd_lab.practice.faces import result_html
from autograd_lab.text import STATUS_COLOURS, status_colour

UNLISTED = status_colour("no such status")


def luminance(colour: str) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("status", sorted(STATUS_LABELS))
def test_every_verdict_of_an_exercise_has_a_colour_of_its_own(status):
    assert status in STATUS_COLOURS, status
    others = {s for s in STATUS_LABELS if s != status}
    assert status_colour(status) not in {status_colour(s) for s in others}, status
    assert contrast(status_colour(status), "#ffffff") >= 4.5, status  # its label is text


def test_close_sits_apart_from_right_and_wrong():
    assert status_colour(CLOSE) != UNLISTED
    assert status_colour(CLOSE) not in {status_colour(RIGHT), status_colour(WRONG), status_colour("error")}
    assert status_colour(RIGHT) == status_colour("correct") and status_colour(WRONG) == status_colour("incorrect")


def test_a_close_verdict_is_shown_in_its_colour():
    html = result_html(Result("mean_square", "close", "Close: round, do not cut."))
    assert f"color:{status_colour('close')}" in html and f"solid {status_colour('close')}" in html
    assert 'data-status="close"' in html
