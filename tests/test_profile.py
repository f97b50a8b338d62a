"""profile_backward and compare_inputs: node counts, growth, who carries history, the data that
requires grad, and the verdicts. Times are never asserted (bench/bench_myth.py measures them)."""
import pytest
import torch

from autograd_lab import LabInputError, compare_inputs, profile_backward

torch.manual_seed(0)
W = torch.nn.Parameter(torch.randn(4, 4) * 0.3)
inp = torch.randn(4)
h = torch.zeros(4)
data = torch.randn(64, 4, requires_grad=True)


def rnn_step():
    global h
    h = torch.tanh(W @ h + inp)
    return h.pow(2).sum()


def rnn_step_detached():
    global h
    h = torch.tanh(W @ h.detach() + inp)
    return h.pow(2).sum()


def data_step():
    return (data[:8] @ W).pow(2).mean()


def test_hidden_state_not_detached_grows_and_is_named():
    global h
    h = torch.zeros(4)
    prof = profile_backward(rnn_step, steps=5, warmup=1)
    # one step: Sum, Pow, Tanh, Add, Mv, AccumulateGrad(W); each older step adds Tanh, Add, Mv
    assert prof.node_counts == [6, 9, 12, 15, 18, 21]
    assert prof.input_node_counts == [0, 4, 7, 10, 13, 16]
    assert prof.growth == 3 and prof.carriers == ["h"] and prof.kind == "carried_history"
    assert "h carries history" in prof.verdict and prof.fix.startswith("h = h.detach()")
    assert [s.warmup for s in prof.steps] == [True] + [False] * 5
    assert [s.carried for s in prof.steps] == [()] + [("h",)] * 5


def test_with_the_detach_the_graph_is_flat():
    global h
    h = torch.zeros(4)
    prof = profile_backward(rnn_step_detached, steps=4, warmup=1)
    assert prof.node_counts == [6] * 5 and prof.input_node_counts == [0] * 5
    assert prof.kind == "flat" and prof.carriers == [] and prof.growth == 0


def test_node_count_agrees_with_a_walk_of_the_real_graph():
    loss = data_step()
    seen, stack = set(), [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is not None and fn not in seen:
            seen.add(fn)
            stack += [c for c, _ in fn.next_functions]
    prof = profile_backward(data_step, steps=1, warmup=0)
    assert prof.node_counts == [len(seen)]


def test_data_that_requires_grad_is_blamed():
    prof = profile_backward(data_step, steps=2, warmup=1)
    assert prof.kind == "data_requires_grad" and prof.data == [("data", 256)]
    assert prof.input_node_counts == [1, 1, 1]  # the data's accumulator
    assert "data requires grad (256 numbers)" in prof.verdict
    assert prof.fix.startswith("data = data.detach()") and prof.without_data_ms is not None


def test_data_with_history_from_a_parameter():
    made = W * 2  # built from a parameter in an earlier cell

    def step():
        return (made @ inp).pow(2).mean()
    prof = profile_backward(step, steps=2, warmup=0)
    assert prof.kind == "data_history" and prof.history_in == ["made"]
    assert prof.input_node_counts == [2, 2] and prof.node_counts == [5, 5]


def test_without_retain_graph_the_carried_graph_fails_at_step_two():
    global h
    h = torch.zeros(4)
    prof = profile_backward(rnn_step, steps=4, warmup=0, retain_graph=False)
    assert prof.kind == "failed" and len(prof.steps) == 2
    assert "Trying to backward through the graph a second time" in prof.verdict
    assert prof.fix.startswith("h = h.detach()")


def test_anomaly_mode_is_reported():
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        prof = profile_backward(data_step, steps=1, warmup=0)
    assert prof.anomaly and "Anomaly detection is on" in prof.verdict


def test_bad_input_is_refused():
    with pytest.raises(LabInputError, match="returns the loss"):
        profile_backward(42)
    with pytest.raises(LabInputError, match="steps must be 1 or more"):
        profile_backward(data_step, steps=0)
    with pytest.raises(LabInputError, match="must end in the loss"):
        profile_backward(lambda: 3.0, steps=1)


def fresh():
    return torch.nn.Parameter(torch.randn(4, 4) * 0.3), torch.randn(64, 4, requires_grad=True)


def test_compare_inputs_data_requires_grad_detach_cures_clone_does_not():
    w, data = fresh()
    comp = compare_inputs(lambda d: (d[:8] @ w).pow(2).mean(), data, steps=2, warmup=0)
    rows = {r.variant: r for r in comp.rows}
    assert [r.variant for r in comp.rows] == ["as is", "clone()", "detach()", "clone().detach()"]
    assert rows["as is"].nodes == 6 and rows["clone()"].nodes == 7
    assert rows["detach()"].nodes == rows["clone().detach()"].nodes == 4
    assert rows["as is"].requires_grad and rows["clone()"].requires_grad and not rows["detach()"].requires_grad
    assert rows["detach()"].shares_storage and not rows["clone()"].shares_storage
    # the work is the data's dense gradient (64 x 4) on top of w's 16, not the node count
    assert rows["as is"].grad_elements == rows["clone()"].grad_elements == data.numel() + w.numel()
    assert rows["detach()"].grad_elements == rows["clone().detach()"].grad_elements == w.numel()
    assert comp.verdict.startswith("Least backward work (16 gradient elements per step, graph flat): "
                                   "detach(), clone().detach().")
    assert "computes 272 gradient elements per step" in comp.verdict
    assert "clone() still does more" in comp.verdict
    assert "grad elements" in comp.text() and "272" in comp.text()
    assert data.grad is None and w.grad is None  # autograd.grad: no .grad written


def test_compare_inputs_hidden_state_clone_grows_faster():
    w, _ = fresh()

    def step(hh):
        nxt = torch.tanh(w @ hh + inp)
        return nxt.pow(2).sum(), nxt
    comp = compare_inputs(step, torch.zeros(4), steps=4, warmup=0)
    rows = {r.variant: r for r in comp.rows}
    assert (rows["as is"].growth, rows["clone()"].growth) == (3, 4)
    assert rows["detach()"].growth == rows["clone().detach()"].growth == 0
    assert rows["as is"].requires_grad and not rows["detach()"].requires_grad
    assert w.grad is None


def test_compare_inputs_custom_variants_and_bad_ones():
    comp = compare_inputs(lambda d: (d * 2).sum(), data, variants=(".data", ("times one", lambda t: t * 1)),
                          steps=1)
    assert [(r.variant, r.nodes) for r in comp.rows] == [(".data", 0), ("times one", 4)]
    assert comp.row(".data").shares_storage
    with pytest.raises(LabInputError, match="unknown variant"):
        compare_inputs(lambda d: d.sum(), data, variants=("copy",))
    with pytest.raises(LabInputError, match="as a tensor"):
        compare_inputs(lambda d: d.sum(), [1, 2])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="GPU check: the synchronised timing path needs CUDA")
