"""The exercises of lessons 06-10 (topics vjp, freezing, hooks, own_backward, history) in Chinese:
every exercise, with no seed and with a seed, has its statement (text and HTML, the comments of its
setup code included), hints, solution, every diagnosis, and the verdicts on the right answer and on
each known mistake in Chinese with no English sentence left; and the English faces stay as they were."""
import pytest
import torch
from helpers import (CHINESE, answer_of, chinese_statement, chinese_verdicts, comments, diagnosed_answers,
                     english_words, fixed, hint_notes, prose, variant)
from helpers import assert_chinese as chinese
from helpers import exercises_in_catalog

from autograd_lab.practice import faces
from autograd_lab.practice.bank import exercise
from autograd_lab.practice.backward_exercise import BackwardExercise
from autograd_lab.practice.code_task import CodeExercise
from autograd_lab.practice.registry import registered
from autograd_lab.practice.topics import history, own_backward

pytestmark = pytest.mark.usefixtures("fresh_progress")

NAMES = exercises_in_catalog("exercises_advanced")
SEEDS = [None, 3]
# PyTorch's own error messages, quoted as they are
PYTORCH = ("Trying to backward through the graph a second time", "Inference tensors cannot be saved for backward",
           "element 0 of tensors does not require grad")
# the solutions as code (function and torch.autograd.Function subclass)
CODE = {task.name: task.code for task in own_backward.TASKS}  # the solutions as code


def is_chinese(text: str) -> bool:
    return bool(CHINESE.search(text))


def assert_chinese(text: str, what: str, allowed: tuple[str, ...] = ()):
    chinese(text, PYTORCH + allowed, what)


def code_only(text: str) -> bool:
    """A hint that is a line of code alone (it has no words to translate)."""
    return text.startswith(("return ", "local = ", "J[i, i] = "))


def defined(code: str):
    ns = {"torch": torch}
    exec(code, ns)
    return next(v for k, v in ns.items() if k not in ("torch", "__builtins__"))


def fails(w, opt, x, h):
    raise RuntimeError("boom")


# the wrong backwards of the implement-a-backward exercises, written by hand (their diagnoses are
# the exercises' own mistakes and the standard ones: sign, grad_output left out, broadcast shape)
WRONG_BACKWARDS = {
    "backward_tanh": [lambda g, x, out: -g * (1 - out**2), lambda g, x, out: 1 - out**2,
                      lambda g, x, out: g / torch.cosh(out)**2, lambda g, x, out: g * (1 - x * x)],
    "backward_sigmoid": [lambda g, x, out: g * out * (out - 1), lambda g, x, out: out - out**2,
                         lambda g, x, out: g * torch.sigmoid(out) * torch.sigmoid(-out),
                         lambda g, x, out: g * (x - x**2)],
    "backward_mul": [lambda g, x, y: (g * x, g * y), lambda g, x, y: (g * y, g * y),
                     lambda g, x, y: (g * y, -g * x), lambda g, x, y: (y.clone(), x.clone())],
    "backward_broadcast_add": [lambda g, x, b: (g, g.clone()), lambda g, x, b: (g, g.flatten(0, -2).mean(0)),
                               lambda g, x, b: (torch.ones_like(x), torch.ones_like(x).flatten(0, -2).sum(0)),
                               lambda g, x, b: (g, -g.sum_to_size(b.shape)), lambda g, x, b: (g, g * 2)],
    "backward_mean": [lambda g, x: g[:, None].expand_as(x) * 1.0, lambda g, x: g[:, None].expand_as(x) / x.numel(),
                      lambda g, x: torch.ones_like(x) / x.shape[1],
                      lambda g, x: -g.unsqueeze(1).expand_as(x) / x.shape[1], lambda g, x: g / x.shape[1]],
    "backward_neuron": [
        lambda g, w, x, b, out: (g * x, g * w, g.clone()),
        lambda g, w, x, b, out: tuple(g * (1 - (w @ x + b)**2) * t for t in (x, w, 1.0)),
        lambda g, w, x, b, out: tuple(g / torch.cosh(out)**2 * t for t in (x, w, 1.0)),
        lambda g, w, x, b, out: (g * (1 - out**2) * w, g * (1 - out**2) * x, g * (1 - out**2)),
        lambda g, w, x, b, out: ((1 - out**2) * x, (1 - out**2) * w, 1 - out**2),
    ],
}


