"""The storage lab in Chinese: %storage's text and HTML faces, the memory picture, the widget and
every refusal speak Chinese (PyTorch's own messages stay as PyTorch wrote them); the English faces
are unchanged, and each face is worded in the language of the moment it is shown."""
import html
import io
import re

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.format import width
from autograd_lab.storage import faces
from autograd_lab.storage.memory import memory
from autograd_lab.storage.picture import picture
from autograd_lab.storage.view import StorageView
from helpers import CHINESE, assert_chinese, widgets

def leaf():
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


def pytorch_words(report) -> tuple[str, ...]:
    """What PyTorch itself said in a report (its errors and warnings): kept in English, as they are
    and as the HTML faces escape them."""
    said = [r.message for r in report if r.message] + [w for r in report for w in r.warnings]
    return tuple(said) + tuple(html.escape(t, quote=True) for t in said)


def subjects():
    """Tensors that bring out every sentence of the faces: a leaf with other names in its storage, a
    view of a non-leaf, a non-contiguous tensor, one that needs no grad, a complex one, an expanded one."""
    x = leaf()
    w = torch.arange(4.0, requires_grad=True)
    q = (w * 2)[1:]
    a = w[1:]
    return [
        (x, "x", {"x": x, "d": x.detach(), "v": x[1:]}),
        (a, "a", {"w": w, "a": a}),
        (q, "q", {"w": w, "q": q}),
        (torch.arange(6.0).reshape(2, 3).t(), "t", {}),
        (torch.tensor([1.0, 2.0]), "c", {}),
        (torch.tensor([1 + 2j, 3 - 1j]), "z", {}),
        (torch.ones(2).expand(3, 2), "e", {}),
        (torch.zeros(3, requires_grad=True), "o", {}),
    ]


@pytest.mark.parametrize("edit", ["mul_", "add_", "zero_", "numpy"])
def test_text_and_html_faces_are_chinese(zh, edit):
    for tensor, name, names in subjects():
        view = al.compare_storage(tensor, edit=edit, name=name, names=names)
        allowed = pytorch_words(view.report)
        assert_chinese(view.text(), allowed)
        assert_chinese(view.html(), allowed)


def test_the_table_words_are_chinese_and_aligned_by_display_width(zh):
    text = al.compare_storage(leaf(), name="x").text()
    table = text.split("\n\n")[1].splitlines()
    assert table[0].split()[:3] == ["副本", "存储", "版本计数器"] and "在计算图中" in table[0]
    assert "b.mul_(2) 之后" in table[0]
    row = next(line for line in table if line.startswith("x.data "))
    assert row.split()[1:3] == ["共享", "独立"] and row.endswith("静默出错")
    # every column starts at the same display column on every line (a Chinese character takes two)
    starts = {tuple(width(line[: m.start()]) for m in re.finditer(r"(?<=  )\S", line)) for line in table}
    assert len(starts) == 1, table


def test_the_namespace_notes_say_each_relation_in_chinese(zh):
    x = leaf()
    notes = faces.subject_notes(al.compare_storage(x, name="x", names={"x": x, "d": x.detach(), "v": x[1:]})
                                .report.subject)
    assert "在你的命名空间中，d 与 x 共享存储。" in notes and "在你的命名空间中，v 是 x 的视图。" in notes
    w = torch.arange(4.0, requires_grad=True)
    a = w[1:]
    report = al.compare_storage(a, name="a", names={"w": w, "a": a}).report
    assert "在你的命名空间中，w 是基张量，a 是它的视图。" in faces.subject_notes(report.subject)
    assert ("w", "is the base a is a view of") in report.subject.relatives  # the data stays English


def test_the_widget_speaks_chinese_before_and_after_an_edit(zh):
    a = leaf()
    view = al.compare_storage(a)
    found = {c: w for w in widgets(view.widget) for c in w.get_state().get("_dom_classes", ())}
    button, copy, edit = found["agl-storage-apply"], found["agl-storage-copy"], found["agl-storage-edit"]
    for text in (button.description, button.tooltip, copy.description, edit.description,
                 found["agl-storage-result"].value):
        assert CHINESE.search(text), text
    assert_chinese(found["agl-storage-result"].value)
    assert dict(edit.options)["通过 numpy 写入：n = b.numpy(); n *= 2"] == "numpy"
    # one edit for each outcome: error, silently wrong, refused, ok, a numpy write, a copy PyTorch warns about
    for key, kind in (("detach()", "mul_"), (".data", "zero_"), ("view(-1)", "mul_"), ("clone()", "add_"),
                      ("detach().numpy()", "numpy"), ("torch.tensor(a)", "mul_")):
        copy.value, edit.value = key, kind
        button.click()
        allowed = pytorch_words(al.compare_storage(a, edit=kind).report)
        assert_chinese(found["agl-storage-result"].value, allowed)
        assert_chinese(found["agl-storage-table"].value, allowed)
    assert a._version == 0 and a.grad is None


def test_outcome_lines_say_what_changed_in_chinese(zh):
    view = StorageView(leaf(), "x")
    row, _report, _mem = view.apply(".data", "zero_")
    lines = faces.outcome_lines(row, "x")
    assert lines[0] == "b = x.data; b.zero_()"
    assert lines[1] == "被改变的：x 和 b = x.data（同一块存储：修改在两者上都能看到）。"
    assert lines[2] == "x 的版本计数器保持为 0。"
    assert lines[3].startswith("接下来 y = x * x 的反向传播：没有报错，但梯度是错的：")
    assert "静默出错" in faces.outcome_html(row, "x")


