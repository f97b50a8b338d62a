"""The exercises that end lessons 01, 02, 03 and 05: the engine's order, which inputs get a gradient,
the storage lab's rows, history carried across training steps (a prediction and a code task) and a
code task on detach(). Right answers pass in every accepted form, each usual mistake gets its own
diagnosis (by stable id), the placeholder is not attempted, and every expected answer is what torch
(or the lab's own experiment) gives, checked here by an independent route."""
import pytest
import torch

import autograd_lab
from autograd_lab.graph import walk
from autograd_lab.practice.bank import exercise
from autograd_lab.practice.checking import ____
from autograd_lab.practice.run import run
from autograd_lab.storage.experiments import build_report
from helpers import fixed, variant

pytestmark = pytest.mark.usefixtures("fresh_progress")
NEW = ["engine_order", "inputs_get_grad", "straight_through", "storage_rows", "carried_history", "fix_training_step"]


def verdict(name, answer, seed=None):
    result = exercise(name, seed=seed).check(answer)
    return result.status, result.diagnosis


@pytest.mark.parametrize("name", NEW)
def test_placeholder_is_not_attempted(name):
    for seed in (None, 3):
        ex = exercise(name, seed=seed)
        for blank in (____, (____, ____)):
            assert ex.check(blank).status == "not attempted"


# ---- engine order -------------------------------------------------------------------------------

def trace_order(ex):
    """The engine's order by another route: the stepper's own recording (autograd_lab.trace)."""
    ns = run(ex.setup.replace("s.backward()", ""))
    steps = autograd_lab.trace(ns["s"], names=ns).steps
    return tuple(s.node.title.replace(" (", "(") if s.name == "AccumulateGrad" else s.name for s in steps)


@pytest.mark.parametrize("seed", [None, *range(8)])
def test_engine_order_is_the_engines(seed):
    ex = exercise("engine_order", seed=seed)
    assert ex.expected == trace_order(ex)
    assert ex.check(list(ex.expected)).correct and ex.check(" -> ".join(ex.expected)).correct


def test_engine_order_forms_and_diagnoses():
    """Seed 6 is lesson 01's exercise. Graded is what the engine guarantees (each node after every
    node that sends it a gradient), so the engine's own order and the others that keep the guarantee
    are right, and an order that breaks it is told which wait it breaks."""
    ex = exercise("engine_order", seed=6)
    right = ", ".join(ex.expected)
    for answer in (right, list(ex.expected), f"[{right}]"):
        assert ex.check(answer).correct, answer
    engine_picks = list(ex.expected)
    other = [engine_picks[0], *reversed(engine_picks[1:])]  # right only if it keeps every wait
    keeps = all(other.index(s) < other.index(n) for n in other for s in ex.form.waits[n])
    assert ex.check(other).correct == keeps
    backwards = list(reversed(engine_picks))
    result = ex.check(backwards)
    assert result.status == "incorrect" and "starts from the output" in result.message
    swapped = [engine_picks[0], engine_picks[2], engine_picks[1], *engine_picks[3:]]
    if any(s == engine_picks[2] for s in ex.form.waits[engine_picks[1]]) or any(
            s == engine_picks[1] for s in ex.form.waits[engine_picks[2]]):
        assert "sends it a gradient" in ex.check(swapped).message
    for answer, key in {", ".join(ex.expected[:3]): "explained", "AddBackward0, foo": "form"}.items():
        assert (ex.check(answer).status, ex.check(answer).diagnosis) == ("incorrect", key), answer


