"""Exercises a teacher can trust: what the learner typed is their answer and is checked, autograd's own
gradient is not an answer in any mode, confirm() shows autograd's answer only after an attempt, a
first mistake gets a question and the formula comes the second time, a number cut off is "close"
(its own verdict in the widget, in grading and in %backward --predict), and each diagnosis fires
only where its mistake can exist. Torch is the oracle for every value."""
import re
from fractions import Fraction

import pytest
import torch

from autograd_lab.practice import progress
from autograd_lab.practice.bank import exercise, exercises
from autograd_lab.practice.checking import NotCorrect
from autograd_lab.practice.forms import PartsForm, TensorForm
from autograd_lab.practice.run import run
from autograd_lab.practice.view import ExerciseView
from autograd_lab.stepper.panel_faces import verdict_html
from autograd_lab.stepper.predict import compare

pytestmark = pytest.mark.usefixtures("fresh_progress")


class grading:
    """Grading mode for the block (the fixture resets it after each test as well)."""

    def __enter__(self):
        progress.grading(True)

    def __exit__(self, *exc):
        progress.grading(False)


def torch_grad(name, seed=None, leaf="x"):
    """The exercise's setup run by torch, and the leaf's .grad it leaves (the oracle)."""
    ns = run(exercise(name, seed=seed).setup)
    return ns, ns[leaf].grad


# ---- item 4: a tensor the learner typed is checked ------------------------------------------------

@pytest.mark.parametrize("name", ["vjp_weights", "hook_doubles"])
def test_a_tensor_the_learner_types_is_their_answer(name):
    ex = exercise(name)
    _ns, g = torch_grad(name)
    typed = torch.tensor(g.tolist())  # the learner writes the numbers out, in a cell
    assert ex.check(typed).correct
    assert ExerciseView(exercise(name)).check_typed(f"torch.tensor({g.tolist()})")[0].startswith("Correct")
    wrong = torch.tensor((g + 1).tolist())
    assert ex.check(wrong).status == "incorrect"
    assert "x.grad" not in ex.answer_form.split("yourself")[-1] and "tensor you type" in ex.answer_form


@pytest.mark.parametrize("name", ["grad_vs_backward", "retain_grad_and_hook"])
def test_a_pair_of_typed_tensors_is_checked(name):
    ex = exercise(name)
    first, second = (torch.tensor(e.tolist()) for e in ex.expected)
    assert ex.check((first, second)).correct
    assert ex.check((second + 1, first)).status == "incorrect"
    assert "tensors you type yourself" in ex.answer_form


def test_autograds_own_gradient_is_not_attempted_in_every_mode():
    ex = exercise("vjp_weights")
    ns = run(ex.setup)
    x = ns["x"]
    for answer in (x.grad, x.grad.numpy(), (x.grad,), [x.grad[1:]], x.grad.view(3), ex.expected):
        result = ex.check(answer)
        assert result.status == "not attempted" and result.diagnosis == "tensor_given", answer
        assert "x.grad" in result.message or "exercise's answer" in result.message
    with grading():
        with pytest.raises(NotCorrect) as err:
            ex.check(x.grad)
        assert err.value.result.status == "not attempted"
        with pytest.raises(NotCorrect):
            ex.check(x.grad.numpy())
    # a copy owns its memory: it cannot be told from numbers worked out, and is checked (the teachers' page says so)
    assert ex.check(x.grad.clone()).correct and ex.check(x.grad.tolist()).correct


def test_a_modules_parameter_gradient_is_traced_too():
    ex = exercise("mean_square")
    layer = torch.nn.Linear(3, 1)
    layer(torch.ones(1, 3)).sum().backward()
    result = ex.check(layer.weight.grad[0])
    assert result.status == "not attempted" and "layer.weight.grad" in result.message


def test_tracing_changes_nothing_of_the_learners():
    ns = run(exercise("vjp_weights").setup)
    x = ns["x"]
    before = (x.grad.clone(), x.grad._version, x._version, torch.random.get_rng_state())
    exercise("vjp_weights").check(x.grad)
    assert torch.equal(x.grad, before[0]) and x.grad._version == before[1] and x._version == before[2]
    assert torch.equal(torch.random.get_rng_state(), before[3])


