"""Every text the lab shows outside the exercises is bounded, whatever the learner typed or passed:
a message quotes at most 200 characters of it (head and tail around its length), a label made from a
long expression is shortened for display only (the data keeps it whole), an error's own message is
shown at most 1,000 characters, and every text and HTML face stays under 20 KB."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import autograd_lab
from autograd_lab.errors import LabInputError
from autograd_lab.explain.view import explain
from autograd_lab.i18n import _code
from autograd_lab.names import LABEL
from autograd_lab.profile.records import Profile, StepRecord
from autograd_lab.profile.verdict import judge
from autograd_lab.profile import faces as profile_faces
from autograd_lab.stepper.graph_view import show_graph
from autograd_lab.stepper.panel_faces import panel_html, panel_text
from autograd_lab.stepper.view import step
from autograd_lab.storage.view import compare_storage

FACE = 20_000  # characters of any face
MESSAGE = 2_000  # characters of a short message (200 quoted, the sentence and the usage line around it)


def faces(view) -> list[str]:
    return [view.text(), view.html()]


def assert_bounded(*texts: str, most: int = FACE) -> None:
    for text in texts:
        assert len(text) < most, len(text)


def quoted(text: str, head: str, tail: str, length: int) -> bool:
    """text quotes something of length characters by its head and tail, with the length between."""
    return head in text and tail in text and f"({length} characters)" in text


def long_expression(terms: int) -> str:
    """An expression in x of about 7 * terms characters, with its own head and tail (flat: Python
    compiles it, however long)."""
    return "torch.stack([x * 3, " + ", ".join(["x * 1"] * terms) + ", x * 7]).sum()"


# --- explain and %%explain ---------------------------------------------------------------------------

def test_explaining_an_unknown_error_with_a_huge_message_is_bounded_and_keeps_it_whole():
    text = "head-" + "x" * 10**6 + "-tail"
    e = explain(RuntimeError(text))
    shown = faces(e)
    assert_bounded(*shown)
    assert shown[0].startswith("RuntimeError: head-")
    assert all(quoted(s, "head-", "-tail", len(text)) for s in shown)
    assert e.original == text  # the data keeps the whole message


def test_a_known_error_with_a_huge_tail_is_explained_in_bounded_words():
    text = "grad can be implicitly created only for scalar outputs" + " x" * 500_000
    e = explain(RuntimeError(text), line="y.backward()")
    assert e.kind == "non_scalar"
    assert_bounded(e.text(), e.html())
    from autograd_lab.explain.view import ExplanationView

    original = ExplanationView(e.model, show_original=True)
    assert_bounded(original.text(), original.html())
    assert quoted(original.text(), "grad can be implicitly", "x x", len(text))


def test_explain_cell_with_a_long_expression_names_it_shortened(ip):
    expr = long_expression(500)  # 3.5 KB: read as code (a longer line is not parsed, and z is said)
    ip.run_cell("import torch\nx = torch.ones(3, requires_grad=True)")
    with capture_output() as out:
        ip.run_cell_magic("explain", "", expr[:-len(".sum()")] + ".backward()")
    data = out.outputs[-1].data
    assert data["text/plain"].startswith("autograd error explained (non scalar)")
    assert_bounded(data["text/plain"], data["text/html"])
    assert "characters)" in data["text/plain"]
    # torch is the oracle of the kind: the same backward raises its non-scalar error
    with pytest.raises(RuntimeError, match="only for scalar outputs"):
        (ip.user_ns["x"] * 3).backward()


def test_explaining_an_anomaly_culprit_quotes_its_line_shortened():
    from autograd_lab.explain.anomaly import Culprit, Rerun
    from autograd_lab.explain.faces import anomaly_lines

    line = "y = " + "x * " * 50_000 + "1"
    said = "\n".join(anomaly_lines(Rerun(True, Culprit("MulBackward0", 2, line))))
    assert_bounded(said, most=MESSAGE)
    assert quoted(said, "y = x * ", "x * 1", len(line))


# --- %storage --------------------------------------------------------------------------------------

def test_storage_of_an_8_kb_expression_is_bounded_and_quick(ip):
    ip.run_cell("import torch\na = torch.tensor([1., 2., 3.], requires_grad=True)")
    expr = "(" + " + ".join(["a"] * 2001) + ")"  # 8 KB
    assert len(expr) >= 8000
    with capture_output() as out:
        ip.run_line_magic("storage", expr)
    shown = out.outputs[-1].data
    assert_bounded(shown["text/plain"])
    # the HTML face carries the picture as an <img>: the words around it are bounded
    words = shown["text/html"].split('src="data:image/png;base64,')[0] + shown["text/html"].split('"/></div>', 1)[-1]
    assert_bounded(words)
    assert quoted(shown["text/plain"], "(a + a", "a + a)", len(expr))
    view = compare_storage(ip.user_ns["a"], name=expr)
    assert view.model.subject.name == expr  # the report keeps the whole expression
    assert view.model["detach()"].code == f"({expr}).detach()"
    assert_bounded(*faces(view))
    # the rows are the experiments': torch decides what the copy shares
    a = ip.user_ns["a"]
    assert view.model["detach()"].shares_storage == (a.detach().untyped_storage().data_ptr()
                                                     == a.untyped_storage().data_ptr())


def test_storage_names_many_relatives_a_few_at_a_time():
    a = torch.zeros(4)
    names = {f"view_{i}_" + "v" * 1000: a[i:] for i in range(40)}
    view = compare_storage(a, name="a", names={"a": a, **names})
    assert len(view.model.subject.relations) == 40
    assert_bounded(*faces(view))
    assert "32 more names" in view.text()


def test_an_unknown_edit_is_quoted_short():
    with pytest.raises(LabInputError) as err:
        compare_storage(torch.ones(2), edit="e" * 10**6)
    assert_bounded(str(err.value), most=MESSAGE)
    assert "unknown edit" in str(err.value) and "characters)" in str(err.value)


# --- %graph, trace and step --------------------------------------------------------------------------

def test_graph_of_a_long_expression_is_bounded_and_quick(ip):
    ip.run_cell("import torch\nx = torch.tensor([1., 2., 3.], requires_grad=True)")
    expr = long_expression(2500)  # 15 KB
    view = show_graph(ip.ev(expr), names=ip.user_ns, label=expr)
    shown = faces(view)
    figure = view.figure_title()
    assert_bounded(*shown, figure)
    assert quoted(shown[0], "torch.stack([x * 3, x *", " * 7]).sum()", len(expr))
    assert view.label == expr  # the view keeps the whole expression
    # the rows are the engine's graph: one MulBackward0 per product in the expression
    products = sum(1 for n in view.graph.nodes if n.name == "MulBackward0")
    assert products == expr.count(" * ")


def test_step_with_a_huge_label_and_huge_names_is_bounded():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 2
    z = (y * y).sum()
    leaf, middle, label = "x" * 10**6, "y" * 10**6, "z-head " + "z" * 10**6 + " z-tail"
    s = step(z, names={leaf: x, middle: y}, label=label)
    assert s.trace.graph.leaves()[0].label == leaf  # the node keeps the learner's whole name
    assert_bounded(*faces(s), s.figure_title())
    assert quoted(s.text(), "z-head", "z-tail", len(label))
    for index in range(len(s.trace.steps) + 1):
        assert_bounded(panel_text(s.trace, index), panel_html(s.trace, index))
    s.end()
    assert_bounded(*faces(s))
    # the gradients shown are the engine's
    (expected,) = torch.autograd.grad((x * 2 * x * 2).sum(), x)
    assert torch.equal(s.trace.grad(x), expected)


def test_a_refused_trace_with_a_huge_label_says_so_shortly():
    with pytest.raises(LabInputError) as err:
        autograd_lab.trace(torch.ones(2), label="q" * 10**6)
    assert_bounded(str(err.value), most=MESSAGE)
    assert "no grad_fn" in str(err.value) and "characters)" in str(err.value)


# --- the magics' messages ----------------------------------------------------------------------------

@pytest.mark.parametrize("line, says", [
    # 100 KB lines: far past what a message quotes (Python's shlex, which reads the options, is slow on
    # a megabyte)
    ("q" * 10**5, "is not defined"),
    ("z --" + "q" * 10**5, "unknown option"),
    ("(x +" + " x" * 50_000, "is not a Python expression"),
    ("int('" + "7x" * 50_000 + "')", "raised ValueError"),
])
def test_a_magic_told_a_huge_line_answers_shortly(ip, line, says):
    ip.run_cell("import torch\nx = torch.tensor([1., 2.], requires_grad=True)\nz = (x * 2).sum()")
    with pytest.raises(UsageError) as err:
        ip.find_line_magic("graph")(line)  # IPython's own $-expansion of a line is quadratic: skipped
    message = str(err.value)
    assert_bounded(message, most=MESSAGE)
    assert says in message and "characters)" in message


def test_a_huge_seed_is_quoted_shortly(ip):
    with pytest.raises(UsageError) as err:
        ip.find_line_magic("exercise")("mean_square --seed " + "9" * 10**5)
    assert_bounded(str(err.value), most=MESSAGE)
    assert "whole number" in str(err.value)


def test_jacobian_expressions_are_split_in_linear_time():
    from autograd_lab.magics import _expressions

    line = "(" + " x" * 300_000 + ") x"
    parts = _expressions(line)
    assert len(parts) == 2 and parts[1] == "x" and parts[0].startswith("( x")


def test_language_of_a_huge_name_is_refused_shortly_and_changes_nothing():
    before = autograd_lab.language()
    with pytest.raises(LabInputError) as err:
        autograd_lab.language("x" * 10**6)
    assert_bounded(str(err.value), most=MESSAGE)
    assert "The lab speaks" in str(err.value) and "characters)" in str(err.value)
    assert autograd_lab.language() == before


# --- the profiler --------------------------------------------------------------------------------------

def test_a_profile_names_a_huge_carrier_shortly():
    name = "h" * 100_000
    ns = {"torch": torch}
    exec(f"w = torch.ones(2, requires_grad=True)\n{name} = torch.zeros(2)\n"
         f"def step():\n    global {name}\n    {name} = {name} * 0.5 + w\n    return {name}.sum()\n", ns)
    prof = autograd_lab.profile_backward(ns["step"], steps=3, warmup=0, budget=60)
    assert prof.kind == "carried_history" and prof.carriers == [name]
    assert_bounded(*faces(prof))
    assert "characters)" in prof.text()
    # the node counts are the engine's: each step adds its Mul and Add to the carried graph
    assert prof.node_counts[-1] > prof.node_counts[0]


def test_a_profile_of_many_steps_shows_a_bounded_table():
    prof = Profile([StepRecord(i, False, 1.0, 2.0, 3 + i, 0, (f"n{i}_" + "c" * 5000,)) for i in range(1, 5001)],
                   carriers=[f"n{i}_" + "c" * 5000 for i in range(1, 5001)], planned=5000)
    judge(prof)
    assert_bounded(profile_faces.profile_text(prof), profile_faces.profile_html(prof))
    assert "5000" in profile_faces.profile_text(prof)  # the last step is still shown


def test_a_profile_that_failed_with_a_huge_message_says_so_shortly():
    prof = Profile([StepRecord(1, False, 1.0, 0.0, 3, 0)], failed="boom " + "x" * 10**6, planned=1)
    judge(prof)
    assert prof.kind == "failed"
    assert_bounded(profile_faces.profile_text(prof), profile_faces.profile_html(prof))
    assert "backward failed at step 1: boom" in prof.verdict


def test_a_long_name_of_characters_html_escapes_is_shortened_in_every_panel_line():
    """The panel's rule, saved and sent-on lines show the learner's names as labels: a long name of
    quotes (each escaped to six characters in HTML) once made the HTML face 20 KB (a CI run found it)."""
    name = "0" + "'" * 553
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 3
    z = (y * x).sum()
    s = step(z, names={name: x, name + "_y": y}, label=name)
    for index in range(1, len(s.trace.steps) + 1):
        html = panel_html(s.trace, index)
        assert_bounded(html, most=4_000)
        assert name not in panel_text(s.trace, index)  # only its label, head and tail around its length
    assert "(554 characters)" in panel_text(s.trace, 2) and len(name) > LABEL


# --- property: random names, expressions and messages up to 1 MB ---------------------------------------

def huge_texts():
    """A text up to 1 MB: random head and tail around a long run of one character."""
    return st.builds(lambda head, char, n, tail: head + char * n + tail,
                     st.text(min_size=1, max_size=20), st.characters(blacklist_categories=("Cs",)),
                     st.integers(0, 10**6), st.text(max_size=20))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(name=huge_texts(), message=huge_texts())
def test_every_face_stays_bounded_for_random_names_and_messages(name, message):
    for err in (RuntimeError(message), RuntimeError("element 0 of tensors does not require grad" + message)):
        e = explain(err, line=f"{name}.backward()")
        assert_bounded(*faces(e))
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 3
    z = (y * x).sum()
    names = {name: x, name + "_y": y}
    g = show_graph(z, names=names, label=name)
    assert_bounded(*faces(g), g.figure_title())
    s = step(z, names=names, label=name)
    for index in range(len(s.trace.steps) + 1):
        s.goto(index)
        assert_bounded(*faces(s), panel_text(s.trace, index), panel_html(s.trace, index))
    prof = Profile([StepRecord(1, False, 1.0, 2.0, 3, 0, (name,)), StepRecord(2, False, 1.0, 2.0, 5, 0, (name,))],
                   carriers=[name], data=[(name, 4)], failed=message or None, planned=2)
    judge(prof)
    assert_bounded(profile_faces.profile_text(prof), profile_faces.profile_html(prof))
    if _code(name) is None:  # not a name of a language the lab speaks
        with pytest.raises(LabInputError) as err:
            autograd_lab.language(name)
        assert_bounded(str(err.value), most=MESSAGE)
        assert "The lab speaks" in str(err.value)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(name=huge_texts())
def test_the_storage_faces_stay_bounded_for_random_names(name):
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    view = compare_storage(a, name=name)
    assert view.model.subject.name == name
    assert_bounded(*faces(view))


def test_the_storage_pictures_title_and_greeting_and_what_ran_name_shortened():
    from autograd_lab.storage.view import StorageView
    from autograd_lab.stepper.yours import ran_of_yours

    name = "n-head" + "a" * 10**5 + "n-tail"
    view = StorageView(torch.ones(2), name=name)
    assert_bounded(view.figure_title(), most=MESSAGE)
    assert view.name == name and "n-head" in view.figure_title()
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    hook = lambda g: g  # noqa: E731
    hook.__name__ = "h-head" + "b" * 10**5 + "h-tail"
    y.register_hook(hook)
    t = autograd_lab.trace(y.sum(), names={"y": y})
    (ran,) = ran_of_yours(t)
    assert all(len(n) <= 80 for n in ran.names) and quoted(ran.names[0], "h-head", "h-tail", len(hook.__name__))
