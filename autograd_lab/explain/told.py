"""The errors explained by putting the learner's name for one tensor into three templates, kept in
told.toml: the summary, why it happened and the fix. A kind may add whole sentences of its own
(words), worked out from the learner's graph: how the first backward freed it, a shape, who made a
tensor."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..saved import FREED
from ..i18n import _
from ..names import label
from ..words import words_of
from .reading import named, saves
from .wording import listing

TOLD = words_of(__name__)


@dataclass(frozen=True)
class Told:
    """An error explained by its table of told.toml (key): summary, why and fix are str.format
    templates over {name} (found by reading.named from default and attr) and the words that
    words(msg, ctx, tensor, name) adds, translated when an error is explained. A fix that is code
    only, the same in every language, is given here instead (code).

    >>> from autograd_lab.explain.context import Context
    >>> gradient_shape("Mismatch in shape", Context("q.backward(g)"))[0]
    'the gradient given to q.backward() has the wrong shape.'
    """

    key: str
    default: str
    attr: str | None = None
    words: Callable[..., dict] | None = None
    code: str | None = None

    def __call__(self, msg, ctx) -> tuple[str, str, str]:
        found, t = named(ctx, self.default, self.attr)
        name = label(found)  # the learner's code for the tensor, shortened when long (display only)
        words = {"name": name, **(self.words(msg, ctx, t, name) if self.words else {})}
        said = TOLD[self.key]
        fix = said("fix") if self.code is None else self.code
        return said("summary").format(**words), said("why").format(**words), fix.format(**words)


def _freed(msg, ctx, t, name) -> dict:
    freed = saves(t, FREED, ctx.names)
    if freed:
        first = _("{name}'s graph was freed by the first `{name}.backward()`: to save memory, backward releases "
                  "the values the graph's nodes saved ({nodes} had saved values for it).").format(
                      name=name, nodes=listing(freed))
    else:
        first = _("{name}'s graph was freed by the first `{name}.backward()`: to save memory, backward releases "
                  "the values the graph's nodes saved.").format(name=name)
    return {"first": first}



def _size(msg, ctx, t, name) -> dict:
    if t is not None:
        return {"first": _("{name} has shape {shape} ({count} numbers).").format(
            name=name, shape=tuple(t.shape), count=t.numel())}
    return {"first": _("{name} holds several numbers.").format(name=name)}



def _made(msg, ctx, t, name) -> dict:
    if t is not None and t.grad_fn is not None:
        return {"first": _("{name} is not a leaf (made by {node}): it is an intermediate result in the graph.").format(
            name=name, node=label(t.grad_fn.name()))}
    return {"first": _("{name} is not a leaf: it is an intermediate result in the graph.").format(name=name)}



backward_twice = Told("backward_twice", "z", words=_freed)
non_scalar = Told("non_scalar", "z", words=_size)
no_grad_fn = Told("no_grad_fn", "z")
numpy_requires_grad = Told("numpy_requires_grad", "z", attr="numpy", code="{name}.detach().numpy()")
nonleaf_grad = Told("nonleaf_grad", "y", attr="grad", words=_made)
gradient_shape = Told("gradient_shape", "z", code="{name}.backward(torch.ones_like({name}))")
