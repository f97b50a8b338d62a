"""What of the learner's own code ran during a recording, by kind, with counts and a few names:
their hooks (on tensors, on nodes, on modules), a torch.autograd.Function's backward, saved-tensor
unpack hooks, and a checkpoint's forward run again. All of it runs once in a recording, as in
backward(), and runs again in their own backward(); the stepper says so in its first lines.

(Callbacks queued with the engine's queue_callback from inside backward run too; the lab cannot
see them from outside, and says nothing of them.)"""
from __future__ import annotations

from dataclasses import dataclass

from ..i18n import _, ngettext
from ..names import label
from .recompute import recomputations
from .rules import learner_function

NAMES = 3  # names shown per kind


@dataclass(frozen=True)
class Ran:
    """One kind of the learner's code that ran: kind is one of KINDS, count how many times it
    ran, names (at most NAMES) which."""

    kind: str
    count: int
    names: tuple[str, ...]


KINDS = ("tensor", "node", "module", "function", "unpack", "checkpoint")


def ran_of_yours(trace) -> list[Ran]:
    """Each kind of the learner's code that ran in the recording, in KINDS order."""
    counts: dict[str, int] = dict.fromkeys(KINDS, 0)
    names: dict[str, list[str]] = {k: [] for k in KINDS}

    def add(kind: str, name: str | None, count: int = 1) -> None:
        counts[kind] += count
        if name:
            name = label(name)  # a hook or class named at length is shown shortened
        if name and name not in names[kind]:
            names[kind].append(name)

    kinds = getattr(trace, "hook_kinds", {})
    for _node, what in trace.hooks_ran:
        kind, name = kinds.get(what, ("tensor", None))
        add(kind, name)
    unpacks = getattr(trace, "unpacks", {})
    for step in trace.steps:
        cls = learner_function(step.node)
        if cls is not None:
            add("function", cls.__name__)
        n = unpacks.get(step.node.fn)
        if n:
            add("unpack", None, n)
    for r in recomputations(trace).values():
        add("checkpoint", r.function)
    return [Ran(k, counts[k], tuple(names[k][:NAMES])) for k in KINDS if counts[k]]


def _part(ran: Ran) -> str:
    n = ran.count
    what = {
        "tensor": ngettext("{count} run of a tensor hook", "{count} runs of tensor hooks", n),
        "node": ngettext("{count} run of a node hook", "{count} runs of node hooks", n),
        "module": ngettext("{count} run of a module's backward hook", "{count} runs of modules' backward hooks", n),
        "function": ngettext("{count} Function backward", "{count} Function backwards", n),
        "unpack": ngettext("{count} saved value unpacked by your unpack hook",
                           "{count} saved values unpacked by your unpack hooks", n),
        "checkpoint": ngettext("{count} checkpointed forward run again", "{count} checkpointed forwards run again", n),
    }[ran.kind].format(count=n)
    return _("{what} ({names})").format(what=what, names=", ".join(ran.names)) if ran.names else what


def yours_line(trace) -> str | None:
    """The stepper's line on what ran of the learner's, or None when nothing did."""
    ran = trace.yours
    if not ran:
        return None
    parts = "; ".join(_part(r) for r in ran)
    if trace.applied:
        return _("your code ran in this backward, once, as in any backward(): {parts}").format(parts=parts)
    return _("your code ran in this recording, as in any backward(): {parts}. Your own backward() runs it again"
             ).format(parts=parts)
