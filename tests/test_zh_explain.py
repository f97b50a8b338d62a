"""The error explainer in Chinese: every kind of error explained, through explain(), %%explain (with
--original and --anomaly) and explain_errors, speaks Chinese in its text and HTML faces, and its fix
still runs; PyTorch's own message, quoted on request, stays as PyTorch wrote it. The English faces
are unchanged, and each explanation is worded in the language of the moment it is made."""
import html
import re
import warnings

import pytest
import torch
from IPython.utils.capture import capture_output

from autograd_lab import explain
from autograd_lab.errors import LabInputError
from autograd_lab.explain.anomaly import Culprit, Rerun
from autograd_lab.explain.explanation import Explanation, explanation_of
from autograd_lab.explain.faces import anomaly_lines, explanation_html, explanation_text
from autograd_lab.explain.kinds import KINDS
from helpers import CHINESE, Bad, assert_chinese, x3


def said(e) -> tuple[str, ...]:
    """PyTorch's own message in an explanation, as the text and the HTML faces quote it."""
    return (e.original, html.escape(e.original, quote=True))


def caught(fn, names=None):
    with pytest.raises(Exception) as info:
        fn()
    return explanation_of(info.value, names)


def backward_twice():
    x = x3()
    z = (x * 2).sum()
    z.backward()
    z.backward()


def non_scalar():
    y = x3() ** 2
    y.backward()


def inplace_modified():
    x = x3()
    y = x.exp()
    z = y.sum() * 2
    y.add_(1)
    z.backward()


def inplace_on_a_leaf():
    x = x3()
    y = x ** 2
    with torch.no_grad():
        x.mul_(2)
    y.sum().backward()


def no_grad_fn():
    q = torch.ones(3).sum()
    q.backward()


def leaf_inplace():
    w = torch.ones(3, requires_grad=True)
    w.grad = torch.ones(3)
    w -= 0.5 * w.grad


def view_of_leaf_inplace():
    x = x3()
    x[0] = 5


def numpy_requires_grad():
    z = x3() * 2
    z.numpy()


def int_requires_grad():
    t = torch.tensor([1, 2, 3], requires_grad=True)  # noqa: F841  the explainer rewrites this very line


def int_requires_grad_method():
    t = torch.tensor([1, 2])
    t.requires_grad_()


def device_mismatch():
    z = x3() * 2
    z.backward(torch.ones(3, device="meta"))


def device_from_a_function():
    Bad.apply(x3()).sum().backward()


RAISED = [backward_twice, non_scalar, inplace_modified, inplace_on_a_leaf, no_grad_fn, leaf_inplace,
          view_of_leaf_inplace, numpy_requires_grad, int_requires_grad, int_requires_grad_method, device_mismatch,
          device_from_a_function]

# messages alone (no tensors to name): the sentences said when the learner's names are unknown
a, b = torch.ones(3, requires_grad=True) * 1, torch.ones(3, requires_grad=True) * 1
GIVEN = [
    ("Trying to backward through the graph a second time", {"line": "q.backward()"}),
    ("grad can be implicitly created only for scalar outputs", {"line": "y.backward()"}),
    ("one of the variables needed for gradient computation has been modified by an inplace operation: "
     "[torch.FloatTensor [3]] is at version 0; expected version 0 instead.", {"names": {"a": a, "b": b}}),
    ("one of the variables needed for gradient computation has been modified", {}),
    ("a leaf Variable that requires grad is being used in an in-place operation.", {}),
    ("a view of a leaf Variable that requires grad is being used in an in-place operation.", {}),
    ("Only Tensors of floating point and complex dtype can require gradients", {}),
    ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed", {"line": "q.grad"}),
    ("Function BadBackward returned an invalid gradient at index 0 - expected device cpu but got meta", {}),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", {}),
    ("Tensor on device meta is not on the expected device cpu!", {}),
    ("Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of "
     "torch.Size([3]).", {"line": "q.backward(g)"}),
]

RERUNS = [Rerun(False), Rerun(True, None), Rerun(True, Culprit("SigmoidBackward0", 2, "y = x.sigmoid()")),
          Rerun(True, Culprit("ExpBackward0", None, "return t.exp()", "f")),
          Rerun(True, Culprit("ExpBackward0", None, "return t.exp()", ""))]


