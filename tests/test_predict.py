"""The stepper's --predict check: the one digits rule, messages that do not repeat the verdict, and
the usual mistakes named with the step's context. torch.autograd.grad is the oracle."""
import pytest
import torch

import autograd_lab as al
from autograd_lab.stepper.predict import compare


@pytest.fixture
def chain():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.double, requires_grad=True)
    y = x**2
    z = y.mean()
    (dz_dy,) = torch.autograd.grad(z, y, retain_graph=True)
    (dz_dx,) = torch.autograd.grad(z, x, retain_graph=True)
    return al.trace(z, names={"x": x, "y": y, "z": z}), dz_dy, dz_dx, x


def test_the_digits_rule_and_no_doubled_words(chain):
    trace, _, dz_dx, _ = chain
    pow_step = trace.steps[1]
    assert compare([0.667, 1.333, 2], pow_step.grad_inputs, pow_step).right
    assert compare("[0.6667, 1.3333, 2.0000]", pow_step.grad_inputs, pow_step).right
    close = compare([0.67, 1.33, 2], pow_step.grad_inputs, pow_step)
    assert not close.right and close.message == "close: give three significant digits"
    wrong = compare([5.0, 1.0, 7.0], pow_step.grad_inputs, pow_step)
    assert not wrong.right and not wrong.message.startswith(("wrong", "right"))
    assert torch.allclose(pow_step.grad_inputs[0], dz_dx)


def test_the_gradient_arriving_instead_of_the_one_sent_on(chain):
    trace, dz_dy, _, _ = chain
    pow_step = trace.steps[1]
    verdict = compare(dz_dy.tolist(), pow_step.grad_inputs, pow_step)
    assert verdict.diagnosis == "arriving" and "arriving" in verdict.message


def test_the_next_nodes_values(chain):
    trace, _, dz_dx, _ = chain
    mean_step = trace.steps[0]
    verdict = compare(dz_dx.tolist(), mean_step.grad_inputs, mean_step)
    assert verdict.diagnosis == "next_node" and "PowBackward0" in verdict.message


def test_the_previous_nodes_values_in_a_branch():
    a = torch.tensor([1.0, 2.0], dtype=torch.double, requires_grad=True)
    b = a * 3
    c = a.exp()
    z = b.sum() * 2 + c.mean()  # the engine runs the other branch's SumBackward0 just before Exp
    trace = al.trace(z, names={"a": a, "b": b, "c": c, "z": z})
    exp_step = next(s for s in trace.steps if s.name == "ExpBackward0")
    before = trace.steps[exp_step.index - 1]
    sent = next(g for g in before.grad_inputs if g is not None)
    arriving = next(g for g in exp_step.grad_outputs if g is not None)
    (oracle,) = torch.autograd.grad(z, c, retain_graph=True)
    assert torch.allclose(arriving.double(), oracle) and not torch.allclose(sent.double(), arriving.double())
    verdict = compare(sent.tolist(), exp_step.grad_inputs, exp_step)
    assert verdict.diagnosis == "previous_node", verdict


def test_the_local_derivative_alone_and_a_missing_factor(chain):
    trace, dz_dy, dz_dx, x = chain
    pow_step = trace.steps[1]
    local = (dz_dx / dz_dy).tolist()  # 2 * x, by the oracle's own numbers
    assert torch.allclose(torch.tensor(local, dtype=torch.double), 2 * x.detach())
    assert compare(local, pow_step.grad_inputs, pow_step).diagnosis == "local_only"
    halved = (dz_dx / 2).tolist()  # the power rule's factor 2 left out
    assert compare(halved, pow_step.grad_inputs, pow_step).diagnosis == "factor"


def test_without_the_step_a_wrong_answer_still_says_by_how_much(chain):
    trace, dz_dy, _, _ = chain
    verdict = compare(dz_dy.tolist(), trace.steps[1].grad_inputs)
    assert not verdict.right and verdict.message.startswith("off by up to") and verdict.diagnosis == ""
