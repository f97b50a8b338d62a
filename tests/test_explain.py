"""explain(): every error kind is triggered for real, recognised, named with the learner's names,
and its fix, applied, makes the code run (torch is the oracle for the gradients after the fix)."""
import warnings

import pytest
import torch

from autograd_lab import explain
from autograd_lab.explain.faces import explanation_text
from autograd_lab.explain.view import ExplanationView
from helpers import Bad, x3


def caught(fn) -> ExplanationView:
    with pytest.raises(Exception) as info:
        fn()
    return explain(info.value)


def test_backward_twice_names_the_tensor_and_the_node_that_saved():
    x = x3()

    def run():
        z = (x * 2).sum()
        z.backward()
        z.backward()
    e = caught(run)
    assert e.kind == "backward_twice"
    assert "z's graph was freed by the first `z.backward()`" in e.why
    assert "MulBackward0" in e.why
    assert "z.backward(retain_graph=True)" in e.fix
    # the fix, applied: keep the graph on the first call
    x = x3()
    z = (x * 2).sum()
    z.backward(retain_graph=True)
    z.backward()
    assert torch.equal(x.grad, torch.full((3,), 4., dtype=torch.double))


def test_non_scalar_gives_shape_and_fix_that_runs():
    x = x3()

    def run():
        y = x ** 2
        y.backward()
    e = caught(run)
    assert e.kind == "non_scalar" and "(3,)" in e.why
    y = x ** 2
    exec(e.fix.splitlines()[0], {"y": y, "torch": torch})
    assert torch.allclose(x.grad, torch.autograd.grad((x ** 2).sum(), x)[0])


def test_inplace_modified_names_tensor_op_and_saver_and_suggests_anomaly_mode():
    x = x3()

    def run():
        y = x.exp()
        z = y.sum() * 2
        y.add_(1)
        z.backward()
    e = caught(run)
    assert e.kind == "inplace_modified"
    assert e.summary.startswith("y was changed in place")
    assert "made by exp" in e.why and "ExpBackward0" in e.why and "from 0 to 1" in e.why
    assert "detect_anomaly" in e.fix and "y = y + 1" in e.fix
    # the fix, applied: the change made out of place
    y = x.exp()
    z = y.sum() * 2
    y = y + 1
    z.backward()
    assert torch.allclose(x.grad, 2 * x.detach().exp())


def test_inplace_fix_rewrites_the_learners_own_inplace_line():
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def run():
        h = w * 2
        a = h.sigmoid()
        a.mul_(3)                 # the culprit, not the failing line
        loss = a.sum()
        loss.backward()
    e = caught(run)
    assert e.kind == "inplace_modified"
    assert "a = a * 3      # instead of a.mul_(3)" in e.fix
    assert "a += 1" not in e.fix and "add_(1)" not in e.fix
    # the fix, applied: the learner's line out of place gives torch's gradient of 3 * sigmoid(2w)
    rewritten = e.fix.splitlines()[-1].split("#")[0]
    ns = {"a": (w * 2).sigmoid()}
    exec(rewritten, ns)
    ns["a"].sum().backward()
    s = (2 * w.detach()).sigmoid()
    assert torch.allclose(w.grad, 3 * 2 * s * (1 - s))


def test_inplace_fix_runs_the_forward_under_anomaly_mode_too():
    x = x3()

    def run():
        y = x.exp()
        z = y.sum() * 2
        y.add_(1)
        z.backward()
    fix = caught(run).fix
    assert "%%explain --anomaly" in fix
    lines = fix.splitlines()
    start = lines.index("with torch.autograd.detect_anomaly():")
    body = lines[start + 1:start + 3]
    # inside the block, the forward comes before the backward: anomaly mode only knows forwards
    # that ran while it was on
    assert body[0].startswith("    ...") and body[1] == "    z.backward()", fix


def test_inplace_fix_falls_back_to_an_example_when_the_edit_is_out_of_sight():
    x = x3()

    def edit(t):
        t.mul_(2)

    def run():
        y = x.exp()
        z = y.sum()
        edit(y)
        z.backward()
    e = caught(run)
    assert e.kind == "inplace_modified" and "y = y * 3      # instead of y *= 3 or y.mul_(3)" in e.fix


