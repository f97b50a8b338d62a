"""The exercises of lessons 06 to 08: each is in the bank, a placeholder is not attempted, the right
answer passes, each known mistake gets its diagnosis, and the expected values are torch's."""
import pytest
import torch

from autograd_lab.practice.bank import exercise, exercises
from autograd_lab.practice.checking import ____

pytestmark = pytest.mark.usefixtures("fresh_progress")

CASES = {
    "vjp_weights": ([2.0, 0.0, 12.0], [([2.0, 4.0, 6.0], "all weights 1"), ([1.0, 0.0, 2.0], "weights themselves"),
                                         ([1.0, 0.0, 6.0], "factor 2"), (14.0, "add the entries up")]),
    "jacobian_shape": (("b", [0.0, 3.0, 12.0]), [(("a", [0.0, 3.0, 12.0]), "one row per element"),
                                                 (("b", [0.0, 1.0, 8.0]), "y itself"),
                                                 (("b", [0.0, 1.0, 4.0]), "factor 3")]),
    "grad_vs_backward": (([2.0, 4.0, 6.0], [4.0, 8.0, 12.0]),
                         [(([2.0, 4.0, 6.0], [6.0, 12.0, 18.0]), "writes nothing into x.grad"),
                          (([2.0, 4.0, 6.0], [2.0, 4.0, 6.0]), "adds to the first"),
                          (([4.0, 8.0, 12.0], [2.0, 4.0, 6.0]), "swapped")]),
    "frozen_grads": ({"model.2"}, [({"model.0", "model.2"}, "never reaches them"),
                                   ({"model.2.bias"}, "does not stop the gradient")]),
    "which_mode_records": ((False, False, True, False), [((False, False, False, False), "dropout and batch norm"),
                                                        ((True, False, True, False), "none of the three")]),
    "target_without_graph": ((True, False, True), [((True, True, True), "Inference tensors cannot be saved"),
                                                  ((False, False, True), "ordinary tensor")]),
    "hook_doubles": ([6.0, 6.0, 6.0], [([3.0, 3.0, 3.0], "without the hook"), ([12.0, 12.0, 12.0], "multiplies by 3"),
                                       ([2.0, 2.0, 2.0], "arrives at y")]),
    "retain_grad_and_hook": (([5.0, 9.0, 13.0], [10.0, 18.0, 26.0]),
                             [(([4.0, 8.0, 12.0], [10.0, 18.0, 26.0]), "stores it last"),
                              (([5.0, 9.0, 13.0], [8.0, 16.0, 24.0]), "(hooked) gradient"),
                              (([10.0, 18.0, 26.0], [5.0, 9.0, 13.0]), "swapped")]),
    "exploding_layer": ("c", []),
}


def test_every_exercise_of_lessons_06_to_08_is_in_the_bank_in_course_order():
    names = [e.name for e in exercises()]
    ours = [n for n in names if n in CASES]
    assert ours == list(CASES)
    assert all(e.title for e in exercises() if e.name in CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_placeholder_and_right_answer(name):
    ex = exercise(name)
    assert ex.check(____).status == "not attempted"
    result = ex.check(CASES[name][0])
    assert result.status == "correct", result.message


WRONG = [(name, answer, words) for name, (_, wrongs) in CASES.items() for answer, words in wrongs]


@pytest.mark.parametrize("name, answer, words", WRONG)
def test_known_mistakes_are_diagnosed(name, answer, words):
    """The same mistake twice: the whole explanation (the first time may be a question)."""
    ex = exercise(name)
    first = ex.check(answer)
    result = ex.check(answer)
    assert first.status == result.status == "incorrect" and first.diagnosis == result.diagnosis
    assert words in result.message


def test_expected_values_are_what_torch_computes():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double, requires_grad=True)
    (x ** 2).backward(torch.tensor([1.0, 0.0, 2.0], dtype=torch.double))
    assert torch.equal(exercise("vjp_weights").expected, x.grad)
    j = torch.autograd.functional.jacobian(lambda t: t ** 3, torch.tensor([0.0, 1.0, 2.0], dtype=torch.double))
    assert torch.equal(exercise("jacobian_shape").expected[1], j.diagonal())


def test_the_exploding_layer_is_the_one_that_was_scaled():
    from autograd_lab.practice.run import run
    from autograd_lab.practice.topics.hooks import EXPLODE, LETTERS

    ns = run(EXPLODE)
    assert "bad" not in ns  # no name of the setup holds the answer
    norms = [float(layer.weight.detach().norm()) for layer in ns["net"]]
    assert exercise("exploding_layer").expected == LETTERS[norms.index(max(norms))]
