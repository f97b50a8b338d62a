"""The storage lab on tensors with lazy bits and complex values, and its hints in the learner's names."""
import pytest
import torch

import autograd_lab as al
from autograd_lab.errors import LabInputError
from autograd_lab.storage.copies import twin


@pytest.mark.parametrize("make", [
    lambda z: z.conj(),
    lambda z: z.conj().imag,
    lambda z: z.conj()[1:],
])
def test_twins_keep_the_conjugate_and_negative_bits(make):
    z = torch.tensor([1 + 2j, 3 - 1j, 2 + 0.5j])
    a = make(z)
    t = twin(a)
    assert torch.equal(t.detach().resolve_conj().resolve_neg(), a.resolve_conj().resolve_neg())
    assert t.requires_grad and a.is_conj() == t.is_conj() and a.is_neg() == t.is_neg()


def test_the_expected_gradient_of_a_conjugate_is_the_engines():
    z = torch.tensor([1 + 2j, 3 - 1j])
    cz = z.conj()
    report = al.compare_storage(cz, name="cz", names={"z": z, "cz": cz})
    y = cz.clone().requires_grad_()
    (engine,) = torch.autograd.grad(y * y, y, torch.ones_like(y))
    torch.testing.assert_close(report["clone()"].grad_got, engine)
    torch.testing.assert_close(report["detach().clone()"].grad_expected, engine)


def test_a_complex_verdict_shows_both_values():
    z = torch.tensor([1 + 2j, 3 - 1j])
    text = repr(al.compare_storage(z, name="z"))
    line = next(line for line in text.splitlines() if line.startswith("z.data:"))
    got, expected = line.split("wrong: ")[-1].split(" instead of ")
    assert got != expected and "j" in got and "complex64" not in line


@pytest.mark.parametrize("value, words", [
    (torch.ones(2, dtype=torch.long), "%storage counts.float()"),
    (torch.ones(2).to_sparse(), "%storage counts.to_dense()"),
])
def test_hints_use_the_learners_name(value, words):
    with pytest.raises(LabInputError, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        al.compare_storage(value, name="counts")
