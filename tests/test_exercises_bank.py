"""Every exercise in its three states (placeholder, each diagnosed mistake, the right answer in
every accepted form), no false verdicts, and no expected value in a wrong answer's message."""
import re

import numpy as np
import pytest
import torch

from autograd_lab.errors import LabInputError
from autograd_lab.practice.bank import exercise, exercises
from autograd_lab.format import fmt
from autograd_lab.practice.checking import ____
from autograd_lab.practice.faces import catalog_text, exercise_text
from autograd_lab.practice.run import run


pytestmark = pytest.mark.usefixtures("fresh_progress")


def t(values):
    return torch.tensor(values, dtype=torch.double)


X = t([1.0, 2.0, 3.0])
W = t([3.0, 1.0, 0.5])


def L(value):
    """A tensor computed here, as the numbers a learner would type (a list of floats)."""
    return value.tolist()


# name -> (right answers, [(wrong answer, words its message must contain)])
CASES = {
    "mean_square": (
        [L(2 * X / 3), [0.6667, 1.3333, 2.0], (0.667, 1.33, 2), np.array([0.6667, 1.3333, 2.0]),
         [0.667, 1.333, 2.0], "[0.667, 1.333, 2]", "tensor([0.6667, 1.3333, 2.0000], dtype=torch.float64)"],
        [(L(2 * X), "gradient of the sum"), (L(X / 3), "power rule"), (L(X**2), "values of y"),
         (float((X**2).mean()), "This is z"), (L(4 * X / 3), "twice"), (None, "None"),
         (L(-2 * X / 3), "sign"), ([float("nan")] * 3, "nan"), (2.0, "single number"),
         ([0.6649, 1.3333, 2.0], "last digit"),
         ([[0.6667, 1.3333, 2.0]], "shape (1, 3)"), ([1 / 3, 1 / 3, 1 / 3], "chain rule"),
         ([5.0, 1.0, 7.0], "not the gradient"), ([1, 2, 3], "more than one mistake")]),
    "sum_square": (
        [L(2 * X), [2, 4, 6], "[2., 4., 6.]"],
        [(L(2 * X / 3), "not a mean"), (L(X), "power rule"), (L(X**2), "values of y"), (L(4 * X), "twice"),
         (float((X**2).sum()), "This is z")]),
    "mean_cube": (
        [L(X**2), [1, 4, 9]],
        [(L(X**3), "values of y"), (L(3 * X**2), "gradient of the sum"), (L(X**2 / 3), "power rule"),
         (L(2 * X / 3), "rule for x**2"), (L(2 * X**2), "twice")]),
    "weighted_mean_square": (
        [(L(X**2 / 3), L(2 * W * X / 3)), {"w": L(X**2 / 3), "x": L(2 * W * X / 3)},
         [[0.3333, 1.3333, 3.0], [2.0, 1.3333, 1.0]], {"w.grad": L(X**2 / 3), "x.grad": L(2 * W * X / 3)}],
        [((L(2 * W * X / 3), L(X**2 / 3)), "swapped"), ((L(X**2), L(2 * W * X / 3)), "w.grad the 1/n"),
         ((L(X**2 / 3), L(2 * W * X)), "x.grad the 1/n"), ((L(X**2 / 3), L(2 * X / 3)), "weights are missing"),
         ((L(X**2 / 3), L(W * X / 3)), "power rule"), ((L(W), L(2 * W * X / 3)), "weights themselves"),
         ((L(X**2 / 3),), "2 answers"), ((None, L(2 * W * X / 3)), "For w.grad: Your answer is None")]),
    "mean_square_random": (None, None),  # values depend on the seed: tested below
    "nonscalar_backward": (
        [L(2 * X + 3), [5, 7, 9]],
        [(L(X**2 + 3 * X), "values of y"), ([1.0, 1.0, 1.0], "you passed in"), (L(2 * X), "3 * x term"),
         (L(4 * X + 6), "both"), (21.0, "does not add"), (L((2 * X + 3) / 3), "y.mean()")]),
    "accumulate": (
        [L(4 * X / 3), [1.3333, 2.6667, 4.0]],
        [(L(2 * X / 3), "one backward() call"), ([0, 0, 0], "Nothing resets"),
         (L(4 * X), "gradient of the sum"), (L(2 * X), "three times"), (L(8 * X / 3), "both calls")]),
    "no_requires_grad": (
        ["c", "C", "(c)", " c. "],
        [("a", "records nothing"), ("b", "does not pass silently"), ("d", "does not fill in zeros"),
         ("e", "not one of the options"), (3, "letter")]),
    "where_backprop_stops": (
        [{"a", "g"}, ["g", "a"], "a, g", ("a", "g"), frozenset("ag")],
        [({"a"}, "Something is missing"), ({"a", "g", "c"}, "c was created"),
         ({"a", "b", "g"}, "b reaches loss only"), ({"a", "g", "d"}, "not leaves"),
         ({"a", "f", "g"}, "f was made by detach"), ({"a", "g", "q"}, "not one of the names"),
         (set(), "nothing receives"), ([1.0], "as strings")]),
    "gan_detach": (
        [({"D"}, {"G", "D"}), ({"D.weight", "D.bias"}, "G, D"), [["D"], ["G.weight", "G.bias", "D"]]],
        [(({"G", "D"}, {"D"}), "swapped"), (({"D", "G"}, {"G", "D"}), "outside the graph"),
         (({"D"}, {"D"}), "still connected"), ((set(), {"G", "D"}), "D's own parameters"),
         ({"D"}, "2 answers")]),
    "detach_vs_clone": (
        [(True, False), "yes, no", {"clone": True, "detach": False}, ["yes", "no"], (1, 0)],
        [((False, True), "other way round"), ((False, False), "CloneBackward0"),
         ((True, True), "shares a's storage"), ("maybe", "yes/no"), ((True, "perhaps"), "yes or no")]),
    "symbolic_mean_square": (
        ["2*x/3", "2x/n", "2 * x / 3", "x*2/3", "(2/3)*x", lambda x: 2 * x / 3,
         lambda x: 2 * x / x.numel(), "2*x/(1+2)", "2*x/len(x)", "2x/3", "2 x / 3"],
        [("2*x", "gradient of the sum"), ("x/3", "power rule"), ("x**2", "y = x**2 itself"),
         ("x", "x itself"), ("4*x/3", "twice"), (lambda x: (2 * x / 3).sum(), "gives shape ()"),
         ("2*y/3", "uses y"), ("2*x/3 +", "Cannot read"), ([1, 2, 3], "function of x"),
         ("0.6667*x", "exactly"), ("2*x/(n-1)", "n - 1"), ("2/n", "chain rule"), ("1/n", "chain rule"),
         (lambda x: x.grad, "returned None"), ("lambda x: 2 * x / 3", "never run as code")]),
}

