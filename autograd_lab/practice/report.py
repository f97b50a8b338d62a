"""The progress report: the ledger's records joined with the bank, one row per exercise in course
order. A model; its faces are in faces.py and its view in view.py."""
from __future__ import annotations

from dataclasses import dataclass

from ..i18n import _
from . import progress as ledger
from .bank import catalog


@dataclass(frozen=True)
class Progress:
    """A snapshot of the learner's progress; ``to_dict()`` exports it.

    >>> Progress((("mean_square", "The gradient of a mean of squares", ledger.empty()),)).passed
    0
    """

    rows: tuple  # (name, title, record) in bank order

    def to_dict(self) -> dict:
        """{name: {"title" (in the lab's language), "checks", "attempts", "correct", "hints", "solution",
        "confirmed", "diagnoses" (stable ids of the mistakes met), "attempted", "passed"}}."""
        return {name: {"title": _(title), **record} for name, title, record in self.rows}

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

    def __repr__(self) -> str:
        return f"<progress: {self.passed} of {len(self.rows)} passed>"


def report() -> Progress:
    """Which exercises were attempted and passed, and how many hints were used.

    >>> report().to_dict()["mean_square"]["title"]
    'The gradient of a mean of squares'
    """
    return Progress(tuple((e.name, e.title, ledger.record(e.name)) for e in catalog()))
