"""Numbers as PyTorch prints them: the lab's one-line face of a tensor (format.fmt) shows the same
numbers as torch's own str() of that tensor under its default print options (4 decimals, scientific
notation for the whole tensor when its values call for it, whole numbers as ``6.``, integers and
bools as they are, complex ones as ``a+bj``), whatever print options the learner set; long tensors
stay summarised; and the stepper shows a vanishing gradient as a number, not as 0.0000."""
import math
import re

import pytest
import torch

import autograd_lab as al
from autograd_lab.format import fmt, number

NAN, INF = float("nan"), float("inf")

CASES = {
    "tiny beside 6": torch.tensor([1.5e-06, 6.0]),
    "tiny alone": torch.tensor([1.5e-06, 2.5e-06]),
    "below 1e-4": torch.tensor([5e-05, 9e-05]),
    "huge": torch.tensor([1e12]),
    "huge 0-d": torch.tensor(1e12),
    "huge beside 1": torch.tensor([1e12, 1.0]),
    "above 1e8": torch.tensor([2.5e8, 3e8]),
    "ratio just above 1000": torch.tensor([0.001, 1.5]),
    "ratio 1000": torch.tensor([0.002, 2.0]),
    "mixed": torch.tensor([0.5, -2.25, 100.125]),
    "thirds": torch.tensor([1 / 3, 2 / 3, 1.0]),
    "rounds to 4 decimals": torch.tensor([0.00012345, 0.1]),
    "whole floats": torch.tensor([0.0, 6.0, -3.0]),
    "whole and huge": torch.tensor([1.0, 1e9]),
    "zeros": torch.zeros(3),
    "negative zero": torch.tensor([-0.0, 1.5]),
    "negative zero alone": torch.tensor([-0.0]),
    "negative zero 0-d": torch.tensor(-0.0),
    "nan beside a number": torch.tensor([NAN, 1.5]),
    "inf beside a whole number": torch.tensor([INF, -INF, 1.0]),
    "nan alone": torch.tensor([NAN]),
    "inf beside a tiny one": torch.tensor([INF, 1e-06]),
    "nan, inf and zero": torch.tensor([NAN, INF, 0.0]),
    "scalar": torch.tensor(1 / 3),
    "whole scalar": torch.tensor(6.0),
    "tiny scalar": torch.tensor(-1.5e-06),
    "matrix": torch.tensor([[1 / 3, 1e-06], [2.0, 3.0]]),
    "whole matrix": torch.tensor([[1.0, 2.0], [3.0, 4.0]]),
    "3-d": torch.tensor([[[0.5], [1.5]], [[2.5], [3.5]]]),
    "empty": torch.tensor([]),
    "float64": torch.tensor([1 / 3, 1e-07], dtype=torch.float64),
    "float16": torch.tensor([0.1, 1000.0], dtype=torch.float16),
    "bfloat16": torch.tensor([1.5, 2.25], dtype=torch.bfloat16),
    "integers": torch.tensor([1, -2, 300]),
    "int 0-d": torch.tensor(7),
    "int32": torch.tensor([3, 4], dtype=torch.int32),
    "uint8": torch.tensor([0, 255], dtype=torch.uint8),
    "bools": torch.tensor([True, False]),
    "bool 0-d": torch.tensor(True),
    "complex": torch.tensor([2 - 4j, 0.5j]),
    "complex whole": torch.tensor([1 + 1j, -2 - 3j]),
    "complex tiny": torch.tensor([1e-06 + 1j, 2.0 - 0.5j]),
    "complex 0-d": torch.tensor(1.5 - 2.25j),
    "complex128": torch.tensor([1 / 3 + 2j], dtype=torch.complex128),
    "conjugated view": torch.tensor([1 + 2j, 3 - 0.5j]).conj(),
}


