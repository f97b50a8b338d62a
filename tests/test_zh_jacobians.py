"""The Jacobian view in Chinese: jacobian() and %jacobian's text and HTML faces, picture and every
refusal speak Chinese (PyTorch's own words stay as PyTorch wrote them); the English faces are
unchanged, and a face is worded in the language of the moment it is shown."""
import io

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.format import width
from helpers import CHINESE, assert_chinese

def views():
    """A diagonal Jacobian with weights, one through an intermediate (sends to, not adds into), one
    of a scalar, a function's, a big one shown by its corner, a full one, an empty one."""
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    h = x * 2
    s = (h ** 2).sum()
    big = torch.arange(20., requires_grad=True)
    torch.manual_seed(0)
    W = torch.randn(4, 3)
    names = {"x": x, "h": h, "s": s, "big": big}
    return [
        al.jacobian(x ** 2, x, v=torch.tensor([1., 0., 2.]), names=names),
        al.jacobian(s, h, v=torch.tensor(1.), names=names),
        al.jacobian(x[:1] * 3, x, names=names),
        al.jacobian(lambda t: t.sin() * t[0], x, v=torch.ones(3), names=names),
        al.jacobian(big.cumsum(0), big, names=names),
        al.jacobian(W @ x, x, names=names),
        al.jacobian(x[:0] * 2, x, names=names),
    ]


def test_text_and_html_faces_are_chinese(zh):
    for view in views():
        assert_chinese(view.text())
        assert_chinese(view.html())
        assert_chinese(view.figure_title())


def test_the_faces_words(zh):
    first, through, scalar, function, big, *_ = views()
    text = first.text()
    assert text.splitlines()[0] == ("雅可比矩阵 dy/dx：3 x 3，y（形状 (3,)）的每个元素对应一行，"
                                    "x（形状 (3,)）的每个元素对应一列")
    assert ("计算方式：y 的每个元素调用一次 torch.autograd.grad（共 3 次，retain_graph=True）；"
            "没有写入任何 .grad") in text
    assert "对角矩阵：y[i] 只依赖于 x[i]（逐元素运算）；对角线为 [2., 4., 6.]" in text
    assert "两者相同：backward(v) 不构建 J 就算出了 v @ J" in text
    assert "s.backward(v) 传给 h 的梯度 = " in through.text()
    assert "共 1 次" in scalar.text()
    assert ("计算方式：在 torch.func.vjp 下运行一次 f，再把它的 pullback 按行向量化"
            "（与 torch.func.jacrev 的做法相同）") in function.text()
    assert "这里只显示左上角 6 x 6 的部分" in big.text()
    assert "没有写入任何 <code>.grad</code>" in first.html()


def test_the_weights_line_up_by_display_width(zh):
    lines = [line for line in views()[0].text().splitlines() if " = " in line]
    assert [line.split(" = ")[0].strip() for line in lines] == ["v", "v @ J", "y.backward(v) 累加到 x.grad 的梯度"]
    assert len({width(line[: line.index(" = ")]) for line in lines}) == 1, lines


def test_the_picture_is_chinese_and_draws_without_a_warning(zh):
    for view in views()[:5]:
        fig = view.figure()
        ax = fig.axes[0]
        assert ax.get_xlabel().endswith(" 的元素") and ax.get_ylabel().endswith(" 的元素")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")  # a missing glyph warns, and warnings fail the test
        assert buffer.getvalue()[:4] == b"\x89PNG"


def refusals():
    x = torch.tensor([1., 2.], requires_grad=True)
    freed = x.exp()
    freed.sum().backward()
    return [
        (lambda: al.jacobian(x.detach() ** 2, x), ()),
        (lambda: al.jacobian(x ** 2, x.detach()), ()),
        (lambda: al.jacobian([1, 2], x), ()),
        (lambda: al.jacobian(x ** 2, [1., 2.]), ()),
        (lambda: al.jacobian(x ** 2, x, v=torch.ones(3)), ()),
        (lambda: al.jacobian(x ** 2, x, v="no"), ()),
        (lambda: al.jacobian(torch.ones(2, requires_grad=True) * 2, x), ()),
        (lambda: al.jacobian(lambda t: (t, t), x), ()),
        (lambda: al.jacobian(freed, x), ()),
        (lambda: al.jacobian(torch.ones(5000, requires_grad=True) * 2, x), ()),
        (lambda: al.jacobian(x.long() * 1, x), ()),
        (lambda: al.jacobian(x * 2, x.long()), ()),
        # torch.func's own message is quoted as PyTorch wrote it
        (lambda: al.jacobian(lambda t: t.item(), x), ("a Tensor with 2 elements cannot be converted to Scalar",)),
    ]


