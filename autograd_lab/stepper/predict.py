"""Checking a learner's prediction of a step against what the engine really computed."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..tensors import Summary, close


@dataclass(frozen=True)
class Verdict:
    right: bool
    message: str
    difference: float | None = None  # largest absolute difference, when comparable


def compare(answer, expected) -> Verdict:
    """Compare an answer (number, nested list, tensor, or a tuple of them for several outputs).

    >>> compare([0.6667, 1.3333, 2.0], torch.tensor([2/3, 4/3, 2.])).right
    True
    """
    if isinstance(expected, tuple):
        expected = tuple(e for e in expected if e is not None)
        if len(expected) == 1:
            expected = expected[0]
        elif not isinstance(answer, (tuple, list)) or len(answer) != len(expected) or _is_flat_numbers(answer):
            return Verdict(False, f"this node sends {len(expected)} gradients: give them as a tuple, "
                                  f"one per input, e.g. (g1, g2)")
        else:
            verdicts = [compare(a, e) for a, e in zip(answer, expected, strict=False)]
            worst = max((v.difference or 0.0) for v in verdicts)
            if all(v.right for v in verdicts):
                return Verdict(True, "right: all gradients match", worst)
            wrong = [str(i + 1) for i, v in enumerate(verdicts) if not v.right]
            return Verdict(False, f"wrong for input {', '.join(wrong)}: " + "; ".join(
                v.message for v in verdicts if not v.right), worst)
    if isinstance(expected, Summary):
        return Verdict(False, f"this gradient has {expected.numel} values; predict a smaller example")
    if expected is None:
        return Verdict(False, "nothing is sent on from this node")
    if isinstance(answer, torch.Tensor):
        answer = answer.detach().cpu()
    try:
        value = torch.as_tensor(answer, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return Verdict(False, f"could not read {type(answer).__name__} as numbers: type a number, a "
                              f"list like [1.0, 2.0], or an expression")
    target = expected.detach().to(torch.float64).cpu()
    if value.shape != target.shape:
        if value.numel() == 1 and target.numel() == 1:
            value = value.reshape(target.shape)
        else:
            return Verdict(False, f"wrong shape: you gave {tuple(value.shape)}, the gradient has shape "
                                  f"{tuple(target.shape)} (one value per element of the input)")
    diff = float((value - target).abs().max()) if value.numel() else 0.0
    if close(value, target):  # values copied from what PyTorch prints count as right: 0.6667 for 2/3
        return Verdict(True, "right" + ("" if diff < 1e-12 else f" (off by at most {diff:.1e}, rounding)"), diff)
    return Verdict(False, f"wrong: off by up to {diff:.4f}", diff)


def _is_flat_numbers(answer) -> bool:
    return all(isinstance(a, (int, float)) for a in answer)