def known_mistakes(ex) -> list:
    """Answers that make each known mistake of the exercise: the diagnosers' own values where they
    have one (the whole answer, or one part of it with the other parts right), else written here."""
    answers = diagnosed_answers(ex)
    name = ex.name
    if name == "jacobian_shape":
        answers.append(("a", answer_of(ex.expected[1])))
    elif name == "frozen_grads":
        answers += [{"model.0", "model.2"}, {"model.2.bias"}]
    elif name in ("which_mode_records", "target_without_graph"):
        right = ex.expected
        answers += [tuple(not v if i == j else v for j, v in enumerate(right)) for i in range(len(right))]
    elif name == "exploding_layer":
        answers += [letter for letter in "abcd" if letter != ex.expected]
    elif name == "carried_history":
        carrier, fixes = next(iter(ex.expected[0])), set(ex.expected[1])
        other = "avg" if carrier == "total" else "total"
        answers += [({carrier, "loss"}, fixes), ({carrier, other}, fixes), ({carrier, "w"}, fixes), (set(), fixes),
                    ({carrier}, fixes | {"b"}), ({carrier}, fixes | {"c"}), ({carrier}, fixes - {"a"}),
                    ({carrier}, fixes - {"d"})]
    elif name == "fix_training_step":
        answers += [variant(), variant(retain=False), variant(cut_in=lambda h: h.clone()),
                    variant(cut_out=lambda h: h.detach(), retain=False),
                    variant(cut_in=lambda h: torch.zeros_like(h), retain=False),
                    fails, lambda w, opt, x, h: None]
    elif name in WRONG_BACKWARDS:
        answers += WRONG_BACKWARDS[name]
    return answers


def right_answer(ex):
    if isinstance(ex, BackwardExercise):
        return defined(CODE[ex.name][0])
    if isinstance(ex, CodeExercise):
        return fixed
    return answer_of(ex.expected)


def test_every_exercise_of_the_room_is_here():
    """The exercises' two catalogs share the bank between them: each exercise is tested in one."""
    other = exercises_in_catalog("exercises")
    assert NAMES and not set(NAMES) & set(other)
    assert sorted(NAMES + other) == sorted(e.name for e in registered())


@pytest.mark.parametrize("seed", SEEDS, ids=["no seed", "seed 3"])
@pytest.mark.parametrize("name", NAMES)
def test_the_statement_hints_and_solution_are_chinese(zh, name, seed):
    ex = exercise(name, seed=seed)
    chinese_statement(ex, assert_chinese)
    assert english_words(comments(ex.setup), allowed=PYTORCH) == [], ex.setup
    if name not in ("which_mode_records", "jacobian_shape", "vjp_weights", "grad_vs_backward", "hook_doubles",
                    "retain_grad_and_hook"):  # these have no comments, or only names of cases
        assert is_chinese(comments(ex.setup)), ex.setup
    for field in (ex.intro, prose(ex.question, ""), ex.answer_form, ex.praise):
        assert_chinese(field, "statement field")
    if not isinstance(ex, (BackwardExercise, CodeExercise)):  # those kinds are their class's own
        assert english_words(ex.kind) == []
    for hint, note in hint_notes(ex):
        if not code_only(hint):
            assert_chinese(hint, "hint")
        assert_chinese(repr(note), "hint note", allowed=(hint,) if code_only(hint) else ())
    assert_chinese(ex.solution().text, "solution", allowed=CODE.get(name, ()))


@pytest.mark.parametrize("seed", SEEDS, ids=["no seed", "seed 3"])
@pytest.mark.parametrize("name", NAMES)
def test_every_diagnosis_and_verdict_is_chinese(zh, name, seed):
    ex = exercise(name, seed=seed)
    mistakes = known_mistakes(ex)
    assert len(mistakes) >= 2
    _right, reached = chinese_verdicts(ex, right_answer(ex), mistakes, assert_chinese)
    if not isinstance(ex, BackwardExercise):  # a backward's diagnosers are one per mistake and group of inputs
        assert {d.key for d in ex.diagnosers} <= reached, name


def test_the_code_task_says_what_the_step_did_in_chinese(zh):
    ex = exercise("fix_training_step")
    assert_chinese(ex.confirm().text, "confirm")
    failed = ex.check(fails)
    assert failed.diagnosis == "explained" and "（出错）" in failed.message
    ex.check(variant())
    text = ex.confirm().text
    assert_chinese(text, "confirm")
    assert "4，7，10" in text
    for training in (history.Training(error, grows, False, trains, sizes)
                     for error in ("", "freed", "no_grad", "error") for grows in (False, True)
                     for trains in (False, True) for sizes in ((), (4, 7))):
        assert_chinese(training.describe(), "what the step did")
    returned = ex.check(lambda w, opt, x, h: None)
    assert returned.diagnosis == "form" and "NoneType" in returned.message
    assert_chinese(returned.message, "form")


def test_the_titles_are_chinese(zh):
    from autograd_lab.i18n import _

    for entry in registered():
        if entry.name in NAMES:
            assert_chinese(_(entry.title), "title")


# ---- the English faces, byte for byte -------------------------------------------------------------

