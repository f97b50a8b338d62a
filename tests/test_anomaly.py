"""%%explain --anomaly in a real IPython shell: the cell runs a second time with anomaly mode only
when asked and only for errors raised inside a node's backward, the forward line is the learner's own
line of the cell, and anomaly mode's warnings never reach stderr."""
import pytest
from IPython.utils.capture import capture_output

from autograd_lab.explain.anomaly import Culprit, culprit

CELL = """runs.append(1)
x = torch.tensor([1., 2., 3.], requires_grad=True)
w = x * 2
y = w.sigmoid()
y.mul_(3)
y.sum().backward()
"""


@pytest.fixture
def ns(ip):
    ip.run_cell("import torch\nruns = []")
    return ip


def texts(cap):
    return [o.data["text/plain"] for o in cap.outputs]


def test_anomaly_names_the_forward_line_of_the_cell(ns):
    with capture_output() as cap:
        value = ns.run_cell_magic("explain", "--anomaly", CELL)
    assert value is None
    [shown] = texts(cap)
    assert shown.startswith("autograd error explained (inplace modified)")
    assert "SigmoidBackward0 failed in backward; its forward call is line 4 of this cell:" in shown
    assert "  4 | y = w.sigmoid()" in shown
    assert "<explain-" not in shown and ".py" not in shown  # no temporary file names, no paths
    assert cap.stderr == "" and "Traceback" not in cap.stdout
    assert ns.user_ns["runs"] == [1, 1]  # asked for: ran twice, and the learner is told so
    assert "ran a second time" in shown
    assert 'class="agl-anomaly"' in cap.outputs[0].data["text/html"]


def test_without_anomaly_the_cell_runs_once(ns):
    with capture_output() as cap:
        ns.run_cell_magic("explain", "", CELL)
    [shown] = texts(cap)
    assert "Anomaly mode" not in shown and "line 4" not in shown
    assert ns.user_ns["runs"] == [1] and cap.stderr == ""


def test_a_cell_without_errors_is_not_run_again(ns):
    with capture_output() as cap:
        value = ns.run_cell_magic("explain", "--anomaly", "runs.append(1)\nlen(runs)")
    assert value == 1 and ns.user_ns["runs"] == [1] and cap.outputs == [] and cap.stderr == ""


def test_an_error_before_backward_is_not_run_again(ns):
    with capture_output() as cap:
        ns.run_cell_magic("explain", "--anomaly", "runs.append(1)\ntorch.ones(2).sum().backward()")
    [shown] = texts(cap)
    assert "(no grad fn)" in shown and "The cell was not run again." in shown
    assert ns.user_ns["runs"] == [1] and cap.stderr == ""


def test_a_forward_from_an_earlier_cell_is_said_so(ns):
    ns.run_cell("a = torch.ones(3, requires_grad=True)\nb = a.exp()\nb.add_(1)")
    with capture_output() as cap:
        ns.run_cell_magic("explain", "--anomaly", "runs.append(1)\nb.sum().backward()")
    [shown] = texts(cap)
    assert "It named no forward call" in shown and "%%explain --anomaly cell" in shown
    assert ns.user_ns["runs"] == [1, 1] and cap.stderr == ""


def test_a_forward_inside_a_function_of_the_cell_names_its_line(ns):
    cell = ("def f(t):\n    return t.exp()\n\n"
            "x = torch.ones(2, requires_grad=True)\ny = f(x)\ny += 1\ny.sum().backward()")
    with capture_output() as cap:
        ns.run_cell_magic("explain", "--anomaly", cell)
    [shown] = texts(cap)
    assert "ExpBackward0 failed in backward; its forward call is line 2 of this cell:" in shown
    assert "  2 |     return t.exp()" not in shown and "  2 | return t.exp()" in shown


def test_anomaly_mode_is_off_afterwards(ns):
    import torch

    ns.run_cell_magic("explain", "--anomaly", CELL)
    assert not torch.is_anomaly_enabled()


def test_the_usage_help_warns_about_side_effects(ns):
    doc = ns.find_cell_magic("explain").__doc__
    assert "--anomaly" in doc and "side effects" in doc


def test_culprit_reads_the_warning_and_ignores_other_text():
    text = ('Error detected in MulBackward0. Traceback of forward call that caused the error:\n'
            '  File "/tmp/lab.py", line 10, in run\n    exec(code)\n'
            '  File "<explain-7>", line 3, in <module>\n    y = x * w\n')
    assert culprit(text, "<explain-7>") == Culprit("MulBackward0", 3, "y = x * w")
    outside = culprit(text, "<explain-8>")  # another cell's frame: the innermost outside torch
    assert outside.lineno is None and outside.function == "<module>" and outside.line == "y = x * w"
    torch_only = text.split("  File")[0] + '  File "/x/torch/nn/modules/module.py", line 1, in f\n    g()\n'
    assert culprit(torch_only, "<explain-7>") is None
    assert culprit("Error detected in ExpBackward0. No forward pass information available.", "<c>") is None
    assert culprit("something else", "<explain-7>") is None
