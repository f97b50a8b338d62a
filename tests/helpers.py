"""Shared test helpers: what the learner owns, and whether anything of it changed."""
import torch


def walk(fn):
    seen, stack = [], [fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.append(node)
        stack.extend(child for child, _ in node.next_functions)
    return seen


def hooks_on(fn) -> int:
    """How many post-hooks and pre-hooks a graph node carries (found through a probe handle)."""
    count = 0
    for register in (fn.register_hook, fn.register_prehook):
        probe = register(lambda *args: None)
        count += len(probe.hooks_dict_ref()) - 1
        probe.remove()
    return count


def state(tensors):
    """Everything of the learner's that must not change: values, versions, .grad objects."""
    out = []
    for t in tensors:
        grad = t.grad if (t.is_leaf or t.retains_grad) else None
        out.append((t.detach().clone(), t._version, grad, None if grad is None else grad.detach().clone(),
                    None if grad is None else grad._version))
    return out


def assert_unchanged(tensors, before):
    after = state(tensors)
    for (v0, ver0, g0, gv0, gver0), (v1, ver1, g1, gv1, gver1) in zip(before, after, strict=True):
        assert torch.equal(v0, v1), "values changed"
        assert ver0 == ver1, "version changed"
        assert g0 is g1, ".grad was replaced"
        if g0 is not None:
            assert torch.equal(gv0, gv1) and gver0 == gver1, ".grad was modified"


def widgets(root):
    """Every widget under root (root included), depth first."""
    found, stack = [], [root]
    while stack:
        w = stack.pop()
        found.append(w)
        stack.extend(reversed(list(getattr(w, "children", ()) or ())))
    return found


def part(view, css_class: str):
    """The one control of view's widget that carries css_class (what a browser test would find)."""
    [control] = [w for w in widgets(view.widget) if css_class in w.get_state().get("_dom_classes", ())]
    return control