def test_inplace_fix_rewrites_only_an_edit_of_a_tensor():
    from autograd_lab.explain.context import Context
    from autograd_lab.explain.worked_out import inplace_modified

    class Meter:                  # a learner's running total, not a tensor: its add_ is no tensor edit
        def add_(self, value):
            return self

    x = x3()
    with pytest.raises(RuntimeError) as info:
        y = x.exp()
        z = y.sum()
        y.add_(1)
        z.backward()
    ctx = Context("z.backward()", {"meter": Meter()}, ("meter.add_(3)",))
    _summary, _why, fix = inplace_modified(str(info.value), ctx)
    assert "meter = meter + 3" not in fix
    assert "y = y * 3      # instead of y *= 3 or y.mul_(3)" in fix


@pytest.mark.parametrize("line, oop", [
    ("a.mul_(3)", "a = a * 3"),
    ("a += b", "a = a + b"),
    ("a.clamp_(min=0.5)", "a = a.clamp(min=0.5)"),
    ("a.pow_(2)  # squared", "a = a ** 2"),
    ("a[0] = 5", "a = a.clone()\na[0] = 5"),
])
def test_out_of_place_computes_what_the_inplace_line_computes(line, oop):
    from autograd_lab.explain.context import out_of_place
    assert out_of_place(line, "a") == oop
    start = torch.tensor([0.25, 1.5, -2.0])
    inplace = {"a": start.clone(), "b": torch.ones(3)}
    rewritten = {"a": start.clone(), "b": torch.ones(3)}
    before = rewritten["a"]
    exec(line, inplace)
    exec(oop, rewritten)
    assert torch.equal(inplace["a"], rewritten["a"])
    # out of place: the tensor a graph may have saved is left as it was
    assert torch.equal(before, start) and before._version == 0


def test_out_of_place_leaves_other_lines_alone():
    from autograd_lab.explain.context import out_of_place
    assert out_of_place("a.mul_(3)", "b") is None
    assert out_of_place("a = a * 3", "a") is None
    assert out_of_place("b = a.mul_(3) + 1", "a") is None  # inside a larger expression
    assert out_of_place("for i in range(3):", "a") is None


def test_inplace_on_a_leaf_is_recognised_without_an_op_name():
    x = x3()

    def run():
        y = x ** 2
        with torch.no_grad():
            x.mul_(2)
        y.sum().backward()
    e = caught(run)
    assert e.kind == "inplace_modified" and "(a leaf)" in e.why


def test_no_grad_fn_and_its_fix():
    def run():
        q = torch.ones(3).sum()
        q.backward()
    e = caught(run)
    assert e.kind == "no_grad_fn" and e.summary.startswith("q is not part of any graph")
    x = torch.ones(3)
    exec("x.requires_grad_()", {"x": x})
    x.sum().backward()
    assert torch.equal(x.grad, torch.ones(3))


def test_leaf_inplace_fix_wraps_the_learners_line_in_no_grad():
    w = torch.ones(3, requires_grad=True)
    w.grad = torch.ones(3)

    def run():
        nonlocal w
        w -= 0.5 * w.grad
    e = caught(run)
    assert e.kind == "leaf_inplace" and "w is a leaf that requires grad" in e.why
    assert "with torch.no_grad():\n    w -= 0.5 * w.grad" in e.fix
    ns = {"w": w, "torch": torch}
    exec(e.fix, ns)  # the whole fix runs: the update, then the copy alternative
    assert torch.equal(w, torch.full((3,), 0.5)) and w.is_leaf and w.requires_grad


def test_view_of_leaf_inplace_names_the_leaf():
    x = x3()

    def run():
        x[0] = 5
    e = caught(run)
    assert e.kind == "leaf_inplace" and "a part of x (a view)" in e.summary
    assert "x2 = x.clone()\nx2[0] = 5" in e.fix
    ns = {"x": x, "torch": torch}
    exec(e.fix, ns)
    assert ns["x2"].grad_fn is not None and x[0].item() == 5


def test_numpy_fix():
    x = x3()

    def run():
        z = x * 2
        z.numpy()
    e = caught(run)
    assert e.kind == "numpy_requires_grad" and e.fix == "z.detach().numpy()"
    assert list(eval(e.fix, {"z": x * 2})) == [2., 4., 6.]


