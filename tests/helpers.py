"""Shared test helpers: what the learner owns, and whether anything of it changed."""
import html
import re

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


_CODE = re.compile(
    r"`[^`]*`"                           # code in backticks
    r"|<[^<>]*>"                          # HTML tags, and tensor summaries like <3x4 float, norm 1.0>
    r"|&[a-z]+;|&#\d+;"                   # HTML entities
    r"|\S*[._()\[\]=*/+%\\{}0-9<>@#$|:-]\S*"  # identifiers, calls, numbers, flags, paths: code, not words
    r"|\b[A-Z][a-z]+[A-Z]\w*"             # CamelCase names (MulBackward0, LabInputError)
)
_WORDS = re.compile(r"\b[A-Za-z]{2,}(?:[ ,;'’]+[A-Za-z]{2,}){2,}\b")


def english_words(text: str, allowed: tuple[str, ...] = ()) -> list[str]:
    """Runs of three or more English words left in a text that should be Chinese (code, names,
    numbers and HTML removed first). allowed: texts that may stay (PyTorch's own messages, say).

    >>> english_words("第 2 步：MulBackward0 把 x.grad 乘以 2。")
    []
    >>> english_words("第 2 步: the gradient flows back")
    ['the gradient flows back']
    >>> english_words("<p>the engine failed</p> <code>x.grad</code>")
    ['the engine failed']
    """
    for keep in allowed:
        text = text.replace(keep, " ")
    text = html.unescape(re.sub(r"<[^<>]*>", " ", text))  # HTML: the words between the tags
    for keep in allowed:
        text = text.replace(keep, " ")
    return _WORDS.findall(_CODE.sub(" ", text))