RIGHT = [(name, i, a) for name, (rights, _) in CASES.items() if rights for i, a in enumerate(rights)]
WRONG = [(name, i, a, words) for name, (_, wrongs) in CASES.items() if wrongs
         for i, (a, words) in enumerate(wrongs)]


def test_the_bank_holds_every_exercise_and_each_is_tested():
    names = [e.name for e in exercises()]
    assert len(names) >= 12 and names[0] == "mean_square"
    assert set(CASES) <= set(names)
    assert all(e.title for e in exercises())


@pytest.mark.parametrize("name", list(CASES))
def test_placeholder_is_not_attempted(name):
    ex = exercise(name, seed=1)
    for blank in (____, (____, ____), {"w": ____}, 2 * ____, ____.grad):
        result = ex.check(blank)
        assert result.status == "not attempted" and not result.correct
        assert "____" in result.message


@pytest.mark.parametrize("name,i,answer", RIGHT, ids=[f"{n}-{i}" for n, i, _ in RIGHT])
def test_right_answers_in_every_form_are_correct(name, i, answer):
    result = exercise(name).check(answer)
    assert result.status == "correct", result.message
    assert result.correct and "Correct" in repr(result)


@pytest.mark.parametrize("name,i,answer,words", WRONG, ids=[f"{n}-{i}" for n, i, _, _ in WRONG])
def test_each_diagnosed_mistake_has_its_own_message(name, i, answer, words):
    """Each mistake, made twice: the second time the whole explanation (the first may be a question)."""
    ex = exercise(name)
    first = ex.check(answer)
    result = ex.check(answer)
    assert first.status == result.status == "incorrect" and not result.correct
    assert words in result.message, result.message
    assert_no_leak(ex, first.message)
    assert_no_leak(ex, result.message)


