"""What the learner did with the exercises in this kernel (attempted, passed, hints used), and the
grading switch for autograders. Kept in memory only: nothing leaves the kernel or touches disk."""
from __future__ import annotations

import os
from dataclasses import dataclass

_records: dict[str, dict] = {}
_grading: bool | None = None


def _entry(name: str) -> dict:
    return _records.setdefault(name, {"checks": 0, "attempted": False, "passed": False,
                                      "hints": 0, "solution": False})


def record_check(name: str, status: str) -> None:
    entry = _entry(name)
    entry["checks"] += 1
    if status != "not attempted":
        entry["attempted"] = True
    if status == "correct":
        entry["passed"] = True


def record_hint(name: str, number: int) -> None:
    entry = _entry(name)
    entry["hints"] = max(entry["hints"], number)


def record_solution(name: str) -> None:
    _entry(name)["solution"] = True


def reset() -> None:
    """Forget everything recorded (a fresh start, or between tests)."""
    _records.clear()


def grading(flag: bool | None = None) -> bool:
    """Switch grading mode on or off; with no argument, say whether it is on.

    In grading mode a check that is not correct raises AssertionError with its message, so
    nbgrader and otter autograder cells work unchanged. The environment variable
    AUTOGRAD_LAB_GRADING=1 turns it on too, unless grading(False) was called.

    >>> grading(True); grading(False)                   # doctest: +SKIP
    """
    global _grading
    if flag is not None:
        if not isinstance(flag, bool):
            from ..errors import LabInputError

            raise LabInputError(f"grading() takes True or False, got {flag!r}.")
        _grading = flag
    if _grading is not None:
        return _grading
    return os.environ.get("AUTOGRAD_LAB_GRADING", "").strip() == "1"


@dataclass(frozen=True)
class Progress:
    """A snapshot of the learner's progress; ``to_dict()`` exports it."""

    rows: tuple  # (name, title, record) in bank order

    def to_dict(self) -> dict:
        """{name: {"title", "attempted", "passed", "checks", "hints", "solution"}}."""
        return {name: {"title": title, **record} for name, title, record in self.rows}

    @property
    def passed(self) -> int:
        return sum(1 for _, _, r in self.rows if r["passed"])

    @property
    def attempted(self) -> int:
        return sum(1 for _, _, r in self.rows if r["attempted"])

    def status(self, name: str) -> str:
        record = self.to_dict()[name]
        if record["passed"]:
            return "passed"
        return "attempted" if record["attempted"] else "not attempted"

    def text(self) -> str:
        header = ("exercise", "status", "checks", "hints", "solution")
        rows = [header] + [(name, self.status(name), str(r["checks"]), str(r["hints"]),
                            "seen" if r["solution"] else "-") for name, _, r in self.rows]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return (f"Progress: {self.passed} of {len(self.rows)} passed, {self.attempted} attempted\n"
                + "\n".join(lines))

    def __repr__(self) -> str:
        return self.text()


def progress() -> Progress:
    """Which exercises were attempted and passed, and how many hints were used.

    >>> progress().to_dict()["mean_square"]["passed"]   # doctest: +SKIP
    False
    """
    from .bank import catalog

    empty = {"checks": 0, "attempted": False, "passed": False, "hints": 0, "solution": False}
    return Progress(tuple((e.name, e.title, dict(_records.get(e.name, empty))) for e in catalog()))
