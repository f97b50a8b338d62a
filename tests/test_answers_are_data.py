"""Answers are data, never code: a formula string is read by the lab's own parser, an answer box
reads text only, every size is bounded before anything is computed, and every message quotes at most
200 characters of what the learner typed. Torch is the oracle for every gradient; each hostile
payload would create a marker file if any of it ran."""
import ast
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.practice import faces, progress
from autograd_lab.practice.bank import exercise
from autograd_lab.practice.checking import WrongForm
from autograd_lab.practice.formula import FUNCTIONS, read_formula
from autograd_lab.practice.typed import read_typed
from autograd_lab.practice.view import exercise_view

from helpers import checked

pytestmark = pytest.mark.usefixtures("fresh_progress")

SHORT = 1_000      # characters of one message about one answer
FACE = 20_000      # characters of any text face of an exercise
PACKAGE = Path(__file__).resolve().parents[1] / "autograd_lab"


def payloads(marker: Path) -> list[str]:
    """Strings that create `marker` if any part of them is run as Python."""
    m = str(marker)
    return [
        f"__import__('os').system('touch {m}')",
        f"lambda x=__import__('os').system('touch {m}'): x",
        f"lambda x: open('{m}', 'w')",
        f"eval(\"open('{m}', 'w')\")",
        f"exec(\"open('{m}', 'w')\")",
        f"open('{m}', 'w')",
        f"().__class__.__bases__[0].__subclasses__() or open('{m}', 'w')",
        "().__class__.__bases__[0].__subclasses__()",
        f"x.__class__.__init__.__globals__['os'].system('touch {m}')",
        f"[open('{m}', 'w') for _ in [1]]",
        f"__import__('pathlib').Path('{m}').touch()",
        f"2*x/3 + __import__('os').system('touch {m}')",
        f"torch.tensor([1.0]) if open('{m}', 'w') else 0",
        f"tensor([open('{m}', 'w')])",
        f"{{'x': open('{m}', 'w')}}",
    ]


def learner(name: str) -> dict:
    ns = {"torch": torch}
    exec(exercise(name).setup, ns)  # the exercise's own setup code, as the learner runs it
    return ns


def oracle_mean_square() -> torch.Tensor:
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double, requires_grad=True)
    (g,) = torch.autograd.grad((x ** 2).mean(), x)
    return g


@pytest.mark.parametrize("name", ["symbolic_mean_square", "mean_square", "where_backprop_stops", "jacobian_shape",
                                  "detach_vs_clone", "straight_through"])
def test_no_hostile_string_runs_in_a_check_or_a_box(tmp_path, name):
    marker = tmp_path / "MARKER"
    ex = exercise(name)
    view = exercise_view(exercise(name), names=learner(name) if name != "straight_through" else {})
    for text in payloads(marker):
        result = ex.check(text)
        assert not result.correct and len(result.message) <= SHORT, (text, result.message)
        said, _html = view.check_typed(text)
        assert "Correct" not in said and len(said) <= SHORT, (text, said)
        assert "Traceback" not in said and "Error:" not in said, said
        assert not marker.exists(), text


def test_no_hostile_string_runs_in_the_predict_box(seed, tmp_path):
    marker = tmp_path / "MARKER"
    s = al.step(seed["z"], predict=True, names=seed)
    _ = s.widget
    for text in payloads(marker):
        said = checked(s, text)
        assert "not checked" in said and len(said) <= 2 * SHORT and s.index == 0, (text, said)
        assert said.lower().count("read") <= 1, said  # once: not 'could not read that: Cannot read ...'
        assert not marker.exists(), text


def test_a_lambda_string_is_told_to_be_a_function_in_a_cell():
    result = exercise("symbolic_mean_square").check("lambda x: 2 * x / 3")
    assert not result.correct and "never run as code" in result.message
    assert "ex.check(lambda x: 2 * x)" in result.message
    assert exercise("symbolic_mean_square").check(lambda x: 2 * x / 3).correct  # a function in a cell


