"""Text and HTML faces of a recorded backward: the whole walk as a table (bounded: long walks show
their beginning, the current window and their end), the words for one value, what arrived at a
step and what it sent on. The panel for one step is in panel_faces.py."""
from __future__ import annotations

import torch

from ..saved import label_of
from ..format import fmt as _fmt, table
from ..i18n import N_, _, ngettext
from ..names import label
from ..text import esc, html_table
from .recompute import recomputations
from .rules import learner_function
from .trace import Step, Trace
from .yours import yours_line

# Bounds that keep every output small whatever the graph: a walk longer than ROWS shows HEAD steps,
# the WINDOW around the current one and TAIL, and a node with many inputs names the first PARTS.
ROWS, HEAD, WINDOW, TAIL, PARTS, LINE = 60, 10, 10, 10, 8, 2000


def fmt(value) -> str:
    """format.fmt, also for tensors whose values cannot be read as a list (sparse, meta)."""
    if isinstance(value, torch.Tensor):
        shape = "x".join(str(s) for s in value.shape) or _("scalar")
        dtype = str(value.dtype).replace("torch.", "")
        if value.device.type == "meta":
            return "<" + _("{shape} {dtype} on meta: no values").format(shape=shape, dtype=dtype) + ">"
        if value.layout != torch.strided:
            if value.numel() > 8:
                return "<" + _("{shape} sparse {dtype}, {count} stored values").format(
                    shape=shape, dtype=dtype, count=value._nnz()) + ">"
            return _("sparse {values}").format(values=_fmt(value.detach().to_dense()))
    return _fmt(value)


def first_few(parts: list[str], count: int = PARTS) -> list[str]:
    return parts if len(parts) <= count else parts[:count] + [_("and {count} more").format(count=len(parts) - count)]


def name_of_saved(trace: Trace):
    """The learner's name for a saved tensor, as a label (a long name is shortened for display)."""
    def named(value) -> str | None:
        name = label_of(value, trace.graph, trace.names)
        return label(name) if name else None
    return named


def sent_on(step: Step) -> str:
    """What the step sends on, as one line: 'y: [..]', or the leaf's .grad before -> after."""
    if step.node.is_accumulator:
        leaf = label(step.node.label) if step.node.label else _("leaf")
        return f"{leaf}.grad: {fmt(step.grad_before)} -> {fmt(step.grad_after)}"
    parts = []
    for (child, _nr), g in zip(step.node.next[:PARTS], step.grad_inputs, strict=False):  # PARTS of them
        parts.append(_("stop") if child is None else f"{fmt(g)} -> {label(child.label or child.name)}")
    more = len(step.node.next) - PARTS
    return "; ".join(parts + ([_("and {count} more").format(count=more)] if more > 0 else []))


def arriving(step: Step) -> str:
    more = len(step.grad_outputs) - PARTS
    return "; ".join([fmt(g) for g in step.grad_outputs[:PARTS]]
                     + ([_("and {count} more").format(count=more)] if more > 0 else []))


def walk_rows(trace: Trace, shown: int, first: int = 0):
    return [_row(s) for s in trace.steps[first:shown]]


def _row(s: Step) -> list[str]:
    return [str(s.index + 1), step_title(s), arriving(s), sent_on(s)]


def step_title(step: Step) -> str:
    """The node's name in the walk, with its marks: the learner's own backward, and the step at
    which a checkpoint's forward ran again."""
    marks = []
    if learner_function(step.node) is not None:
        marks.append(_("your backward"))
    if step.trace is not None and step.index in recomputations(step.trace):
        marks.append(_("recomputed here"))
    return step.node.title + "".join(f" [{m}]" for m in marks)


def own_backward_line(trace: Trace) -> str | None:
    """Which steps ran the learner's own torch.autograd.Function backward."""
    found: dict[str, list[int]] = {}
    for step in trace.steps:
        cls = learner_function(step.node)
        if cls is not None:
            found.setdefault(_("{node} is {function}.backward").format(node=step.node.title,
                                                                        function=label(cls.__name__)),
                             []).append(step.index + 1)
    if not found:
        return None
    parts = [ngettext("{what} (step {steps})", "{what} (steps {steps})", len(at)).format(
        what=what, steps=", ".join(first_few([str(i) for i in at], 5))) for what, at in found.items()]
    return _("your backward: {parts}. The engine called it with the gradient arriving and sent on what it "
             "returned (your torch.autograd.Function is one node)").format(parts="; ".join(first_few(parts)))


def recompute_line(trace: Trace) -> str | None:
    """Where each non-reentrant checkpoint ran its forward again."""
    found = sorted(recomputations(trace).values(), key=lambda r: r.index)
    if not found:
        return None
    at = first_few([_("step {number} ({node}) ran the forward of {which}").format(
        number=r.index + 1, node=trace.steps[r.index].node.title, which=r.which) for r in found])
    return _("recomputed here: {steps}. torch.utils.checkpoint(use_reentrant=False) kept no values of that "
             "forward; the first node to unpack one ran the forward again through saved-tensor hooks, which "
             "adds no nodes to the graph").format(steps="; ".join(at))


