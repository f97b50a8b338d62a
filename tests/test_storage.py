"""The storage lab's model: what PyTorch does with storage and version counters, pinned through compare_storage, each
checked against torch doing the same thing by hand; and the learner's tensor never changes."""
import subprocess
import sys
import warnings

import pytest
import torch

from autograd_lab.errors import LabInputError
from autograd_lab.storage.copies import twin
from autograd_lab.storage.experiments import OUTCOMES
from autograd_lab.storage.view import compare_storage
from helpers import assert_unchanged, state


def leaf():
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


@pytest.fixture(scope="module")
def report():
    return compare_storage(leaf())


def oracle(edit_copy):
    """Torch by hand: y = x * x, edit a copy, backward. Returns ('error'|'grad', value)."""
    x = leaf()
    y = x * x
    edit_copy(x)
    try:
        y.sum().backward()
    except RuntimeError as err:
        return "error", str(err)
    return "grad", x.grad


def test_detach_shares_storage_and_version_and_ends_in_error(report):
    row = report["detach()"]
    assert (row.shares_storage, row.shares_version, row.requires_grad, row.in_graph) == (True, True, False, False)
    assert row.after_inplace == "error"
    assert row.message.startswith("one of the variables needed for gradient computation has been modified")
    assert "is at version 1; expected version 0" in row.message
    assert oracle(lambda x: x.detach().mul_(2))[0] == "error"


def test_data_shares_storage_not_version_and_is_silently_wrong(report):
    row = report[".data"]
    assert (row.shares_storage, row.shares_version, row.after_inplace) == (True, False, "silently wrong")
    assert row.grad_got.tolist() == [4.0, 8.0, 12.0]
    assert row.grad_expected.tolist() == [2.0, 4.0, 6.0]
    kind, grad = oracle(lambda x: x.data.mul_(2))
    assert kind == "grad" and torch.equal(grad, row.grad_got)
    x = leaf()
    assert torch.equal(row.grad_expected, torch.autograd.grad((x * x).sum(), x)[0])


def test_data_zero_gives_zero_gradient_silently():
    row = compare_storage(leaf(), edit="zero_")[".data"]
    assert row.after_inplace == "silently wrong"
    assert row.grad_got.tolist() == [0.0, 0.0, 0.0]
    assert oracle(lambda x: x.data.zero_())[1].tolist() == [0.0, 0.0, 0.0]


def test_clone_is_separate_in_graph_and_ok(report):
    row = report["clone()"]
    assert (row.shares_storage, row.shares_version, row.in_graph, row.grad_fn) == (False, False, True, "CloneBackward0")
    assert row.after_inplace == "ok" and row.changed == ("b",)
    assert torch.equal(row.grad_got, oracle(lambda x: x.clone().mul_(2))[1])


@pytest.mark.parametrize("key", ["clone().detach()", "detach().clone()"])
def test_independent_copies_are_separate_and_out_of_the_graph(report, key):
    row = report[key]
    assert (row.shares_storage, row.shares_version, row.requires_grad, row.in_graph) == (False, False, False, False)
    assert row.is_leaf and row.grad_fn is None and row.after_inplace == "ok"


def test_view_of_a_leaf_shares_everything_and_is_refused(report):
    row = report[report.view_key]
    assert report.view_key == "view(-1)"
    assert (row.shares_storage, row.shares_version, row.in_graph, row.grad_fn) == (True, True, True, "ViewBackward0")
    assert row.after_inplace == "refused" and row.changed == ()
    assert row.message.startswith("a view of a leaf Variable that requires grad is being used in an in-place")
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        leaf().view(-1).mul_(2)


def test_numpy_write_is_silently_wrong(report):
    row = report["detach().numpy()"]
    assert (row.is_array, row.shares_storage, row.shares_version) == (True, True, False)
    assert row.after_inplace == "silently wrong" and row.grad_got.tolist() == [4.0, 8.0, 12.0]

    def write(x):
        n = x.detach().numpy()
        n *= 2
    assert torch.equal(oracle(write)[1], row.grad_got)


def test_torch_tensor_copies_and_its_warning_is_explained_not_printed(report, capfd):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        row = compare_storage(leaf())["torch.tensor(a)"]
    assert caught == []
    assert capfd.readouterr().err == ""
    assert (row.shares_storage, row.requires_grad, row.after_inplace) == (False, False, "ok")
    assert row.warnings and row.warnings[0].startswith("To copy construct from a tensor")
    assert "PyTorch warns" in repr(report) and "a.detach().clone()" in repr(report)