def test_exact_fractions_and_scientific_notation_are_answers():
    ex = exercise("mean_square")
    third = [Fraction(2, 3), Fraction(4, 3), Fraction(2)]
    assert ex.check(third).correct and ex.check("[2/3, 4/3, 2]").correct
    assert ex.check("[6.667e-1, 1.333E0, 2e0]").correct and ex.check([6.667e-1, 1.3333e0, 2e0]).correct
    assert ExerciseView(exercise("mean_square")).check_typed("[6.667e-1, 1.333e+0, 20e-1]")[0].startswith("Correct")
    assert exercise("symbolic_mean_square").check("6.667e-1*x").status == "incorrect"  # a rounded constant


# ---- item 8: confirm() only after an attempt; no answer in a setup ---------------------------------

@pytest.mark.parametrize("name", [e.name for e in exercises()])
def test_confirm_shows_nothing_of_autograds_before_an_attempt(name):
    ex = exercise(name)
    note = ex.confirm()
    if ex.predicts:
        assert note.title == "Nothing to confirm yet" and "autograd:" not in note.text
        assert not progress.record(name)["confirmed"]


def test_exploding_layers_setup_holds_no_name_for_the_layer():
    ex = exercise("exploding_layer")
    ns = run(ex.setup)
    letters = "abcd"
    ints = [k for k, v in ns.items() if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 4]
    assert ints == [], ints
    norms = [float(layer.weight.detach().norm()) for layer in ns["net"]]
    assert ex.expected == letters[norms.index(max(norms))]


# ---- item 10: a first mistake is asked, the formula comes the second time --------------------------

FIRST_MISTAKES = {
    "vjp_weights": ([2.0, 4.0, 6.0], "v[i] * 2 * x[i]"),
    "backward_mul": (lambda g, x, y: (g * x, g * y), "grad_output * y"),
    "backward_broadcast_add": (lambda g, x, b: (g, g), "sum_to_size"),
    "backward_sigmoid": (lambda g, x, out: g * x * (1 - x), "out * (1 - out)"),
    "backward_tanh": (lambda g, x, out: g * (1 - x**2), "1 - out**2"),
    "which_mode_records": ("no, no, no, no", "autograd still records"),
    "jacobian_shape": (("b", [0.0, 1.0, 8.0]), "3 x_i**2"),
    "mean_square": ([1 / 3, 2 / 3, 1.0], "p * x**(p-1)"),
    "mean_cube": ([2 / 3, 4 / 3, 2.0], "3 * x**2"),
    "hook_doubles": ([2.0, 2.0, 2.0], "dy/dx = 3"),
    "backward_neuron": (lambda g, w, x, b, out: (g * x, g * w, g), "1 - out**2"),
}


@pytest.mark.parametrize("name", list(FIRST_MISTAKES))
def test_the_formula_comes_only_with_the_same_mistake_twice(name):
    answer, formula = FIRST_MISTAKES[name]
    ex = exercise(name)
    first = ex.check(answer)
    assert first.status == "incorrect" and formula not in first.message and "?" in first.message, first.message
    second = ex.check(answer)
    assert second.diagnosis == first.diagnosis and formula in second.message, second.message
    # the hints still hold it, for whoever asks
    other = exercise(name)
    other.check(answer)
    if name == "vjp_weights":
        assert formula in other.hint(3).text


def test_which_mode_records_one_wrong_item_does_not_give_the_others_away():
    ex = exercise("which_mode_records")
    right = ["yes" if e else "no" for e in ex.expected]
    for i in range(len(right)):
        wrong = list(right)
        wrong[i] = "no" if right[i] == "yes" else "yes"
        message = exercise("which_mode_records").check(", ".join(wrong)).message
        assert "none of the three" not in message and "still records" not in message, message


# ---- item 11: close is its own verdict -----------------------------------------------------------

