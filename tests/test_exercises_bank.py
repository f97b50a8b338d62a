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

# name -> (right answers, [(wrong answer, words its message must contain)])
CASES = {
    "mean_square": (
        [2 * X / 3, [0.6667, 1.3333, 2.0], (0.6667, 1.3333, 2), np.array([0.6667, 1.3333, 2.0])],
        [(2 * X, "gradient of the sum"), (X / 3, "power rule"), (X**2, "values of y"),
         ((X**2).mean(), "This is z"), (X, "x itself"), (4 * X / 3, "twice"), (None, "None"),
         (-2 * X / 3, "sign"), ([float("nan")] * 3, "nan"), (2.0, "single number"),
         ([0.667, 1.333, 2.0], "rounded"), (torch.tensor([1, 1, 2]), "dtype"),
         (torch.empty(3, device="meta"), "device"), ([[0.6667, 1.3333, 2.0]], "shape (1, 3)"),
         ([5.0, 1.0, 7.0], "not the gradient")]),
    "sum_square": (
        [2 * X, [2, 4, 6], torch.tensor([2.0, 4.0, 6.0])],
        [(2 * X / 3, "not a mean"), (X, "power rule"), (X**2, "values of y"), (4 * X, "twice"),
         ((X**2).sum(), "This is z")]),
    "mean_cube": (
        [X**2, [1, 4, 9]],
        [(X**3, "values of y"), (3 * X**2, "gradient of the sum"), (X**2 / 3, "power rule"),
         (2 * X / 3, "rule for x**2"), (2 * X**2, "twice")]),
    "weighted_mean_square": (
        [(X**2 / 3, 2 * W * X / 3), {"w": X**2 / 3, "x": 2 * W * X / 3},
         [[0.3333, 1.3333, 3.0], [2.0, 1.3333, 1.0]], {"w.grad": X**2 / 3, "x.grad": 2 * W * X / 3}],
        [((2 * W * X / 3, X**2 / 3), "swapped"), ((X**2, 2 * W * X / 3), "w.grad the 1/n"),
         ((X**2 / 3, 2 * W * X), "x.grad the 1/n"), ((X**2 / 3, 2 * X / 3), "weights are missing"),
         ((X**2 / 3, W * X / 3), "power rule"), ((W, 2 * W * X / 3), "weights themselves"),
         ((X**2 / 3,), "2 answers"), ((None, 2 * W * X / 3), "For w.grad: Your answer is None")]),
    "mean_square_random": (None, None),  # values depend on the seed: tested below
    "nonscalar_backward": (
        [2 * X + 3, [5, 7, 9]],
        [(X**2 + 3 * X, "values of y"), (torch.ones(3), "you passed in"), (2 * X, "3 * x term"),
         (4 * X + 6, "both"), (21.0, "does not add"), ((2 * X + 3) / 3, "y.mean()")]),
    "accumulate": (
        [4 * X / 3, [1.3333, 2.6667, 4.0]],
        [(2 * X / 3, "one backward() call"), (torch.zeros(3), "Nothing resets"),
         (4 * X, "gradient of the sum"), (2 * X, "three times"), (8 * X / 3, "both calls")]),
    "no_requires_grad": (
        ["c", "C", "(c)", " c. "],
        [("a", "records nothing"), ("b", "does not pass silently"), ("d", "does not fill in zeros"),
         ("e", "not one of the options"), (3, "letter")]),
    "where_backprop_stops": (
        [{"a", "g"}, ["g", "a"], "a, g", ("a", "g"), frozenset("ag")],
        [({"a"}, "Something is missing"), ({"a", "g", "c"}, "c was created"),
         ({"a", "b", "g"}, "b reaches loss only"), ({"a", "g", "d"}, "not leaves"),
         ({"a", "f", "g"}, "f was made by detach"), ({"a", "g", "q"}, "not one of the names"),
         (set(), "nothing receives"), ([X], "as strings")]),
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
         lambda x: 2 * x / x.numel(), "lambda x: 2 * x / 3", "2*x/(1+2)"],
        [("2*x", "gradient of the sum"), ("x/3", "power rule"), ("x**2", "y = x**2 itself"),
         ("x", "x itself"), ("4*x/3", "twice"), (lambda x: (2 * x / 3).sum(), "gives shape ()"),
         ("2*y/3", "uses y"), ("2*x/3 +", "Cannot read"), ([1, 2, 3], "function of x"),
         ("0.667*x", "rounded")]),
}

RIGHT = [(name, i, a) for name, (rights, _) in CASES.items() if rights for i, a in enumerate(rights)]
WRONG = [(name, i, a, words) for name, (_, wrongs) in CASES.items() if wrongs
         for i, (a, words) in enumerate(wrongs)]


def test_the_bank_holds_every_exercise_and_each_is_tested():
    names = [e.name for e in exercises()]
    assert len(names) >= 12 and names[0] == "mean_square"
    assert set(names) == set(CASES)
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
    ex = exercise(name)
    result = ex.check(answer)
    assert result.status == "incorrect" and not result.correct
    assert words in result.message, result.message
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
    """Eleven forms of one right answer, all within what PyTorch prints."""
    rounded = [round(v, 4) for v in value.tolist()]
    printed = f"tensor({[float(fmt(v)) for v in value.tolist()]}, dtype=torch.float64)"
    return [value, value.float(), value.half(), value.to(torch.bfloat16), rounded, tuple(rounded),
            np.array(rounded), np.array(value.tolist(), dtype=np.float32), printed,
            [torch.tensor(v) for v in rounded], (value + 4e-5).tolist()]


def wrongs_near(value: torch.Tensor):
    """Ten wrong answers close to the right one: one decimal too few, one entry off, a slip."""
    v = value.tolist()
    return [[round(a, 2) + (0.004 if round(a, 2) == round(a, 4) else 0) for a in v],
            (value + 2e-4).tolist(), (value - 1.5e-4).tolist(), [v[0] + 0.01, *v[1:]],
            [*v[:-1], v[-1] * 2], list(reversed(v)), [0.0] * len(v), [*v, 0.0], v[:-1],
            (value * 1.001).tolist()]


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


def test_tolerance_is_four_printed_decimals_and_nothing_looser():
    ex = exercise("mean_square")
    assert ex.check([0.6667, 1.3333, 2.0]).correct
    assert ex.check([0.66665, 1.33335, 2.00004]).correct
    assert not ex.check([0.6666, 1.3333, 2.0]).correct      # truncated, not rounded
    assert not ex.check([0.667, 1.333, 2.0]).correct
    assert not ex.check([0.6667, 1.3333, 2.0001]).correct


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
    assert not b.check(a.expected).correct
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
    with pytest.raises(LabInputError, match="mean_square, sum_square"):
        exercise("mean_sqaure")
    with pytest.raises(LabInputError, match="whole number"):
        exercise("mean_square_random", seed="seven")


def test_texts_are_deterministic():
    for e in exercises():
        one, two = exercise(e.name, seed=3), exercise(e.name, seed=3)
        assert exercise_text(one) == exercise_text(two) and one.solution().text == two.solution().text
        assert "0x" not in exercise_text(one)
        assert repr(one).startswith(f"<exercise {e.name}") and "\n" not in repr(one)
    assert catalog_text(exercises()).splitlines()[0].startswith("mean_square")
