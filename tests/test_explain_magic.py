"""%%explain and explain_errors in a real IPython shell: errors become explanations, a cell without
errors behaves like a normal cell, unknown errors pass through, unloading removes the handler."""
import warnings

import pytest
from IPython.utils.capture import capture_output


@pytest.fixture
def ns(ip):
    ip.run_cell("import torch\nx = torch.tensor([1., 2., 3.], requires_grad=True)")
    return ip


def texts(cap):
    return [o.data["text/plain"] for o in cap.outputs]


def test_explain_shows_the_explanation_instead_of_the_traceback(ns):
    with capture_output() as cap:
        value = ns.run_cell_magic("explain", "", "z = (x * 2).sum()\nz.backward()\nz.backward()")
    assert value is None
    [shown] = texts(cap)
    assert shown.startswith("autograd error explained (backward twice)")
    assert "z's graph was freed by the first `z.backward()`" in shown
    assert "PyTorch said" not in shown and "Traceback" not in cap.stdout + cap.stderr


def test_original_message_on_request(ns):
    with capture_output() as cap:
        ns.run_cell_magic("explain", "--original", "y = x * 2\ny.backward()")
    [shown] = texts(cap)
    assert "(non scalar)" in shown and "grad can be implicitly created only for scalar outputs" in shown
    assert "html" in str(cap.outputs[0].data.keys())


def test_a_cell_without_errors_behaves_like_a_normal_cell(ns):
    with capture_output() as cap:
        value = ns.run_cell_magic("explain", "", "print('hello')\ny = x * 3\ny")
    assert cap.stdout == "hello\n" and cap.outputs == []
    assert value.tolist() == [3., 6., 9.] and ns.user_ns["y"] is value
    assert ns.run_cell_magic("explain", "", "y = x + 1") is None


def test_out_is_set_through_a_real_cell(ns):
    result = ns.run_cell("%%explain\nx.detach() * 2")
    assert result.success and result.result.tolist() == [2., 4., 6.]


def test_the_non_leaf_grad_warning_is_explained(ns):
    with capture_output() as cap:
        value = ns.run_cell_magic("explain", "", "y = x * 2\ny.sum().backward()\ny.grad")
    assert value is None  # what y.grad gives: the cell's value is unchanged
    [shown] = texts(cap)
    assert "(nonleaf grad)" in shown and "y.retain_grad()" in shown and cap.stderr == ""


def test_other_warnings_still_reach_the_learner(ns):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ns.run_cell_magic("explain", "", "import warnings\nwarnings.warn('mine')")
    assert [str(w.message) for w in caught] == ["mine"]


def test_unknown_errors_pass_through_unchanged(ns):
    with pytest.raises(ZeroDivisionError):
        ns.run_cell_magic("explain", "", "1 / 0")


def test_explain_errors_installs_and_unload_removes_the_handler(ns):
    import autograd_lab

    autograd_lab.explain_errors(True)
    try:
        with capture_output() as cap:
            result = ns.run_cell("x.numpy()")
        assert not result.success
        assert texts(cap)[0].startswith("autograd error explained (numpy requires grad)")
        with capture_output() as cap:
            ns.run_cell("1 / 0")
        assert "ZeroDivisionError" in cap.stdout and texts(cap) == []
    finally:
        ns.run_line_magic("unload_ext", "autograd_lab")
        ns.run_line_magic("load_ext", "autograd_lab")
    assert ns.custom_exceptions == ()
    with capture_output() as cap:
        ns.run_cell("x.numpy()")
    assert texts(cap) == [] and "RuntimeError" in cap.stdout


def test_explain_errors_false_leaves_other_handlers_alone(ns):
    import autograd_lab

    def theirs(self, etype, value, tb, tb_offset=None):
        return None
    ns.set_custom_exc((KeyError,), theirs)
    try:
        autograd_lab.explain_errors(False)
        assert ns.custom_exceptions == (KeyError,)
    finally:
        ns.set_custom_exc((), None)


def test_explain_errors_keeps_the_learners_own_handler_and_gives_it_back(ns):
    import autograd_lab

    seen = []

    def theirs(self, etype, value, tb, tb_offset=None):
        seen.append(etype.__name__)
        return ["handled by theirs"]
    ns.set_custom_exc((KeyError, RuntimeError), theirs)
    try:
        autograd_lab.explain_errors(True)
        autograd_lab.explain_errors(True)  # twice: theirs is still the one given back
        with capture_output() as cap:
            ns.run_cell("{}['missing']")  # theirs, not an autograd error: their handler runs
            ns.run_cell("x.numpy()")  # an autograd error: explained, as asked
            ns.run_cell("raise RuntimeError('not autograd')")  # theirs again
            ns.run_cell("1 / 0")  # nobody's: the usual traceback
        assert seen == ["KeyError", "RuntimeError"]
        assert texts(cap)[0].startswith("autograd error explained (numpy requires grad)")
        assert "ZeroDivisionError" in cap.stdout
        autograd_lab.explain_errors(False)
        assert ns.custom_exceptions == (KeyError, RuntimeError)
        with capture_output() as cap:
            ns.run_cell("x.numpy()")
        assert seen[-1] == "RuntimeError" and texts(cap) == []
        autograd_lab.explain_errors(True)
        ns.run_line_magic("unload_ext", "autograd_lab")  # unloading gives theirs back too
        ns.run_line_magic("load_ext", "autograd_lab")
        assert ns.custom_exceptions == (KeyError, RuntimeError)
        ns.run_cell("{}['again']")
        assert seen[-1] == "KeyError"
    finally:
        ns.set_custom_exc((), None)


def test_a_handler_set_after_explain_errors_is_left_alone(ns):
    import autograd_lab

    def later(self, etype, value, tb, tb_offset=None):
        return None
    autograd_lab.explain_errors(True)
    ns.set_custom_exc((KeyError,), later)
    try:
        autograd_lab.explain_errors(False)
        assert ns.custom_exceptions == (KeyError,)
    finally:
        ns.set_custom_exc((), None)
