"""%jacobian keeps the promise: it writes no .grad of any tensor however it is held, puts the random
state back, runs the learner's hooks as autograd does and says how often, bounds J before computing
anything and its peak while computing, and answers bad input and a function that raises with one
short message. torch.autograd.functional.jacobian is the oracle for every J."""
import random
import weakref

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.jacobians import matrix


def oracle(f, x):
    out = f(x.detach())
    return torch.autograd.functional.jacobian(f, x.detach()).reshape(out.numel(), x.numel())


def leaf(*values):
    return torch.tensor(values, requires_grad=True)


# -- no .grad written, however the tensor is held ------------------------------------------------

class Retaining(torch.nn.Module):
    """A module whose forward keeps its hidden tensor as self.h and asks it to retain its grad."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, t):
        self.h = self.lin(t)
        self.h.retain_grad()
        return self.h.tanh()


def test_a_retained_tensor_in_a_list_or_on_a_module_and_the_leaves_keep_their_grad():
    x = leaf(1., 2., 3.)
    held = [x * 2]
    held[0].retain_grad()
    view = al.jacobian(held[0] ** 2, x, v=torch.ones(3), names={})
    torch.testing.assert_close(view.matrix, oracle(lambda t: (t * 2) ** 2, x))
    assert held[0].grad is None and x.grad is None
    model = Retaining()
    y = model(x)
    h = model.h
    view = al.jacobian(y, x, v=torch.ones(3), names={})
    assert h.grad is None and x.grad is None
    assert model.lin.weight.grad is None and model.lin.bias.grad is None
    y.backward(torch.ones(3))  # the learner's own backward still works, and writes what it writes
    torch.testing.assert_close(x.grad, view.backward_grad)
    assert h.grad is not None
    torch.testing.assert_close(view.matrix, oracle(model, x))  # runs the forward again (a new model.h)


def test_a_function_form_leaves_parameters_and_existing_grads_alone():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    lin.weight.grad = torch.full((2, 3), 7.)
    kept = lin.weight.grad
    x = leaf(1., 2., 3.)
    view = al.jacobian(lambda t: lin(t).sin(), x, v=torch.ones(2), names={})
    torch.testing.assert_close(view.matrix, oracle(lambda t: lin(t).sin(), x))
    assert lin.weight.grad is kept and torch.equal(kept, torch.full((2, 3), 7.)) and lin.bias.grad is None
    assert x.grad is None


def test_a_function_that_retains_grad_inside_is_refused_in_words_and_writes_nothing():
    model = Retaining()
    x = leaf(1., 2., 3.)
    with pytest.raises(LabInputError) as err:
        al.jacobian(model, x, v=torch.ones(3), names={})
    text = str(err.value)
    assert "torch.func.jacrev" in text and "jacobian(y, x)" in text and len(text) < 1300
    assert model.lin.weight.grad is None and x.grad is None


def test_a_function_forms_module_buffers_are_put_back():
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm1d(3)
    mean, count = bn.running_mean.clone(), bn.num_batches_tracked.clone()
    versions = bn.running_mean._version, bn.num_batches_tracked._version
    with pytest.raises(LabInputError):  # torch.func refuses a batch norm in training mode
        al.jacobian(bn, torch.randn(4, 3), names={})
    assert torch.equal(bn.running_mean, mean) and torch.equal(bn.num_batches_tracked, count)
    assert (bn.running_mean._version, bn.num_batches_tracked._version) == versions
    bn.eval()
    x = torch.randn(4, 3, dtype=torch.double)
    bn.double()
    torch.testing.assert_close(al.jacobian(bn, x, names={}).matrix, oracle(bn, x))


# -- the random state ------------------------------------------------------------------------------

def test_dropout_in_f_leaves_the_random_state_as_it_was_and_j_is_the_oracles():
    drop = torch.nn.Dropout(0.5)
    x = torch.linspace(1., 2., 8, dtype=torch.double)
    f = lambda t: drop(t) * t  # noqa: E731
    torch.manual_seed(3)
    expected = torch.autograd.functional.jacobian(f, x)
    torch.manual_seed(3)
    before, before_py = torch.get_rng_state(), random.getstate()
    view = al.jacobian(f, x, v=torch.ones(8, dtype=torch.double), names={})
    assert torch.equal(torch.get_rng_state(), before) and random.getstate() == before_py
    torch.testing.assert_close(view.matrix, expected)
    # the forward behind backward(v) drew the same mask as the one behind J
    torch.testing.assert_close(view.vjp, view.backward_grad)
    assert "the same: backward(v)" in view.text()


def test_a_hook_that_draws_random_numbers_leaves_the_random_state_as_it_was():
    x = leaf(1., 2., 3.)
    h = x * 2
    h.register_hook(lambda g: g + 0 * torch.rand_like(g))
    before = torch.get_rng_state()
    al.jacobian(h ** 2, x, names={})
    assert torch.equal(torch.get_rng_state(), before)


# -- the learner's hooks run, and are told --------------------------------------------------------


def test_a_tensor_hook_runs_once_per_row_changes_j_as_autograd_does_and_is_told():
    ran = []

    def double(g):
        ran.append(1)
        return g * 2

    def f(t):
        u = t * 3
        u.register_hook(double)
        return u ** 2

    x = leaf(1., 2., 3.)
    h = x * 3
    handle = h.register_hook(double)
    hooks_before = list(h._backward_hooks.items())
    y = h ** 2
    view = al.jacobian(y, x, names={"x": x, "h": h, "y": y})
    assert len(ran) == 3
    expected = torch.autograd.functional.jacobian(f, x.detach())  # the same hook, in the oracle's own graph
    torch.testing.assert_close(view.matrix, expected)
    assert not torch.allclose(view.matrix, oracle(lambda t: (t * 3) ** 2, x))
    told = "your hook double on h ran 3 times, once per row of J: J is what autograd computes with it"
    assert told in view.text() and told in view.html()
    assert list(h._backward_hooks.items()) == hooks_before  # the same hook object, unwrapped
    ran.clear()
    view = al.jacobian(y, x, v=torch.ones(3), names={"x": x, "h": h, "y": y})
    assert len(ran) == 4
    assert "your hook double on h ran 4 times, once per row of J and once for backward(v)" in view.text()
    handle.remove()
    assert "your hook" not in al.jacobian(h ** 2, x, names={"x": x, "h": h}).text()


def test_node_and_module_hooks_are_counted_too():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
    model[0].register_full_backward_hook(lambda m, gi, go: None)
    x = leaf(1., 2.)
    y = model(x)
    z = y * 1
    z.grad_fn.register_hook(lambda gi, go: None)
    view = al.jacobian(z, x, names={"x": x, "z": z, "model": model})
    torch.testing.assert_close(view.matrix, oracle(lambda t: model(t) * 1, x))
    text = view.text()
    assert "your backward hook a lambda on module model.0 ran 2 times, once per row of J" in text
    assert "your hook a lambda on node MulBackward0 ran 2 times, once per row of J" in text


def test_a_hook_that_fails_is_named_in_one_short_message_and_nothing_changes():
    x = leaf(1., 2.)
    h = x * 2
    h.retain_grad()

    def broken(g):
        raise ZeroDivisionError("no " * 2000)

    h.register_hook(broken)
    hooks_before = list(h._backward_hooks.values())
    with pytest.raises(LabInputError) as err:
        al.jacobian(h ** 2, x, names={"x": x, "h": h})
    text = str(err.value)
    assert text.startswith("your hook broken on h raised ZeroDivisionError: no no")
    assert len(text) < 1300 and "\n" not in text
    assert list(h._backward_hooks.values()) == hooks_before and h.grad is None and x.grad is None


def test_a_backward_started_by_a_hook_writes_no_grad():
    p = leaf(1., 1.)

    def noisy(g):
        with torch.enable_grad():  # learner code inside the engine writes p.grad
            (p * 2).sum().backward()
        return g

    x = leaf(1., 2.)
    h = x * 2
    h.register_hook(noisy)
    view = al.jacobian(h ** 2, x, names={"x": x, "h": h})
    torch.testing.assert_close(view.matrix, oracle(lambda t: (t * 2) ** 2, x))
    assert p.grad is None and x.grad is None


# -- bounded: the size of J before anything runs, the peak while it is computed -------------------

class Peak(TorchDispatchMode):
    """Counts the bytes of every storage an operation makes while the mode is on (autograd's engine
    included), until it is freed: .peak is the most alive at once."""

    def __init__(self):
        super().__init__()
        self.live, self.now, self.peak = {}, 0, 0

    def _freed(self, key):
        self.now -= self.live.pop(key)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                storage = t.untyped_storage()
                if id(storage) not in self.live:
                    self.live[id(storage)] = storage.nbytes()
                    self.now += storage.nbytes()
                    weakref.finalize(storage, self._freed, id(storage))
                    self.peak = max(self.peak, self.now)
        return out


def test_a_4096_by_30000_jacobian_is_refused_before_anything_is_computed():
    x = torch.zeros(30_000, requires_grad=True)
    y = x[:4096] * 2
    ran = []
    y.register_hook(lambda g: ran.append(1))
    with Peak() as peak, pytest.raises(LabInputError) as err:
        al.jacobian(y, x, names={"x": x, "y": y})
    text = str(err.value)
    assert "4096 x 30000" in text and "122,880,000" in text and "4,194,304" in text
    assert "jacobian(y[:10], x)" in text and "y.backward(v)" in text and len(text) < 500
    assert ran == [] and peak.peak < 2 ** 20  # not one row was computed
    with Peak() as peak, pytest.raises(LabInputError) as err:
        al.jacobian(lambda t: t[:4096] * 2, x.detach(), names={"x": x})
    assert "4,194,304" in str(err.value) and "jacobian(lambda t: f(t)[:10], x)" in str(err.value)
    assert peak.peak < 2 ** 20  # one forward of f, no row of J
    assert "4,194,304" in (matrix.of_graph.__doc__ or "") and "4,194,304" in (matrix.of_function.__doc__ or "")


def test_the_graph_form_holds_j_and_one_row_at_a_time():
    x = torch.randn(4000, requires_grad=True)
    y = x.cumsum(0)[:500]
    row = 4000 * 4
    with Peak() as peak:
        view = al.jacobian(y, x, names={})
    j = view.matrix.numel() * 4
    assert view.shape == (500, 4000)
    torch.testing.assert_close(view.matrix, oracle(lambda t: t.cumsum(0)[:500], x))
    # all the rows held until they are stacked would be J twice over; one row at a time is J and a few rows
    assert peak.peak - j <= 8 * row, (peak.peak, j)


def test_the_function_form_computes_in_chunks():
    x = torch.randn(4000)
    f = lambda t: t.cumsum(0)[:500]  # noqa: E731
    with Peak() as peak:
        view = al.jacobian(f, x, names={})
    j = view.matrix.numel() * 4
    torch.testing.assert_close(view.matrix, oracle(f, x))
    chunk = matrix.CHUNK_ENTRIES * 4  # the bytes of one chunk of rows of J
    # torch.func.jacrev without chunks holds every row's basis and gradient at once (J several times over)
    assert peak.peak - j <= 8 * chunk, (peak.peak, j, chunk)


# -- one short message for a function that raises, and for bad types ------------------------------

@pytest.mark.parametrize("f, kind", [
    (lambda t: 1 / 0, "ZeroDivisionError"),
    (lambda t: t.no_such_method(), "AttributeError"),
    (lambda t: torch.ones(3) @ torch.ones(4), "RuntimeError"),
])
def test_a_function_that_raises_is_told_in_one_short_message(f, kind):
    x = leaf(1., 2.)
    before = torch.get_rng_state()
    with pytest.raises(LabInputError) as err:
        al.jacobian(f, x, names={"x": x})
    text = str(err.value)
    assert text.startswith(f"f(x) raised {kind}: ") and len(text) < 1300 and "\n" not in text
    assert err.value.__cause__ is None and err.value.__suppress_context__
    assert torch.equal(torch.get_rng_state(), before) and x.grad is None


def test_a_long_error_is_quoted_head_and_tail():
    def loud(t):
        raise ValueError("start " + "x" * 10 ** 6 + " end")

    with pytest.raises(LabInputError) as err:
        al.jacobian(loud, leaf(1., 2.), names={})
    text = str(err.value)
    assert len(text) < 1300 and "start" in text and "end" in text and "characters" in text


@pytest.mark.parametrize("call, words", [
    (lambda x: al.jacobian(x ** 2, x, names=5), "names must be a mapping"),
    (lambda x: al.jacobian(None, x), "got a NoneType"),
    (lambda x: al.jacobian(lambda t: 3, x), "it returned a int"),
    (lambda x: al.jacobian(lambda t: (t > 0), x), "holds bool numbers"),
    (lambda x: al.jacobian(x ** 2, x, v=[[1, 2], [3, 4]]), "one weight per element"),
    (lambda x: al.jacobian(x ** 2, x, v={"a": 1}), "v must be a tensor"),
])
def test_bad_argument_types_give_a_lab_input_error(call, words):
    x = leaf(1., 2.)
    with pytest.raises(LabInputError) as err:
        call(x)
    assert words in str(err.value) and len(str(err.value)) < 400
    assert x.grad is None


def test_long_labels_are_shortened_for_display(seeded):
    expr = "(x" + " + 0 * x" * 2000 + ")"
    with capture_output() as out:
        seeded.run_line_magic("jacobian", f"{expr} x")
    text = out.outputs[-1].data["text/plain"]
    assert len(text) < 5000 and "characters)" in text
    assert seeded.user_ns["x"].grad is None


def test_the_magic_tells_a_function_that_raises_in_one_line(seeded):
    seeded.run_cell("def g(t):\n    raise KeyError('missing ' * 500)\n")
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic("jacobian", "g x")
    text = str(err.value)
    assert text.startswith("g(x) raised KeyError: ") and len(text) < 1300 and "\n" not in text


def test_the_new_words_speak_chinese(zh):
    from helpers import assert_chinese

    x = leaf(1., 2., 3.)
    h = x * 3
    h.register_hook(lambda g: g * 2)
    view = al.jacobian(h ** 2, x, v=torch.ones(3), names={"x": x, "h": h})
    assert "运行了 4 次：J 的每一行一次，backward(v) 一次" in view.text()
    assert_chinese(view.text()) and assert_chinese(view.html())
    big = torch.zeros(30_000, requires_grad=True)
    for call, allowed in [
        (lambda: al.jacobian(big[:4096] * 2, big), ()),
        (lambda: al.jacobian(lambda t: t[:4096] * 2, big.detach()), ()),
        (lambda: al.jacobian(lambda t: 1 / 0, x), ("division by zero",)),
        (lambda: al.jacobian(x ** 2, x, names=5), ()),
    ]:
        with pytest.raises(LabInputError) as err:
            call()
        assert_chinese(str(err.value), allowed)


def test_ctrl_c_in_a_hook_reaches_the_learner_with_everything_put_back():
    x = leaf(1., 2.)
    h = x * 2
    h.retain_grad()

    def stop(g):
        raise KeyboardInterrupt

    h.register_hook(stop)
    hooks_before = list(h._backward_hooks.values())
    before = torch.get_rng_state()
    with pytest.raises(KeyboardInterrupt):
        al.jacobian(h ** 2, x, names={})
    assert list(h._backward_hooks.values()) == hooks_before and h.grad is None and x.grad is None
    assert torch.equal(torch.get_rng_state(), before)


def test_the_jacobian_of_x_itself_is_the_identity():
    x = leaf(1., 2., 3.)
    v = torch.tensor([1., 0., 2.])
    view = al.jacobian(x, x, v=v, names={})
    assert torch.equal(view.matrix, oracle(lambda t: t, x))
    x.backward(v)  # the oracle for what backward(v) adds into x.grad
    assert torch.equal(view.backward_grad, x.grad) and torch.equal(view.vjp, x.grad)
