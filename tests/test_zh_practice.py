"""The practice room's machinery in Chinese: verdicts, the shared diagnoses, every answer form's
errors and explanations, hints, solutions and confirmations, the statement (text, HTML, widget), the
exercise list, the progress table and the usage errors speak Chinese with no English sentence left.
The sentences a topic passes in belong to the topics' catalogs: here they are given in Chinese (a
made-up exercise) or left out of the check. And the English faces stay as they were."""
import numpy as np
import pytest
import torch
from helpers import CHINESE, Unsummed
from helpers import assert_chinese as chinese

import autograd_lab
from autograd_lab.errors import LabInputError
from autograd_lab.i18n import N_, _
from autograd_lab.practice import faces, messages, progress
from autograd_lab.practice.backward_check import Op, random_cases
from autograd_lab.practice.backward_exercise import backward_exercise
from autograd_lab.practice.bank import exercise, exercises
from autograd_lab.practice.checking import ____, Result, WrongForm, status_label
from autograd_lab.practice.choices import ChoiceForm, FlagsForm, NamesForm
from autograd_lab.practice.code_task import CodeExercise, CodeForm, call
from autograd_lab.practice.exercise import Diagnoser, Exercise
from autograd_lab.practice.forms import FunctionForm, PartsForm, TensorForm
from autograd_lab.practice.report import report
from autograd_lab.practice.sequences import OrderForm, RowsForm
from autograd_lab.practice.view import exercise_view

pytestmark = pytest.mark.usefixtures("fresh_progress")

# Python's own messages, quoted as they are
PYTHON = ("name 'nope' is not defined", "list index out of range", "division by zero", "invalid syntax (<string>")
X = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double)
EXPECTED = 2 * X / 3


def assert_chinese(text: str, allowed: tuple[str, ...] = ()):
    chinese(text, PYTHON + allowed)


def made_up(seed=None, **changes) -> Exercise:
    """An exercise like mean_square, its own sentences (the topics' part) already in Chinese."""
    fields = dict(intro="z 是 x 的平方的均值。", setup="x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
                  "z = (x**2).mean()\nz.backward()", question="请手算 x.grad。", answer_form="3 个数字组成的列表",
                  form=TensorForm(), expected=EXPECTED, hints=["先把 z 写出来。", "用幂法则。"],
                  solution_text="x.grad = 2 x / 3", praise="自动求导的结果与手算一致。", seed=seed,
                  diagnosers=[Diagnoser(messages.SHARED["missing_mean"], 2 * X, key="missing_mean"),
                              Diagnoser(messages.SHARED["y_value"], X**2, key="y_value")],
                  name="made_up", title="均值的梯度")
    fields.update(changes)
    return Exercise(**fields)


# ---- verdicts ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "status"), [
    (____, "not attempted"), (EXPECTED, "not attempted"), (torch.tensor([0.6667, 1.3333, 2.0]), "correct"),
    ([0.6667, 1.3333, 2.0], "correct"), ([0.67, 1.33, 2.0], "close"), ([0.666, 1.333, 2.0], "close"),
    ([2.0, 4.0, 6.0], "incorrect"), ([1.0, 4.0, 9.0], "incorrect"), ([-0.6667, -1.3333, -2.0], "incorrect"),
    (2.0, "incorrect"), ([1.0, 2.0], "incorrect"), ([0.6, 1.3, 2.0], "incorrect"), ([1.0, 1.0, 5.0], "incorrect"),
    ([4 / 3, 8 / 3, 4.0], "incorrect"), (None, "incorrect"), (True, "incorrect"), (lambda x: x, "incorrect"),
    ("nope", "incorrect"), ({"a": 1}, "incorrect"), ([float("nan")] * 3, "incorrect"),
    ([float("inf")] * 3, "incorrect"),
    (torch.tensor([1, 2, 3]), "incorrect"), (np.array(["a"]), "incorrect"),
])
def test_verdicts_speak_chinese(zh, answer, status):
    ex = made_up(predicts=not isinstance(answer, torch.Tensor) or answer.is_floating_point())
    result = ex.check(answer)
    assert result.status == status  # the status is a value the code compares: it stays English
    assert_chinese(result.message)
    assert_chinese(faces.result_html(result))
    assert f'data-status="{status}"' in faces.result_html(result)