def torch_numbers(t: torch.Tensor) -> str:
    """The numbers part of torch's own str() of t, without its padding and line breaks: what is
    inside tensor(...), before ', dtype=...' and the like."""
    with torch.no_grad():
        text = str(t)
    inner = text[len("tensor("):-1]
    inner = re.split(r",\s*(?:size|dtype|requires_grad|grad_fn|device)=", inner)[0]
    return re.sub(r"\s+", "", inner)


@pytest.fixture(autouse=True)
def default_print_options():
    torch.set_printoptions(profile="default")
    yield
    torch.set_printoptions(profile="default")


@pytest.mark.parametrize("name", CASES)
def test_the_numbers_are_torchs_own(name):
    t = CASES[name]
    assert fmt(t).replace(" ", "") == torch_numbers(t)


@pytest.mark.parametrize("seed", range(60))
def test_random_magnitudes_print_as_torch_prints_them(seed):
    g = torch.Generator().manual_seed(seed)
    n = int(torch.randint(1, 9, (1,), generator=g))
    exponents = torch.randint(-9, 13, (n,), generator=g).double()
    values = torch.randn(n, generator=g, dtype=torch.float64) * 10.0 ** exponents
    whole = torch.rand(n, generator=g) < 0.3
    values = torch.where(whole, values.round(), values)
    for t in (values, values.float(), values[: max(1, n // 2)].reshape(1, -1)):
        assert fmt(t).replace(" ", "") == torch_numbers(t), t.tolist()


def test_vanishing_gradient_is_not_shown_as_zero():
    assert fmt(torch.tensor([1.5e-06, 6.0])) == "[1.5000e-06, 6.0000e+00]"
    assert "0.0000" not in fmt(torch.tensor([1.5e-06, 6.0]))
    assert number(1.5e-06) == "1.5000e-06" and number(1e12) == "1.0000e+12"
    assert number(1 / 3) == "0.3333" and number(6.0) == "6." and number(-0.0) == "-0."
    assert number(7) == "7" and number(True) == "True" and number(NAN) == "nan" and number(-INF) == "-inf"


def test_python_floats_print_as_a_0d_double_tensor_of_them():
    for v in (1.5e-06, 1e12, 1 / 3, 6.0, -0.0, 0.0, NAN, INF, -2.5, 1e-04, 99999999.0, 1.5 - 2j):
        as_tensor = torch.tensor(v, dtype=torch.complex128 if isinstance(v, complex) else torch.float64)
        assert number(v) == torch_numbers(as_tensor), v
        assert fmt(v) == number(v)
    assert fmt([1.5e-06, 6]) == "[1.5000e-06, 6]" and fmt((0.5,)) == "(0.5000)"


def test_the_learners_print_options_change_nothing():
    t = torch.tensor([1.5e-06, 6.0, 1 / 3])
    expected = torch_numbers(t)
    torch.set_printoptions(precision=1, sci_mode=False)
    assert fmt(t).replace(" ", "") == expected
    torch.set_printoptions(precision=8, sci_mode=True)
    assert fmt(torch.tensor([0.5, 2.0])) == "[0.5000, 2.0000]"
    assert torch._tensor_str.PRINT_OPTS.precision == 8  # and the learner's options are still theirs


def test_long_tensors_stay_summarised_and_bounded():
    assert fmt(torch.arange(9.0)) == f"<9 float32, norm {number(math.sqrt(sum(i * i for i in range(9))))}>"
    assert fmt(torch.full((100, 100), 1e-06)) == "<100x100 float32, norm 1.0000e-04>"
    assert fmt(torch.ones(9, dtype=torch.complex64)) == "<9 complex64, norm 3.>"
    assert len(fmt(torch.tensor([-1e-300, 1e300] * 4, dtype=torch.float64))) < 200


def test_the_stepper_shows_a_vanishing_gradient():
    x = torch.tensor([7.5e-07, 3.0], requires_grad=True)
    z = (x * x).sum()
    text = repr(al.step(z, names={"x": x}).goto(len(al.trace(z).steps) - 1))
    assert "x.grad: None -> [1.5000e-06, 6.0000e+00]" in text
    assert x.grad is None
