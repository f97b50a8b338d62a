"""The reliability suite: the stepper's promises on a zoo of graphs a learner really builds.

For each kind of graph: the values equal the engine's (torch.autograd.grad is the oracle, asked
last because it runs the learner's hooks too), nothing of the learner's changed (values, .grad
objects and their values, versions, hook counts, buffers, the random state), a refusal is one
short LabInputError (never a traceback wall), and every output stays within its size bound."""
import warnings

import pytest
import torch
from torch.utils.checkpoint import checkpoint

import autograd_lab as al
from autograd_lab.errors import LabInputError
from helpers import Cube, hooks_on, printed, torch_attributes, walk

LIMIT = 100_000  # bytes of text + HTML in one output


class Case:
    def __init__(self, output, watch=(), names=None, gradient=None, refused=None, modules=(), hooks=None):
        self.output, self.gradient = output, gradient
        self.watch = list(watch)  # the learner's tensors, however they hold them
        self.names = names or {}
        self.refused = refused  # words the refusal must contain
        self.modules = list(modules)
        self.hooks = hooks  # a list the learner's hooks append to: how many times they ran


def leaf(*values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


def _seed():
    x = leaf(1., 2., 3., dtype=torch.double)
    y = x ** 2
    return Case(y.mean(), [x, y], {"x": x, "y": y})


def _tensor_hook():
    x, ran = leaf(1., 2.), []
    y = x * 3
    y.register_hook(lambda g: ran.append(1) or g * 10)
    return Case((y ** 2).sum(), [x, y], {"x": x, "y": y}, hooks=ran)


def _leaf_hook():
    x, ran = leaf(1., 2.), []
    x.register_hook(lambda g: ran.append(1) or g + 1)
    return Case((x * x).sum(), [x], {"x": x}, hooks=ran)


def _inplace_hook():
    x, ran = leaf(1., 2.), []
    y = x * 3
    z = y * 2

    def zero(g):
        ran.append(1)
        g.mul_(0)
    y.register_hook(zero)
    return Case(z.sum(), [x, y, z], {"x": x, "y": y}, hooks=ran)


def _node_post_hook():
    x, ran = leaf(1., 2.), []
    y = x.sin()
    y.grad_fn.register_hook(lambda gi, go: ran.append(1))
    return Case(y.sum(), [x, y], {"x": x}, hooks=ran)


def _node_pre_hook():
    x, ran = leaf(1., 2.), []
    y = x.exp()
    y.grad_fn.register_prehook(lambda go: ran.append(1))
    return Case(y.sum(), [x, y], {"x": x}, hooks=ran)


def _module_hook():
    torch.manual_seed(0)
    lin, ran = torch.nn.Linear(3, 2), []
    lin.register_full_backward_hook(lambda m, gi, go: ran.append(1))
    x = torch.randn(4, 3, requires_grad=True)
    return Case(lin(x).pow(2).sum(), [x, lin.weight, lin.bias], {"lin": lin, "x": x}, modules=[lin], hooks=ran)


def _module_pre_hook():
    torch.manual_seed(0)
    lin, ran = torch.nn.Linear(3, 2), []
    lin.register_full_backward_pre_hook(lambda m, go: ran.append(1))
    x = torch.randn(4, 3, requires_grad=True)
    return Case(lin(x).sum(), [x, lin.weight], {"lin": lin, "x": x}, modules=[lin], hooks=ran)


def _optimizer_in_backward():
    p, ran = torch.nn.Parameter(torch.tensor([1., 2., 3.])), []
    p.register_post_accumulate_grad_hook(lambda q: ran.append(1) or q.data.add_(q.grad, alpha=-0.1))
    case = Case((p ** 2).sum(), [p], {"p": p}, hooks=ran)
    case.expected_runs = 0  # an optimizer step inside backward must not run during a recording
    return case


def _retained(hold):
    def make():
        x = leaf(1., 2., 3.)
        act = x.tanh()
        act.retain_grad()
        act.grad = torch.full((3,), 7.)
        held = hold(act)
        case = Case((act * x).sum(), [x, act], {"x": x, "held": held})
        return case
    return make


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        self.act = self.lin(x).relu()
        self.act.retain_grad()
        return self.act.sum()


def _retained_module_attribute():
    torch.manual_seed(0)
    net = _Net()
    out = net(torch.randn(2, 3))
    return Case(out, [net.act, net.lin.weight], {"net": net}, modules=[net])


def _retained_closure():
    x = leaf(1., 2.)

    def make():
        hidden = x * 5
        hidden.retain_grad()
        return (lambda: hidden), hidden.sum()
    get, out = make()
    return Case(out, [x, get()], {"x": x, "get": get})


def _checkpoint_plain():
    torch.manual_seed(0)
    lin, bn, drop = torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3), torch.nn.Dropout(0.5)
    x = torch.randn(4, 3, requires_grad=True)
    out = checkpoint(lambda t: drop(bn(lin(t))), x, use_reentrant=False).pow(2).sum()
    return Case(out, [x, lin.weight], {"lin": lin, "bn": bn, "x": x}, modules=[lin, bn])