def test_every_row_has_a_known_outcome(report):
    assert report.keys() == ["detach()", "clone()", "clone().detach()", "detach().clone()", ".data",
                             "view(-1)", "detach().numpy()", "torch.tensor(a)"]
    assert all(r.after_inplace in OUTCOMES for r in report)


def test_outcomes_come_from_runs_not_a_table():
    """With zeros, doubling changes no value: the .data edit is then harmless, and the report says so."""
    row = compare_storage(torch.zeros(3, requires_grad=True))[".data"]
    assert row.after_inplace == "ok" and row.changed == ()


def test_the_learners_tensor_is_unchanged():
    a = leaf()
    before = state([a])
    for edit in ("mul_", "add_", "zero_", "numpy"):
        compare_storage(a, edit=edit)
    assert_unchanged([a], before)
    assert a.grad is None and a._version == 0 and a.tolist() == [1.0, 2.0, 3.0]


def test_a_non_leaf_keeps_its_graph_and_its_views_may_be_edited():
    w = leaf()
    a = w * 2
    before = state([w, a])
    report = compare_storage(a, name="w * 2")
    assert_unchanged([w, a], before)
    assert report["detach()"].code == "(w * 2).detach()"
    # a view of a non-leaf may be edited in place; the version check then stops backward
    assert report["view(-1)"].after_inplace == "error"
    a.sum().backward()  # the learner's graph is still usable
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    other = leaf() * 2
    y = other * other
    other.view(-1).mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_a_view_input_shows_its_base():
    x = torch.arange(4.0, requires_grad=True)
    a = x[1:]
    report = compare_storage(a, name="a", names={"x": x, "a": a})
    assert report.subject.base_shape == (4,) and report.subject.offset == 1
    assert ("x", "is the base a is a view of") in report.subject.relatives
    assert report["detach()"].after_inplace == "error"
    assert report[".data"].grad_got.tolist() == [4.0, 8.0, 12.0]
    assert x._version == 0 and x.grad is None


def test_non_contiguous_tensors_get_a_slice_for_their_view():
    a = torch.arange(6.0).reshape(2, 3).t()
    report = compare_storage(a)
    assert report.view_key == "[1:]"
    assert report["[1:]"].shares_storage and report["[1:]"].after_inplace == "refused"
    with pytest.raises(RuntimeError):
        a.view(-1)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.complex64])
def test_other_float_dtypes_run(dtype):
    report = compare_storage(torch.tensor([1.0, 2.0], dtype=dtype))
    assert report["detach()"].after_inplace == "error"
    assert report[".data"].after_inplace == "silently wrong"


def test_twin_keeps_values_and_layout_and_starts_at_version_zero():
    x = torch.arange(6.0).reshape(2, 3)
    a = x.t()
    t = twin(a)
    assert torch.equal(t.detach(), a) and t.stride() == a.stride() and t._version == 0
    assert t.requires_grad and t.untyped_storage().data_ptr() != a.untyped_storage().data_ptr()


@pytest.mark.parametrize("bad, words", [
    (3, "needs a tensor"),
    (torch.tensor([1, 2, 3]), "int64 cannot require grad"),
    (torch.tensor([True]), "bool cannot require grad"),
    (torch.zeros(2).to_sparse(), "dense"),
])
def test_bad_input_is_refused_with_a_short_message(bad, words):
    with pytest.raises(LabInputError, match=words):
        compare_storage(bad)


def test_unknown_edit_is_refused():
    with pytest.raises(LabInputError, match="pick one of"):
        compare_storage(leaf(), edit="div_")


SCRIPT = """
import torch
from autograd_lab.storage.view import compare_storage
x = torch.arange(5.0, requires_grad=True)
v = compare_storage(x[1:], name="x[1:]", names={"x": x})
print(v.text()); print(v.html())
"""


def test_outputs_are_identical_across_processes():
    runs = [subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stderr == "" and runs[1].stderr == ""
    assert "0x" not in runs[0].stdout


def test_an_expanded_tensor_refuses_writes_that_hit_one_cell_twice():
    report = compare_storage(torch.ones(2).expand(3, 2))
    assert report["detach()"].after_inplace == "refused"
    assert report["detach()"].message.startswith("unsupported operation: more than one element")
    assert report["detach()"].shares_version is True and report[".data"].shares_version is False
