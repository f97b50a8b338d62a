"""The ledger: what the learner did with each exercise in this kernel (checks, attempts, passes,
hints, solutions), and the grading switch for autograders. Kept in memory only: nothing leaves the
kernel or touches disk. The ledger knows exercises by name only; the report (report.py) joins it
with the bank."""
from __future__ import annotations

import os

from ..errors import LabInputError
from ..format import quote
from ..i18n import _
from .checking import safe_repr

_records: dict[str, dict] = {}
_grading: bool | None = None


def empty() -> dict:
    """The record of an exercise nobody touched yet.

    >>> empty()["checks"]
    0
    """
    return {"checks": 0, "attempts": 0, "attempted": False, "passed": False, "correct": False,
            "hints": 0, "solution": False, "confirmed": False, "diagnoses": []}


def _entry(name: str) -> dict:
    return _records.setdefault(name, empty())


def record_check(name: str, status: str, diagnosis: str = "") -> None:
    """One check: every check counts; an answer that is not the blank (nor a tensor in place of a
    prediction) is an attempt; diagnoses are kept as stable ids, in the order first met."""
    entry = _entry(name)
    entry["checks"] += 1
    if status != "not attempted":
        entry["attempts"] += 1
        entry["attempted"] = True
    if status == "correct":
        entry["passed"] = entry["correct"] = True
    if diagnosis and diagnosis not in entry["diagnoses"]:
        entry["diagnoses"].append(diagnosis)


def record_confirm(name: str) -> None:
    _entry(name)["confirmed"] = True


def record_hint(name: str, number: int) -> None:
    entry = _entry(name)
    entry["hints"] = max(entry["hints"], number)


def record_solution(name: str) -> None:
    _entry(name)["solution"] = True


def record(name: str) -> dict:
    """A copy of one exercise's record (empty when it was never touched).

    >>> record("no such exercise")["passed"]
    False
    """
    found = _records.get(name, empty())
    return {**found, "diagnoses": list(found["diagnoses"])}


def reset() -> None:
    """Forget everything recorded (a fresh start, or between tests)."""
    _records.clear()


def grading(flag: bool | None = None) -> bool:
    """Switch grading mode on or off; with no argument, say whether it is on.

    In grading mode a check that is not correct raises AssertionError with its message, so
    nbgrader and otter autograder cells work unchanged. The environment variable
    AUTOGRAD_LAB_GRADING=1 turns it on too, unless grading(False) was called.

    >>> grading(True), grading(False)
    (True, False)
    """
    global _grading
    if flag is not None:
        if not isinstance(flag, bool):
            raise LabInputError(_("grading() takes True or False, got {flag}.").format(flag=quote(safe_repr(flag))))
        _grading = flag
    if _grading is not None:
        return _grading
    return os.environ.get("AUTOGRAD_LAB_GRADING", "").strip() == "1"
