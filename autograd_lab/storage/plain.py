"""Plain strings for the storage report's own repr: the shared formatting of autograd_lab.format,
and how the table says yes, no and "does not apply"."""
from __future__ import annotations

from ..format import fmt as value, message, table  # noqa: F401  (the report's vocabulary)


def yes_no(flag) -> str:
    """True/False/None as the table shows them (None: the question does not apply)."""
    return "-" if flag is None else ("yes" if flag else "no")