def assert_no_leak(ex, message):
    """A wrong answer's message names no expected value: no number with decimals at all, and
    not the expected letter, set or yes/no pair."""
    assert not re.search(r"\d\.\d", message), message
    expected = ex.expected
    if isinstance(expected, str):
        assert f"({expected})" not in message and f'"{expected}"' not in message
    if isinstance(expected, frozenset):
        assert ", ".join(sorted(expected)) not in message
    if isinstance(expected, tuple) and all(isinstance(e, bool) for e in expected):
        assert str(expected) not in message and "yes, no" not in message.lower()


def test_diagnosers_are_distinct_from_each_other():
    """Within one exercise no two mistakes share a message: each mistake teaches its own point."""
    for name, (_, wrongs) in CASES.items():
        if not wrongs:
            continue
        messages = [exercise(name).check(a).message for a, _ in wrongs]
        assert len(set(messages)) == len(messages), name


def equivalents(value: torch.Tensor):
    """Forms of one right answer a learner could type, with three to sixteen significant digits."""
    rounded = [round(v, 4) for v in value.tolist()]
    three = [float(f"{v:.3g}") for v in value.tolist()]
    printed = f"tensor({[float(fmt(v)) for v in value.tolist()]}, dtype=torch.float64)"
    return [value.tolist(), rounded, tuple(rounded), np.array(rounded), printed, three, str(three),
            [f for f in value.tolist()], str(rounded), tuple(three)]


def wrongs_near(value: torch.Tensor):
    """Ten wrong answers close to the right one: a digit off, one entry off, a slip."""
    v = value.tolist()
    return [[round(a, 4) + 2e-4 for a in v], (value + 2e-4).tolist(), (value - 1.5e-4).tolist(),
            [v[0] + 0.01, *v[1:]], [*v[:-1], v[-1] * 2], list(reversed(v)), [0.0] * len(v), [*v, 0.0],
            v[:-1], (value * 1.001).tolist()]


TENSOR_EXERCISES = ["mean_square", "sum_square", "mean_cube", "nonscalar_backward", "accumulate"]


def test_fifty_equivalent_right_answers_all_pass():
    count = 0
    for name in TENSOR_EXERCISES:
        ex = exercise(name)
        for answer in equivalents(ex.expected):
            assert ex.check(answer).correct, (name, answer, ex.check(answer).message)
            count += 1
    for seed in range(3):
        ex = exercise("mean_square_random", seed=seed)
        for answer in equivalents(ex.expected):
            assert ex.check(answer).correct, (seed, answer)
            count += 1
    assert count >= 50


def test_fifty_wrong_answers_all_fail_without_giving_the_answer_away():
    count = 0
    for name in [*TENSOR_EXERCISES, "mean_square_random"]:
        ex = exercise(name, seed=5)
        for answer in wrongs_near(ex.expected):
            result = ex.check(answer)
            assert result.status == "incorrect", (name, answer)
            assert_no_leak(ex, result.message)
            count += 1
    assert count >= 50


def test_tolerance_respects_the_digits_given():
    ex = exercise("mean_square")
    for right in ([0.667, 1.33, 2], [0.6667, 1.3333, 2.0], [0.66667, 1.333333, 2.00], "[0.66667, 1.3333, 2.000]"):
        assert ex.check(right).correct, right
    assert ex.check([0.67, 1.33, 2.0]).message.startswith("Close: give three significant digits")
    assert not ex.check("[0.6670, 1.333, 2]").correct  # 0.6670 claims a fourth decimal it does not have
    for wrong in ([0.6666, 1.3333, 2.0], [0.66665, 1.33335, 2.0], [0.6667, 1.3333, 2.0001], [0.666, 1.333, 2.0]):
        assert not ex.check(wrong).correct, wrong
    assert exercise("symbolic_mean_square").check("2/3*x").correct
    assert not exercise("symbolic_mean_square").check("0.6667*x").correct


