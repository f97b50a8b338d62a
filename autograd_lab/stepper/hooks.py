"""The learner's own backward hooks during a recording: found, wrapped for the run so the lab can
say which of them ran on which tensor or module and name the one that fails, and put back after
(the same hook objects in the same dicts and lists, in the same order, so hook counts never change:
a hook that removed itself through its handle during the run is back, one that a hook added is
gone).

Their hooks run, as they would in backward(): a hook that changes a gradient changes what the
engine sends on, and that is what the recording shows."""
from __future__ import annotations

from collections.abc import Mapping

import torch
from torch.utils.hooks import BackwardHook

from ..graph import Graph, Node
from ..i18n import _
from ..names import learner_items, name_in
from .recorder import NESTED_LIMIT, NestedTooDeep

class HookFailed(Exception):
    """A learner's hook raised or returned a gradient of the wrong shape: message names it."""


def hook_name(hook) -> str:
    name = getattr(hook, "__name__", None) or type(hook).__name__
    return _("a lambda") if name == "<lambda>" else name


def module_name(module, names: Mapping) -> str:
    """The learner's name for a module ('model.0'), else its class ('Linear')."""
    for name, value in learner_items(names):
        if value is module:
            return name
        if isinstance(value, torch.nn.Module):
            for sub, m in value.named_modules():
                if m is module and sub:
                    return f"{name}.{sub}"
    return type(module).__name__


class LearnerHooks:
    """A context manager over the learner's hooks on one graph. ran: (node, text) in the order they
    ran; any: whether the graph has hooks of theirs at all (then recorded values are copies)."""

    def __init__(self, graph: Graph, hooked_tensors, names: Mapping, node_dicts, check: bool = True):
        """node_dicts: (node, its dict of post- or pre-hooks, the key of the lab's own hook or None).
        check: the lab checks the shape of what a hook returns and names the hook (a recording beside
        the learner's); without it torch checks, and the learner gets torch's own error (record()).
        Wrapping that fails partway (an interrupt, say) unwraps what it wrapped before it raises."""
        self.ran: list[tuple[Node | None, str]] = []
        self.kinds: dict[str, tuple[str, str]] = {}  # what a hook's run is called -> (its kind, its name)
        self._dicts: list[tuple[dict, dict, object]] = []  # (a hook dict, its entries before, the lab's key)
        self._lists: list[tuple[BackwardHook, list, list]] = []
        self._modules: list[tuple[dict, dict]] = []  # a module's own hook dicts and their entries
        self._check = check
        try:
            self._wrap_all(graph, hooked_tensors, names, node_dicts)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.any = bool(self._dicts or self._lists)

    def _wrap_all(self, graph: Graph, hooked_tensors, names: Mapping, node_dicts) -> None:
        for t in hooked_tensors:
            node = graph.node_of(t.grad_fn) if t.grad_fn is not None else _leaf_node(graph, t)
            where = name_in(names, t) or (node.label if node is not None and node.label else None)
            where = where or (_("the tensor made by {node}").format(node=node.name)
                              if node is not None and not node.is_accumulator else _("a leaf"))
            self._wrap_dict(t._backward_hooks, node,
                            lambda h, w=where: _("your hook {hook} on {where}").format(hook=hook_name(h), where=w),
                            _tensor_hook, "tensor")
        for node, hooks, own in node_dicts:
            owners = [o for o in (_backward_hook_of(h) for k, h in hooks.items() if k != own) if o is not None]
            for owner in owners:  # torch's own hooks that call the module's: wrap the module's
                self._wrap_module(owner, node, names)
            if not owners:
                self._wrap_dict(hooks, node, lambda h, n=node: _("your hook {hook} on node {node}").format(
                    hook=hook_name(h), node=n.title), _node_hook, "node", own)

    def _wrap_dict(self, hooks: dict, node, describe, wrapper, kind: str, own=None):
        before = {k: h for k, h in hooks.items() if k != own}
        if not before:
            return
        self._dicts.append((hooks, before, own))
        for key, hook in before.items():
            what = describe(hook)
            self.kinds[what] = (kind, hook_name(hook))
            hooks[key] = wrapper(hook, node, what, self.ran, self._check)

    def _wrap_module(self, owner: BackwardHook, node: Node, names: Mapping):
        if any(o is owner for o, _posts, _pres in self._lists):
            return
        name = module_name(owner.module, names)
        node.label = _("backward hook of {module}").format(module=name)
        self._lists.append((owner, owner.user_hooks, owner.user_pre_hooks))
        module = owner.module
        for hooks in (getattr(module, "_backward_hooks", None), getattr(module, "_backward_pre_hooks", None)):
            if hooks is not None and all(hooks is not kept for kept, _entries in self._modules):
                self._modules.append((hooks, dict(hooks)))
        posts = [(h, _("your backward hook {hook} on module {module}").format(hook=hook_name(h), module=name))
                 for h in owner.user_hooks]
        pres = [(h, _("your backward pre-hook {hook} on module {module}").format(hook=hook_name(h), module=name))
                for h in owner.user_pre_hooks]
        for h, what in posts + pres:
            self.kinds[what] = ("module", hook_name(h))
        owner.user_hooks = [_module_hook(h, node, what, self.ran, self._check) for h, what in posts]
        owner.user_pre_hooks = [_module_pre_hook(h, node, what, self.ran, self._check) for h, what in pres]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for hooks, before, own in self._dicts:
            mine = hooks.get(own) if own is not None else None
            hooks.clear()
            hooks.update(before)
            if mine is not None:  # the lab's own hook, removed by its handle after this
                hooks[own] = mine
        for owner, posts, pres in self._lists:
            owner.user_hooks, owner.user_pre_hooks = posts, pres
        for hooks, before in self._modules:
            if dict(hooks) != before or list(hooks) != list(before):
                hooks.clear()
                hooks.update(before)
        return False