def test_the_box_tells_a_name_to_be_typed_as_numbers_or_checked_in_a_cell():
    view = exercise_view(exercise("mean_square"), names=learner("mean_square"))
    said, _html = view.check_typed("x.grad")
    assert "x.grad is a name" in said and "ex.check(x.grad)" in said
    assert progress.record("mean_square")["checks"] == 0
    said, _html = exercise_view(exercise("straight_through")).check_typed("straight_through")
    assert "define the function in a cell" in said and "ex.check(straight_through)" in said


def test_no_answer_reader_calls_an_evaluator():
    """The modules that read answers call no eval, exec, compile, sympify or parse_expr."""
    banned = {"eval", "exec", "compile", "sympify", "parse_expr", "literal_eval", "__import__"}
    readers = ["forms.py", "formula.py", "typed.py", "reading.py", "digits.py", "view.py", "choices.py",
               "exercise.py", "checking.py"]
    for name in readers:
        tree = ast.parse((PACKAGE / "practice" / name).read_text())
        calls = [n.func for n in ast.walk(tree) if isinstance(n, ast.Call)]
        called = {f.id for f in calls if isinstance(f, ast.Name)}
        called |= {f.attr for f in calls if isinstance(f, ast.Attribute)
                   and not (f.attr == "compile" and getattr(f.value, "id", "") == "re")}  # re.compile is no evaluator
        assert not called & banned, (name, called & banned)
        imported = {a.name for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        assert "sympy" not in imported and "parse_expr" not in imported, name
    assert "evaluate_typed" not in (PACKAGE / "display.py").read_text()
    assert "evaluate_typed" not in (PACKAGE / "stepper" / "view.py").read_text()


# --- every spelling accepted before the parser, and the verdict each gives ---------------------------

RIGHT_FORMULAS = [
    "2*x/3", "2x/3", "2 x/3", "2 * x / 3", "2*x/n", "2x/n", "2 * x / n ", "2*x/len(x)", "x*2/3", "x*2/n", "(2/3)*x",
    "(2/3)x", "2/3x", "2/3 x", "x 2/3", "2(x)/3", "x(2)/3", "(x)(2)/3", "2*x*n**-1", "2*x*n^-1", "2*x*n**(-1)",
    "2*x*3**-1", "2*x/(1+2)", "2*x/ (1+1+1)", "2/(3/x)", "4*x/6", "(2*x)/(n)", "2x/(n)", "((2*x))/3", "2*x/3.0",
    "2*x/3.000", "2 * x / 3.", "2*x/3e0", "2e0*x/3", "x/1.5", "x*0.666666666666666666666667", "+2*x/3", "-(-2*x/3)",
    "x+x/3-x/3*2", "2*x/3 + 0*x", "x*2/3 + 0", "2*x**1/3", "2*x^1/3", "log(exp(2))*x/3", "sqrt(4)*x/3",
    "exp(0)*2*x/3", "2*x/3 # a comment", "2*x/3\n", "2/3*x",
]
# (formula, the words of its verdict)
WRONG_FORMULAS = [
    ("x^2", "y = x**2 itself"), ("x**2", "y = x**2 itself"), ("2*x", "gradient of the sum"),
    ("2x", "gradient of the sum"),
    ("x/3", "power rule"), ("x", "x itself"), ("4*x/3", "twice"), ("2*x/(n-1)", "n - 1"), ("2/n", "chain rule"),
    ("1/n", "chain rule"), ("0.6667*x", "exactly"), ("2*y/3", "uses y"), ("2*x/3 +", "ends too early"),
    ("2*x//3", "write / for a division"), ("x.numel()", "no attributes"), ("torch.exp(x)", "no attributes"),
    ("2 3 x", "two numbers in a row"), ("(2*x/3", "never closed"), ("exp x", "with parentheses"),
    ("len(x+1)", "len(x)"), ("sqrt(-x*x-1)", "complex"), ("log(x-x)", "cannot be evaluated"),
    ("1/(x-x)", "cannot be evaluated"), ("2*x/3;", "no place in a formula"), ("'2*x/3'", "no quotes"),
    ("", "empty"),
]


@pytest.mark.parametrize("text", RIGHT_FORMULAS)
def test_every_spelling_accepted_before_is_still_right(text):
    result = exercise("symbolic_mean_square").check(text)
    assert result.correct, (text, result.message)
    view = exercise_view(exercise("symbolic_mean_square"))
    assert "Correct!" in view.check_typed(text)[0] or not text.strip()


@pytest.mark.parametrize("text,words", WRONG_FORMULAS)
def test_wrong_formulas_get_their_verdict(text, words):
    result = exercise("symbolic_mean_square").check(text)
    assert not result.correct and words in result.message, (text, result.message)
    assert len(result.message) <= SHORT


def test_the_formulas_agree_with_torch():
    """Every listed function, and the operators, evaluated by the lab's arithmetic against torch."""
    s = torch.tensor([[0.3, 1.7, 2.5], [0.9, 1.1, 3.2]], dtype=torch.double)
    torch_of = {"exp": torch.exp, "log": torch.log, "ln": torch.log, "sqrt": torch.sqrt, "sin": torch.sin,
                "cos": torch.cos, "tan": torch.tan, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "abs": torch.abs}
    assert set(torch_of) == set(FUNCTIONS)
    for name, fn in torch_of.items():
        assert torch.allclose(read_formula(f"{name}(x)").evaluate(s), fn(s), rtol=1e-14, atol=0), name
        assert torch.allclose(read_formula(f"2{name}(-x+4)^2").evaluate(s), 2 * fn(-s + 4) ** 2, rtol=1e-13), name
    x = s.clone().requires_grad_()
    (g,) = torch.autograd.grad((x ** 2).mean(dim=-1).sum(), x)
    assert torch.allclose(read_formula("2x/n").evaluate(s), g, rtol=1e-15, atol=0)
    assert torch.equal(read_formula("-x**2").evaluate(s), -(s ** 2))
    assert torch.equal(read_formula("2**3**2 + 0*x").evaluate(s), torch.full_like(s, 512.0))


def test_numbers_typed_in_every_printed_form_are_read_as_written():
    g = oracle_mean_square()
    four = ", ".join(f"{v:.4f}" for v in g.tolist())
    view = exercise_view(exercise("mean_square"), names=learner("mean_square"))
    for text in (f"[{four}]", f"({four})", "[2/3, 4/3, 2]", f"tensor([{four}], dtype=torch.float64)",
                 f"tensor([{four}], grad_fn=<MulBackward0>)", f"torch.tensor([{four}])",
                 f"Parameter containing:\ntensor([{four}], requires_grad=True)", f"array([{four}])",
                 f"tensor([{four}],\n       dtype=torch.float64, requires_grad=True)"):
        assert "Correct!" in view.check_typed(text)[0], text
    assert "Correct!" not in view.check_typed("[0.6670, 1.3333, 2.0000]")[0]  # a fourth decimal written, wrong
    assert read_typed("[0.6670]")[0].written.as_tuple().exponent == -4


def test_several_parts_and_words_in_the_box():
    w = torch.tensor([3.0, 1.0, 0.5], dtype=torch.double, requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double, requires_grad=True)
    gw, gx = torch.autograd.grad((w * x ** 2).mean(), (w, x))
    a, b = ([f"{v:.4f}" for v in t.tolist()] for t in (gw, gx))
    view = exercise_view(exercise("weighted_mean_square"))
    assert "Correct!" in view.check_typed(f"([{', '.join(a)}], [{', '.join(b)}])")[0]
    assert "Correct!" in view.check_typed(f"{{'w': [{', '.join(a)}], 'x': [{', '.join(b)}]}}")[0]
    assert "Correct!" in view.check_typed(f"{{w: [{', '.join(a)}], x: [{', '.join(b)}]}}")[0]  # bare words
    xj = torch.tensor([0.0, 1.0, 2.0], dtype=torch.double)
    diagonal = torch.autograd.functional.jacobian(lambda t: t ** 3, xj).diagonal()
    view = exercise_view(exercise("jacobian_shape"))
    typed = ", ".join(f"{v:g}" for v in diagonal.tolist())
    assert "Correct!" in view.check_typed(f"(b, [{typed}])")[0]
    assert "Correct!" in view.check_typed(f"('b', tensor([{typed}]))")[0]


# --- bounded work -----------------------------------------------------------------------------------

BIG_FORMULAS = ["9**9**9**9", "factorial(10**8) * x", "x**(10**10**5)", "1e400", "1e99999", "2**2**2**2**2**2*x",
                "x" + "**x" * 300, "(" * 100 + "x" + ")" * 100, "-" * 5000 + "x", "9" * 5000 + "*x",
                "x*" * 400 + "1", "exp(exp(exp(x*1000)))", "(x+1)**1000**1000"]


@pytest.mark.parametrize("text", BIG_FORMULAS, ids=range(len(BIG_FORMULAS)))
def test_a_formula_too_big_to_compute_is_told_quickly(text):
    result = exercise("symbolic_mean_square").check(text)
    assert not result.correct and len(result.message) <= SHORT, result.message


class Unreadable:
    def __float__(self):
        raise ZeroDivisionError("not a number")


DEEP: list = [1.0]
for _ in range(40):
    DEEP = [DEEP]

BAD_NUMBERS = [
    "1e400", "[1e400, 1, 2]", "[9**9**9**9, 1, 2]", "[10**10**5, 1, 2]", "[" * 300 + "]" * 300, 10 ** 400,
    [10 ** 400, 1, 2], np.float64("nan"), np.float64(1.0), np.array([np.nan, 1, 2]), {1, 2, 3}, frozenset({1}),
    range(3), b"123", bytearray(b"1"), 1 + 2j, [1j, 2, 3], np.complex128(1), np.array([1 + 1j]), Unreadable(),
    [Unreadable(), 1, 2], torch.ones(3, dtype=torch.complex64), float("inf"), [float("nan"), 1, 2], DEEP,
    list(range(200_000)), "[1/0, 1, 2]", "[2**0.5, 1, 2]", "q" * 10 ** 6, Fraction(2, 3),
    {"x": 1}, object(), np.str_("1"), np.datetime64("2020-01-01"),
]


@pytest.mark.parametrize("answer", BAD_NUMBERS, ids=range(len(BAD_NUMBERS)))
def test_a_bad_number_is_a_short_message_never_an_exception(answer):
    result = exercise("mean_square").check(answer)
    assert not result.correct and len(result.message) <= SHORT, result.message
    assert exercise("mean_square").check(np.float64(1.0)).status == "incorrect"


def test_numpy_scalars_are_numbers():
    g = oracle_mean_square()
    assert exercise("mean_square").check([np.float64(round(v, 4)) for v in g.tolist()]).correct
    assert exercise("mean_square").check(np.array([round(v, 4) for v in g.tolist()])).correct
    assert "nan" in exercise("mean_square").check(np.float64("nan")).message


def test_grading_mode_still_raises_assertion_error_and_only_that():
    progress.grading(True)
    for answer in ("9**9**9**9", np.float64("nan"), Unreadable(), "x.grad", "q" * 10 ** 6):
        with pytest.raises(AssertionError) as err:
            exercise("mean_square").check(answer)
        assert len(str(err.value)) <= SHORT
    with pytest.raises(AssertionError):
        exercise("symbolic_mean_square").check("lambda x=__import__('os'): x")


# --- bounded text -----------------------------------------------------------------------------------

def test_long_answers_are_quoted_head_and_tail_with_their_length():
    ex = exercise("symbolic_mean_square")
    long = "2*x/3 + " + "1*" * 450 + "1;"  # the mistake at the very end
    message = ex.check(long).message
    assert "1*" * 100 not in message and "(910 characters)" in message and "1*1;'" in message
    assert "'2*x/3 + 1*" in message and len(message) <= SHORT
    big = ex.check("q" * 10 ** 6)
    assert len(big.message) <= SHORT and "1000000" in big.message
    letter = exercise("no_requires_grad").check("z" * 5_000).message
    assert len(letter) <= SHORT and "(5000 characters)" in letter


def test_confirm_after_a_huge_answer_is_short_and_quick():
    ex = exercise("mean_square")
    ex.check(list(range(200_000)))
    note = ex.confirm()
    assert len(repr(note)) <= SHORT, repr(note)[:300]


def test_an_unknown_exercise_name_is_quoted_short():
    with pytest.raises(LabInputError) as err:
        al.exercise("x" * 10 ** 6)
    assert len(str(err.value)) < 3_000 and "(1000002 characters)" in str(err.value)
    with pytest.raises(LabInputError) as err:
        exercise("mean_square", seed=10 ** 5000)
    assert len(str(err.value)) <= SHORT


def test_labels_from_long_expressions_are_shortened_for_display_only():
    ex = exercise("mean_square")
    long = "[" + ", ".join(["0.6667"] * 3000) + "]"
    result = ex.check(long)
    assert not result.correct and len(result.message) <= SHORT
    ex.check([0.6667, 1.3333, 2.0])
    assert ex.last_answer == [0.6667, 1.3333, 2.0]  # what the learner gave is kept whole


def faces_of(name: str, answer) -> list[str]:
    ex = exercise(name)
    view = exercise_view(ex)
    result = ex.check(answer)
    out = [repr(result), faces.result_html(result), view.text(), view.html(), repr(ex.confirm())]
    if isinstance(answer, str):
        out.extend(view.check_typed(answer))
    return out


def long_texts():
    piece = st.text(min_size=1, max_size=30)
    return st.one_of(st.text(max_size=300), st.builds(lambda p, k: p * k, piece, st.integers(1, 1_000_000 // 30)))


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=long_texts(), name=st.sampled_from(["symbolic_mean_square", "mean_square", "gan_detach",
                                                "where_backprop_stops", "weighted_mean_square", "jacobian_shape"]))
def test_every_face_stays_under_20_kb_for_any_text_answer(text, name):
    for face in faces_of(name, text):
        assert len(face) < FACE, (name, len(face))


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(items=st.lists(st.one_of(st.floats(), st.integers(), st.text(max_size=50)), max_size=50),
       repeat=st.integers(1, 20_000))
def test_every_face_stays_under_20_kb_for_any_list_answer(items, repeat):
    for face in faces_of("mean_square", items * repeat):
        assert len(face) < FACE


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(name=long_texts())
def test_an_unknown_name_of_any_length_is_told_under_20_kb(name):
    try:
        page = al.exercise(name)
    except LabInputError as err:
        assert len(str(err)) < FACE
    else:
        assert len(page.text()) < FACE and len(page.html()) < FACE


def test_the_readers_refuse_what_is_not_data():
    for text in ("x.grad", "a + 1", "f(1)", "[v for v in x]", "lambda: 1", "x[0]", "'a' if 1 else 'b'"):
        with pytest.raises(WrongForm):
            read_typed(text, words=False)
    for text in ("x.grad", "x[0]", "f(x)", "x if x else 1", "x, x", "x = 1", "{x}", "x @ x", "not x", "x < 1"):
        with pytest.raises(WrongForm):
            read_formula(text)
