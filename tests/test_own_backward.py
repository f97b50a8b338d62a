"""The implement-a-backward exercises: every solution passes, every usual mistake gets its own
diagnosis, right answers written another way pass, and the blank is "not attempted". Torch
(torch.autograd.grad) and finite differences (numeric_vjp, torch.autograd.gradcheck) are the
oracles: each wrong answer below is first shown to disagree with both."""
import pytest
import torch

import autograd_lab
from autograd_lab.practice import progress
from autograd_lab.practice.backward_check import leaves, numeric_vjp, one_case
from autograd_lab.practice.bank import exercise
from autograd_lab.practice.checking import ____
from autograd_lab.practice.topics import own_backward
from helpers import Unsummed

pytestmark = pytest.mark.usefixtures("fresh_progress")

NAMES = [task.name for task in own_backward.TASKS]
CODE = {task.name: task.code for task in own_backward.TASKS}  # the solutions as code


def defined(code: str):
    ns = {"torch": torch}
    exec(code, ns)
    return next(v for k, v in ns.items() if k not in ("torch", "__builtins__"))


def oracles(ex, answer) -> tuple[bool, bool]:
    """Whether answer agrees with torch.autograd.grad and with finite differences on every case,
    computed here independently of the exercise's own checking."""
    op, by_torch, by_fd = ex.form.op, True, True
    for case in ex.form.cases:
        mine = one_case(op, answer, case)
        ins = leaves(case)
        engine = torch.autograd.grad(op.fn(*ins), ins, case.grad_output)
        numeric = numeric_vjp(op.fn, case.inputs, case.grad_output)
        for m, e, n in zip(mine, engine, numeric, strict=True):
            m = m.detach().double()
            by_torch &= m.shape == e.shape and torch.allclose(m, e, 1e-6, 1e-9)
            by_fd &= m.shape == n.shape and torch.allclose(m, n, 1e-4, 1e-6)
    return by_torch, by_fd


def test_the_bank_lists_the_exercises_in_order():
    names = [e.name for e in autograd_lab.exercises()]
    assert [n for n in names if n in NAMES] == NAMES


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("style", [0, 1], ids=["function", "Function"])
def test_every_solution_passes_and_agrees_with_both_oracles(name, style):
    ex = exercise(name)
    answer = defined(CODE[name][style])
    assert oracles(ex, answer) == (True, True)
    result = ex.check(answer)
    assert result.status == "correct", result.message
    assert "finite differences" in result.message
    assert CODE[name][style] in ex.solution().text


@pytest.mark.parametrize("name", NAMES)
def test_the_expected_answer_is_the_engines_and_finite_differences(name):
    ex = exercise(name)
    assert len(ex.form.cases) >= 3
    assert len({tuple(c.inputs[0].shape) for c in ex.form.cases}) >= 3  # shapes vary
    for case, row in zip(ex.form.cases, ex.expected.grads, strict=True):
        assert not torch.equal(case.grad_output, torch.ones_like(case.grad_output))
        for got, fd in zip(row, numeric_vjp(ex.form.op.fn, case.inputs, case.grad_output), strict=True):
            assert torch.allclose(got, fd, 1e-5, 1e-7)