def test_a_truncation_is_close_round_do_not_cut():
    ex = exercise("mean_square")
    g = torch_grad("mean_square")[1]
    cut = [float(int(v * 1000)) / 1000 for v in g.tolist()]  # 0.666, 1.333, 2.0
    result = ex.check(cut)
    assert result.status == "close" and result.diagnosis == "cut" and "round, do not cut" in result.message
    assert not result.message.startswith("Incorrect") and "Incorrect" not in result.message
    few = ex.check([round(v, 2) for v in g.tolist()])
    assert few.status == "close" and few.diagnosis == "too_few_digits"
    rounded_down_wrong = ex.check([0.665, 1.333, 2.0])
    assert rounded_down_wrong.status == "incorrect" and "Close" not in rounded_down_wrong.message


def test_close_is_its_own_verdict_in_the_widget_in_grading_and_in_predict():
    view = ExerciseView(exercise("mean_square"))
    text, html = view.check_typed("[0.666, 1.333, 2]")
    assert 'data-status="close"' in html and ">close</span>" in html and "Incorrect" not in text
    with grading():
        text, html = ExerciseView(exercise("mean_square")).check_typed("[0.666, 1.333, 2]")
        assert 'data-status="close"' in html
        with pytest.raises(NotCorrect) as err:
            exercise("mean_square").check([0.666, 1.333, 2])
        assert err.value.result.status == "close"
    truth = torch.tensor([2 / 3, 4 / 3, 2.0], dtype=torch.double)
    cut, few = compare([0.666, 1.333, 2.0], truth), compare([0.67, 1.33, 2.0], truth)
    assert (cut.diagnosis, few.diagnosis) == ("cut", "too_few_digits")
    assert verdict_html(cut) == "<b>close</b>: round, do not cut"
    assert verdict_html(few) == "<b>close</b>: give three significant digits"
    assert compare([0.667, 1.333, 2.0], truth).right


def test_a_cut_needs_the_true_value_cut_at_the_digit_written():
    ex = exercise("sum_square")  # x.grad = [2, 4, 6]: 1.99 is not 2 cut off
    assert ex.check([1.99, 4.0, 6.0]).status == "incorrect"
    assert exercise("mean_square").check([-0.666, -1.333, -2.0]).status == "incorrect"


# ---- item 11: each diagnosis fires only where its mistake can exist ---------------------------------

def _scaled_answers(expected):
    if isinstance(expected, torch.Tensor) and expected.is_floating_point() and expected.numel() > 1:
        return [(expected * k).tolist() for k in (2, 0.5, 3, 1 / 3)] + [torch.zeros_like(expected).tolist()]
    return []


def _number_answers(ex):
    if isinstance(ex.form, TensorForm):
        return _scaled_answers(ex.expected)
    if isinstance(ex.form, PartsForm) and all(isinstance(e, torch.Tensor) for e in ex.expected):
        found = []
        for i, e in enumerate(ex.expected):
            for wrong in _scaled_answers(e):
                parts = [x.tolist() for x in ex.expected]
                parts[i] = wrong
                found.append(tuple(parts))
        return found
    return []


@pytest.mark.parametrize("name", [e.name for e in exercises()])
@pytest.mark.parametrize("seed", [None, 3])
def test_no_message_names_a_power_or_a_mean_the_exercise_does_not_have(name, seed):
    ex = exercise(name, seed=seed)
    has_power = "**" in ex.setup or "pow(" in ex.setup
    has_mean = ".mean(" in ex.setup
    calls = ex.setup.count("backward(") >= 2
    for answer in _number_answers(ex):
        for _time in range(2):
            message = ex.check(answer).message
            if not has_power:
                assert "power rule" not in message, (answer, message)
            if not has_mean:
                assert "of the mean" not in message, (answer, message)
            if not calls:
                assert "backward() calls" not in message, (answer, message)


def test_hook_doubles_all_zeros_and_scaled_answers_get_no_power_or_mean():
    ex = exercise("hook_doubles")
    for answer in ([0, 0, 0], [1.0, 1.0, 1.0], [24.0, 24.0, 24.0]):
        message = ex.check(answer).message
        assert "power" not in message and "mean" not in message, message
    zeros = exercise("accumulate").check([0, 0, 0]).message
    assert "times the same constant" not in zeros