def test_the_verdicts_name_the_mistake(zh):
    ex = made_up()
    assert ex.check([2.0, 4.0, 6.0]).message.startswith("不正确。这是求和的梯度")
    assert ex.check([0.6667, 1.3333, 2.0]).message == "正确！自动求导的结果与手算一致。"
    wrong = ex.check([1.0, 1.0, 5.0]).message
    assert wrong.startswith("不正确：这不是所求的梯度。应当给出：3 个数字组成的列表。") and ".hint()" in wrong
    for _hint in ex.hints:
        ex.hint()
    assert ".solution()" in ex.check([1.0, 1.0, 5.0]).message


def test_grading_mode_raises_the_chinese_verdict(zh):
    progress.grading(True)
    with pytest.raises(AssertionError) as err:
        made_up().check([2.0, 4.0, 6.0])
    assert_chinese(str(err.value))


def test_shared_messages_translate_where_they_are_shown(zh):
    """A topic may pass a shared message as it is: the check translates it; ambiguous() and
    for_part() compose whole sentences."""
    assert messages.SHARED  # each one is tested below, however many the file holds
    for name in messages.SHARED:
        english = messages.SHARED[name]
        assert not CHINESE.search(english)  # the file holds the English; SHARED(name) translates it
        ex = made_up(diagnosers=[Diagnoser(english, 2 * X)])
        assert_chinese(ex.check([2.0, 4.0, 6.0]).message)
    both = messages.ambiguous([messages.SHARED["missing_mean"], messages.SHARED["doubled"]])
    assert_chinese(both)
    assert both.count("或者：") == 1
    assert_chinese(messages.for_part("x.grad", messages.SHARED["no_factor"]))


def test_coincident_mistakes_are_named_together_in_chinese(zh):
    """Two mistakes that give the same numbers on these inputs only (not on their variants)."""
    other = torch.tensor([1.0, 2.0], dtype=torch.double)
    ex = made_up(diagnosers=[Diagnoser(messages.SHARED["missing_mean"], 2 * X, variant=other),
                             Diagnoser(messages.SHARED["doubled"], 2 * X, variant=2 * other)])
    message = ex.check([2.0, 4.0, 6.0]).message
    assert_chinese(message)
    assert "或者：" in message and "求和的梯度" in message and ".grad 会累加" in message


# ---- notes, the statement, the widget ----------------------------------------------------------------------


def test_hints_solution_and_confirm(zh):
    ex = made_up()
    assert repr(ex.hint()).startswith("提示 1（共 2 条）\n先把 z 写出来。")
    assert repr(ex.solution()).startswith("解答\n")
    assert_chinese(repr(ex.confirm()))
    ex.check([2.0, 4.0, 6.0])
    confirmed = repr(ex.confirm())
    assert_chinese(confirmed)
    assert "（不正确）" in confirmed and "autograd：" in confirmed
    assert_chinese(faces.note_html(ex.hint(2)))
    for bad in (0, 3, "1", True):
        with pytest.raises(LabInputError) as err:
            ex.hint(bad)
        assert_chinese(str(err.value))


@pytest.mark.parametrize("seed", [None, 4])
def test_statement_text_and_html(zh, seed):
    ex = made_up(seed)
    text, html = faces.exercise_text(ex), faces.statement_html(ex)
    first = "练习 made_up：均值的梯度" if seed is None else "练习 made_up（seed 4）：均值的梯度"
    assert text.splitlines()[0] == first
    assert "作答方式：3 个数字组成的列表。" in text and "帮助：.hint() 给出下一条提示（共 2 条）" in text
    assert_chinese(text.replace(ex.setup, ""))
    assert "<code>.hint()</code>" in html and "<code>made_up</code>" in html
    assert_chinese(html.replace(ex.setup, ""))


def test_the_widget_speaks_chinese(zh):
    ns = {"torch": torch}
    view = exercise_view(made_up(), names=ns)
    view.widget  # noqa: B018 -- builds the controls
    box = view.parts["agl-answer"]
    assert [view.parts[f"agl-{k}"].description for k in ("check", "hint", "solution")] == ["检查", "提示", "解答"]
    assert box.description == "答案：" and box.placeholder.startswith("你的答案，例如 ")
    for typed in ("", "nope", "[2.0, 4.0, 6.0]", "[0.6667, 1.3333, 2.0]", "x.grad", "[v for v in x]", "1e400",
                  "tensor([1., 2., 3.], requires_grad=True)", "2 * ((", "q" * 20_000):
        box.value = typed
        view.parts["agl-check"].click()
        assert_chinese(view.feedback_text)
        assert_chinese(view.parts["agl-feedback"].value)
    for button in ("agl-hint", "agl-solution"):
        view.parts[button].click()
        assert CHINESE.search(view.parts["agl-feedback"].value)
    assert_chinese(repr(view.widget).replace(view.model.setup, ""))


