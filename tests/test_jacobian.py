"""The Jacobian view: torch is the oracle (torch.autograd.functional.jacobian for the matrix,
torch.autograd.grad for v @ J), and nothing of the learner's changes."""
import pytest
import torch

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.jacobians.matrix import of_graph


def oracle(f, x):
    out = f(x.detach())
    return torch.autograd.functional.jacobian(f, x.detach()).reshape(out.numel(), x.numel())


def test_element_wise_gives_a_diagonal_jacobian():
    x = torch.tensor([1., 2., 3.], requires_grad=True, dtype=torch.double)
    view = al.jacobian(x ** 2, x)
    assert torch.equal(view.matrix, oracle(lambda t: t ** 2, x))
    assert torch.equal(view.matrix, torch.diag(2 * x.detach()))
    assert view.is_diagonal
    assert "diagonal: y[i] depends on x[i] alone" in view.text()


def test_matmul_gives_a_full_jacobian_equal_to_the_matrix():
    torch.manual_seed(0)
    W = torch.randn(4, 3, dtype=torch.double)
    x = torch.randn(3, requires_grad=True, dtype=torch.double)
    view = al.jacobian(W @ x, x)
    assert view.shape == (4, 3)
    assert torch.allclose(view.matrix, W)
    assert not view.is_diagonal
    assert view.nonzero == 12


def test_function_form_uses_jacrev_and_agrees_with_the_graph_form():
    torch.manual_seed(1)
    x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
    f = lambda t: torch.tanh(t).sum(dim=0) * t[0]  # noqa: E731
    from_f = al.jacobian(f, x)
    from_graph = al.jacobian(f(x), x)
    assert from_f.shape == (3, 6)
    assert torch.allclose(from_f.matrix, oracle(f, x))
    assert torch.allclose(from_graph.matrix, from_f.matrix)
    assert from_f.tensor.shape == (3, 2, 3)
    assert "torch.func.jacrev" in from_f.text()


def test_vjp_matches_what_backward_accumulates_and_nothing_is_written():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x ** 2
    v = torch.tensor([1., 0., 2.])
    view = al.jacobian(y, x, v=v)
    assert x.grad is None
    assert torch.equal(view.vjp, torch.tensor([2., 0., 12.]))
    y.backward(v)  # the oracle: the graph survived, and backward gives the same numbers
    assert torch.equal(view.backward_grad, x.grad)
    assert torch.equal(view.vjp, x.grad)
    assert "the same: backward(v) computes v @ J without building J" in view.text()


def test_existing_grads_and_retained_grads_are_left_alone():
    x = torch.tensor([1., 2.], requires_grad=True)
    old = torch.tensor([5., 5.])
    x.grad = old
    h = x * 3
    h.retain_grad()
    y = h.exp()
    names = {"x": x, "h": h, "y": y}
    view = al.jacobian(y, x, v=torch.ones(2), names=names)
    assert x.grad is old and torch.equal(old, torch.tensor([5., 5.]))
    assert h.grad is None
    assert torch.allclose(view.matrix, torch.diag(3 * torch.exp(3 * x.detach())))


def test_jacobian_through_an_intermediate_and_of_a_scalar():
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 2
    s = (h ** 2).sum()
    view = al.jacobian(s, h, v=torch.tensor(1.), names={"x": x, "h": h, "s": s})
    assert view.shape == (1, 2)
    assert torch.equal(view.matrix, (2 * h.detach()).reshape(1, 2))
    assert "s.backward(v) sends to h" in view.text()


def test_big_jacobians_are_summarised_and_kept_whole_in_matrix():
    x = torch.arange(20., requires_grad=True)
    view = al.jacobian(x.cumsum(0), x)
    text = view.text()
    assert view.matrix.shape == (20, 20)
    assert torch.equal(view.matrix, torch.tril(torch.ones(20, 20)))
    assert "top-left 6 x 6 corner" in text
    assert "x[19]" not in text
    x12 = torch.arange(12., requires_grad=True)
    assert "x12[11]" in al.jacobian(x12.cumsum(0), x12).text()


def test_text_is_deterministic_and_html_escaped():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * x
    a, b = al.jacobian(y, x).text(), al.jacobian(y, x).text()
    assert a == b and "0x" not in a
    assert "<table" in al.jacobian(y, x).html()


@pytest.mark.parametrize("call, words", [
    (lambda x: al.jacobian(x.detach() ** 2, x), "has no grad_fn"),
    (lambda x: al.jacobian((x ** 2), x.detach()), "does not require grad"),
    (lambda x: al.jacobian([1, 2], x), "tensor computed from x, or a function"),
    (lambda x: al.jacobian(x ** 2, [1., 2.]), "not a tensor"),
    (lambda x: al.jacobian(x ** 2, x, v=torch.ones(3)), "one weight per element"),
    (lambda x: al.jacobian(torch.ones(2, requires_grad=True) * 2, x), "does not depend on"),
    (lambda x: al.jacobian(lambda t: (t, t), x), "one tensor"),
])
def test_bad_input_gets_a_short_message_and_changes_nothing(call, words):
    x = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(LabInputError) as info:
        call(x)
    assert words in str(info.value)
    assert len(str(info.value)) < 300
    assert x.grad is None


def test_a_freed_graph_is_said_in_words():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x.exp()
    y.sum().backward()
    with pytest.raises(LabInputError, match="already freed"):
        of_graph(y, x)


def test_repr_is_one_line():
    x = torch.tensor([1., 2.], requires_grad=True)
    assert repr(al.jacobian(x * 2, x, names={"x": x}).model) == "<Jacobian dy/dx: 2 x 2>"


def test_the_function_form_runs_the_learners_function_once_in_chunks_of_rows(monkeypatch):
    """f runs once (a print or a counter in it runs once, as the learner wrote it); J's rows come in
    chunks from that run's pullback; torch.autograd.functional.jacobian is the oracle, and
    backward(v) goes through the engine on the same run's graph."""
    from autograd_lab.jacobians import matrix

    monkeypatch.setattr(matrix, "CHUNK_ENTRIES", 7)  # 5 x 4 outputs, 6 inputs: one row a chunk
    runs = []
    W = torch.arange(120., dtype=torch.double).reshape(5, 4, 6) / 50

    def f(t):
        runs.append(1)
        return torch.tanh(W @ t) * t.sum()

    x = torch.linspace(-1, 1, 6, dtype=torch.double)
    v = torch.linspace(0, 1, 20, dtype=torch.double).reshape(5, 4)
    jac = matrix.of_function(f, x, v)
    assert len(runs) == 1
    runs.clear()
    oracle = torch.autograd.functional.jacobian(f, x).reshape(20, 6)
    assert torch.allclose(jac.matrix, oracle, atol=1e-12)
    assert torch.allclose(jac.backward_grad, v.reshape(-1) @ oracle, atol=1e-12)
    assert not x.requires_grad and x.grad is None
