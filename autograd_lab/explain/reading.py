"""What the learner's graph and names say about an error: the learner's name for the tensor at
stake, and the nodes whose saved values are gone or changed, titled with the learner's labels."""
from __future__ import annotations

from ..graph import short_name, walk
from ..saved import EDITED, FREED, EditedInPlace, saved_values
from ..names import label, learner_tensors
from . import context as c


def _labels(names) -> dict:
    return {v.grad_fn: k for k, v in learner_tensors(names) if v.grad_fn is not None}


def _title(node, labels) -> str:
    name = label(short_name(node))
    return f"{name} ({label(labels[node])})" if node in labels else name


def _failing_saves(root, needle: str, names) -> list[str]:
    """Titles of the nodes whose saved values are gone (needle is FREED) or raise an error that
    contains needle (a saved value changed in place since)."""
    labels, found = _labels(names), []
    for node, _edge in walk(root):
        try:
            saved, freed = saved_values(node)
            hit = (freed and needle == FREED) or (needle in EDITED and any(
                isinstance(v, EditedInPlace) for v in saved.values()))
        except RuntimeError as err:  # saved_values raises every other error
            hit = needle in str(err)
        if hit:
            found.append(_title(node, labels))
    return found


def named(ctx, default: str, attr: str | None = None):
    """The learner's name for the tensor at stake in the failing line, and their tensor of that name
    (None when unknown): what backward ran from, or with attr what `.attr` was read on; else default."""
    stmt = ctx.statement()
    name = (c.receiver(stmt, attr) if attr else c.backward_target(stmt)) or default
    return name, ctx.tensor(name)


def saves(t, needle: str, names) -> list[str]:
    return _failing_saves(t.grad_fn, needle, names) if t is not None and t.grad_fn else []