def test_the_magic_shows_the_statement_in_chinese(zh, ip, capsys):
    ip.run_line_magic("exercise", "mean_square_random --seed 4")
    assert capsys.readouterr().out.startswith("练习 mean_square_random（seed 4）：")


# ---- the list, the progress table, usage errors --------------------------------------------------------


def test_exercise_list_shows_each_title_in_the_labs_language(zh):
    entries = exercises()
    lines = faces.catalog_text(entries).splitlines()
    assert [line.split()[0] for line in lines] == entries.names()
    assert [line.split("  ", 1)[1].strip() for line in lines] == [_(e.title) for e in entries]
    assert autograd_lab.exercises().text() == faces.catalog_text(entries)


def test_progress_table(zh):
    made = exercise("mean_square")
    made.check(____)
    made.check([2.0, 4.0, 6.0])
    made.solution()
    exercise("sum_square").check([2.0, 4.0, 6.0])
    text = autograd_lab.progress().text()
    lines = text.splitlines()
    assert lines[0] == f"进度：{len(exercises())} 道练习中已通过 1 道，已作答 2 道"
    assert lines[1].split() == ["练习", "状态", "作答次数", "提示", "解答", "遇到的错误"]
    assert "已看" in text and "已通过" in text and "未作答" in text
    assert_chinese(text)
    assert_chinese(autograd_lab.progress().html())
    assert autograd_lab.progress().status("sum_square") == "passed"  # data stays English
    assert report().to_dict()["mean_square"]["attempted"] is True


@pytest.mark.parametrize("call_it", [
    lambda: exercise("nope"), lambda: exercise("mean_square", seed="7"), lambda: exercise("mean_square", seed=2**40),
    lambda: autograd_lab.exercise("mean_square", seed=True), lambda: progress.grading("yes"),
])
def test_usage_errors(zh, call_it):
    with pytest.raises(LabInputError) as err:
        call_it()
    assert_chinese(str(err.value))


# ---- every answer form ---------------------------------------------------------------------------------------

FORMS = {
    "choice": ChoiceForm({"a": "the graph is freed", "b": "nothing happens"}),
    "names": NamesForm(["a", "b", "g"]),
    "flags": FlagsForm(["clone", "detach"]),
    "order": OrderForm(["AddBackward0", "MulBackward0", "AccumulateGrad"], {"AccumulateGrad": ["x"]}),
    "rows": RowsForm(["detach()", "view()"]),
    "parts": PartsForm([("w.grad", TensorForm("w.grad", "w")), ("x.grad", TensorForm("x.grad", "x"))]),
    "function": FunctionForm(torch.stack([X]), "dz/dx"),
    "code": CodeForm(lambda fn: call(fn, 1), "ex.check(step)", "step(x)"),
}
UNREADABLE = [
    ("choice", 3), ("choice", "z"), ("names", 3), ("names", [1]), ("names", "a, q"),
    ("flags", "maybe, no"), ("flags", {"clone": True}), ("flags", [True]),
    ("order", 3), ("order", [1]), ("order", "AddBackward0, Sin"),
    ("rows", "detach(): yes, error"), ("rows", {"detach()": ("yes", "ok"), "zz": ("no", "ok")}),
    ("rows", [("yes", "ok"), ("maybe", "ok")]), ("rows", [("yes", "ok"), ("yes", "sometimes")]), ("rows", [1, 2]),
    ("parts", {"w": [1, 2, 3]}), ("parts", [1, 2, 3]), ("parts", ([1, 2, 3], "nope")),
    ("function", 3), ("function", "lambda x: x +"), ("function", "x + y"), ("function", "x = 1"), ("function", "+/"),
    ("function", "1/(x-x)"), ("function", "sqrt(-1 - x**2)"), ("function", lambda x: None),
    ("function", lambda x: 1 / 0), ("function", "lambda x: x.grad"),
    ("code", 3), ("code", lambda x: [][1]),
]


@pytest.mark.parametrize(("form", "answer"), UNREADABLE)
def test_answers_of_the_wrong_form_are_explained_in_chinese(zh, form, answer):
    with pytest.raises(WrongForm) as err:
        FORMS[form].read(answer)
    assert_chinese(str(err.value))