@pytest.mark.parametrize("case", range(len(refusals())))
def test_refusals_are_chinese(zh, case):
    call, allowed = refusals()[case]
    with pytest.raises(LabInputError) as err:
        call()
    assert_chinese(str(err.value), allowed)


def test_jacobian_magic_in_chinese(zh, seeded):
    with capture_output() as out:
        seeded.run_line_magic("jacobian", "(x ** 2) x --v=torch.tensor([1., 0., 2.], dtype=torch.double)")
    shown = out.outputs[-1].data
    assert_chinese(shown["text/plain"])
    assert "(x ** 2).backward(v) 累加到 x.grad 的梯度" in shown["text/plain"]
    assert seeded.user_ns["x"].grad is None
    for line in ("y", "", "y x --v", "y x --v=torch.ones(2)", "z.detach() x"):
        with pytest.raises(UsageError) as err:
            seeded.run_line_magic("jacobian", line)
        assert_chinese(str(err.value))


def test_a_face_is_worded_when_it_is_shown(zh):
    view = views()[0]
    assert CHINESE.search(view.text())
    zh.language("en")
    assert view.text().startswith("Jacobian dy/dx: 3 x 3, one row per element of y (shape (3,))")
    assert not CHINESE.search(view.text() + view.html() + view.model.how)
    zh.language("zh")
    assert view.text().startswith("雅可比矩阵")


def test_english_faces_not_pinned_elsewhere():
    first, _through, scalar, function, big, full, empty = views()
    assert first.text().splitlines()[:2] == [
        "Jacobian dy/dx: 3 x 3, one row per element of y (shape (3,)), one column per element of x (shape (3,))",
        "computed with one torch.autograd.grad per element of y (3 calls, retain_graph=True); nothing was written "
        "to any .grad"]
    engine = "y.backward(v) adds into x.grad"
    assert first.text().splitlines()[-4:] == [
        f"{'v':<{len(engine)}} = [1., 0., 2.]",
        f"{'v @ J':<{len(engine)}} = [2., 0., 12.]",
        f"{engine} = [2., 0., 12.]",
        "the same: backward(v) computes v @ J without building J"]
    assert "(1 call, retain_graph=True)" in scalar.text() and "(0 calls, retain_graph=True)" in empty.text()
    assert ("computed with one run of f under torch.func.vjp, its pullback vectorised over the rows (as "
            "torch.func.jacrev does); nothing was written to any .grad") in function.text()
    assert "non-zero entries: 12 of 12" in full.text()
    assert ("shown: the top-left 6 x 6 corner; the whole matrix is .matrix (400 numbers, norm 14.4914)"
            in big.text())
    assert "<br>computed with one torch.autograd.grad" in first.html()
    assert "nothing was written to any <code>.grad</code></p>" in first.html()
    ax = first.figure().axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("element of x", "element of y", "dy/dx: 3 x 3")
    for call, words in [
        (lambda x: al.jacobian(x ** 2, x, v="no"), "v must be a tensor shaped like y, got str. E.g. "
                                                   "v=torch.ones_like(y)."),
        (lambda x: al.jacobian(x.long() * 1, x), "y holds int64 numbers; the Jacobian view takes real floating "
                                                 "point tensors, e.g. y.double()."),
        (lambda x: al.jacobian(x ** 2, [1.]), "the input x is a list, not a tensor."),
    ]:
        with pytest.raises(LabInputError) as err:
            call(torch.tensor([1., 2.], requires_grad=True))
        assert str(err.value).startswith(words)
