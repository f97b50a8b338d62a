"""Running an exercise's setup code privately, so that every expected answer is what torch
computes from the very code the learner is shown. The learner's random state, warnings filters
and namespace are left untouched."""
from __future__ import annotations

import getpass
import os
import warnings
import zlib
from typing import Any

import torch


def run(code: str) -> dict:
    """Execute setup code in a fresh namespace holding only torch; return the namespace.

    >>> run("x = torch.ones(2) * 3")["x"]
    tensor([3., 3.])
    """
    namespace = {"torch": torch}
    # fork_rng: code that calls torch.manual_seed must not move the learner's random stream
    with torch.random.fork_rng(devices=[]), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # reading .grad of a non-leaf warns; we only look
        exec(compile(code, "<exercise setup>", "exec"), namespace)
    return namespace


def outcome(code: str) -> tuple[dict | None, RuntimeError | None]:
    """Run code that may fail the way learners see it fail: (namespace, None) or (None, error)."""
    try:
        return run(code), None
    except RuntimeError as err:
        return None, err


def grad(code: str, leaf: str = "x") -> torch.Tensor:
    """The .grad of one leaf after running code (which calls backward)."""
    return run(code)[leaf].grad.detach().clone()


def has_grad(namespace: dict, name: str) -> bool:
    """Whether the tensor or parameter called name (dotted for module parameters) got a .grad."""
    obj: Any = namespace
    for part in name.split("."):
        obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return obj.grad is not None


def tensor_code(name: str, values: list, requires_grad: bool = True) -> str:
    """The line that creates a float64 leaf with these values, as the learner will type it."""
    flag = ", requires_grad=True" if requires_grad else ""
    return f"{name} = torch.tensor({values!r}, dtype=torch.double{flag})"


def learner_seed() -> int:
    """A seed of the learner's own: AUTOGRAD_LAB_LEARNER if set, else the login name.

    Stable across runs and machines for the same learner (crc32, not the salted hash())."""
    who = os.environ.get("AUTOGRAD_LAB_LEARNER", "").strip()
    if not who:
        try:
            who = getpass.getuser()
        except (KeyError, OSError):
            who = "learner"
    return zlib.crc32(who.encode()) % 10000


def random_values(seed: int, count: int) -> list[float]:
    """count values with one decimal in [-3, 3], from a private generator."""
    gen = torch.Generator().manual_seed(seed)
    return [v / 10 for v in torch.randint(-30, 31, (count,), generator=gen).tolist()]


def variant_values(seed: int | None, default: list[float], salt: int = 0) -> list[float]:
    """The exercise's own values without a seed; with one, as many values with one decimal in
    [-3, 3], none zero and no two of the same size, so that no wrong answer meets the right one or
    another wrong one by accident. salt gives a second list from the same seed.

    >>> variant_values(None, [1.0, 2.0])
    [1.0, 2.0]
    >>> variant_values(4, [1.0, 2.0]) == variant_values(4, [1.0, 2.0]) != [1.0, 2.0]
    True
    """
    if seed is None:
        return list(default)
    gen = torch.Generator().manual_seed(int(seed) * 7919 + salt)
    found: list[float] = []
    while len(found) < len(default):
        v = int(torch.randint(-30, 31, (1,), generator=gen)) / 10
        if v != 0 and abs(v) != 1 and all(abs(v) != abs(f) for f in found):
            found.append(v)
    return found
