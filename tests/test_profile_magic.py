"""%%backward_profile in a real IPython shell: the learner's hidden state is found by name, the
detached loop is flat, data that requires grad is blamed, and the text face is deterministic apart
from its timings."""
import re

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

RNN = "h = torch.tanh(W @ h + inp)\nh.pow(2).sum()"


@pytest.fixture
def ns(ip):
    ip.run_cell("import torch\ntorch.manual_seed(0)\nW = torch.nn.Parameter(torch.randn(4, 4) * 0.3)\n"
                "inp = torch.randn(4)\nh = torch.zeros(4)\ndata = torch.randn(32, 4, requires_grad=True)\n"
                "opt = torch.optim.SGD([W], lr=0.01)")
    return ip


def profile(ip, cell, line="--steps 4 --warmup 1"):
    with capture_output() as cap:
        ip.run_cell_magic("backward_profile", line, cell)
    assert cap.stderr == ""
    return cap


def text(cap):
    return cap.outputs[-1].data["text/plain"]


def test_hidden_state_is_named_and_detach_is_said(ns):
    out = text(profile(ns, RNN))
    assert "graph: 6 -> 18 nodes (grows by 3 per step)" in out
    assert "carries history across steps: h" in out
    assert "fix:\n    h = h.detach()" in out
    assert ns.user_ns["h"].grad_fn is not None  # the cell really ran in the learner's namespace


def test_detached_loop_is_flat(ns):
    out = text(profile(ns, "h = torch.tanh(W @ h.detach() + inp)\nh.pow(2).sum()"))
    assert "graph: 6 -> 6 nodes (flat)" in out and "carries history across steps: nothing" in out


def test_data_that_requires_grad_is_blamed_not_the_weight(ns):
    out = text(profile(ns, "batch = data[:8]\n(batch @ W).pow(2).mean()"))
    assert "data that requires grad: data (128 numbers)" in out
    assert "W" not in out.split("data that requires grad:")[1].splitlines()[0]
    assert "data = data.detach()" in out


def test_text_face_is_deterministic_apart_from_timings(ns):
    def run():
        ns.run_cell("h = torch.zeros(4)")
        return re.sub(r" *\d+\.\d+ ms", " TIME", text(profile(ns, RNN)))
    assert run() == run()


def test_figure_and_static_faces_are_shown_outside_a_kernel(ns):
    cap = profile(ns, RNN)
    assert "image/png" in cap.outputs[0].data
    assert 'class="agl-profile"' in cap.outputs[-1].data["text/html"]


def classes(widget) -> list:
    """The CSS classes a widget carries, as the front end receives them."""
    return list(widget.get_state()["_dom_classes"])


def test_widget_has_the_figure_and_the_classes(ns):
    from autograd_lab.profile.view import profile_cell

    view = profile_cell(ns, RNN, steps=2, warmup=0)
    box = view.widget
    assert "agl-profile" in classes(box)
    assert [classes(c) for c in box.children] == [["agl-profile-figure"], ["agl-profile-text"]]
    assert view.carriers == ["h"]  # the view stands in for its profile


def test_progress_bar_only_in_a_live_kernel(ns, monkeypatch):
    import ipywidgets
    from autograd_lab.profile import view

    shown = []
    bars = []
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: shown.append(a[0]))
    real = ipywidgets.IntProgress
    monkeypatch.setattr(ipywidgets, "IntProgress", lambda *a, **k: bars.append(real(*a, **k)) or bars[-1])
    view.profile_cell(ns, RNN, steps=2, warmup=0)
    assert shown == []  # not in a kernel: no bar
    monkeypatch.setattr(view, "live", lambda: True)
    view.profile_cell(ns, RNN, steps=2, warmup=1)
    [bundle], [bar] = shown, bars
    # only the widget is shown: no "IntProgress(value=0, ...)" text left in a stored notebook
    assert list(bundle) == ["application/vnd.jupyter.widget-view+json"]
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"]
    assert "agl-profile-progress" in classes(bar)
    assert (bar.max, bar.value) == (3, 3) and bar.comm is None  # closed once the profile is shown


def test_a_cell_without_a_final_loss_is_a_usage_error(ns):
    with pytest.raises(UsageError, match="must end in the loss"):
        ns.run_cell_magic("backward_profile", "", "loss = (W @ inp).sum()")
    with pytest.raises(UsageError, match="--steps takes a whole number"):
        ns.run_cell_magic("backward_profile", "--steps many", RNN)


def test_steps_beyond_the_bound_are_refused_before_the_cell_runs(ns):
    ns.run_cell("runs = 0")
    with pytest.raises(UsageError, match=r"at most 10000.*Type: %%backward_profile --steps 20"):
        ns.run_cell_magic("backward_profile", "--steps 1000000000", "runs += 1\n" + RNN)
    assert ns.user_ns["runs"] == 0


def test_a_cell_that_calls_backward_itself_is_profiled_as_it_is(ns):
    before = ns.user_ns["W"].detach().clone()
    out = text(profile(ns, "loss = (W @ inp).pow(2).sum()\nloss.backward()\nopt.step()\nopt.zero_grad()"))
    assert "the step's own backward()" in out and "graph: 4 -> 4 nodes (flat)" in out
    assert "failed" not in out and "explain(err)" not in out
    assert not torch_equal(ns.user_ns["W"], before)  # the training step really ran, 5 times


def test_the_budget_flag_stops_the_run(ns):
    cap = profile(ns, "import time\ntime.sleep(1.05)\n" + RNN, line="--steps 3 --warmup 0 --budget 1")
    assert "stopped after 1 of 3 steps: the time budget of 1 s was used up" in text(cap)


def torch_equal(a, b) -> bool:
    import torch

    return torch.equal(a, b)