# name -> [(wrong backward, words its diagnosis must contain)]; each written by hand here
WRONG = {
    "backward_tanh": [
        (lambda g, x, out: -g * (1 - out**2), "sign of your gradient for x is flipped"),
        (lambda g, x, out: 1 - out**2, "forgot to multiply by grad_output"),
        (lambda g, x, out: g / torch.cosh(out)**2, "derivative at the output"),
        (lambda g, x, out: g * (1 - x * x), "used x where the formula wants the output"),
    ],
    "backward_sigmoid": [
        (lambda g, x, out: g * out * (out - 1), "sign of your gradient for x is flipped"),
        (lambda g, x, out: out - out**2, "forgot to multiply by grad_output"),
        (lambda g, x, out: g * torch.sigmoid(out) * torch.sigmoid(-out), "derivative at the output"),
        (lambda g, x, out: g * (x - x**2), "used x where the formula wants the output"),
    ],
    "backward_mul": [
        (lambda g, x, y: (g * x, g * y), "For x and y you multiplied by the input itself"),
        (lambda g, x, y: (g * y, g * y), "For y you multiplied by the input itself"),
        (lambda g, x, y: (g * y, -g * x), "sign of your gradient for y is flipped"),
        (lambda g, x, y: (y.clone(), x.clone()), "for x and y is what it would be if grad_output were all ones"),
    ],
    "backward_broadcast_add": [
        (lambda g, x, b: (g, g.clone()), "gradient for b has the output's shape"),
        (lambda g, x, b: (g, g.flatten(0, -2).mean(0)), "averaged grad_output"),
        (lambda g, x, b: (torch.ones_like(x), torch.ones_like(x).flatten(0, -2).sum(0)), "all ones"),
        (lambda g, x, b: (g, -g.sum_to_size(b.shape)), "sign of your gradient for b is flipped"),
    ],
    "backward_mean": [
        (lambda g, x: g[:, None].expand_as(x) * 1.0, "forgot to divide by n"),
        (lambda g, x: g[:, None].expand_as(x) / x.numel(), "divided by x.numel()"),
        (lambda g, x: torch.ones_like(x) / x.shape[1], "all ones"),
        (lambda g, x: -g.unsqueeze(1).expand_as(x) / x.shape[1], "sign of your gradient for x is flipped"),
        (lambda g, x: g / x.shape[1], "your gradient for x has shape"),
    ],
    "backward_neuron": [
        (lambda g, w, x, b, out: (g * x, g * w, g.clone()), "factor from tanh is missing"),
        (lambda g, w, x, b, out: tuple(g * (1 - (w @ x + b)**2) * t for t in (x, w, 1.0)), "pre-activation"),
        (lambda g, w, x, b, out: tuple(g / torch.cosh(out)**2 * t for t in (x, w, 1.0)), "derivative at the output"),
        (lambda g, w, x, b, out: (g * (1 - out**2) * w, g * (1 - out**2) * x, g * (1 - out**2)),
         "For w and x you multiplied by the wrong vector"),
        (lambda g, w, x, b, out: ((1 - out**2) * x, (1 - out**2) * w, 1 - out**2), "all ones"),
        (lambda g, w, x, b, out: (-g * (1 - out**2) * x, g * (1 - out**2) * w, g * (1 - out**2)),
         "sign of your gradient for w is flipped"),
    ],
}
WRONG_CASES = [(name, i, answer, words) for name, rows in WRONG.items() for i, (answer, words) in enumerate(rows)]


@pytest.mark.parametrize("name,i,answer,words", WRONG_CASES, ids=[f"{n}-{i}" for n, i, _, _ in WRONG_CASES])
def test_each_mistake_gets_its_diagnosis(name, i, answer, words):
    ex = exercise(name)
    if "has shape" not in words:  # a wrong shape cannot even be compared; the others are wrong by both oracles
        assert oracles(ex, answer) == (False, False)
    result = ex.check(answer)
    assert result.status == "incorrect"
    assert words in result.message, result.message


def test_the_same_mistake_in_a_function_is_diagnosed_though_the_engine_hides_it():
    ex = exercise("backward_broadcast_add")
    for case in ex.form.cases:  # the engine sums the output-shaped gradient, so gradcheck passes ...
        assert torch.autograd.gradcheck(Unsummed.apply, leaves(case))
    assert "gradient for b has the output's shape" in ex.check(Unsummed).message  # ... but it is named