def test_jacobian_shape_says_diagonal_and_starts_its_sentences_in_capitals():
    ex = exercise("jacobian_shape")
    shape = ex.expected[0]
    for wrong in ((shape, [1.0]), (shape, [0.0, 1.0]), (shape, [5.0, 7.0, 11.0])):
        message = ex.check(wrong).message
        assert "a gradient" not in message, message
        for sentence in re.split(r"(?<=[.!?])\s+", message):
            assert sentence[:1].isupper() or sentence[:1].isdigit() or sentence[:2] == "J'", (sentence, message)
    assert "J's diagonal" in ex.check((shape, [1.0])).message


def test_storage_rows_takes_the_copies_by_the_names_its_statement_uses():
    ex = exercise("storage_rows")
    for key in ex.form.keys:
        assert f"a.{key.lstrip('.')}" in ex.question
    rows = {f"a.{key.lstrip('.')}": ("yes" if s else "no", o)
            for key, (s, o) in zip(ex.form.keys, ex.expected, strict=True)}
    assert ex.check(rows).correct
    typed = "\n".join(f"{k}: {s}, {o}" for k, (s, o) in rows.items())
    assert ex.check(typed).correct


FIX = """
def fixed_step(w, opt, x, h):
    opt.zero_grad()
    h = torch.tanh(x * w + h.{cut})
    loss = (h - 0.5).pow(2).mean()
    loss.backward({retain})
    opt.step()
    return h
"""


def _step(cut="detach()", retain=""):
    ns = {"torch": torch}
    exec(FIX.format(cut=cut, retain=retain), ns)
    return ns["fixed_step"]


def test_fix_training_step_says_a_word_about_retain_graph_and_refuses_data():
    clean = exercise("fix_training_step").check(_step())
    assert clean.correct and "retain_graph" not in clean.message
    kept = exercise("fix_training_step").check(_step(retain="retain_graph=True"))
    assert kept.correct and "retain_graph=True" in kept.message
    data = exercise("fix_training_step").check(_step(cut="data"))
    assert data.status == "incorrect" and data.diagnosis == "uses_data" and "detach()" in data.message


def test_straight_through_refuses_data():
    ex = exercise("straight_through")
    assert ex.check(lambda x: x + (torch.round(x) - x).detach()).correct
    result = ex.check(lambda x: x + (torch.round(x.data) - x.data))
    assert result.status == "incorrect" and result.diagnosis == "uses_data"


def test_a_notebook_cells_gradient_is_traced_and_the_message_is_deterministic():
    """A cell's code runs with the notebook's names as its globals: x.grad there is autograd's own."""
    cell = {"torch": torch, "ex": exercise("mean_square")}
    exec(compile(exercise("mean_square").setup + "\nresult = ex.check(x.grad)\nmine = ex.check(torch.tensor("
                 "[0.6667, 1.3333, 2.0]))", "<cell>", "exec"), cell)
    assert cell["result"].status == "not attempted" and "(x.grad, the same memory)" in cell["result"].message
    assert not re.search(r"0x[0-9a-f]{6,}|\d{8,}", cell["result"].message) and len(cell["result"].message) < 400
    assert cell["mine"].correct


def test_typed_tensors_of_every_kind_are_read_without_an_error():
    """Now that a typed tensor is read, every kind of tensor gets a verdict, never an exception."""
    ex = exercise("mean_square")
    g = torch_grad("mean_square")[1]
    sparse = torch.tensor(g.tolist()).to_sparse()
    assert ex.check(sparse).correct
    for odd in (torch.empty(3, device="meta"), torch.tensor([1 + 1j, 2, 3]), torch.tensor([1, 2, 3]),
                torch.tensor(g.tolist(), dtype=torch.float16), torch.nn.Parameter(torch.tensor(g.tolist()))):
        assert ex.check(odd).status in ("correct", "close", "incorrect"), odd