def test_every_prediction_exercise_refuses_autograds_own_tensor():
    """Loop over the whole bank: autograd's tensor (anywhere in the answer) is never an answer."""
    predictions = [e.name for e in exercises() if exercise(e.name, seed=2).predicts]
    assert set(CASES) <= set(predictions)
    for name in predictions:
        ex = exercise(name, seed=2)
        try:
            ns = run(ex.setup)
        except Exception:  # a setup that fails on purpose, or one that is the learner's to finish
            ns = {}
        given = [v for v in ns.values() if isinstance(v, torch.Tensor) and v.is_leaf and v.grad is not None]
        expected = ex.expected if isinstance(ex.expected, tuple) else (ex.expected,)
        own = [e for e in expected if isinstance(e, torch.Tensor)]
        answers = [own[0], tuple(own)] if own else []
        if given:
            first = given[0].grad
            answers += [first, tuple(g.grad for g in given), first.numpy(), [first.reshape(-1)[:1]]]
        for answer in answers:
            result = ex.check(answer)
            assert result.status == "not attempted" and not result.correct, (name, result.message)
            assert "autograd's own result" in result.message


def test_confirm_shows_the_last_answer_beside_autograds():
    ex = exercise("mean_square")
    assert "autograd" not in ex.confirm().title.lower()
    ex.check("abc")  # not read: no attempt, nothing shown
    assert "0.6667" not in ex.confirm().text
    ex.check([0.667, 1.33, 2])
    note = ex.confirm()
    assert note.title == "Confirmed with autograd"
    assert "Your last answer: [0.667, 1.33, 2] (correct)" in note.text
    assert "autograd: [0.6667, 1.3333, 2.0000]" in note.text


def test_expected_answers_are_what_torch_computes():
    for name in [*TENSOR_EXERCISES, "weighted_mean_square"]:
        ex = exercise(name)
        ns = {"torch": torch}
        exec(ex.setup, ns)
        if name == "weighted_mean_square":
            assert torch.equal(ex.expected[0], ns["w"].grad) and torch.equal(ex.expected[1], ns["x"].grad)
        else:
            assert torch.equal(ex.expected, ns["x"].grad)
    # against an independent route: torch.autograd.grad on the formula
    x = X.clone().requires_grad_()
    (g,) = torch.autograd.grad((x**2).mean(), x)
    assert torch.allclose(exercise("mean_square").expected, g)


def test_random_exercise_depends_on_seed_and_learner(monkeypatch):
    a, b = exercise("mean_square_random", seed=1), exercise("mean_square_random", seed=2)
    assert a.setup != b.setup and exercise_text(a) == exercise_text(exercise("mean_square_random", seed=1))
    x = run(a.setup)["x"].detach()
    assert torch.allclose(a.expected, 2 * x / x.numel())
    assert not b.check(a.expected.tolist()).correct
    monkeypatch.setenv("AUTOGRAD_LAB_LEARNER", "ada")
    ada = exercise("mean_square_random")
    monkeypatch.setenv("AUTOGRAD_LAB_LEARNER", "alan")
    alan = exercise("mean_square_random")
    assert ada.seed != alan.seed and ada.setup != alan.setup
    monkeypatch.setenv("AUTOGRAD_LAB_LEARNER", "ada")
    assert exercise("mean_square_random").setup == ada.setup


def test_flow_answers_are_read_off_torch():
    assert exercise("no_requires_grad").expected == "c"
    assert exercise("where_backprop_stops").expected == frozenset({"a", "g"})
    assert exercise("gan_detach").expected == (frozenset({"D.weight", "D.bias"}),
                                               frozenset({"D.weight", "D.bias", "G.weight", "G.bias"}))
    assert exercise("detach_vs_clone").expected == (True, False)


def test_building_exercises_leaves_the_random_state_alone():
    torch.manual_seed(123)
    state = torch.get_rng_state()
    for e in exercises():
        exercise(e.name)
    assert torch.equal(state, torch.get_rng_state())


def test_unknown_name_and_bad_seed_are_explained():
    with pytest.raises(LabInputError, match=re.escape(", ".join(e.name for e in exercises()[:3]))):
        exercise("mean_sqaure")
    with pytest.raises(LabInputError, match="whole number"):
        exercise("mean_square_random", seed="seven")
    for huge in (10**30, -1, 2**32):
        with pytest.raises(LabInputError, match="from 0 to"):
            exercise("mean_square_random", seed=huge)


def test_texts_are_deterministic():
    for e in exercises():
        one, two = exercise(e.name, seed=3), exercise(e.name, seed=3)
        assert exercise_text(one) == exercise_text(two) and one.solution().text == two.solution().text
        assert "0x" not in exercise_text(one)
        if e.name in CASES:
            assert repr(one).startswith(f"<exercise {e.name}") and "\n" not in repr(one)
    assert catalog_text(exercises()).splitlines()[0].startswith("mean_square")