@pytest.mark.parametrize("seed", [None, *range(8)])
def test_engine_order_grades_every_order_that_keeps_the_waits(seed):
    """All orders of the graph's nodes: right exactly when each node comes after every node that sends
    it a gradient (the waits read off the graph's edges by torch, next_functions)."""
    import itertools

    ex = exercise("engine_order", seed=seed)
    ns = {"torch": torch}
    exec(ex.setup.replace("s.backward()", ""), ns)
    labels = {}
    for fn, _ in walk(ns["s"]):
        variable = getattr(fn, "variable", None)
        leaf = next((k for k, v in ns.items() if isinstance(v, torch.Tensor) and v is variable), "")
        labels[fn] = f"AccumulateGrad({leaf})" if leaf else fn.name()
    senders = {label: set() for label in labels.values()}
    for fn, label in labels.items():
        for child, _ in fn.next_functions:
            if child is not None:
                senders[labels[child]].add(label)
    right = 0
    for order in itertools.permutations(ex.expected):
        keeps = all(order.index(s) < order.index(n) for n in order for s in senders[n])
        right += keeps
        assert ex.check(list(order)).correct == keeps, order
    assert 1 < right < len(list(itertools.permutations(ex.expected)))


def test_engine_orders_unseeded_variant_is_not_lesson_01s_example():
    setup = exercise("engine_order").setup
    assert "exp()" not in setup or "sin()" not in setup
    assert exercise("engine_order").expected != exercise("engine_order", seed=6).expected


# ---- which inputs get a gradient ----------------------------------------------------------------

@pytest.mark.parametrize("seed", [None, *range(8)])
def test_inputs_get_grad_is_torchs(seed):
    ex = exercise("inputs_get_grad", seed=seed)
    ns = {"torch": torch}
    exec(ex.setup, ns)
    got = {n for n in "pqrst" if isinstance(ns[n], torch.Tensor) and ns[n].grad is not None}
    assert ex.expected == got and len(got) == 2
    assert ex.check(sorted(got)).correct and ex.check(", ".join(got)).correct


def test_inputs_get_grad_diagnoses_each_way():
    # p: exp, q: detach, r: clone, s: .data, t: created without requires_grad
    cases = {("p",): "missed_clone", ("r",): "missed_exp", ("p", "r", "q"): "through_detach",
             ("p", "r", "s"): "through_data", ("p", "r", "t"): "through_no_flag"}
    for answer, key in cases.items():
        assert verdict("inputs_get_grad", set(answer)) == ("incorrect", key)
    seen = set()
    for seed in range(30):  # .item() and no_grad appear in the seeded arrangements
        ex = exercise("inputs_get_grad", seed=seed)
        for d in ex.diagnosers:
            if d.key.startswith("through_"):
                n = next(n for n in "pqrst" if d.when({*ex.expected, n}) and n not in ex.expected)
                assert ex.check({*ex.expected, n}).diagnosis == d.key
                seen.add(d.key)
    assert {"through_item", "through_no_grad", "through_detach", "through_data", "through_no_flag"} <= seen


# ---- storage rows -------------------------------------------------------------------------------

RIGHT_ROWS = {"detach()": ("yes", "error"), ".data": ("yes", "silently wrong"), "clone()": ("no", "ok"),
              "view(-1)": ("yes", "refused"), "detach().numpy()": ("yes", "silently wrong")}


@pytest.mark.parametrize("seed", [None, *range(6)])
def test_storage_rows_are_the_labs_experiments(seed):
    ex = exercise("storage_rows", seed=seed)
    a = run(ex.setup.split("\ny = ")[0])["a"]
    edit = next(e for e in ("mul_", "add_", "zero_") if f"b.{e}(" in ex.setup)
    rows = {r.key: r for r in build_report(a, edit=edit)}
    assert ex.expected == tuple((rows[k].shares_storage, rows[k].after_inplace) for k in ex.form.keys)
    assert ex.check({k: (s, o) for k, (s, o) in zip(ex.form.keys, ex.expected, strict=True)}).correct


def test_storage_rows_leaf_and_non_leaf_differ_on_the_view():
    outcomes = {exercise("storage_rows", seed=s).expected[3][1] for s in range(8)}
    assert outcomes == {"refused", "error"}