@pytest.mark.parametrize("run", RAISED, ids=lambda f: f.__name__)
def test_every_raised_error_is_explained_in_chinese(zh, run):
    e = caught(run)
    assert e.known
    for face in (explanation_text(e), explanation_html(e)):
        assert_chinese(face)
    assert_chinese(explanation_text(e, show_original=True), said(e))
    assert_chinese(explanation_html(e, show_original=True), said(e))
    assert e.original in explanation_text(e, show_original=True)  # PyTorch's words, as PyTorch wrote them
    assert_chinese(e.summary)
    assert_chinese(e.why)


@pytest.mark.parametrize(("message", "where"), GIVEN, ids=lambda v: v[:30] if isinstance(v, str) else "")
def test_every_message_is_explained_in_chinese(zh, message, where):
    e = explanation_of(message, **where)
    assert e.known
    assert_chinese(explanation_text(e, show_original=True), said(e))
    assert_chinese(explanation_html(e, show_original=True), said(e))


def test_the_fixes_still_run_in_chinese(zh):
    """The fix's comments are Chinese; its code is the same and still runs."""
    e = caught(leaf_inplace)
    assert "with torch.no_grad():\n    w -= 0.5 * w.grad" in e.fix and CHINESE.search(e.fix)
    w = torch.ones(3, requires_grad=True)
    w.grad = torch.ones(3)
    ns = {"w": w, "torch": torch}
    exec(e.fix, ns)
    assert torch.equal(w, torch.full((3,), 0.5)) and ns["w2"].grad_fn is not None
    e = caught(view_of_leaf_inplace)
    x = x3()
    exec(e.fix, ns := {"x": x, "torch": torch})
    assert ns["x2"].grad_fn is not None and x[0].item() == 5
    e = caught(int_requires_grad)
    exec(e.fix, ns := {"torch": torch})
    assert ns["t"].dtype == torch.float32 and ns["t"].requires_grad
    fallback = explanation_of("Only Tensors of floating point").fix
    assert CHINESE.search(fallback)
    exec(fallback, ns := {"torch": torch})
    assert ns["x"].requires_grad
    for run in (backward_twice, non_scalar, no_grad_fn, device_mismatch):
        compile(caught(run).fix, "<fix>", "exec")  # comments and code: valid Python


def test_the_learners_names_and_numbers_are_kept(zh):
    e = caught(backward_twice)
    assert "z 的计算图已被第一次 `z.backward()` 释放" in e.why and "MulBackward0" in e.why
    e = caught(non_scalar)
    assert "(3,)" in e.why and "3 个数" in e.why
    e = caught(inplace_modified)
    assert e.summary.startswith("y ") and "exp" in e.why and "ExpBackward0" in e.why
    assert "从 0 变成了 1" in e.why and "y = y + 1" in e.fix
    e = caught(device_mismatch)
    assert "meta" in e.why and "cpu" in e.why


def test_chinese_sentences_follow_each_other_without_spaces(zh):
    e = caught(inplace_modified)
    assert "。 " not in e.why and "。之后它被原地修改了" in e.why
    assert "。 " not in caught(backward_twice).why


@pytest.mark.parametrize("rerun", RERUNS, ids=range(len(RERUNS)))
def test_the_anomaly_lines_are_chinese(zh, rerun):
    text = "\n".join(anomaly_lines(rerun))
    assert_chinese(text)
    if rerun.culprit is not None:
        assert rerun.culprit.line in text and rerun.culprit.node in text
    e = explanation_of("one of the variables needed for gradient computation has been modified")
    e.anomaly = rerun
    assert_chinese(explanation_text(e))
    assert_chinese(explanation_html(e))


def test_every_kind_has_a_name_in_both_languages(zh):
    names = [k.name for k in KINDS]
    assert len(set(names)) == len(names)  # each kind once
    titles = {explanation_text(Explanation(kind, "s", "w", "f", "o")).splitlines()[0] for kind in names}
    assert all(re.fullmatch(r"自动求导（autograd）错误解读：.*[\u4e00-\u9fff].*", t) for t in titles), titles
    assert len(titles) == len(names)  # each kind its own name


def test_explain_returns_a_view_that_speaks_chinese(zh):
    e = explain("Can't call numpy() on Tensor that requires grad", line="a = z.numpy()")
    assert repr(e) == e.text() == explanation_text(e.model)
    assert e.text().splitlines()[:2] == ["自动求导（autograd）错误解读：对需要梯度的张量调用 numpy()",
                                         "numpy() 拒绝了 z，因为它需要梯度。"]
    assert e.fix == "z.detach().numpy()" and e.kind == "numpy_requires_grad"
    assert_chinese(e.html())


