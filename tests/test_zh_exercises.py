"""The exercises of lessons 00-05 (topics powers, calls, flow, engine, stops, storage_rows,
detach_code, and the shared builders of common) in Chinese: every exercise, with no seed and with a
seed, has its title, statement (text and HTML, the comments of its setup code included), hints,
solution, every diagnosis, and the verdicts on the right answer and on each known mistake in Chinese
with no English sentence left; and the English texts that used to be cut from shared messages stay
byte for byte what they were."""
import itertools
import re

import pytest
import torch
from helpers import (OPTION, answer_of, chinese_statement, chinese_verdicts, comments, diagnosed_answers, hint_notes)
from helpers import assert_chinese as chinese
from helpers import exercises_in_catalog

from autograd_lab.i18n import _
from autograd_lab.practice import faces, messages
from autograd_lab.practice.bank import exercise
from autograd_lab.practice.choices import ChoiceForm, FlagsForm, NamesForm
from autograd_lab.practice.forms import FunctionForm, PartsForm
from autograd_lab.practice.registry import registered
from autograd_lab.practice.sequences import OrderForm, RowsForm
from autograd_lab.practice.topics import common, detach_code, engine
from autograd_lab.text import esc

pytestmark = pytest.mark.usefixtures("fresh_progress")

NAMES = exercises_in_catalog("exercises")
SEEDS = [None, 3]
# PyTorch's own words, quoted as they are
PYTORCH = ("element 0 of tensors does not require grad and does not have a grad_fn", "modified by an inplace operation")
# the outcomes of an in-place edit are answer values the learner types (ok, error, silently wrong, refused)
OUTCOMES = ("silently wrong",)


def assert_chinese(text: str, what: str, allowed: tuple[str, ...] = ()):
    chinese(text, PYTORCH + OUTCOMES + allowed, what)


def code_only(text: str) -> bool:
    """A hint that is a line of code alone (it has no words to translate)."""
    return bool(re.fullmatch(r"[\w.]+ = [\w.()*+\-/ ]+", text))


def op_of(ex):
    """The torch op of a straight-through exercise (round, floor or sign), read off its setup."""
    return detach_code.OPS[re.search(r"torch\.(\w+)\(x\)", ex.setup).group(1)]


def right_answer(ex):
    if isinstance(ex.form, FunctionForm):
        return "2*x/n"
    if ex.name == "straight_through":
        op = op_of(ex)
        return lambda x: x + (op(x) - x).detach()
    if isinstance(ex.form, OrderForm):
        return list(ex.expected)
    return answer_of(ex.expected)


# the formulas of the symbolic exercise's mistakes, as a learner would type them
FORMULAS = ["2*x", "x/3", "x**2", "x", "2*x/(n-1)", "1/n", "2/n", "4*x/3"]


def subsets(names):
    return [set(c) for r in range(len(names) + 1) for c in itertools.combinations(names, r)]


def known_mistakes(ex) -> list:
    """Answers that make each known mistake of the exercise: the diagnosers' own values where they
    have one (the whole answer, or one part of it with the other parts right), else every answer of
    the form where there are few, else written here."""
    if isinstance(ex.form, FunctionForm):
        return FORMULAS
    return diagnosed_answers(ex) + other_answers(ex)


def reachable(ex) -> set[str]:
    """The keys of the diagnosers an answer can reach: not one whose own value an earlier diagnoser
    already takes (for a sum of squares, x itself is also the gradient without the power rule's factor)."""
    keys = set()
    for i, d in enumerate(ex.diagnosers):
        if d.when is None and d.part is None and not isinstance(ex.form, FunctionForm):
            value = ex.form.read(answer_of(d.value))
            if any(e.matches(ex.form, value) for e in ex.diagnosers[:i]):
                continue
        keys.add(d.key)
    return keys