def _leaf_node(graph: Graph, t):
    for node in graph.leaves():
        if node.leaf is t:
            return node
    return None


def closure_value(fn, kind: type):
    """The first value of type kind that the function fn closes over, or None: how torch's own hook
    functions (a module's BackwardHook, a checkpoint's frame) are recognised from the outside."""
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # a cell not filled yet
            continue
        if isinstance(value, kind):
            return value
    return None


def _backward_hook_of(fn):
    return closure_value(fn, BackwardHook)


def _shapes(got, expected) -> str | None:
    if isinstance(got, torch.Tensor) and isinstance(expected, torch.Tensor) and got.shape != expected.shape:
        return _("returned a gradient of shape {got} for one of shape {expected}").format(
            got=tuple(got.shape), expected=tuple(expected.shape))
    return None


def _call(hook, what, args):
    try:
        return hook(*args)
    except HookFailed:
        raise
    except NestedTooDeep:
        raise HookFailed(_("{hook} calls backward on the graph it is part of, which runs the hook again, and again: "
                           "the recording stopped it after {count} rounds (your own backward() would not end "
                           "either)").format(hook=what, count=NESTED_LIMIT)) from None
    except Exception as err:
        raise HookFailed(_("{hook} raised {error}: {message}").format(
            hook=what, error=type(err).__name__, message=" ".join(str(err).split()))) from err


def _named(wrapped, hook):
    """wrapped under the name of the learner's hook: torch's own messages name a hook by __name__."""
    name = getattr(hook, "__name__", None)
    if isinstance(name, str):
        wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


def _tensor_hook(hook, node, what, ran, check):
    def wrapped(grad):
        ran.append((node, what))
        out = _call(hook, what, (grad,))
        wrong = _shapes(out, grad) if check else None
        if wrong:
            raise HookFailed(_("{hook} {problem}: a hook must return None or a tensor shaped like its grad").format(
                hook=what, problem=wrong))
        return out
    return _named(wrapped, hook)


def _node_hook(hook, node, what, ran, check):
    def wrapped(*args):
        ran.append((node, what))
        return _call(hook, what, args)
    return _named(wrapped, hook)


def _module_hook(hook, node, what, ran, check):
    def wrapped(module, grad_in, grad_out):
        ran.append((node, what))
        out = _call(hook, what, (module, grad_in, grad_out))
        if check:
            _check_all(what, out, grad_in)
        return out
    return _named(wrapped, hook)


def _module_pre_hook(hook, node, what, ran, check):
    def wrapped(module, grad_out):
        ran.append((node, what))
        out = _call(hook, what, (module, grad_out))
        if check:
            _check_all(what, out, grad_out)
        return out
    return _named(wrapped, hook)


def _check_all(what, out, given):
    if out is None:
        return
    for g, e in zip(out if isinstance(out, (tuple, list)) else (out,), given, strict=False):
        wrong = _shapes(g, e)
        if wrong:
            raise HookFailed(_("{hook} {problem}: a hook must return None or gradients shaped like its "
                               "arguments").format(hook=what, problem=wrong))
