"""%backward and %graph through a real IPython shell (globalipapp)."""
import pytest
import torch
from IPython.core.error import UsageError


def captured(ip, magic, line):
    from IPython.utils.capture import capture_output

    with capture_output() as out:
        ip.run_line_magic(magic, line)
    return out


def test_backward_magic_shows_the_walk_and_changes_nothing(seeded):
    out = captured(seeded, "backward", "z")
    text = out.outputs[-1].data["text/plain"]
    assert "backward of z: 3 steps" in text
    assert "MeanBackward0 (z)" in text and "PowBackward0 (y)" in text and "AccumulateGrad (x)" in text
    assert seeded.user_ns["x"].grad is None
    assert out.outputs[0].data.get("image/png", b"")[:4] == b"\x89PNG"
    assert out.stderr == ""


def test_backward_magic_with_gradient_and_apply(seeded):
    seeded.run_cell("w = x * 3")
    captured(seeded, "backward", "w --gradient torch.ones_like(w) --apply")
    torch.testing.assert_close(seeded.user_ns["x"].grad, torch.full((3,), 3.0, dtype=torch.double))


def test_backward_magic_expression_with_spaces(seeded):
    out = captured(seeded, "backward", "(y * 2).sum()")
    assert "backward of (y * 2).sum(): 4 steps" in out.outputs[-1].data["text/plain"]


@pytest.mark.parametrize("line, words", [
    ("nothing_here", ["not defined", "Usage: %backward"]),
    ("y", ["shape (3,)", "y.sum()", "--gradient torch.ones_like(y)"]),
    ("z --gradient", ["needs a value"]),
    ("z --fast", ["unknown option --fast"]),
    ("z --apply=yes", ["switch"]),
    ("z --gradient=", ["needs a value"]),
    ("z --nope=1", ["unknown option --nope", "--gradient, --predict, --apply"]),
    ("", ["Usage: %backward"]),
    ("x", ["leaf"]),
    ("y --gradient torch.ones(2)", ["shape"]),
])
def test_backward_magic_bad_input_is_a_short_usage_error(seeded, line, words):
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic("backward", line)
    for word in words:
        assert word in str(err.value)
    assert seeded.user_ns["x"].grad is None


def test_backward_magic_on_a_freed_graph(seeded):
    seeded.run_cell("q = (x * x).sum(); q.backward(); x.grad = None")
    with pytest.raises(UsageError, match="retain_graph=True"):
        seeded.run_line_magic("backward", "q")


def test_graph_magic(seeded):
    out = captured(seeded, "graph", "z")
    text = out.outputs[-1].data["text/plain"]
    assert text.startswith("backward graph of z: 3 nodes, 1 leaf, 0 places where backprop stops")
    with pytest.raises(UsageError, match="no grad_fn"):
        seeded.run_line_magic("graph", "torch.ones(2)")


def test_unload_removes_the_magics(ip):
    ip.run_line_magic("unload_ext", "autograd_lab")
    assert "backward" not in ip.magics_manager.magics["line"]
    ip.run_line_magic("load_ext", "autograd_lab")
    assert "backward" in ip.magics_manager.magics["line"]