def test_refusals_are_chinese(zh, monkeypatch):
    with pytest.raises(LabInputError) as info:
        explain(42)
    assert_chinese(str(info.value))
    assert "int" in str(info.value)
    import IPython

    from autograd_lab import explain_errors

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    with pytest.raises(LabInputError) as info:
        explain_errors(True)
    assert_chinese(str(info.value))
    assert "autograd_lab.explain(err)" in str(info.value)


def test_an_unknown_error_is_shown_as_python_shows_it(zh):
    e = explanation_of(ZeroDivisionError("division by zero"))
    assert not e.known and explanation_text(e) == "ZeroDivisionError: division by zero"


def test_each_explanation_is_worded_in_the_language_of_its_moment(zh):
    chinese = caught(no_grad_fn)
    zh.language("en")
    english = caught(no_grad_fn)
    assert english.summary == "q is not part of any graph: nothing it came from requires grad."
    assert CHINESE.search(chinese.summary) and not CHINESE.search(explanation_text(english))


# -- in a real IPython shell ---------------------------------------------------------------------

@pytest.fixture
def ns(ip):
    ip.run_cell("import torch\nx = torch.tensor([1., 2., 3.], requires_grad=True)\nruns = []")
    return ip


def shown(cap) -> list[tuple[str, str]]:
    return [(o.data["text/plain"], o.data["text/html"]) for o in cap.outputs]


def test_the_explain_magic_speaks_chinese(zh, ns):
    with capture_output() as cap:
        ns.run_cell_magic("explain", "--original", "z = (x * 2).sum()\nz.backward()\nz.backward()")
    [(text, page)] = shown(cap)
    original = text.split("\n    ")[-1]
    assert original.startswith("Trying to backward through the graph a second time")
    assert_chinese(text, (original,))
    assert_chinese(page, (html.escape(original, quote=True),))
    assert text.startswith("自动求导（autograd）错误解读：两次反向传播") and "Traceback" not in cap.stdout


def test_the_non_leaf_warning_is_explained_in_chinese(zh, ns):
    with capture_output() as cap:
        ns.run_cell_magic("explain", "", "y = x * 2\ny.sum().backward()\ny.grad")
    [(text, page)] = shown(cap)
    assert_chinese(text)
    assert_chinese(page)
    assert "y.retain_grad()" in text and cap.stderr == ""


def test_the_anomaly_rerun_speaks_chinese(zh, ns):
    cell = ("runs.append(1)\nw = x * 2\ny = w.sigmoid()\ny.mul_(3)\ny.sum().backward()\n")
    with capture_output() as cap:
        ns.run_cell_magic("explain", "--anomaly", cell)
    [(text, page)] = shown(cap)
    assert_chinese(text)
    assert_chinese(page)
    assert "SigmoidBackward0 在反向传播中失败；它的前向调用是这个单元格的第 3 行：" in text
    assert "  3 | y = w.sigmoid()" in text and ns.user_ns["runs"] == [1, 1] and cap.stderr == ""
    with capture_output() as cap:
        ns.run_cell_magic("explain", "--anomaly", "torch.ones(2).sum().backward()")
    [(text, _)] = shown(cap)
    assert_chinese(text)
    assert "单元格没有再次运行。" in text


def test_explain_errors_explains_in_chinese(zh, ns):
    import autograd_lab

    autograd_lab.explain_errors(True)
    try:
        with capture_output() as cap:
            ns.run_cell("x.numpy()")
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                ns.run_cell("q = x * 2\nq.sum().backward()\nq.grad")
        texts = [text for text, _ in shown(cap)]
        assert len(texts) == 2 and all(CHINESE.search(t) for t in texts)
        for text in texts:
            assert_chinese(text)
    finally:
        autograd_lab.explain_errors(False)


# -- the English faces, unchanged ----------------------------------------------------------------

