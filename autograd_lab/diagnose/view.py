"""Temporary: the front ends moved to autograd_lab.explain.view and autograd_lab.profile.view. This
module only re-imports them until magics.py imports them from there; then it is deleted."""
from __future__ import annotations

from ..explain.view import explain_errors, run_explained
from ..profile.view import profile_cell

__all__ = ["explain_errors", "profile_cell", "run_explained"]