@pytest.mark.parametrize(("form", "value", "expected"), [
    ("names", frozenset(), frozenset({"a"})), ("names", frozenset({"a"}), frozenset({"a", "b"})),
    ("names", frozenset({"a", "b"}), frozenset({"a"})), ("names", frozenset({"a"}), frozenset({"b"})),
    ("order", ("MulBackward0", "MulBackward0"), ("AddBackward0", "MulBackward0")),
    ("order", ("AddBackward0",), ("AddBackward0", "MulBackward0")),
    ("order", ("MulBackward0", "AddBackward0"), ("AddBackward0", "MulBackward0")),
    ("rows", ((True, "ok"), (False, "ok")), ((True, "ok"), (True, "error"))),
])
def test_what_is_wrong_is_said_in_chinese(zh, form, value, expected):
    assert_chinese(FORMS[form].explain(value, expected))


@pytest.mark.parametrize("value", [torch.tensor([2.0]), torch.tensor([1.0, 2.0]), -EXPECTED, EXPECTED + 0.003,
                                   EXPECTED * 5])
def test_numbers_explained(zh, value):
    assert_chinese(TensorForm().explain(value, EXPECTED))
    parts = FORMS["parts"]
    assert_chinese(parts.explain((EXPECTED, value), (EXPECTED, EXPECTED)))


def test_formulas_explained(zh):
    form = FunctionForm(torch.stack([X]), "dz/dx")
    assert_chinese(form.explain(torch.zeros(1, 2), torch.stack([EXPECTED])))
    assert_chinese(form.explain(form.read("0.667 * x"), torch.stack([EXPECTED])))
    ex = made_up(form=form, expected=torch.stack([EXPECTED]), diagnosers=[])
    assert_chinese(ex.check("2*x/3").message)
    ex.check(lambda x: x)
    assert "一个关于 x 的函数" in repr(ex.confirm())
    for text in ("2*y/3", "x.numel()", "2*x/3 +", "lambda x: x", "9**9**9**9", "sqrt(-x*x-1)", "1/(x-x)", "2*x//3",
                 "exp x", "1e999", "(x", "2 3", "x;", "", "'x'", "torch.exp(x)", "len(x+1)", "(" * 50 + "x" + ")" * 50,
                 "x" * 2000, "x ** y"):
        assert_chinese(ex.check(text).message, (text,) if text.isalpha() else ())


# ---- backward and code tasks ---------------------------------------------------------------------------------

OP = Op("x * y", lambda x, y: x * y, ("x", "y"), lambda inputs, out: inputs)


def backward_task():
    cases = random_cases([((3,), (3,)), ((2, 3), (3,)), ((2, 2), (2, 2))])
    return backward_exercise(OP, cases, [], example="ex.check(backward)", intro="写出 x * y 的 backward。",
                             setup="", question="", answer_form="你的函数 backward(grad_output, x, y)",
                             hints=["乘法法则。"], solution_text="(g * y, g * x)", name="made_up_backward")


@pytest.mark.parametrize("answer", [
    lambda g, x, y: (g * y, g * x), lambda g, x, y: (-g * y, -g * x), lambda g, x, y: (y, x),
    lambda g, x, y: (g * y, (g * x).sum(0) if g.dim() > 1 else g * x), lambda g, x, y: (g * y * 2, g * x),
    lambda g, x, y: (g * y, (g * x).reshape(-1)), lambda g, x, y: (g * y,), lambda g, x, y: g,
    lambda g, x, y: 1 / 0, lambda g, x, y: (____, ____), lambda g, x, y: (g * y, 3), 5, [1.0, 2.0],
])
def test_backward_verdicts(zh, answer):
    result = backward_task().check(answer)
    assert_chinese(result.message)


def test_backward_with_a_function_class(zh):
    assert_chinese(backward_task().check(Unsummed).message)  # x + y, not x * y


def test_code_tasks(zh):
    class Did:
        def __init__(self, value):
            self.value = value

        def __eq__(self, other):
            return self.value == other.value

        def describe(self):
            return f"返回 {self.value}"

    form = CodeForm(lambda fn: Did(call(fn, 2)), "ex.check(step)", "step(x)")
    ex = CodeExercise(intro="", setup="", question="", answer_form="你的函数 step(x)", form=form, expected=Did(4),
                      hints=["乘以 2。"], solution_text="", name="made_up_code")
    assert_chinese(repr(ex.confirm()))
    for answer in (lambda x: ____, lambda x: x, lambda x: {}[x], lambda x: 2 * x, 3):
        assert_chinese(ex.check(answer).message)
        assert_chinese(repr(ex.confirm()))
    with pytest.raises(WrongForm) as err:
        call(lambda: [][1], what=N_("Your function"))
    assert str(err.value).startswith("你的函数抛出了 IndexError：")


# ---- English stays as it was ---------------------------------------------------------------------------------


