"""Grading mode raises exactly when an answer is not correct; progress counts attempts, passes and
hints, in memory only."""
import importlib

import pytest

import autograd_lab
from autograd_lab.errors import LabInputError
from autograd_lab.practice import progress
from autograd_lab.practice.bank import exercise
from autograd_lab.practice.checking import ____


pytestmark = pytest.mark.usefixtures("fresh_progress")


ANSWERS = [([0.6667, 1.3333, 2.0], True), ([2, 4, 6], False), (None, False), (____, False),
           ("text", False), ([0.6667, 1.3333, 2.0001], False)]


@pytest.mark.parametrize("answer,right", ANSWERS)
def test_grading_raises_exactly_when_not_correct(answer, right):
    ex = exercise("mean_square")
    message = ex.check(answer).message
    autograd_lab.grading(True)
    if right:
        assert ex.check(answer).correct
    else:
        with pytest.raises(AssertionError) as err:
            ex.check(answer)
        assert str(err.value) == message


def test_grading_follows_the_environment_unless_switched(monkeypatch):
    assert autograd_lab.grading() is False
    monkeypatch.setenv("AUTOGRAD_LAB_GRADING", "1")
    assert autograd_lab.grading() is True
    with pytest.raises(AssertionError):
        exercise("sum_square").check([1, 2, 3])
    autograd_lab.grading(False)
    assert exercise("sum_square").check([1, 2, 3]).status == "incorrect"
    with pytest.raises(LabInputError):
        autograd_lab.grading("yes")


def test_progress_counts_attempts_passes_hints_and_solutions():
    ms, sq = exercise("mean_square"), exercise("sum_square")
    ms.check(____)
    assert autograd_lab.progress().to_dict()["mean_square"]["attempted"] is False
    ms.check([2, 4, 6])
    ms.hint()
    ms.hint()
    ms.hint(1)
    sq.check([2, 4, 6])
    sq.solution()
    data = autograd_lab.progress().to_dict()
    assert data["mean_square"] == {"title": "The gradient of a mean of squares", "attempted": True,
                                   "passed": False, "checks": 2, "hints": 2, "solution": False,
                                   "attempts": 1, "correct": False, "confirmed": False,
                                   "diagnoses": ["missing_mean"]}
    assert data["sum_square"]["passed"] and data["sum_square"]["solution"]
    assert data["accumulate"]["checks"] == 0
    text = repr(autograd_lab.progress())
    assert text.startswith(f"Progress: 1 of {len(autograd_lab.exercises())} passed, 2 attempted")
    row = next(line for line in text.splitlines() if line.startswith("mean_square "))
    assert row.split() == ["mean_square", "attempted", "1", "2", "-", "missing_mean"]
    progress.reset()
    assert autograd_lab.progress().passed == 0


def test_a_check_of_the_blank_or_a_tensor_is_no_attempt_and_the_table_says_so():
    import torch

    ex = exercise("mean_square")
    ex.check(____)
    ex.check(ex.expected)  # autograd's own tensor
    record = autograd_lab.progress().to_dict()["mean_square"]
    assert (record["checks"], record["attempts"], record["attempted"]) == (2, 0, False)
    assert record["diagnoses"] == ["tensor_given"]
    row = next(line for line in repr(autograd_lab.progress()).splitlines() if line.startswith("mean_square "))
    assert row.split()[1:4] == ["not", "attempted", "0"]  # no "not attempted" beside a count of answers
    ex.check([0.67, 1.33, 2])
    ex.check([0.667, 1.33, 2])
    record = autograd_lab.progress().to_dict()["mean_square"]
    assert record["attempts"] == 2 and record["correct"] and record["diagnoses"] == ["tensor_given", "too_few_digits"]
    ex.check(torch.tensor([2 / 3, 4 / 3, 2.0], dtype=torch.double))  # a tensor the learner typed: an answer
    assert autograd_lab.progress().to_dict()["mean_square"]["attempts"] == 3
    ex.confirm()
    assert autograd_lab.progress().to_dict()["mean_square"]["confirmed"]


def test_hints_come_in_order_and_the_fallback_offers_the_next():
    ex = exercise("mean_square")
    offer = ex.check([5.0, 1.0, 7.0]).message
    assert "hint 1 of 3" in offer
    first = ex.hint()
    assert first.title == "Hint 1 of 3" and repr(first).startswith("Hint 1 of 3\n")
    assert ex.hint().title == "Hint 2 of 3"
    assert "hint 3 of 3" in ex.check([5.0, 1.0, 7.0]).message
    assert ex.hint(1).text == first.text
    ex.hint()
    assert ex.hint().title == "Hint 3 of 3"
    assert "solution()" in ex.check([5.0, 1.0, 7.0]).message
    with pytest.raises(LabInputError, match="hints 1 to 3"):
        ex.hint(4)


def test_solution_holds_the_values_torch_computed():
    text = exercise("mean_square").solution().text
    assert "[0.6667, 1.3333, 2.0000]" in text


def test_public_names_resolve():
    assert autograd_lab.____ is ____
    assert autograd_lab.exercise("mean_square").check(autograd_lab.____).status == "not attempted"
    importlib.import_module("autograd_lab.practice.view")  # a room import must not hide exercises()

    assert [e.name for e in autograd_lab.exercises()][:2] == ["mean_square", "engine_order"]
    assert autograd_lab.exercises()[0].title == "The gradient of a mean of squares"