def test_storage_rows_forms_and_diagnoses():
    text = "\n".join(f"{k}: {s}, {o}" for k, (s, o) in RIGHT_ROWS.items())
    for answer in (RIGHT_ROWS, text, list(RIGHT_ROWS.values()), "yes error; yes silently wrong; no ok; yes refused; "
                   "yes silently wrong", {"detach": (True, "error"), "data": (1, "silent"), "clone": ("n", "ok"),
                                          "view": ("y", "refused"), "numpy": (True, "wrong")}):
        assert verdict("storage_rows", answer) == ("correct", ""), answer
    wrong = {("detach()", ("no", "error")): "shares_detach", ("detach()", ("yes", "ok")): "outcome_detach",
             (".data", ("yes", "error")): "outcome_data", ("clone()", ("yes", "ok")): "shares_clone",
             ("view(-1)", ("yes", "error")): "outcome_view", ("detach().numpy()", ("no", "silently wrong")):
             "shares_detach_numpy", ("detach().numpy()", ("yes", "ok")): "outcome_detach_numpy"}
    for (key, row), diagnosis in wrong.items():
        assert verdict("storage_rows", {**RIGHT_ROWS, key: row}) == ("incorrect", diagnosis)
    assert verdict("storage_rows", {"detach()": ("yes", "ok")})[1] == "form"
    assert verdict("storage_rows", {**RIGHT_ROWS, "clone()": ("no", "fine-ish")})[1] == "form"


# ---- history across steps -----------------------------------------------------------------------

@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3])
def test_carried_history_is_read_off_the_graph(seed):
    ex = exercise("carried_history", seed=seed)
    carrier = next(iter(ex.expected[0]))
    sizes = [sum(1 for _ in walk(run(ex.setup.replace("randn(6, 3)", f"randn({k}, 3)"))[carrier]))
             for k in (2, 4)]
    assert sizes[1] > sizes[0] > 1
    assert ex.expected[1] == frozenset("ad")
    assert ex.check((set(ex.expected[0]), "a, d")).correct


def test_carried_history_diagnoses():
    right = ({"total"}, {"a", "d"})
    cases = {(("total", "loss"), ("a", "d")): "fresh_each_step", (("total", "avg"), ("a", "d")): "safe_named",
             (("total", "w"), ("a", "d")): "leaf_named", ((), ("a", "d")): "none_named",
             (("total",), ("a", "b", "d")): "clone_fix", (("total",), ("a", "c", "d")): "retain_graph_fix",
             (("total",), ("d",)): "detach_missed", (("total",), ("a",)): "no_grad_missed"}
    assert verdict("carried_history", right) == ("correct", "")
    for (names, fixes), key in cases.items():
        assert verdict("carried_history", (set(names), set(fixes))) == ("incorrect", key)


def fixed_at_the_end(w, opt, x, h):
    opt.zero_grad()
    h = torch.tanh(x * w + h)
    loss = (h - 0.5).pow(2).mean()
    loss.backward()
    opt.step()
    return h.detach()


def test_fix_training_step_runs_the_step_and_checks_its_behaviour():
    ex = exercise("fix_training_step")
    for right in (fixed, fixed_at_the_end, variant(cut_in=lambda h: h.detach(), retain=True)):
        assert ex.check(right).correct, ex.check(right).message
    cases = {
        variant(): "still_grows",  # the step as given
        variant(retain=False): "freed_graph",
        variant(cut_in=lambda h: h.clone()): "clone_not_detach",
        variant(cut_out=lambda h: h.detach(), retain=False): "cut_too_much",
        variant(cut_in=lambda h: torch.zeros_like(h), retain=False): "changed_training",
        variant(cut_in=lambda h: h.detach(), loss_of=lambda h: h.pow(2).mean(), retain=False): "changed_training",
    }
    for step, key in cases.items():
        result = ex.check(step)
        assert result.status == "incorrect" and result.diagnosis == key, (key, result.message)
    assert ex.check(lambda w, opt, x, h: None).diagnosis == "form"
    assert ex.check(lambda w, opt, x, h: ____).status == "not attempted"
    assert ex.check(torch.ones(3)).diagnosis == "form"