def test_the_memory_picture_is_chinese_and_draws_without_a_warning(zh):
    a = leaf()
    view = StorageView(a, "x")
    for key, edit in ((None, "mul_"), (".data", "zero_"), ("view(-1)", "mul_"), ("detach()", "numpy")):
        report = view.report if key is None else view.apply(key, edit)[1]
        fig = picture(memory(a, report, key, edit))
        ax = fig.axes[0]
        texts = [t.get_text().replace("\n", " ") for t in ax.texts] + [ax.get_title(loc="left")]  # lines: at spaces
        joined = "\n".join(texts)
        assert_chinese(joined, pytorch_words(report) + (memory(a, report, key, edit).refused or "",))
        assert "x 及其副本的内存" in texts and "无计数器" in texts
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")  # a missing glyph warns, and warnings fail the test
        assert buffer.getvalue()[:4] == b"\x89PNG"
    assert view.figure_title() == "x 及其副本的内存"


@pytest.mark.parametrize("bad", [
    3,
    torch.tensor([1, 2, 3]),
    torch.zeros(2).to_sparse(),
    torch.zeros(2_000_000),
])
def test_refusals_are_chinese(zh, bad):
    with pytest.raises(LabInputError) as err:
        al.compare_storage(bad, name="b")
    assert_chinese(str(err.value))


def test_other_refusals_are_chinese(zh):
    with torch.inference_mode():
        made = torch.ones(2)
    for call in (lambda: al.compare_storage(made), lambda: al.compare_storage(leaf(), edit="div_"),
                 lambda: StorageView(leaf()).apply("copy()", "mul_")):
        with pytest.raises(LabInputError) as err:
            call()
        assert_chinese(str(err.value))


def test_storage_magic_in_chinese(zh, ip):
    ip.user_ns["a"] = leaf()
    with capture_output() as out:
        ip.run_line_magic("storage", "a")
    shown = out.outputs[-1].data
    assert "静默出错" in shown["text/plain"] and "a.detach()" in shown["text/plain"]
    for value, line in ((3, "x"), (torch.tensor([1, 2]), "x"), (None, "")):
        if value is not None:
            ip.user_ns["x"] = value
        with pytest.raises(UsageError) as err:
            ip.run_line_magic("storage", line)
        assert_chinese(str(err.value))
        assert ("用法：%storage a" in str(err.value)) == (line == "")


def test_a_face_is_worded_when_it_is_shown(zh):
    view = al.compare_storage(leaf(), name="x")
    assert CHINESE.search(view.text())
    zh.language("en")
    assert view.text().startswith("x: a leaf tensor, of shape (3,), float32, that requires grad;")
    assert not CHINESE.search(view.text() + view.html())
    zh.language("zh")
    assert view.text().startswith("x：叶子张量")


def test_english_faces_not_pinned_elsewhere():
    w = torch.arange(4.0, requires_grad=True)
    q = (w * 2)[1:]
    report = al.compare_storage(q, name="q", names={"w": w, "q": q}).report
    assert faces.describe(report.subject) == (
        "q: a non-leaf tensor made by SliceBackward0, a view onto a base of shape (4,) (at offset 1, stride (1,)), "
        "of shape (3,), float32, that requires grad; version counter at 0.")
    assert faces.subject_notes(report.subject) == [
        "q is a view: every copy that shares storage shares its base's whole storage, not only the part q shows."]
    x = leaf()
    notes = faces.subject_notes(al.compare_storage(x, name="x", names={"x": x, "v": x[1:]}).report.subject)
    assert notes == ["In your namespace, v is a view of x."]
    t = faces.subject_notes(al.compare_storage(torch.arange(6.0).reshape(2, 3).t(), name="t").report.subject)
    assert t == ["t is a view: every copy that shares storage shares its base's whole storage, not only the part t "
                 "shows.",
                 "t does not require grad; the twins do, as a parameter would (t.requires_grad_() makes yours one).",
                 "t is not contiguous, so it has no flat view(-1); the view row is a slice."]
    view = StorageView(x, "x")
    assert view.figure_title() == "memory of x and its copies"
    row, report, mem = view.apply("clone()", "mul_")
    assert faces.outcome_lines(row, "x")[1:] == [
        "Changed: only b = x.clone().", "x's version counter stayed at 0.",
        "Next backward of y = x * x: backward ran and gave the correct gradient [2., 4., 6.]."]
    assert "x holds [1., 2., 3.], its version counter V0 = 0" in faces.table_html(report, "clone()", mem)
    texts = [t.get_text() for t in picture(mem).axes[0].texts]
    assert "in the graph: a gradient flows back through it" in texts and "no counter" in texts
    assert "offset 0, shape [3], stride [1]" in texts and "After x.clone(): b.mul_(2) (applied)" in texts
    found = {c: w for w in widgets(view.widget) for c in w.get_state().get("_dom_classes", ())}
    assert found["agl-storage-copy"].description == "copy b =" and found["agl-storage-edit"].description == "edit"
    assert found["agl-storage-result"].value == ("Pick a copy and an edit, then press Apply edit. It runs on a twin "
                                                 "of x; yours is not touched.")
    assert dict(found["agl-storage-edit"].options)["write through numpy: n = b.numpy(); n *= 2"] == "numpy"
    assert found["agl-storage-apply"].tooltip == "run the edit on a twin, never on your tensor"