def _window(trace: Trace, shown: int, index: int):
    """The rows of a long walk: its beginning, around step index, its end; None marks a gap.
    Returns (rows, position of the current row or None)."""
    if shown <= ROWS:
        return walk_rows(trace, shown), (index - 1 if index else None)
    keep = set(range(HEAD)) | set(range(max(shown - TAIL, 0), shown))
    if index:
        keep |= set(range(max(index - 1 - WINDOW, 0), min(index + WINDOW, shown)))
    rows, current, last = [], None, -1
    for i in sorted(keep):
        if i != last + 1:
            rows.append(["...", _("({count} steps not shown)").format(count=i - last - 1), "", ""])
        if i == index - 1:
            current = len(rows)
        rows.append(_row(trace.steps[i]))
        last = i
    return rows, current


def _rest_note(trace: Trace, shown: int) -> str | None:
    if shown <= ROWS:
        return None
    return _("(a long walk: shown are its beginning, the steps around the current one and its end; every one "
             "of the {count} steps is in stepper.trace.steps, e.g. stepper.trace.steps[{middle}], and "
             "stepper.goto(k) moves the window)").format(count=shown, middle=shown // 2)


def hooks_line(trace: Trace) -> str | None:
    """Which of the learner's own hooks ran during the recording, in the order they ran."""
    if not trace.hooks_ran:
        return None
    seen: dict = {}
    for _node, what in trace.hooks_ran:
        seen[what] = seen.get(what, 0) + 1
    parts = [_("{hook} ({count} times)").format(hook=label(what), count=n) if n > 1 else label(what)
             for what, n in seen.items()]
    return _("your hooks ran, as in backward(): {hooks}").format(hooks="; ".join(first_few(parts)))


HEADERS = ["#", N_("node"), N_("gradient arriving (grad_outputs)"), N_("sent on (grad_inputs)")]


def headers() -> list[str]:
    """The walk's column headers in the current language."""
    return [HEADERS[0]] + [_(h) for h in HEADERS[1:]]


def walk_text(trace: Trace, title: str, index: int, hide_after: int | None = None) -> str:
    """The whole walk as an aligned table; index (1-based, 0 = before backward) is marked with '>'.
    hide_after limits the rows to the steps already revealed (prediction mode)."""
    shown = len(trace.steps) if hide_after is None else hide_after
    lines = [title]
    yours = yours_line(trace)
    if yours:
        lines.append(yours)
    rows, current = _window(trace, shown, index)
    lines.append(table(headers(), rows, marks={current: ">"} if current is not None else {}))
    note = _rest_note(trace, shown)
    if note:
        lines.append(note)
    if shown < len(trace.steps):
        lines.append(_("({count} more steps to predict)").format(count=len(trace.steps) - shown))
    leaves = [s for s in trace.steps if s.node.is_accumulator]
    if hide_after is None and leaves:
        named = "; ".join((label(s.node.label) if s.node.label else _("leaf {id}").format(id=s.node.id)) + ": "
                          + fmt(s.grad_outputs[0])
                          for s in leaves[:20])
        if len(leaves) > 20:
            named = _("{leaves}; and {count} more (trace.grad(leaf) gives each)").format(
                leaves=named, count=len(leaves) - 20)
        lines.append(_("gradients for the leaves: {leaves}").format(leaves=named))
    for extra in (own_backward_line(trace), recompute_line(trace), hooks_line(trace), meta_line(trace)):
        if extra:
            lines.append(extra)
    return "\n".join(lines)


def meta_line(trace: Trace) -> str | None:
    first = trace.output[0] if isinstance(trace.output, tuple) else trace.output
    if first.device.type != "meta":
        return None
    return _("a graph on the meta device: its tensors have shapes and dtypes but no values, so the walk shows "
             "the engine's order and the shapes it sent on, not numbers")


def walk_html(trace: Trace, title: str, index: int, hide_after: int | None = None) -> str:
    shown = len(trace.steps) if hide_after is None else hide_after
    rows, current = _window(trace, shown, index)
    html = html_table(headers(), rows, caption=title, highlight={current} if current is not None else set())
    yours = yours_line(trace)
    if yours:
        html = f"<p class=\"agl-yours\">{esc(yours)}</p>" + html
    for extra in (_rest_note(trace, shown), own_backward_line(trace), recompute_line(trace), hooks_line(trace),
                  meta_line(trace)):
        if extra:
            html += f"<p>{esc(extra)}</p>"
    if shown < len(trace.steps):
        html += "<p>" + esc(_("({count} more steps to predict)").format(count=len(trace.steps) - shown)) + "</p>"
    return html


def recent_html(trace: Trace, index: int, count: int = 8) -> str:
    """The last steps revealed so far (the widget's log): at most count rows, however big the graph."""
    if index == 0:
        return ""
    first = max(0, index - count)
    n = len(trace.steps)
    caption = (_("steps {first} to {last} of {count}").format(first=first + 1, last=index, count=n) if first
               else _("steps so far ({last} of {count})").format(last=index, count=n))
    return html_table(headers(), walk_rows(trace, index, first), caption=caption, highlight={index - first - 1})


def applied_text(trace: Trace, named: int = 20) -> str:
    """The line a stepper adds once its backward was applied (.grad written)."""
    leaves = [label(s.node.label) if s.node.label else _("leaf") for s in trace.steps if s.node.is_accumulator]
    if len(leaves) > named:
        return _("applied: .grad accumulated for {leaves} and {count} more, as backward() does").format(
            leaves=", ".join(leaves[:named]), count=len(leaves) - named)
    return _("applied: .grad accumulated for {leaves}, as backward() does").format(leaves=", ".join(leaves))
