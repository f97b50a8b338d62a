"""Text and HTML faces of a recorded backward: the whole walk as a table, and the panel that tells
one step: the node, its rule, what arrived, what it sends on, what it saved, and why it ran now."""
from __future__ import annotations

from ..graph import Node, label_of
from ..format import fmt, table
from ..text import esc, html_table
from .rules import formula
from .trace import Step, Trace


def name_of_saved(trace: Trace):
    return lambda value: label_of(value, trace.graph, trace.names)


def sent_on(step: Step) -> str:
    """What the step sends on, as one line: 'y: [..]', or the leaf's .grad before -> after."""
    if step.node.is_accumulator:
        leaf = step.node.label or "leaf"
        return f"{leaf}.grad: {fmt(step.grad_before)} -> {fmt(step.grad_after)}"
    parts = []
    for (child, _), g in zip(step.node.next, step.grad_inputs):
        if child is None:
            parts.append("stop")
        else:
            parts.append(f"{fmt(g)} -> {child.label or child.name}")
    return "; ".join(parts)


def arriving(step: Step) -> str:
    return "; ".join(fmt(g) for g in step.grad_outputs)


def walk_rows(trace: Trace, shown: int, first: int = 0):
    return [[str(s.index + 1), s.node.title, arriving(s), sent_on(s)] for s in trace.steps[first:shown]]


HEADERS = ["#", "node", "gradient arriving (grad_outputs)", "sent on (grad_inputs)"]


def walk_text(trace: Trace, title: str, index: int, hide_after: int | None = None) -> str:
    """The whole walk as an aligned table; index (1-based, 0 = before backward) is marked with '>'.
    hide_after limits the rows to the steps already revealed (prediction mode)."""
    shown = len(trace.steps) if hide_after is None else hide_after
    lines = [title]
    lines.append(table(HEADERS, walk_rows(trace, shown), marks={index - 1: ">"} if index else {}))
    if shown < len(trace.steps):
        lines.append(f"({len(trace.steps) - shown} more steps to predict)")
    leaves = [s for s in trace.steps if s.node.is_accumulator]
    if hide_after is None and leaves:
        lines.append("gradients for the leaves: " + "; ".join(
            f"{s.node.label or 'leaf ' + str(s.node.id)}: {fmt(s.grad_outputs[0])}" for s in leaves))
    return "\n".join(lines)


def walk_html(trace: Trace, title: str, index: int, hide_after: int | None = None) -> str:
    shown = len(trace.steps) if hide_after is None else hide_after
    html = html_table(HEADERS, walk_rows(trace, shown), caption=title,
                      highlight={index - 1} if index else set())
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
    others = ", ".join(n.title for n in ready if n is not step.node)
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
    lines = [(f"Step {index} of {n}: {node.title}", ""),
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
        lines.append(("saved", ", ".join(f"{k}={label(v) or fmt(v)}" for k, v in saved)))
    lines.append(("why now", why_now(trace, step)))
    return lines


def panel_text(trace: Trace, index: int, reveal: bool = True) -> str:
    return "\n".join(f"{h}: {t}" if t else h for h, t in panel_lines(trace, index, reveal))


def panel_html(trace: Trace, index: int, reveal: bool = True) -> str:
    lines = panel_lines(trace, index, reveal)
    head, rest = lines[0], lines[1:]
    body = "".join(f"<tr><th style='text-align:left;padding-right:8px'>{esc(h)}</th>"
                   f"<td><pre style='margin:0'>{esc(t)}</pre></td></tr>" for h, t in rest)
    first = f"<b>{esc(head[0])}</b>" + (f"<div>{esc(head[1])}</div>" if head[1] else "")
    return f"<div>{first}<table>{body}</table></div>"