def test_int_requires_grad_fix_rewrites_the_learners_line():
    def run():
        t = torch.tensor([1, 2, 3], requires_grad=True)  # noqa: F841  the explainer rewrites this very line
    e = caught(run)
    assert e.kind == "int_requires_grad"
    ns = {"torch": torch}
    exec(e.fix, ns)
    assert ns["t"].requires_grad and ns["t"].dtype == torch.float32


def test_int_requires_grad_method_form():
    def run():
        t = torch.tensor([1, 2])
        t.requires_grad_()
    e = caught(run)
    assert e.kind == "int_requires_grad" and e.fix == "t = t.float().requires_grad_()"


def test_nonleaf_grad_warning_and_retain_grad_fix():
    x = x3()
    y = x * 2
    y.sum().backward()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _ = y.grad
    e = explain(w[0], names={"y": y})
    assert e.kind == "nonleaf_grad" and "MulBackward0" in e.why and e.category == "UserWarning"
    assert e.fix.startswith("y.retain_grad()")
    y = x * 2
    y.retain_grad()
    y.sum().backward()
    assert torch.equal(y.grad, torch.ones(3, dtype=torch.double))


def test_device_mismatch_in_backward():
    x = x3()

    def run():
        z = x * 2
        z.backward(torch.ones(3, device="meta"))
    e = caught(run)
    assert e.kind == "device_mismatch" and "on meta" in e.why and "lives on cpu" in e.why
    z = x * 2
    exec(e.fix.splitlines()[0], {"z": z, "torch": torch})
    assert torch.equal(x.grad, torch.full((3,), 2., dtype=torch.double))


def test_device_mismatch_from_a_custom_function():
    x = x3()
    e = caught(lambda: Bad.apply(x).sum().backward())
    assert e.kind == "device_mismatch" and "BadBackward returned" in e.why


def test_unknown_errors_are_not_claimed():
    e = caught(lambda: 1 / 0)
    assert e.kind == "unknown" and not e.known and e.original == "division by zero"
    assert repr(e) == "ZeroDivisionError: division by zero"


def test_messages_match_on_their_start_only():
    assert explain("grad can be implicitly created only for scalar outputs; tail may change").kind == "non_scalar"
    assert explain("in the middle: grad can be implicitly created only for scalar outputs").kind == "unknown"


def test_explain_rejects_other_input():
    from autograd_lab import LabInputError

    with pytest.raises(LabInputError, match="takes an exception"):
        explain(42)


def test_text_shows_original_on_request():
    e = explain("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
                line="a = z.numpy()")
    assert "PyTorch said" not in e.text() and "PyTorch said (RuntimeError):" in explanation_text(e.model, True)
    assert e.fix == "z.detach().numpy()"


def test_explain_returns_a_view_that_stands_in_for_the_explanation():
    e = explain("Can't call numpy() on Tensor that requires grad", line="a = z.numpy()")
    assert isinstance(e, ExplanationView) and e.known and e.kind == "numpy_requires_grad"
    assert repr(e) == e.text() == explanation_text(e.model)
    assert e.text().startswith("autograd error explained (numpy requires grad)\nnumpy() refused z")
    assert e.html().startswith('<div class="agl-explain">') and "z.detach().numpy()" in e.html()
    # the model keeps a one-line repr
    assert repr(e.model) == "Explanation(numpy_requires_grad: numpy() refused z because it requires grad.)"


def test_the_room_named_explain_never_hides_the_function():
    """autograd_lab/explain/ is a room and autograd_lab.explain a function: whichever is imported
    first, the function stays reachable (a fresh interpreter, so the import order is the test's)."""
    import subprocess
    import sys

    code = ("import autograd_lab.explain.kinds\nimport autograd_lab.explain.view\n"
            "from autograd_lab.explain.view import run_explained\nimport autograd_lab\n"
            "from autograd_lab import explain\n"
            "print(callable(autograd_lab.explain), explain is autograd_lab.explain, "
            "autograd_lab.explain('Only Tensors of floating point').kind)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "int_requires_grad"]


def test_the_rooms_walk_graphs_only_through_the_shared_walker():
    from pathlib import Path

    rooms = Path(__file__).resolve().parents[1] / "autograd_lab"
    for path in [*rooms.glob("explain/*.py"), *rooms.glob("profile/*.py")]:
        source = path.read_text()
        assert "next_functions" not in source and "_saved_" not in source, path.name
        assert 'startswith("_")' not in source, path.name  # the learner's names come from names.py