ENGLISH = {
    ("vjp_weights", None): "J = diag(2 x) = diag([2., 4., 6.]), so v @ J = v * 2x = "
                           "[2., 0., 12.].\nbackward(v) never builds J: PowBackward0 multiplies "
                           "what arrives (v) by 2x.",
    ("jacobian_shape", None): "J has shape (3, 3) (3 elements of y by 3 of x); it is diagonal because x**3 acts "
                              "element by element, and its diagonal is 3 x**2 = [0., 3., 12.].",
    ("hook_doubles", 1): "y.sum() sends ones to y; the hook makes them twos; MulBackward0 multiplies by 5: "
                         "x.grad = [10., 10., 10.] (without the hook [5., 5., 5.]).",
    ("retain_grad_and_hook", None): "dz/dh = 2h = [4., 8., 12.]; the hook adds 1; h.grad keeps the "
                                    "result, [5., 9., 13.] (retain_grad stores it after the other "
                                    "hooks, even though it was called first). x.grad = 2 * h.grad = "
                                    "[10., 18., 26.].",
    ("carried_history", 1): "avg carries history: it is computed from its previous value and from a tensor with a "
                            "graph, so its graph holds every step so far (5, 10, 15 nodes after 1, 2, 3 steps: walk "
                            "it with autograd_lab.graph.walk, or see %%backward_profile's table). Fixes that cut it: "
                            "a, d. detach() and no_grad keep the value and drop the history; clone() stays in the "
                            "graph, and retain_graph=True cuts nothing.",
    ("target_without_graph", None): "Works: no_grad: yes, inference_mode: no, detach: yes.\nno_grad and detach() "
                                    "give normal tensors without a graph. inference_mode gives inference tensors, "
                                    "faster to make but barred from autograd later: a node may not save one. Use "
                                    "inference_mode only for values that never meet autograd again.",
}


@pytest.mark.parametrize(("name", "seed"), list(ENGLISH))
def test_english_solutions_are_unchanged(name, seed):
    assert exercise(name, seed=seed).solution_text == ENGLISH[name, seed]


def test_english_statements_are_unchanged():
    assert faces.exercise_text(exercise("carried_history", seed=1)) == (
        "Exercise carried_history (seed 1): Which variable carries history across training steps\n\n"
        "A training loop that also keeps a log of the loss and a running mean of the activations.\n\n"
        "    torch.manual_seed(1)\n    w = torch.randn(3, requires_grad=True)\n"
        "    opt = torch.optim.SGD([w], lr=0.1)\n    total, avg = torch.zeros(()), torch.zeros(3)\n"
        "    for x in torch.randn(6, 3):\n        opt.zero_grad()\n        out = torch.tanh(x * w)\n"
        "        loss = out.pow(2).mean()\n        loss.backward()\n        opt.step()\n"
        "        total = total + loss.item()       # for the log\n"
        "        avg = 0.9 * avg + 0.1 * out        # a running mean of the activations\n\n"
        "Which of w, out, loss, total, avg carries the graph of earlier steps into the next one? And which of "
        "these changes (each alone) stop it?\n  (a) avg = 0.9 * avg + 0.1 * out.detach()\n"
        "  (b) avg = 0.9 * avg + 0.1 * out.clone()\n  (c) loss.backward(retain_graph=True)\n"
        "  (d) with torch.no_grad(): avg = 0.9 * avg + 0.1 * out\n"
        "Answer with a pair: the set of variable names, then the set of letters among a, b, c, d.\n"
        'Check with ex.check(({"..."}, {"..."})), after ex = autograd_lab.exercise("carried_history", seed=1)\n'
        "Help: .hint() gives the next of 2 hints, .solution() the worked solution.")
    assert faces.exercise_text(exercise("backward_mul")) == (
        "Exercise backward_mul: Write the backward of x * y\n\n"
        "out = x * y, element by element, x and y of the same shape. The backward returns one gradient per "
        "input.\n\n    def mul_backward(grad_output, x, y):\n"
        "        # out = x * y; return (gradient for x, gradient for y)\n        return ____\n\n"
        "Write the backward of x * y. Write it as a function, or as a torch.autograd.Function subclass "
        "(forward(ctx, x, y) computing x * y, backward(ctx, grad_output)): ex.check(YourFunction).\n"
        "Answer with your function mul_backward(grad_output, x, y) (out = x * y; return (gradient for x, "
        "gradient for y)), or a torch.autograd.Function subclass.\n"
        'Check with ex.check(mul_backward), after ex = autograd_lab.exercise("backward_mul")\n'
        "Help: .hint() gives the next of 3 hints, .solution() the worked solution.")
    setup = exercise("fix_training_step").setup
    assert "h = torch.tanh(x * w + h)            # the state carried to the next step\n" in setup
    assert ("loss.backward(retain_graph=True)     # added after 'Trying to backward through the graph a "
            "second time'\n") in setup


def test_english_descriptions_of_a_step_are_unchanged():
    describe = [history.Training(e, g, False, t, s).describe()
                for e, g, t, s in [("", False, True, ()), ("", True, False, ()), ("", False, False, (4, 7, 10)),
                                   ("freed", False, False, ()), ("no_grad", False, False, ()),
                                   ("error", False, False, ())]]
    assert describe == ["the state's graph keeps one size from step to step; w ends where the training takes it",
                        "the state's graph grows with every step; w does not end where the training takes it",
                        "the state's graph has 4, 7, 10 nodes after each step; w does not end where the training "
                        "takes it",
                        "a step fails (freed)", "a step fails (no grad)", "a step fails (error)"]
    ex = exercise("fix_training_step")
    assert ex.check(lambda w, opt, x, h: None).message == ("Incorrect. Your step returned NoneType; return the "
                                                           "state h for the next step.")
    assert ex.check(fails).message == "Incorrect. What your code does: a step fails (error)."
