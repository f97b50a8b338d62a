"""Text and HTML faces of a recorded backward: the whole walk as a table, and the panel that tells
one step: the node, its rule, what arrived, what it sends on, what it saved, and why it ran now."""
from __future__ import annotations

import torch

from ..graph import Node, label_of
from ..format import fmt as _fmt, table
from ..text import esc, html_table
from .recompute import recomputations
from .rules import formula, learner_function, saved_by_you
from .trace import Step, Trace

# Bounds that keep every output small whatever the graph: a walk longer than ROWS shows HEAD steps,
# the WINDOW around the current one and TAIL, and a node with many inputs names the first PARTS.
ROWS, HEAD, WINDOW, TAIL, PARTS, LINE = 60, 10, 10, 10, 8, 2000


def fmt(value) -> str:
    """format.fmt, also for tensors whose values cannot be read as a list (sparse, meta)."""
    if isinstance(value, torch.Tensor):
        shape = "x".join(str(s) for s in value.shape) or "scalar"
        dtype = str(value.dtype).replace("torch.", "")
        if value.device.type == "meta":
            return f"<{shape} {dtype} on meta: no values>"
        if value.layout != torch.strided:
            if value.numel() > 8:
                return f"<{shape} sparse {dtype}, {value._nnz()} stored values>"
            return "sparse " + _fmt(value.detach().to_dense())
    return _fmt(value)


def _first(parts: list[str], count: int = PARTS) -> list[str]:
    return parts if len(parts) <= count else parts[:count] + [f"and {len(parts) - count} more"]


def name_of_saved(trace: Trace):
    return lambda value: label_of(value, trace.graph, trace.names)


def sent_on(step: Step) -> str:
    """What the step sends on, as one line: 'y: [..]', or the leaf's .grad before -> after."""
    if step.node.is_accumulator:
        leaf = step.node.label or "leaf"
        return f"{leaf}.grad: {fmt(step.grad_before)} -> {fmt(step.grad_after)}"
    parts = []
    for (child, _), g in zip(step.node.next[:PARTS], step.grad_inputs):
        parts.append("stop" if child is None else f"{fmt(g)} -> {child.label or child.name}")
    more = len(step.node.next) - PARTS
    return "; ".join(parts + ([f"and {more} more"] if more > 0 else []))


def arriving(step: Step) -> str:
    more = len(step.grad_outputs) - PARTS
    return "; ".join([fmt(g) for g in step.grad_outputs[:PARTS]] + ([f"and {more} more"] if more > 0 else []))


def walk_rows(trace: Trace, shown: int, first: int = 0):
    return [_row(s) for s in trace.steps[first:shown]]


def _row(s: Step) -> list[str]:
    return [str(s.index + 1), step_title(s), arriving(s), sent_on(s)]


def step_title(step: Step) -> str:
    """The node's name in the walk, with its marks: the learner's own backward, and the step at
    which a checkpoint's forward ran again."""
    marks = []
    if learner_function(step.node) is not None:
        marks.append("your backward")
    if step.trace is not None and step.index in recomputations(step.trace):
        marks.append("recomputed here")
    return step.node.title + "".join(f" [{m}]" for m in marks)


def own_backward_line(trace: Trace) -> str | None:
    """Which steps ran the learner's own torch.autograd.Function backward."""
    found: dict[str, list[int]] = {}
    for step in trace.steps:
        cls = learner_function(step.node)
        if cls is not None:
            found.setdefault(f"{step.node.title} is {cls.__name__}.backward", []).append(step.index + 1)
    if not found:
        return None
    parts = [f"{what} (step{'s' if len(at) > 1 else ''} {', '.join(_first([str(i) for i in at], 5))})"
             for what, at in found.items()]
    return ("your backward: " + "; ".join(_first(parts)) + ". The engine called it with the gradient "
            "arriving and sent on what it returned (your torch.autograd.Function is one node)")


def recompute_line(trace: Trace) -> str | None:
    """Where each non-reentrant checkpoint ran its forward again."""
    found = sorted(recomputations(trace).values(), key=lambda r: r.index)
    if not found:
        return None
    at = _first([f"step {r.index + 1} ({trace.steps[r.index].node.title}) ran the forward of {r.which}"
                 for r in found])
    return ("recomputed here: " + "; ".join(at) + ". torch.utils.checkpoint(use_reentrant=False) kept no "
            "values of that forward; the first node to unpack one ran the forward again through saved-tensor "
            "hooks, which adds no nodes to the graph")