def test_gpu_timing_path_synchronises():
    w = torch.nn.Parameter(torch.randn(64, 64, device="cuda"))
    x = torch.randn(64, device="cuda")
    prof = profile_backward(lambda: (w @ x).pow(2).sum(), steps=3, warmup=1)
    assert prof.gpu and prof.node_counts == [prof.node_counts[0]] * 4
    assert "on a GPU, synchronised" in prof.text()


def test_profile_backward_returns_a_view_that_stands_in_for_the_profile():
    global h
    h = torch.zeros(4)
    prof = profile_backward(rnn_step, steps=2, warmup=0)
    assert prof.carriers == ["h"] and len(prof.steps) == 2 and prof.model.kind == "carried_history"
    assert prof.text().startswith("backward profile: 2 steps measured after 0 warm-up (marked *)")
    assert "verdict: The graph grows by 3 nodes per step" in prof.text()
    assert prof.html().startswith('<div class="agl-profile">')
    assert repr(prof.model).startswith("Profile(2 steps, nodes 6 -> 9, carried_history): ")


def test_compare_inputs_returns_a_view_with_an_aligned_table():
    w, data = fresh()
    comp = compare_inputs(lambda d: (d[:8] @ w).pow(2).mean(), data, steps=1, warmup=0)
    assert comp.row("detach()").nodes == 4 and comp.verdict == comp.model.verdict
    lines = comp.text().splitlines()
    assert lines[0].split("  ")[0] == "variant" and set(lines[1]) == {"-", " "}
    assert [line.split()[0] for line in lines[2:6]] == ["as", "clone()", "detach()", "clone().detach()"]
    assert lines[-1] == comp.verdict and "<table" in comp.html()
    assert repr(comp.model) == f"Comparison(as is, clone(), detach(), clone().detach()): {comp.verdict}"


def test_compare_inputs_knows_the_storage_labs_copies():
    comp = compare_inputs(lambda d: (d * 2).sum(), data, variants=("detach().clone()", "view(-1)"), steps=1)
    assert [(r.variant, r.nodes, r.shares_storage) for r in comp.rows] == [
        ("detach().clone()", 0, False), ("view(-1)", 4, True)]


def test_steps_are_bounded_and_nothing_runs_when_refused():
    ran = []
    with pytest.raises(LabInputError, match=r"at most 10000.*Type: profile_backward\(step, steps=20\)"):
        profile_backward(lambda: ran.append(1), steps=1_000_000_000)
    with pytest.raises(LabInputError, match="at most 10000"):
        profile_backward(lambda: ran.append(1), steps=10_000, warmup=1)
    with pytest.raises(LabInputError, match="steps must be 1 or more"):
        profile_backward(lambda: ran.append(1), steps=2.5)
    assert ran == []


