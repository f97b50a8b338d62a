"""What a node saved for backward, read from the outside, and what the lab says when an earlier
backward freed it; the learner's name for a saved tensor."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from .i18n import _
from .names import learner_tensors
from .tensors import same_memory

# How PyTorch's message starts when a backward reaches values an earlier backward freed.
FREED = "Trying to backward through the graph a second time"
_saved_attrs_by_type: dict[type, tuple[str, ...]] = {}


def freed_message(what: str) -> str:
    """What to tell a learner whose graph was freed by an earlier backward."""
    return _("{what}'s graph was already used by a backward() and freed: autograd releases the "
             "values a graph saved as soon as a backward has used them, to save memory. Re-run the "
             "cell that computed {what}; or, if you really need two backwards, call the first one as "
             "{what}.backward(retain_graph=True), which keeps the saved values alive.").format(what=what)


# How PyTorch's message starts when a saved value was changed in place after it was saved.
EDITED = "one of the variables needed for gradient computation has been modified by an inplace operation"


class NotRead:
    """Stands for a saved value the lab does not show (the kinds below say why)."""


class EditedInPlace(NotRead):
    """Stands for a saved value changed in place since it was saved: torch refuses to give it back
    (and the learner's own backward will fail on it)."""

    def __repr__(self) -> str:
        return _("(changed in place since it was saved: torch no longer gives it back, and your backward() "
                 "will fail on it)")

    __str__ = __repr__


class PackedByYou(NotRead):
    """Stands for a saved value packed by the learner's saved-tensor hooks: reading it would run
    their unpack hook once more, so the lab does not read it."""

    def __repr__(self) -> str:
        return _("(packed by your saved-tensor hooks: not read, as reading it would run your unpack hook again)")

    __str__ = __repr__


def saved_values(fn: Any) -> tuple[dict[str, Any], bool]:
    """What a node saved for backward ({"self": x, ...} from its _saved_* attributes), and whether
    an earlier backward freed them. A value changed in place since is an EditedInPlace; other errors
    are raised.

    >>> x = torch.ones(2, requires_grad=True)
    >>> sorted(saved_values((x * x).grad_fn)[0])
    ['other', 'self']
    """
    attrs = _saved_attrs_by_type.get(type(fn))
    if attrs is None:
        attrs = tuple(a for a in dir(fn) if a.startswith("_saved_"))
        _saved_attrs_by_type[type(fn)] = attrs
    saved: dict[str, Any] = {}
    freed = False
    for attr in attrs:
        custom = isinstance(fn, torch.autograd.function.BackwardCFunction)
        hook = None if custom else getattr(getattr(fn, "_raw" + attr, None), "unpack_hook", None)
        if hook is not None and getattr(hook, "__module__", "") != "torch.utils.checkpoint":
            saved[attr[len("_saved_"):]] = PackedByYou()  # reading it would run the learner's unpack hook
            continue
        try:
            saved[attr[len("_saved_"):]] = getattr(fn, attr)
        except RuntimeError as err:
            if FREED in str(err):
                freed = True
            elif EDITED in str(err):
                saved[attr[len("_saved_"):]] = EditedInPlace()
            else:
                raise
    return saved, freed


def label_of(value: object, graph: Any, names: Mapping[str, object] | None = None) -> str | None:
    """The learner's name for a saved tensor, if it is one of theirs (same memory, same view), or the
    label of a leaf of graph (a graph.Graph) that is it."""
    if not isinstance(value, torch.Tensor):
        return None
    for name, candidate in learner_tensors(names):
        if same_memory(candidate, value):
            return name
    for node in graph.nodes:
        if node.leaf is not None and node.label and same_memory(node.leaf, value):
            return node.label
    return None