def test_the_english_sentences_that_are_now_whole_templates():
    e = explanation_of("one of the variables needed for gradient computation has been modified")
    assert e.summary == "a tensor was changed in place after the graph saved it."
    assert e.why == ("a tensor (a leaf) was saved in the graph for the backward pass: a later operation saved it. "
                     "Then it was changed in place. Autograd checks each saved tensor's version and refuses a "
                     "changed value, because the gradient computed from it would be wrong.")
    e = explanation_of(GIVEN[2][0], names={"a": a, "b": b})
    assert e.summary == "a or b was changed in place after the graph saved it."
    assert "(its version went from 0 to 0)." in e.why
    e = explanation_of("Expected all tensors to be on the same device")
    assert e.summary == "a gradient on another met a tensor on one device."
    assert e.why.startswith("the gradient given to backward is a tensor on another, but the tensor it belongs to "
                            "lives on one device. Every gradient must be on the same device")
    e = explanation_of(GIVEN[8][0])  # Function BadBackward returned ... expected device cpu but got meta
    assert e.summary == "a gradient on meta met a tensor on cpu."
    assert e.why.startswith("BadBackward returned a tensor on meta, but the tensor it belongs to lives on cpu. Every")
    e = caught(view_of_leaf_inplace)
    assert e.summary == "a part of x (a view) was changed in place, and x is a leaf that requires grad."
    e = caught(leaf_inplace)
    assert e.summary == "w was changed in place, and w is a leaf that requires grad."
    e = explanation_of("grad can be implicitly created only for scalar outputs", line="y.backward()")
    assert e.why.startswith("y holds several numbers. backward() with no argument")
    e = explanation_of("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed", line="q.grad")
    assert e.why.startswith("q is not a leaf: it is an intermediate result in the graph. backward() keeps")
    e = caught(backward_twice)
    assert e.why.startswith("z's graph was freed by the first `z.backward()`: to save memory, backward releases "
                            "the values the graph's nodes saved (MulBackward0 had saved values for it). The second")


def test_the_english_faces_keep_their_labels():
    e = explanation_of("Only Tensors of floating point")
    assert explanation_text(e, True).splitlines() == [
        "autograd error explained (int requires grad)", "an integer tensor cannot require grad.", "",
        "Why: A gradient says how the result changes when an input changes a tiny bit; whole numbers cannot change "
        "a tiny bit, so only floating point (and complex) tensors can require grad. torch.tensor([1, 2, 3]) makes "
        "int64 numbers.", "", "Fix:", "    x = torch.tensor([1., 2., 3.], requires_grad=True)   # 1. not 1: floats",
        "", "PyTorch said (RuntimeError):", "    Only Tensors of floating point"]
    e.anomaly = RERUNS[3]
    page = explanation_html(e, True)
    for label in ("<b>Why:</b>", "<b>Fix:</b>", "<b>Anomaly mode:</b>", "<b>PyTorch said (RuntimeError):</b>"):
        assert label in page


def test_the_english_anomaly_lines():
    assert [anomaly_lines(r) for r in RERUNS] == [
        ["not used: this error happens before backward runs any node, so anomaly mode has no",
         "forward call to point at. The cell was not run again."],
        ["the cell ran a second time, with anomaly mode on (its side effects ran twice).",
         "It named no forward call: the failing node's forward ran before this cell",
         "(anomaly mode only records forwards that run while it is on). Put the forward",
         "and the backward in one %%explain --anomaly cell."],
        ["the cell ran a second time, with anomaly mode on (its side effects ran twice).",
         "SigmoidBackward0 failed in backward; its forward call is line 2 of this cell:", "  2 | y = x.sigmoid()"],
        ["the cell ran a second time, with anomaly mode on (its side effects ran twice).",
         "ExpBackward0 failed in backward; its forward call ran in f, called from this cell:", "  return t.exp()"],
        ["the cell ran a second time, with anomaly mode on (its side effects ran twice).",
         "ExpBackward0 failed in backward; its forward call ran outside this cell:", "  return t.exp()"],
    ]


def test_the_english_kind_names():
    titles = [explanation_text(explanation_of(m, **w)).splitlines()[0] for m, w in GIVEN]
    assert titles == [f"autograd error explained ({k})" for k in [
        "backward twice", "non scalar", "inplace modified", "inplace modified", "leaf inplace", "leaf inplace",
        "int requires grad", "nonleaf grad", "device mismatch", "device mismatch", "device mismatch",
        "gradient shape"]]


def test_the_device_a_message_names_first_is_read_the_right_way_round():
    """'Tensor on device meta is not on the expected device cpu!' got meta where cpu was wanted, as
    'expected device cpu but got meta' does: both read the same way."""
    for message in ("Function BadBackward returned an invalid gradient at index 0 - expected device cpu but got meta",
                    "Tensor on device meta is not on the expected device cpu!"):
        assert explanation_of(message).summary == "a gradient on meta met a tensor on cpu.", message