def _checkpoint_reentrant():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 3)
    x = torch.randn(4, 3, requires_grad=True)
    out = checkpoint(lin, x, use_reentrant=True).sum()
    return Case(out, [x, lin.weight], {"lin": lin}, refused=["use_reentrant=False"], modules=[lin])


def _inplace_allowed():
    x = leaf(1., 2., 3.)
    y = x * 2
    y.add_(1)  # AddBackward of a mul that saved nothing of y: allowed
    return Case(y.sum(), [x, y], {"x": x, "y": y})


def _inplace_broken():
    x = leaf(1., 2., 3.)
    y = x.sigmoid()
    z = y.sum()
    y.mul_(2)
    return Case(z, [x, y], {"x": x, "y": y, "z": z}, refused=["in place", "out of place"])


def _views():
    x = torch.arange(12., requires_grad=True)
    v = x.view(3, 4)[1:, ::2].t()
    return Case((v * v).sum(), [x], {"x": x, "v": v})


def _multiple_outputs():
    x = leaf(3., 1., 2., 5.)
    a, b = x.split(2)
    values, _idx = x.view(2, 2).max(dim=1)
    return Case(a.sum() * b.prod() + values.sum(), [x], {"x": x, "a": a, "b": b})


def _shared_freed():
    x = leaf(1., 2.)
    y = x.exp()
    first = y.sum()
    second = (y * 3).sum()
    first.backward()
    x.grad = None
    return Case(second, [x], {"x": x, "y": y, "first": first, "second": second},
                refused=["compute y again", "first.backward(retain_graph=True)"])


def _sparse():
    s = torch.sparse_coo_tensor([[0, 2]], [1., 2.], (4,), requires_grad=True, check_invariants=True)
    return Case(torch.sparse.sum(s * 3), [s], {"s": s})


def _sparse_embedding():
    torch.manual_seed(0)
    emb = torch.nn.Embedding(5, 2, sparse=True)
    return Case(emb(torch.tensor([1, 3, 1])).sum(), [emb.weight], {"emb": emb}, modules=[emb])


def _complex():
    z = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    return Case((z * z.conj()).real.sum(), [z], {"z": z})


def _half():
    x = torch.tensor([0.5, 1.5], dtype=torch.float16, requires_grad=True)
    b = torch.tensor([0.5, 1.5], dtype=torch.bfloat16, requires_grad=True)
    return Case((x * x).sum().float() + b.exp().sum().float(), [x, b], {"x": x, "b": b})


def _meta():
    m = torch.ones(3, device="meta", requires_grad=True)
    return Case((m * 2).sum(), [m], {"m": m})


def _rnn():
    torch.manual_seed(0)
    rnn = torch.nn.LSTM(2, 3, batch_first=True)
    out, _ = rnn(torch.randn(1, 4, 2))
    return Case(out.sum(), list(rnn.parameters()), {"rnn": rnn}, modules=[rnn])


def _custom_function():
    x = leaf(1., 2.)
    return Case(Cube.apply(x).sum(), [x], {"x": x})