def other_answers(ex) -> list:
    """Wrong answers for the mistakes told by a test on the answer (when=): every answer of the form
    where there are few, one change at a time to the rows, and the code of each mistake."""
    form, answers = ex.form, []
    if isinstance(form, ChoiceForm):
        answers += [letter for letter in form.options if letter != ex.expected]
    elif isinstance(form, NamesForm):
        answers += subsets(form.candidates)
    elif isinstance(form, FlagsForm):
        answers += list(itertools.product((True, False), repeat=len(form.keys)))
    elif isinstance(form, PartsForm) and all(isinstance(f, NamesForm) for _, f in form.parts):
        names = form.parts[0][1].candidates
        answers += list(itertools.product(subsets(names), repeat=len(form.parts)))
    elif isinstance(form, OrderForm):
        answers += [list(p) for p in itertools.permutations(ex.expected)]
    elif isinstance(form, RowsForm):
        right = list(ex.expected)
        for i, (shares, outcome) in enumerate(right):
            for other in ((not shares, outcome), *((shares, o) for o in ("ok", "error", "silently wrong", "refused")
                                                   if o != outcome)):
                answers.append(tuple(other if j == i else row for j, row in enumerate(right)))
    elif ex.name == "straight_through":
        op = op_of(ex)
        answers += [lambda x: op(x), lambda x: op(x).detach(), lambda x: x * 1.0,
                    lambda x: op(x.detach()) + torch.zeros(x.shape, dtype=x.dtype, requires_grad=True)]
    return answers


def test_every_exercise_of_the_room_is_here():
    """The exercises' two catalogs share the bank between them: each exercise is tested in one."""
    other = exercises_in_catalog("exercises_advanced")
    assert NAMES and not set(NAMES) & set(other)
    assert sorted(NAMES + other) == sorted(e.name for e in registered())


def test_the_titles_are_chinese(zh):
    for entry in registered():
        if entry.name in NAMES:
            assert_chinese(_(entry.title), "title")
            assert_chinese(repr(entry), "entry")


@pytest.mark.parametrize("seed", SEEDS, ids=["no seed", "seed 3"])
@pytest.mark.parametrize("name", NAMES)
def test_the_statement_hints_and_solution_are_chinese(zh, name, seed):
    ex = exercise(name, seed=seed)
    text, block = chinese_statement(ex, assert_chinese)
    assert_chinese(_(ex.title), "title")
    if comments(ex.setup):
        assert_chinese(comments(ex.setup), "setup comments")
    for option in OPTION.findall(text):
        assert_chinese(option, "option")
    for field in (ex.intro, ex.question, ex.answer_form, ex.praise, ex.kind):
        assert_chinese(field, "statement field")
    for hint, note in hint_notes(ex):
        if not code_only(hint):
            assert_chinese(hint, "hint")
        assert_chinese(repr(note), "hint note", allowed=(hint,) if code_only(hint) else ())
        assert_chinese(faces.note_html(note), "hint html", allowed=(esc(hint),) if code_only(hint) else ())
    solution = ex.solution()
    assert_chinese(solution.text.replace(block, "").replace(ex.setup, ""), "solution")
    assert_chinese(faces.note_html(solution), "solution html", allowed=(esc(ex.setup),))


@pytest.mark.parametrize("seed", SEEDS, ids=["no seed", "seed 3"])
@pytest.mark.parametrize("name", NAMES)
def test_every_diagnosis_and_verdict_is_chinese(zh, name, seed):
    ex = exercise(name, seed=seed)
    right, reached = chinese_verdicts(ex, right_answer(ex), known_mistakes(ex), assert_chinese, skip_right=True)
    assert_chinese(faces.result_html(right), "verdict html")
    assert reachable(ex) <= reached, (name, reachable(ex) - reached)
    assert_chinese(ex.confirm().text, "confirm")


def test_what_the_straight_through_check_saw_is_chinese(zh):
    for values, grad in itertools.product((True, False), ("right", "zeros", "none", "no_graph", "other")):
        assert_chinese(detach_code.Behaviour(values, grad).describe(), "behaviour")
    ex = exercise("straight_through")
    for wrong, words in ((lambda x: 3, "int"), (lambda x: torch.ones(2).sum().backward(), "RuntimeError")):
        result = ex.check(wrong)
        assert result.status == "incorrect" and words in result.message
        assert_chinese(result.message, "form")
    explained = ex.check(lambda x: x.sin())
    assert explained.diagnosis == "explained"
    assert_chinese(explained.message, "explained")


