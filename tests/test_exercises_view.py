"""The %exercise widget and magic: classes the browser tests rely on, buttons pressed with
.click(), the answer box read as text (never run, no name looked up), deterministic faces."""
import pytest
import torch
from IPython.core.error import UsageError

from autograd_lab.practice import progress
from autograd_lab.practice.bank import exercise
from autograd_lab.practice.report import report
from autograd_lab.practice.view import exercise_view


pytestmark = pytest.mark.usefixtures("fresh_progress")


CLASSES = ["agl-statement", "agl-answer", "agl-check", "agl-hint", "agl-solution", "agl-feedback"]


def classes(widget) -> list:
    """The CSS classes the front end receives (the widget's synced state)."""
    return list(widget.get_state()["_dom_classes"])


def parts(view):
    """The controls, found by their CSS classes in the widget tree."""
    found, todo = {}, [view.widget]
    while todo:
        w = todo.pop()
        todo.extend(getattr(w, "children", ()))
        for css in classes(w):
            found[css] = w
    assert found == view.parts
    return [found[css] for css in CLASSES]


def learner(name="mean_square"):
    ns = {"torch": torch}
    exec(exercise(name).setup, ns)
    return ns


def test_widget_has_the_classes_and_buttons():
    view = exercise_view(exercise("mean_square"))
    statement, _answer, check, hint, solution, feedback = parts(view)
    assert sorted(view.parts) == sorted(CLASSES)
    assert [b.description for b in (check, hint, solution)] == ["Check", "Hint", "Solution"]
    assert [classes(b) for b in (check, hint, solution)] == [["agl-check"], ["agl-hint"], ["agl-solution"]]
    assert "agl-exercise" in statement.value and feedback.value == ""


def test_the_box_is_read_as_text_and_never_run():
    ns = learner()
    keys, grad = set(ns), ns["x"].grad.clone()
    view = exercise_view(exercise("mean_square"), names=ns)
    _, answer, check, _, _, feedback = parts(view)
    check.click()
    assert "not attempted" in feedback.value
    answer.value = "x.grad"  # a name is not looked up: type the numbers, or check x.grad in a cell
    check.click()
    assert "x.grad is a name" in feedback.value and "ex.check(x.grad)" in feedback.value
    assert progress.record("mean_square")["checks"] == 1  # the blank only: a name is not checked
    answer.value = "[0.667, 1.333, 2]"
    check.click()
    assert "correct" in feedback.value and "Correct!" in feedback.value and "Incorrect" not in feedback.value
    answer.value = "tensor([2., 4., 6.], requires_grad=True)"  # as PyTorch prints it
    check.click()
    assert "Incorrect" in feedback.value and "gradient of the sum" in feedback.value
    answer.value = "[2/3, 4/3, 2]"
    check.click()
    assert "Correct!" in feedback.value
    answer.value = "[2 * v for v in [1, 2, 3]]"
    check.click()
    assert "is code" in feedback.value and "Incorrect" not in feedback.value
    answer.value = "nope"
    check.click()
    assert "nope is a name" in feedback.value
    assert set(ns) == keys and torch.equal(ns["x"].grad, grad)
    assert repr(view.widget).startswith("Exercise mean_square") and "nope is a name" in repr(view.widget)


def test_text_answers_are_taken_as_typed():
    ns = learner("where_backprop_stops")
    view = exercise_view(exercise("where_backprop_stops"), names=ns)
    _, answer, check, _, _, feedback = parts(view)
    answer.value = "a, g"
    check.click()
    assert "Correct!" in feedback.value
    view = exercise_view(exercise("symbolic_mean_square"), names={})
    _, answer, check, _, _, feedback = parts(view)
    answer.value = "2*x/3"
    check.click()
    assert "Correct!" in feedback.value
    answer.value = "2x"
    check.click()
    assert "gradient of the sum" in feedback.value
    answer.value = "lambda x: 2 * x"  # a function is given in a cell, never as text
    check.click()
    assert "never run as code" in feedback.value and "ex.check(lambda x: 2 * x)" in feedback.value


def test_hint_and_solution_buttons():
    view = exercise_view(exercise("mean_square"))
    _, _, _, hint, solution, feedback = parts(view)
    hint.click()
    assert "Hint 1 of 3" in feedback.value
    hint.click()
    assert "Hint 2 of 3" in feedback.value
    solution.click()
    assert "0.6667" in feedback.value
    assert report().to_dict()["mean_square"]["hints"] == 2


def test_grading_mode_in_the_widget_shows_the_verdict_instead_of_raising():
    progress.grading(True)
    view = exercise_view(exercise("mean_square"), names=learner())
    _, answer, check, _, _, feedback = parts(view)
    answer.value = "[1, 2, 3]"
    check.click()
    assert "x itself" in feedback.value


def test_static_faces_are_deterministic():
    one, two = exercise_view(exercise("gan_detach")), exercise_view(exercise("gan_detach"))
    assert one.text() == two.text() and one.html() == two.html()
    assert "agl-exercise" in one.html() and "0x" not in one.html()
    assert one.bundle(with_widget=False)["text/plain"].startswith("Exercise gan_detach")


def test_magic_shows_an_exercise_and_explains_unknown_names(ip, capsys):
    ip.run_line_magic("exercise", "mean_square")
    assert "Exercise mean_square" in capsys.readouterr().out
    ip.run_line_magic("exercise", "mean_square_random --seed 4")
    assert "(seed 4)" in capsys.readouterr().out
    with pytest.raises(UsageError, match=r"there is no exercise called 'nope'.*mean_square"):
        ip.run_line_magic("exercise", "nope")