def recompute_note(trace: Trace, step: Step) -> str | None:
    """The panel's words for the step that ran a checkpoint's forward again."""
    found = recomputations(trace).get(step.index)
    if found is None:
        return None
    return (f"unpacking what this node saved ran the forward of {found.which} again "
            f"(torch.utils.checkpoint, use_reentrant=False, kept none of its values); the recomputation "
            f"runs through saved-tensor hooks and adds no nodes")


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
            rows.append(["...", f"({i - last - 1} steps not shown)", "", ""])
        if i == index - 1:
            current = len(rows)
        rows.append(_row(trace.steps[i]))
        last = i
    return rows, current


def _rest_note(trace: Trace, shown: int) -> str | None:
    if shown <= ROWS:
        return None
    return (f"(a long walk: shown are its beginning, the steps around the current one and its end; "
            f"every one of the {shown} steps is in stepper.trace.steps, e.g. stepper.trace.steps[{shown // 2}], "
            f"and stepper.goto(k) moves the window)")


def hooks_line(trace: Trace) -> str | None:
    """Which of the learner's own hooks ran during the recording, in the order they ran."""
    if not trace.hooks_ran:
        return None
    seen: dict = {}
    for node, what in trace.hooks_ran:
        seen[what] = seen.get(what, 0) + 1
    parts = [what + (f" ({n} times)" if n > 1 else "") for what, n in seen.items()]
    return "your hooks ran, as in backward(): " + "; ".join(_first(parts))


HEADERS = ["#", "node", "gradient arriving (grad_outputs)", "sent on (grad_inputs)"]


def walk_text(trace: Trace, title: str, index: int, hide_after: int | None = None) -> str:
    """The whole walk as an aligned table; index (1-based, 0 = before backward) is marked with '>'.
    hide_after limits the rows to the steps already revealed (prediction mode)."""
    shown = len(trace.steps) if hide_after is None else hide_after
    lines = [title]
    rows, current = _window(trace, shown, index)
    lines.append(table(HEADERS, rows, marks={current: ">"} if current is not None else {}))
    note = _rest_note(trace, shown)
    if note:
        lines.append(note)
    if shown < len(trace.steps):
        lines.append(f"({len(trace.steps) - shown} more steps to predict)")
    leaves = [s for s in trace.steps if s.node.is_accumulator]
    if hide_after is None and leaves:
        named = [f"{s.node.label or 'leaf ' + str(s.node.id)}: {fmt(s.grad_outputs[0])}" for s in leaves[:20]]
        lines.append("gradients for the leaves: " + "; ".join(named) + (
            f"; and {len(leaves) - 20} more (trace.grad(leaf) gives each)" if len(leaves) > 20 else ""))
    for extra in (own_backward_line(trace), recompute_line(trace), hooks_line(trace), meta_line(trace)):
        if extra:
            lines.append(extra)
    return "\n".join(lines)


def meta_line(trace: Trace) -> str | None:
    if trace.output.device.type != "meta":
        return None
    return ("a graph on the meta device: its tensors have shapes and dtypes but no values, so the "
            "walk shows the engine's order and the shapes it sent on, not numbers")


def walk_html(trace: Trace, title: str, index: int, hide_after: int | None = None) -> str:
    shown = len(trace.steps) if hide_after is None else hide_after
    rows, current = _window(trace, shown, index)
    html = html_table(HEADERS, rows, caption=title, highlight={current} if current is not None else set())
    for extra in (_rest_note(trace, shown), own_backward_line(trace), recompute_line(trace), hooks_line(trace),
                  meta_line(trace)):
        if extra:
            html += f"<p>{esc(extra)}</p>"
    if shown < len(trace.steps):
        html += f"<p>({len(trace.steps) - shown} more steps to predict)</p>"
    return html


def recent_html(trace: Trace, index: int, count: int = 8) -> str:
    """The last steps revealed so far (the widget's log): at most count rows, however big the graph."""
    if index == 0:
        return ""
    first = max(0, index - count)
    caption = f"steps {first + 1} to {index} of {len(trace.steps)}" if first else f"steps so far ({index} of {len(trace.steps)})"
    return html_table(HEADERS, walk_rows(trace, index, first), caption=caption, highlight={index - first - 1})