def test_fix_training_step_as_given_really_grows_and_the_fix_does_not():
    ex = exercise("fix_training_step", seed=4)
    ns = run(ex.setup)
    grown = sum(1 for _ in walk(ns["h"]))
    assert grown > 20  # eight steps of three nodes each, and w's accumulator
    assert ex.form.read(fixed).sizes == (4,) * 8


# ---- straight-through ---------------------------------------------------------------------------

def test_straight_through_checks_values_and_gradient():
    for seed, op in ((None, torch.round), (1, torch.floor), (2, torch.sign)):
        ex = exercise("straight_through", seed=seed)
        assert f"torch.{op.__name__}(x)" in ex.setup
        assert ex.check(lambda x, op=op: x + (op(x) - x).detach()).correct
        cases = {lambda x, op=op: op(x): "op_gradient", lambda x, op=op: op(x.detach()): "all_detached",
                 lambda x, op=op: x + (x - op(x)).detach(): "values_changed",
                 lambda x: torch.ones_like(x, requires_grad=True): "no_path", lambda x: x * 2: "explained"}
        for fn, key in cases.items():
            assert ex.check(fn).diagnosis == key, key
        assert ex.check(lambda x: ____).status == "not attempted"


def test_code_tasks_leave_the_random_state_alone():
    torch.manual_seed(5)
    state = torch.get_rng_state()
    exercise("fix_training_step").check(fixed)
    exercise("straight_through").check(lambda x: x + (x.round() - x).detach())
    assert torch.equal(state, torch.get_rng_state())


def test_the_answer_box_reads_the_new_forms_as_typed():
    from autograd_lab.practice.view import exercise_view

    typed = {
        "engine_order": ['["AddBackward0", "Mul", "Cos", "a", "v", "b"]', "Add, Tanh, b, Mul, Cos, a"],
        "storage_rows": ['{"detach()": ("yes", "error"), ".data": ("yes", "silently wrong"), "clone()": ("no", "ok"), '
                         '"view(-1)": ("yes", "refused"), "detach().numpy()": ("yes", "silently wrong")}',
                         "yes error; yes silently wrong; no ok; yes refused; yes silently wrong"],
        "carried_history": ['({"total"}, {"a", "d"})'],
        "inputs_get_grad": ["p, r"],
    }
    for name, answers in typed.items():
        for text in answers:
            assert exercise_view(exercise(name), {}).check_typed(text)[0].startswith("Correct!"), (name, text)
    for text in ("a.detach(): yes, error; a.data: yes, silently wrong; a.clone(): no, ok; a.view(-1): yes, refused; "
                 "a.detach().numpy(): yes, silently wrong",):  # the names the statement uses
        assert exercise_view(exercise("storage_rows"), {}).check_typed(text)[0].startswith("Correct!"), text
    box = exercise_view(exercise("fix_training_step"), {"mine": fixed})
    said = box.check_typed("mine")[0]  # a function is checked in a cell: the box runs no code
    assert "define the function in a cell" in said and "ex.check(fixed_step)" in said
    assert exercise("fix_training_step").check(fixed).correct


def test_the_magic_gives_the_new_exercises_and_their_variants(ip):
    from IPython.utils.capture import capture_output

    for name in NEW:
        with capture_output() as shown:
            ip.run_line_magic("exercise", f"{name} --seed 6")
        text = "".join(o.data.get("text/plain", "") for o in shown.outputs)
        assert f"Exercise {name} (seed 6): " in text
        assert exercise(name, seed=6).setup.splitlines()[0] in text


def test_confirm_on_a_code_task_runs_the_last_function_beside_what_is_wanted():
    ex = exercise("fix_training_step")
    assert "none yet" in ex.confirm().text
    ex.check(variant())
    text = ex.confirm().text
    assert "your last function: the state's graph has 4, 7, 10" in text
    assert "wanted: the state's graph keeps one size from step to step; w ends where" in text
    assert exercise("straight_through").check(lambda x: x * 2).message == (
        "Incorrect. What your code does: its values are not the ones asked for, and the gradient that reaches x "
        "is not all ones.")