def _second_order():
    x = leaf(1., 2.)
    (g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    return Case(g.sum(), [x, g], {"x": x, "g": g})


def _torch_func():
    torch.manual_seed(0)
    lin = torch.nn.Linear(2, 2)
    params = {k: v.detach().clone().requires_grad_() for k, v in lin.named_parameters()}
    out = torch.func.functional_call(lin, params, (torch.ones(1, 2),))
    return Case(out.sum(), list(params.values()), {"params": params})


def _hook_raises():
    x = leaf(1., 2.)
    y = x * 2

    def broken(g):
        raise ValueError("oops")
    y.register_hook(broken)
    return Case(y.sum(), [x, y], {"x": x, "y": y}, refused=["broken", "on y", "oops"])


def _hook_wrong_shape():
    x = leaf(1., 2., 3.)
    y = x * 2
    y.register_hook(lambda g: g[:2])
    return Case(y.sum(), [x, y], {"x": x, "y": y}, refused=["shape (2,)", "on y"])


def _module_hook_raises():
    lin = torch.nn.Linear(2, 2)

    def inspect(module, grad_in, grad_out):
        raise RuntimeError("bad grad")
    lin.register_full_backward_hook(inspect)
    return Case(lin(torch.ones(1, 2, requires_grad=True)).sum(), [lin.weight], {"lin": lin}, modules=[lin],
                refused=["your backward hook inspect on module lin raised RuntimeError: bad grad"])


def _anomaly_nan():
    x = leaf(0., 1.)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.set_detect_anomaly(True):
            out = (x.sqrt() * 0).sum()
    case = Case(out, [x], {"x": x}, refused=["NaN", "SqrtBackward0"])
    case.anomaly = True
    return case


def _argmax():
    x = leaf(1., 3., 2.)
    return Case(x.argmax(), [x], {"x": x}, refused=["integer", "no gradient"])


def _complex_gradient():
    x = leaf(1., 2.)
    y = x * 2
    return Case(y, [x], {"x": x, "y": y}, gradient=torch.ones(2, dtype=torch.cfloat), refused=["complex"])


def _non_scalar_gradient():
    x = leaf(1., 2.)
    y = x * x
    return Case(y, [x, y], {"x": x, "y": y}, gradient=torch.tensor([1., 10.]))


def _batch_norm():
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm1d(2)
    x = torch.randn(4, 2, requires_grad=True)
    return Case(bn(x).pow(2).sum(), [x, bn.weight], {"bn": bn, "x": x}, modules=[bn])


def _detach():
    x = leaf(1., 2.)
    return Case((x * x.detach()).sum(), [x], {"x": x})


def _long_chain():
    x = leaf(0.5)
    y = x
    for _ in range(600):
        y = y * 1.001
    return Case(y.sum(), [x], {"x": x})


def _many_leaves():
    leaves = [torch.tensor(float(i), requires_grad=True) for i in range(300)]
    return Case(torch.stack(leaves).sum(), leaves, {"leaves": leaves})


def _wide_cat():
    parts = [torch.full((2,), float(i), requires_grad=True) for i in range(200)]
    return Case(torch.cat(parts).pow(2).sum(), parts, {"parts": parts})


ZOO = {
    "seed": _seed, "tensor hook": _tensor_hook, "leaf hook": _leaf_hook, "in-place hook": _inplace_hook,
    "node post-hook": _node_post_hook, "node pre-hook": _node_pre_hook, "module hook": _module_hook,
    "module pre-hook": _module_pre_hook, "optimizer in backward": _optimizer_in_backward,
    "retained in a list": _retained(lambda t: [t]), "retained in a dict": _retained(lambda t: {"a": t}),
    "retained in a tuple": _retained(lambda t: (1, t)), "retained module attribute": _retained_module_attribute,
    "retained in a closure": _retained_closure, "checkpoint": _checkpoint_plain,
    "reentrant checkpoint": _checkpoint_reentrant, "in-place allowed": _inplace_allowed,
    "in-place broken": _inplace_broken, "views": _views, "multiple outputs": _multiple_outputs,
    "shared freed graph": _shared_freed, "sparse": _sparse, "sparse embedding": _sparse_embedding,
    "complex": _complex, "half": _half, "meta": _meta, "rnn": _rnn, "custom function": _custom_function,
    "second order": _second_order, "torch.func": _torch_func, "hook raises": _hook_raises,
    "hook wrong shape": _hook_wrong_shape, "module hook raises": _module_hook_raises, "anomaly nan": _anomaly_nan,
    "argmax": _argmax,
    "complex gradient": _complex_gradient, "non-scalar gradient": _non_scalar_gradient,
    "batch norm": _batch_norm, "detach": _detach, "long chain": _long_chain, "many leaves": _many_leaves,
    "wide cat": _wide_cat,
}


def learner_state(case: Case):
    """Everything of the learner's that must not change."""
    tensors = []
    for t in case.watch:
        grad = t.grad if (t.is_leaf or t.retains_grad) else None
        readable = t.device.type != "meta" and t.layout == torch.strided
        tensors.append((t._version, None if not readable else t.detach().clone(), grad,
                        None if grad is None or grad.layout != torch.strided else grad.detach().clone(),
                        None if grad is None else grad._version, len(t._backward_hooks or {}),
                        len(t._post_accumulate_grad_hooks or {}) if t.is_leaf else 0))
    buffers = [(b._version, b.detach().clone()) for m in case.modules for b in m.buffers()]
    nodes = [hooks_on(fn) for fn in walk(case.output.grad_fn)] if case.output.grad_fn is not None else []
    return tensors, buffers, nodes, torch.get_rng_state()


def assert_same(before, after):
    (t0, b0, n0, rng0), (t1, b1, n1, rng1) = before, after
    for i, (a, b) in enumerate(zip(t0, t1, strict=False)):
        assert a[0] == b[0], f"tensor {i}: version changed"
        assert (a[1] is None) or torch.equal(a[1], b[1]), f"tensor {i}: value changed"
        assert a[2] is b[2], f"tensor {i}: .grad replaced"
        assert a[3] is None or torch.equal(a[3], b[3]), f"tensor {i}: .grad value changed"
        assert a[4] == b[4], f"tensor {i}: .grad version changed"
        assert a[5:] == b[5:], f"tensor {i}: hooks changed"
    assert all(v0 == v1 and torch.equal(x0, x1) for (v0, x0), (v1, x1) in zip(b0, b1, strict=False)), "a buffer moved"
    assert n0 == n1, "hooks left on the graph"
    assert torch.equal(rng0, rng1), "the random state changed"


def engine(case: Case, leaves):
    """The oracle: torch.autograd.grad for every leaf of the graph (asked after the lab)."""
    return torch.autograd.grad(case.output, leaves, case.gradient, retain_graph=True, allow_unused=True)


def sizes(stepper) -> list[int]:
    n = len(stepper.trace.steps)
    out = [len(repr(stepper)) + len(stepper.html())]
    for index in {0, 1, n // 2, n}:
        stepper.goto(index)
        out.append(len(repr(stepper)) + len(stepper.html()) + len(stepper.panel()))
    return out


@pytest.mark.parametrize("kind", list(ZOO))
def test_promise(kind):
    assert len(ZOO) >= 30
    check(ZOO[kind]())


def check(case: Case):
    before = learner_state(case)
    anomaly = torch.autograd.set_detect_anomaly(True) if getattr(case, "anomaly", False) else None
    try:
        if case.refused:
            with pytest.raises(LabInputError) as err:
                al.step(case.output, gradient=case.gradient, names=case.names)
            text = str(err.value)
            assert len(text) < 1200 and "Traceback" not in text and text.count("\n") <= 3
            for words in case.refused:
                assert words in text
            assert_same(before, learner_state(case))
            return
        runs = len(case.hooks) if case.hooks is not None else None
        stepper = al.step(case.output, gradient=case.gradient, names=case.names)
        assert_same(before, learner_state(case))
        if runs is not None:
            assert len(case.hooks) - runs == getattr(case, "expected_runs", 1)
        assert max(sizes(stepper)) <= LIMIT
        assert repr(al.show_graph(case.output, names=case.names))
    finally:
        if anomaly is not None:
            torch.autograd.set_detect_anomaly(False)
    leaves = [s.leaf for s in stepper.trace.steps if s.node.is_accumulator]
    for got, want in zip([stepper.trace.grad(t) for t in leaves], engine(case, leaves), strict=False):
        if want is None:
            continue
        if want.device.type == "meta":
            assert got.shape == want.shape and got.device.type == "meta"
            continue
        got = got.to_dense() if got.layout != torch.strided else got
        want = want.to_dense() if want.layout != torch.strided else want
        torch.testing.assert_close(got, want)


def test_an_in_place_hook_does_not_rewrite_what_earlier_steps_recorded():
    case = _inplace_hook()
    t = al.trace(case.output, names=case.names)
    mul_z = t.steps[1]  # MulBackward0 of z = y * 2 sends [2, 2] on to y, before the hook zeroes it
    assert mul_z.node.name == "MulBackward0"
    assert mul_z.grad_inputs[0].tolist() == [2., 2.]
    assert t.grad(case.watch[0]).tolist() == [0., 0.]
    assert "your hooks ran, as in backward(): your hook zero on y" in repr(al.step(case.output, names=case.names))


def test_the_module_hook_node_is_named_as_the_modules_hook():
    case = _module_hook()
    text = repr(al.step(case.output, names=case.names))
    assert "BackwardHookFunctionBackward (backward hook of lin)" in text
    assert "your backward hook a lambda on module lin" in text


def test_without_hooks_values_are_references_not_copies():
    x = leaf(1., 2.)
    y = x * 3
    t = al.trace((y * y).sum(), names={})
    # AddBackward-free chain: what the sum sent on is what the mul received, the same tensor
    assert t.steps[1].grad_outputs[0] is t.steps[0].grad_inputs[0]


def test_a_ten_thousand_step_walk_stays_within_its_bound_and_says_where_the_rest_is():
    x = leaf(0.5)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    s = al.step(y, names={"x": x})
    s.goto(5000)
    text, html = repr(s), s.html()
    assert len(text) + len(html) <= LIMIT
    assert "stepper.trace.steps" in text and "> 5000" in text and "10001" in text
    assert "steps not shown" in text


@pytest.mark.parametrize("line, words", [
    ("x.argmax()", "integer"),
    ("x * 2", "%backward (x * 2).sum()"),
    ("r", "use_reentrant=False"),
])
def test_the_magic_gives_one_short_message_in_the_learners_words(ip, line, words):
    from IPython.core.error import UsageError

    x = leaf(1., 2.)
    lin = torch.nn.Linear(2, 2)
    ip.user_ns.update(x=x, r=checkpoint(lin, x.view(1, 2), use_reentrant=True).sum())
    with pytest.raises(UsageError) as err:
        ip.run_line_magic("backward", line)
    assert words in str(err.value) and "the output" not in str(err.value) and len(str(err.value)) < 1200
    assert x.grad is None and lin.weight.grad is None


def test_load_ext_and_recordings_change_no_attribute_of_torch(ip):
    ip.run_line_magic("unload_ext", "autograd_lab")
    before = torch_attributes()
    ip.run_line_magic("load_ext", "autograd_lab")
    assert torch_attributes() == before
    x = leaf(1., 2.)
    y = x.exp()
    y.retain_grad()
    h = y.register_hook(lambda g: g * 2)
    al.trace(y.sum(), names={})
    repr(al.step(y.sum(), names={}))
    with pytest.raises(LabInputError):  # a recording that ends by an error
        al.trace(y.sum(), names={}, gradient=torch.ones(5))
    h.remove()
    ip.run_line_magic("unload_ext", "autograd_lab")
    assert torch_attributes() == before
    ip.run_line_magic("load_ext", "autograd_lab")


# torch's engine entry points are never replaced: every value a recording shows comes from its one run
ENTRY_POINTS = [(torch.autograd, "backward"), (torch.autograd, "grad"), (torch.Tensor, "backward")]


def test_the_lab_never_replaces_backward_or_grad(ip):
    ip.run_line_magic("unload_ext", "autograd_lab")
    before = [getattr(owner, name) for owner, name in ENTRY_POINTS]
    ip.run_line_magic("load_ext", "autograd_lab")
    x = leaf(1., 2.)
    y = x.exp()
    y.retain_grad()
    al.trace(y.sum(), names={})
    repr(al.step(y.sum(), names={}))
    assert [getattr(owner, name) for owner, name in ENTRY_POINTS] == before


def test_another_tools_patch_of_torch_survives_unload_ext(ip):
    own_backward, own_register = torch.autograd.backward, torch.Tensor.register_hook

    def backward(*args, **kwargs):
        return own_backward(*args, **kwargs)

    def register_hook(self, hook):
        return own_register(self, hook)

    torch.autograd.backward, torch.Tensor.register_hook = backward, register_hook
    try:
        ip.run_line_magic("unload_ext", "autograd_lab")
        assert torch.autograd.backward is backward and torch.Tensor.register_hook is register_hook
    finally:
        torch.autograd.backward, torch.Tensor.register_hook = own_backward, own_register
        ip.run_line_magic("load_ext", "autograd_lab")


def test_torchscript_of_a_function_that_calls_grad_works_after_load_ext(ip):
    def first_grad(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        g = torch.autograd.grad([y.sum()], [x])[0]
        assert g is not None
        return g

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # TorchScript says it is deprecated
        warnings.simplefilter("ignore", FutureWarning)
        scripted = torch.jit.script(first_grad)
    x = leaf(1., 2.)
    assert scripted(x * 3, x).tolist() == [3., 3.]


def in_a_fresh_process(code: str) -> str:
    """What a Python process running code prints (it must write nothing to stderr)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stderr == "", out.stderr
    return printed(out.stdout).strip()


def test_reloading_the_recording_leaves_the_learners_backward_working():
    """In a process of its own: a reload rebinds the module's classes for the rest of the process."""
    code = ("import importlib, torch, autograd_lab\n"
            "from autograd_lab.stepper import guard, recorder, trace as recording\n"
            "x = torch.tensor([1., 2.], requires_grad=True)\n"
            "recording.trace((x * x).sum(), names={})\n"
            "for module in (guard, recorder, recording):\n"
            "    importlib.reload(module)\n"
            "(x * 2).sum().backward()\n"
            "print(x.grad.tolist(), recording.trace((x * x).sum(), names={}).grad(x).tolist(), x.grad.tolist())")
    assert in_a_fresh_process(code) == "[2.0, 2.0] [2.0, 4.0] [2.0, 2.0]"


def test_without_the_private_names_it_looks_up_the_lab_still_loads_and_records():
    """A torch without _CheckpointFrame or _CachedTorchDispatchMode (private, may move): loading
    needs neither; recordings search every graph for checkpointed values instead."""
    code = ("import torch, torch.utils.checkpoint as c\n"
            "del c._CheckpointFrame, c._CachedTorchDispatchMode\n"
            "import autograd_lab\n"
            "from IPython.testing.globalipapp import start_ipython\n"
            "start_ipython().run_line_magic('load_ext', 'autograd_lab')\n"
            "x = torch.tensor([1., 2.], requires_grad=True)\n"
            "y = x * 3\n"
            "h = y.grad_fn.register_prehook(lambda g: (g[0] * 10,))\n"
            "t = autograd_lab.trace(y.sum(), names={'x': x})\n"
            "print(t.grad(x).tolist(), x.grad, [text for _node, text in t.hooks_ran])")
    assert in_a_fresh_process(code) == "[30.0, 30.0] None ['your hook a lambda on node MulBackward0']"


@pytest.mark.parametrize(("call", "words"), [
    (lambda z: al.trace(z, names=3), "names takes a dict"),
    (lambda z: al.trace(z, label=3), "label takes the text"),
    (lambda z: al.step(z, names={}).goto(float("nan")), "goto takes a step number"),
    (lambda z: al.step(z, names={}).goto(1.5), "goto takes a step number"),
    (lambda z: al.step(z, names={}).goto(True), "goto takes a step number"),
])
def test_a_wrong_argument_type_is_one_short_message_and_changes_nothing(call, words):
    x = leaf(1., 2.)
    z = (x * 2).sum()
    with pytest.raises(LabInputError, match=words) as err:
        call(z)
    assert len(str(err.value)) < 300 and x.grad is None
    z.backward()  # the graph is still whole
    assert x.grad.tolist() == [2., 2.]


def test_goto_takes_any_whole_number():
    import numpy as np

    x = leaf(1., 2.)
    s = al.step((x * 2).sum(), names={})
    assert s.goto(np.int64(2)).index == 2 and s.goto(torch.tensor(1)).index == 1
