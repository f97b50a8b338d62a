"""The modules at the top of the package in Chinese: the magics' usage errors and their %name? help
(in the language of the moment, not of the registration), the freed-graph message, the figure's
text/plain stand-in; and the same texts unchanged in English."""
import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import autograd_lab as al
from autograd_lab.graph import snapshot
from autograd_lab.saved import freed_message
from autograd_lab.magics import BY_NAME, MAGICS
from helpers import CHINESE, assert_chinese

# (magic, line, what Python itself says in the message: kept as Python wrote it)
BAD_LINES = [
    ("backward", "", ()),
    ("backward", "nothing_here", ("name 'nothing_here' is not defined",)),
    ("backward", "z --gradient nope", ("name 'nope' is not defined",)),
    ("backward", "z --fast", ()),
    ("backward", "z --apply=yes", ()),
    ("backward", "z --gradient", ()),
    ("backward", "z --gradient=", ()),
    ("backward", "x +", ("invalid syntax",)),
    ("backward", "((", ("was never closed",)),
    ("backward", "1/0", ("division by zero",)),
    ("backward", "'abc", ("No closing quotation",)),
    ("graph", "", ()),
    ("graph", "z --x", ()),
    ("jacobian", "y", ()),
    ("jacobian", "", ()),
    ("jacobian", "y x --v", ()),
    ("storage", "", ()),
    ("exercise", "mean_square --seed x", ()),
    ("exercise", "mean_square --seed -1", ()),
    ("exercise", "mean_square --seed 99999999999999999999", ()),
]


@pytest.mark.parametrize(("magic", "line", "allowed"), BAD_LINES)
def test_usage_errors_are_chinese(zh, seeded, magic, line, allowed):
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic(magic, line)
    text = str(err.value)
    assert_chinese(text, allowed)
    assert "\n" not in text
    if magic != "backward" or line != "1/0":
        assert text.endswith("。用法：" + BY_NAME[magic].usage()), text


def test_exercise_without_a_name_lists_them_in_chinese(zh, seeded):
    from autograd_lab.practice.bank import exercises

    names = ", ".join(e.name for e in exercises())
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic("exercise", "")
    assert_chinese(str(err.value), (names,))
    assert str(err.value).startswith("请给出练习的名字，例如 %exercise mean_square。")


def test_an_unexpected_failure_is_one_chinese_line(zh, seeded, monkeypatch):
    import autograd_lab.stepper.graph_view as graph_view

    def broken(*args, **kwargs):
        raise RuntimeError("something inside went wrong")

    monkeypatch.setattr(graph_view, "show_graph", broken)
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic("graph", "z")
    assert str(err.value) == "%graph 未能完成：RuntimeError：something inside went wrong。用法：%graph z"


def test_usage_lines_keep_the_code_and_word_the_rest(zh):
    assert BY_NAME["backward"].usage() == "%backward z [--gradient g] [--predict] [--apply] [--inputs w]"
    assert BY_NAME["explain"].usage() == "%%explain [--original] [--anomaly]  （下面接单元格的代码）"


def help_text(shell, name: str) -> str:
    """What %name? shows (IPython's pinfo), as text."""
    return shell.object_inspect_mime("%" + name)["text/plain"]


def test_help_follows_the_language_of_the_moment(zh, ip):
    """The magics were registered in English (the ip fixture); %name? asks again when it is typed."""
    for magic in MAGICS:
        shown = help_text(ip, ("%" if magic.cell else "") + magic.name)
        assert magic.usage() in shown and "示例：" in shown and ("选项：" in shown) == bool(magic.flags)
        doc = magic.doc()
        assert doc in shown
        assert_chinese(doc)
    zh.language("en")
    shown = help_text(ip, "backward")
    assert "Options:" in shown and "ask for your prediction before each step is revealed" in shown
    assert not CHINESE.search(shown)


def test_the_freed_graph_message_is_chinese(zh, seeded):
    assert_chinese(freed_message("q"))
    assert freed_message("q").startswith("q 的计算图已经被一次 backward() 用过并释放了")
    assert "q.backward(retain_graph=True)" in freed_message("q")
    seeded.run_cell("q = (x * x).sum(); q.backward(); x.grad = None")
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic("backward", "q")
    assert freed_message("q") in str(err.value)


def test_snapshot_refuses_a_tensor_without_a_graph_in_chinese(zh):
    with pytest.raises(ValueError, match="这个张量没有 grad_fn"):
        snapshot(torch.ones(2))


def test_a_figure_stands_in_as_chinese_text(zh, ip):  # ip: a shell that formats as a kernel does
    x = torch.tensor([1., 2.], requires_grad=True)
    view = al.jacobian(x * 2, x, names={"x": x})
    with capture_output() as out:
        view._ipython_display_()
    assert out.outputs[0].data["image/png"][:4] == b"\x89PNG"
    assert out.outputs[0].data["text/plain"] == f"<图：{view.figure_title()}>"
    assert_chinese(out.outputs[0].data["text/plain"])


ENGLISH = [
    ("backward", "", "give the tensor to backward to look at. Usage: %backward z [--gradient g] [--predict] "
                     "[--apply] [--inputs w]"),
    ("backward", "x +", "'x +' is not a Python expression (invalid syntax). Usage: %backward z [--gradient g] "
                        "[--predict] [--apply] [--inputs w]"),
    ("backward", "1/0", "evaluating '1/0' raised ZeroDivisionError: division by zero"),
    ("backward", "'abc", "cannot read the line (No closing quotation). Usage: %backward z [--gradient g] [--predict] "
                         "[--apply] [--inputs w]"),
    ("backward", "z --gradient nope", "name 'nope' is not defined: run the cell that creates it first, or check the "
                                      "spelling. Usage: %backward z [--gradient g] [--predict] [--apply] [--inputs w]"),
    ("graph", "", "give the tensor to look at. Usage: %graph z"),
    ("graph", "z --x", "unknown option --x (options: none). Usage: %graph z"),
    ("jacobian", "y x --v", "--v needs a value. Usage: %jacobian y x [--v v]"),
    ("exercise", "mean_square --seed x", "--seed takes a whole number, got 'x'. Usage: %exercise NAME [--seed N]"),
    ("exercise", "mean_square --seed -1", "--seed takes a whole number from 0 to 4294967295, got -1. "
                                          "Usage: %exercise NAME [--seed N]"),
]


@pytest.mark.parametrize(("magic", "line", "expected"), ENGLISH)
def test_english_usage_errors_are_unchanged(seeded, magic, line, expected):
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic(magic, line)
    assert str(err.value) == expected


def test_english_texts_not_pinned_elsewhere(ip):
    assert BY_NAME["explain"].usage() == "%%explain [--original] [--anomaly]  (then the cell's code)"
    shown = help_text(ip, "jacobian")
    assert ("Options:\n  --v v                  the weights of y.backward(v), shaped like y\n\nExample:\n"
            "  y = x ** 2\n  %jacobian y x --v torch.tensor([1., 0., 2.])") in shown
    assert freed_message("q") == (
        "q's graph was already used by a backward() and freed: autograd releases the values a graph saved as soon "
        "as a backward has used them, to save memory. Re-run the cell that computed q; or, if you really need two "
        "backwards, call the first one as q.backward(retain_graph=True), which keeps the saved values alive.")
    x = torch.tensor([1., 2.], requires_grad=True)
    view = al.jacobian(x * 2, x, names={"x": x})
    with capture_output() as out:
        view._ipython_display_()
    assert out.outputs[0].data["text/plain"] == f"<figure: {view.figure_title()}>"