def test_the_shared_builders_speak_chinese(zh):
    pair = common.tensor_pair(("g", "x", torch.tensor([1.0])), ("x.grad", "x", torch.tensor([2.0])), [],
                              intro="", setup="", question="", hints=[], solution_text="")
    assert_chinese(pair.answer_form, "pair form")
    assert_chinese(pair.check(([2.0], [1.0])).message, "swapped")
    grad = common.x_grad(torch.tensor([2.0]), intro="", setup="", hints=[], solution_text="")
    assert_chinese(grad.question + grad.answer_form + grad.kind, "x_grad")
    for n in (2, 3, 4, 5):
        cases = {f"c{i}": str(i % 2) for i in range(n)}
        flags = common.flags(cases, lambda code: code == "1", "c0", ("甲。", "乙。"), ("代码", "说明。"),
                             intro="", setup="", question="", hints=[])
        assert_chinese(flags.answer_form + flags.kind, "flags")
        assert flags.solution_text.startswith("代码：c0：否，c1：是")
        assert flags.solution_text.endswith("。\n说明。")
    merged = engine._distinct([("a", "甲。", (1,)), ("b", "乙。", (1,))], (0,))
    assert [d.key for d in merged] == ["a+b"]
    assert merged[0].message == "对这个计算图而言，这个顺序符合不止一种错误：甲。或者：乙。"


# ---- the English texts, byte for byte ------------------------------------------------------------

def test_sentences_once_cut_from_shared_messages_are_the_same_english():
    weighted = {d.key: d.message for d in exercise("weighted_mean_square").diagnosers}
    nonscalar = exercise("nonscalar_backward").diagnosers
    accumulate = exercise("accumulate").diagnosers
    english = {
        "For x.grad " + messages.SHARED["no_factor"][0].lower() + messages.SHARED["no_factor"][1:],
        messages.SHARED["y_value"].replace("dz/dx_i: how fast z", "dy_i/dx_i: how fast y_i"),
        messages.SHARED["doubled"].split(":")[0] + " of both calls together: each call adds the gradient once.",
    }
    assert english <= set(weighted.values()) | {d.message for d in nonscalar + accumulate}
    assert messages.for_part("x.grad", messages.SHARED["no_factor"]) in weighted.values()


def test_english_statements_and_solutions_are_unchanged():
    ex = exercise("storage_rows")
    assert ex.setup == (
        "a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\ny = a * a            # y saves a for backward\n"
        "b = a.detach()       # the copy; the same with a.data, a.clone(), a.view(-1), a.detach().numpy()\n"
        "b.mul_(2)            # edit the copy in place (on the numpy array: b *= 2)\n"
        "y.sum().backward()   # what happens now?")
    assert ex.solution_text.splitlines()[1:3] == ["  a.detach(): shares memory yes, error",
                                                  "  a.data: shares memory yes, silently wrong"]
    assert exercise("inputs_get_grad").solution_text.splitlines()[:2] == [
        "Receive a gradient: p, r.",
        "p: exp() is an ordinary differentiable op: the gradient flows back through it to p."]
    assert exercise("gan_detach").setup.splitlines()[1:3] == ["G = torch.nn.Linear(2, 2)          # generator",
                                                              "D = torch.nn.Linear(2, 1)          # discriminator"]
    assert exercise("detach_vs_clone").solution_text.startswith("Through clone(): yes. Through detach(): no.\n")
    assert exercise("where_backprop_stops").setup.splitlines()[3] == (
        "c = torch.tensor(4.0)              # requires_grad is False")
    assert exercise("straight_through").setup == (
        "def straight_through(x):\n    # value: torch.round(x); gradient: that of x itself\n    return ____")
    assert exercise("engine_order").solution_text.startswith(
        "The engine ran: AddBackward0, MulBackward0, CosBackward0, AccumulateGrad(a), TanhBackward0, "
        "AccumulateGrad(b).\n")
    mean_cube = exercise("mean_cube")
    assert mean_cube.intro == "x is a leaf that requires grad; z is the mean of x**3."
    assert mean_cube.hints[1] == ("Only the term x_i**3 contains x_i; the power rule gives its derivative. "
                                  "Then the mean divides everything by n.")
    assert exercise("sum_square").hints[1] == ("Only the term x_i**2 contains x_i; the power rule gives its "
                                               "derivative.")
    assert detach_code.Behaviour(False, "none").describe() == (
        "its values are not the ones asked for, and the gradient that reaches x is None (no path from x)")
    merged = engine._distinct([("a", "A.", (1,)), ("b", "B.", (1,))], (0,))
    assert merged[0].message == "This order fits more than one mistake for this graph: A. Or: B."
    flags = common.flags({"a": "1", "b": "0", "c": "1"}, lambda code: code == "1", "b", ("B.", "A."),
                         ("Code", "Text."), intro="", setup="", question="", hints=[])
    assert (flags.kind, flags.answer_form, flags.solution_text) == (
        "the three yes/no answers", "three yes/no answers in the order (a, b, c)",
        "Code: a: yes, b: no, c: yes.\nText.")
