"""The magics' one table: usage, docstrings, parsing (--flag value and --flag=value), typed flags,
and every failure as one short UsageError."""
import pytest
import torch
from IPython.core.error import UsageError

from autograd_lab.magics import BY_NAME, MAGICS


def magic(name):
    return next(m for m in MAGICS if m.name == name)


def test_usage_and_docstring_come_from_the_table(ip):
    assert BY_NAME["backward"].usage() == "%backward z [--gradient g] [--predict] [--apply] [--inputs w]"
    assert BY_NAME["backward_profile"].usage().startswith("%%backward_profile [--steps N] [--warmup N]")
    for m in MAGICS:
        kind = "cell" if m.cell else "line"
        doc = ip.magics_manager.magics[kind][m.name].__doc__
        assert doc.splitlines()[0] == m.usage()
        for flag in m.flags:  # %name? shows every flag with its help, not one line
            assert f"--{flag.name}" in doc and flag.help in doc


def test_flag_with_equals_sign_is_the_same_as_with_a_space():
    backward = magic("backward")
    assert backward.parse("z --gradient=torch.ones(3)") == backward.parse("z --gradient torch.ones(3)")
    assert backward.parse("(y * 2).sum() --apply") == ("(y * 2).sum()", {"apply": True})
    assert backward.parse("z.sum(dim=-1) --predict") == ("z.sum(dim=-1)", {"predict": True})
    spaced = ("z", {"gradient": "torch.ones(2, 3)", "apply": True})
    assert backward.parse("z --gradient=torch.ones(2, 3) --apply") == spaced
    assert backward.parse("--gradient=g z") == ("z", {"gradient": "g"})


def test_integer_flags_are_parsed_once_with_bounds():
    exercise = magic("exercise")
    assert exercise.parse("mean_square --seed 7") == ("mean_square", {"seed": 7})
    assert exercise.parse("mean_square --seed=7") == ("mean_square", {"seed": 7})
    for bad in ("--seed x", "--seed 99999999999999999999", "--seed -1"):
        with pytest.raises(UsageError, match="whole number") as err:
            exercise.parse("mean_square " + bad)
        assert "Usage: %exercise NAME [--seed N]" in str(err.value)


def test_backward_with_gradient_given_with_equals(seeded):
    seeded.run_cell("w = x * 3")
    seeded.run_line_magic("backward", "w --gradient=torch.ones_like(w) --apply")
    torch.testing.assert_close(seeded.user_ns["x"].grad, torch.full((3,), 3.0, dtype=torch.double))


def test_huge_seed_is_a_short_message(seeded):
    with pytest.raises(UsageError, match="whole number from 0"):
        seeded.run_line_magic("exercise", "mean_square --seed 99999999999999999999")


def test_an_unexpected_failure_in_a_line_magic_is_one_line(seeded, monkeypatch):
    import autograd_lab.stepper.graph_view as graph_view

    def broken(*args, **kwargs):
        raise RuntimeError("something inside went wrong\nsecond line")

    monkeypatch.setattr(graph_view, "show_graph", broken)
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic("graph", "z")
    assert str(err.value).startswith("%graph could not finish: RuntimeError: something inside went wrong second line")
    assert "\n" not in str(err.value)


def test_jacobian_magic_takes_two_expressions_and_weights(seeded):
    from IPython.utils.capture import capture_output

    with capture_output() as out:
        seeded.run_line_magic("jacobian", "(x ** 2) x --v=torch.tensor([1., 0., 2.], dtype=torch.double)")
    text = out.outputs[-1].data["text/plain"]
    x = seeded.user_ns["x"]
    expected = torch.autograd.grad(x ** 2, x, torch.tensor([1., 0., 2.], dtype=torch.double))[0]
    assert "12.]" in text and expected.tolist() == [2.0, 0.0, 12.0]
    assert x.grad is None
    with pytest.raises(UsageError, match="two expressions"):
        seeded.run_line_magic("jacobian", "y")