def test_a_time_budget_stops_the_run_and_says_so():
    import time

    def slow_step():
        time.sleep(0.05)
        return (W * 2).sum()
    prof = profile_backward(slow_step, steps=5, warmup=1, budget=0.01)
    assert len(prof.steps) == 1 and prof.budget == 0.01 and prof.planned == 6
    assert "stopped after 1 of 6 steps: the time budget of 0.01 s was used up" in prof.text()
    full = profile_backward(data_step, steps=2, warmup=0)
    assert full.budget is None and "stopped after" not in full.text()


@pytest.mark.parametrize("budget", [0, -1, "soon", True, None])
def test_a_budget_must_be_a_positive_number(budget):
    with pytest.raises(LabInputError, match="budget is the time the profiler may take"):
        profile_backward(data_step, steps=1, budget=budget)


def test_a_step_that_calls_backward_itself_is_profiled_as_it_is():
    w = torch.nn.Parameter(torch.ones(3))
    x = torch.tensor([1., 2., 3.])
    real_backward = torch.autograd.backward

    def step():
        loss = (w * x).sum()
        loss.backward()
        return loss
    prof = profile_backward(step, steps=3, warmup=1)
    assert prof.own_backward and prof.kind == "flat" and prof.failed is None
    assert prof.node_counts == [3, 3, 3, 3]
    # its own backward ran once per step and the profiler added none: torch says 4 * x
    assert torch.equal(w.grad, 4 * x)
    assert all(s.backward_ms > 0 for s in prof.steps)  # timed, not the 0.00 of a failed step
    assert "measured after 1 warm-up (marked *), the step's own backward()" in prof.text()
    assert torch.autograd.backward is real_backward

    def step_without_result():
        torch.autograd.backward((w * x).sum())
    w.grad = None
    assert profile_backward(step_without_result, steps=2, warmup=0).node_counts == [3, 3]
    assert torch.equal(w.grad, 2 * x)


def test_a_step_whose_own_backward_carries_history_fails_with_the_detach_fix():
    global h
    h = torch.zeros(4)

    def own_rnn_step():
        global h
        h = torch.tanh(W @ h + inp)
        h.pow(2).sum().backward()
    prof = profile_backward(own_rnn_step, steps=3, warmup=0)
    assert prof.kind == "failed" and len(prof.steps) == 2 and prof.carriers == ["h"]
    assert "backward failed at step 2: Trying to backward through the graph a second time" in prof.verdict
    assert prof.fix.startswith("h = h.detach()")
    W.grad = None


def test_a_failed_backward_gets_the_explainers_fix_not_an_undefined_name():
    w = torch.nn.Parameter(torch.ones(3))

    def twice():
        loss = (w * w).sum()
        loss.backward()
        loss.backward()
    prof = profile_backward(twice, steps=2, warmup=0)
    assert prof.kind == "failed" and len(prof.steps) == 1
    assert "explain(err)" not in prof.fix and "loss.backward(retain_graph=True)" in prof.fix
    with pytest.raises(ZeroDivisionError):  # an error outside backward is the learner's own
        profile_backward(lambda: 1 / 0, steps=1)


def test_a_step_interrupted_or_patched_leaves_torch_as_it_was_or_as_the_other_tool_made_it():
    """The profiler's scoped wrapper of torch.autograd.backward: put back when the step raises
    KeyboardInterrupt (Ctrl-C in the learner's code), and a replacement another tool made during
    the step is left in place (wrapping the lab's, which then only passes calls on)."""
    w = torch.nn.Parameter(torch.ones(3))
    real_backward = torch.autograd.backward

    def interrupted():
        (w * 2).sum().backward()
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        profile_backward(interrupted, steps=2, warmup=0)
    assert torch.autograd.backward is real_backward

    calls = []

    def other_tool():
        inner = torch.autograd.backward

        def theirs(*args, **kwargs):
            calls.append("theirs")
            return inner(*args, **kwargs)
        torch.autograd.backward = theirs
        (w * 2).sum().backward()
        return None

    try:
        w.grad = None
        prof = profile_backward(other_tool, steps=1, warmup=0)
        assert prof.own_backward and calls == ["theirs"]
        assert torch.autograd.backward is not real_backward and torch.autograd.backward.__name__ == "theirs"
        (w * 2).sum().backward()  # theirs still works, through the lab's wrapper that only passes it on
        assert calls == ["theirs", "theirs"] and torch.equal(w.grad, torch.full((3,), 4.))
    finally:
        torch.autograd.backward = real_backward