def why_now(trace: Trace, step: Step) -> str:
    """Why the engine ran this node next (FACTS: among ready nodes, the one created last)."""
    ready = step.ready
    if len(ready) <= 1:
        if step.index == 0:
            return "It runs first: backward starts at the node that made the output."
        return "It is the only node ready: every gradient it waits for has arrived."
    others = ", ".join(_first([n.title for n in ready if n is not step.node]))
    if step.node.is_accumulator:
        return (f"Also ready: {others}. An AccumulateGrad runs as soon as it is ready: the engine "
                f"gives accumulators the highest priority.")
    latest = max(ready, key=lambda n: n.seq)
    if latest is step.node:
        return (f"Also ready: {others}. Among ready nodes the engine runs the one created last in the "
                f"forward pass, and this one was.")
    return f"Also ready: {others}. The engine picked this one."


def panel_lines(trace: Trace, index: int, reveal: bool = True) -> list[tuple[str, str]]:
    """(heading, text) pairs for step index (1-based). reveal=False hides what the step sends on."""
    n = len(trace.steps)
    if index == 0:
        first = trace.steps[0].node.title if trace.steps else "nothing"
        return [("Before backward", f"{n} steps to go. backward() starts at {first}, with gradient "
                                    f"{fmt(trace.gradient) if trace.gradient is not None else '1'} "
                                    f"(d output / d output).")]
    step = trace.steps[index - 1]
    node: Node = step.node
    lines = [(f"Step {index} of {n}: {step_title(step)}", ""),
             ("rule", formula(node, name_of_saved(trace))),
             ("arriving", arriving(step))]
    if reveal:
        lines.append(("sent on", sent_on(step)))
    else:
        lines.append(("sent on", "? (your prediction)"))
    saved = [(k, v) for k, v in node.saved.items() if not k.endswith(("_sym_sizes", "_sym_strides"))]
    if node.freed:
        lines.append(("saved", "freed by a later backward(); re-run the cell that built the graph to see them"))
    elif saved:
        label = name_of_saved(trace)
        lines.append(("saved", ", ".join(_first([f"{k}={label(v) or fmt(v)}" for k, v in saved]))))
    elif saved_by_you(node):
        count = saved_by_you(node)
        lines.append(("saved", f"{count} tensor{'s' if count != 1 else ''} with ctx.save_for_backward "
                               f"(your backward reads {'them' if count != 1 else 'it'} as ctx.saved_tensors)"))
    again = recompute_note(trace, step)
    if again:
        lines.append(("recomputed here", again))
    mine = [what for node_, what in trace.hooks_ran if node_ is node]
    if mine:
        lines.append(("your hooks", "; ".join(_first(list(dict.fromkeys(mine))))))
    lines.append(("why now", why_now(trace, step)))
    return [(h, t if len(t) <= LINE else t[:LINE] + " ...") for h, t in lines]


def panel_text(trace: Trace, index: int, reveal: bool = True) -> str:
    return "\n".join(f"{h}: {t}" if t else h for h, t in panel_lines(trace, index, reveal))


def panel_html(trace: Trace, index: int, reveal: bool = True) -> str:
    lines = panel_lines(trace, index, reveal)
    head, rest = lines[0], lines[1:]
    body = "".join(f"<tr><th style='text-align:left;padding-right:8px'>{esc(h)}</th>"
                   f"<td><pre style='margin:0'>{esc(t)}</pre></td></tr>" for h, t in rest)
    first = f"<b>{esc(head[0])}</b>" + (f"<div>{esc(head[1])}</div>" if head[1] else "")
    return f"<div>{first}<table>{body}</table></div>"


def applied_text(trace: Trace, named: int = 20) -> str:
    """The line a stepper adds once its backward was applied (.grad written)."""
    leaves = [s.node.label or "leaf" for s in trace.steps if s.node.is_accumulator]
    more = f" and {len(leaves) - named} more" if len(leaves) > named else ""
    return f"applied: .grad accumulated for {', '.join(leaves[:named])}{more}, as backward() does"


def next_prompt(trace: Trace, index: int) -> str:
    """In prediction mode, what the learner is asked about the next step (HTML)."""
    if index >= len(trace.steps):
        return ""
    step = trace.steps[index]
    what = (f"what {step.node.label or 'the leaf'}.grad holds after it" if step.node.is_accumulator
            else "what it sends on")
    return f"<p><i>Next: {esc(step.node.title)}. Predict {esc(what)}, then press Check.</i></p>"