def test_english_faces_are_unchanged():
    ex = made_up(4, intro="Intro.", question="Q?", answer_form="3 numbers", hints=["h1", "h2"], title="T",
                 praise="")
    assert faces.exercise_text(ex).splitlines()[0] == "Exercise made_up (seed 4): T"
    assert faces.exercise_text(ex).splitlines()[-3:] == [
        "Answer with 3 numbers.", 'Check with ex.check([...]), after ex = autograd_lab.exercise("made_up", seed=4)',
        "Help: .hint() gives the next of 2 hints, .solution() the worked solution."]
    html = faces.statement_html(ex)
    assert "<h4>Exercise <code>made_up</code> (seed 4): T</h4>" in html
    assert ("<p>Answer with 3 numbers.<br>Check with <code>ex.check([...])</code>, after "
            "<code>ex = autograd_lab.exercise(&quot;made_up&quot;, seed=4)</code></p><p><small>Help: "
            "<code>.hint()</code> gives the next of 2 hints, <code>.solution()</code> the worked solution."
            "</small></p>") in html
    assert ex.check([0.6667, 1.3333, 2.0]).message == "Correct!"
    assert ex.check([1.0, 1.0, 5.0]).message == ("Incorrect: this is not the gradient. Expected 3 numbers. "
                                                 "For hint 1 of 2, call .hint().")
    assert repr(ex.confirm()) == ("Confirmed with autograd\nYour last answer: [1.0, 1.0, 5.0] (incorrect)\n"
                                  "autograd: [0.6667, 1.3333, 2.0000]")
    assert '<span class="agl-status" style="color:#b3261e;font-weight:bold">incorrect</span>' in faces.result_html(
        Result("made_up", "incorrect", "Incorrect."))
    assert status_label("not attempted") == "not attempted"
    both = messages.ambiguous(["A.", "B.", "C."])
    assert both == ("These numbers fit more than one mistake for this x (with other inputs they differ): A. Or: B. "
                    "Or: C. Work it out as a formula in x and n to tell which.")


def test_english_backward_sentences_are_unchanged():
    case = random_cases([((2, 3), (3,))])[0]
    assert case.describe(("x", "y")) == "x of shape (2, 3), y of shape (3,), grad_output of shape (2, 3)"
    cases = random_cases([((3,), (3,)), ((2, 2), (2, 2))])
    ex = backward_exercise(OP, cases, [], example="ex.check(backward)", intro="", setup="", question="",
                           answer_form="", hints=["h"], solution_text="")
    assert ex.praise == ("Your backward agrees with the engine (torch.autograd.grad) and with finite differences "
                         "(torch.autograd.gradcheck) on 2 random inputs of shapes (3,) and (3,); (2, 2) and (2, 2).")
    assert ex.check(lambda g, x, y: (-g * y, -g * x)).message.startswith(
        "Incorrect. The sign of your gradient for x and y is flipped")


def test_english_widget_and_progress_are_unchanged():
    view = exercise_view(made_up())
    view.widget  # noqa: B018 -- builds the controls
    assert view.parts["agl-answer"].placeholder == "your answer, e.g. [...]"
    assert view.parts["agl-answer"].description == "Answer:"
    assert view.check_typed("nope")[0] == ("nope is a name, and this box reads what you type as text: it runs "
                                           "nothing and looks up no variable. Type the numbers you expect, e.g. "
                                           "[0.5, 1.0], or pass nope in a cell: ex.check(nope).")
    exercise("mean_square").solution()
    lines = faces.progress_text(report()).splitlines()
    assert lines[0] == f"Progress: 0 of {len(exercises())} passed, 0 attempted"
    assert lines[3].split() == ["mean_square", "not", "attempted", "0", "0", "seen", "-"]


def test_the_exported_progress_titles_speak_the_lab_language(zh):
    """to_dict() keeps its keys and ids, and words each title as the tables do."""
    record = autograd_lab.progress().to_dict()["mean_square"]
    chinese(record["title"])
    zh.language("en")
    assert autograd_lab.progress().to_dict()["mean_square"]["title"] == "The gradient of a mean of squares"


def test_the_chinese_course_may_answer_in_chinese_words():
    """是/否 and the storage table's outcome words (正常, 报错, 静默出错, 被拒绝) read as their English twins."""
    from autograd_lab.practice.choices import _truth
    from autograd_lab.practice.sequences import _outcome

    assert [_truth(w) for w in ("是", "否", "yes", "no")] == [True, False, True, False]
    assert [_outcome(w) for w in ("正常", "报错", "静默出错", "被拒绝")] == ["ok", "error", "silently wrong", "refused"]
    with pytest.raises(Exception, match="silently wrong"):
        _outcome("也许")