def test_a_mistake_is_named_only_when_it_holds_on_every_input():
    ex = exercise("backward_tanh")
    first = tuple(ex.form.cases[0].inputs[0].shape)

    def sign_once(g, x, out):  # flipped on the first input only
        return (-1 if tuple(x.shape) == first else 1) * g * (1 - out**2)

    message = ex.check(sign_once).message
    assert "flipped" not in message
    assert "wrong on 1 of 3 inputs" in message and "finite differences give" in message


RIGHT_OTHERWISE = {
    "backward_tanh": lambda g, x, out: g / torch.cosh(x)**2,
    "backward_sigmoid": lambda g, x, out: g * torch.exp(-x) / (1 + torch.exp(-x))**2,
    "backward_mul": lambda g, x, y: [y * g, x * g],
    "backward_broadcast_add": lambda g, x, b: (g.clone(), g.flatten(0, -2).sum(0)),
    "backward_mean": lambda g, x: g.unsqueeze(1) * torch.ones_like(x) / x.size(1),
    "backward_neuron": lambda g, w, x, b, out: (g * (1 - torch.tanh(w @ x + b)**2) * x,
                                                g * (1 - out * out) * w, g * (1 - out) * (1 + out)),
}


@pytest.mark.parametrize("name", NAMES)
def test_a_right_answer_written_differently_passes(name):
    ex = exercise(name)
    assert oracles(ex, RIGHT_OTHERWISE[name]) == (True, True)
    assert ex.check(RIGHT_OTHERWISE[name]).status == "correct"


def test_a_backward_that_edits_grad_output_in_place_changes_nothing_for_the_next_check():
    ex = exercise("backward_tanh")
    assert ex.check(lambda g, x, out: g.mul_(1 - out**2)).status == "correct"
    assert ex.check(defined(own_backward.TANH[0])).status == "correct"


@pytest.mark.parametrize("blank", [____, lambda g, x, out: ____, lambda g, x, out: g * ____,
                                   lambda g, x, out: torch.tanh(____)])
def test_the_blank_is_not_attempted(blank):
    ex = exercise("backward_tanh")
    result = ex.check(blank)
    assert result.status == "not attempted", result.message
    assert progress.record("backward_tanh")["attempted"] is False


def test_answers_of_the_wrong_form_say_what_to_give():
    ex = exercise("backward_mul")
    assert "not for numbers" in ex.check(torch.ones(3)).message
    assert "return 2, one gradient per input" in ex.check(lambda g, x, y: (g, g, g)).message
    assert "raised ZeroDivisionError on input 1 of 3" in ex.check(lambda g, x, y: 1 / 0).message
    assert "forward does not compute x * y" in ex.check(Unsummed).message  # x + y
    assert "raised RuntimeError" in exercise("backward_mean").check(lambda g, x: g.expand_as(x) / 3).message


def test_hints_in_order_solution_and_grading_mode():
    ex = exercise("backward_neuron")
    assert [ex.hint().title for _ in range(3)] == ["Hint 1 of 3", "Hint 2 of 3", "Hint 3 of 3"]
    assert "class MyNeuron(torch.autograd.Function)" in ex.solution().text
    autograd_lab.grading(True)
    with pytest.raises(AssertionError, match="factor from tanh is missing"):
        ex.check(lambda g, w, x, b, out: (g * x, g * w, g))
    assert ex.check(defined(own_backward.NEURON[0])).correct
    assert progress.record("backward_neuron")["passed"] is True


def test_cases_are_seeded_and_the_learners_random_state_is_left_alone():
    torch.manual_seed(5)
    state = torch.get_rng_state()
    one, again, other = exercise("backward_sigmoid"), exercise("backward_sigmoid"), exercise("backward_sigmoid", seed=3)
    assert torch.equal(state, torch.get_rng_state())
    assert torch.equal(one.form.cases[0].inputs[0], again.form.cases[0].inputs[0])
    assert not torch.equal(one.form.cases[0].inputs[0], other.form.cases[0].inputs[0])
    assert other.check(defined(own_backward.SIGMOID[0])).correct
    assert "seed=3" in other.make_code
