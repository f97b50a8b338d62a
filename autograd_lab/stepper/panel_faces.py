"""The panel of the stepper: one step told in words, the node, its rule, what arrived, what it
sent on, what it saved, whether a checkpoint's forward ran again there, which of the learner's
hooks ran, and why the engine ran it now; and, in prediction mode, what to predict next."""
from __future__ import annotations

from ..graph import Node
from ..text import esc
from .faces import LINE, first_few, arriving, fmt, name_of_saved, sent_on, step_title
from .recompute import recomputations
from .rules import formula, saved_by_you
from .trace import Step, Trace


def recompute_note(trace: Trace, step: Step) -> str | None:
    """The panel's words for the step that ran a checkpoint's forward again."""
    found = recomputations(trace).get(step.index)
    if found is None:
        return None
    return (f"unpacking what this node saved ran the forward of {found.which} again "
            f"(torch.utils.checkpoint, use_reentrant=False, kept none of its values); the recomputation "
            f"runs through saved-tensor hooks and adds no nodes")



def why_now(trace: Trace, step: Step) -> str:
    """Why the engine ran this node next. Among ready nodes the engine runs the one created last:
    that is how PyTorch's engine works today (sequence numbers), not a documented guarantee."""
    ready = step.ready
    if len(ready) <= 1:
        if step.index == 0:
            return "It runs first: backward starts at the node that made the output."
        return "It is the only node ready: every gradient it waits for has arrived."
    others = ", ".join(first_few([n.title for n in ready if n is not step.node]))
    if step.node.is_accumulator:
        return (f"Also ready: {others}. An AccumulateGrad runs as soon as it is ready: the engine "
                f"gives accumulators the highest priority.")
    latest = max(ready, key=lambda n: n.seq)
    if latest is step.node:
        return (f"Also ready: {others}. Among ready nodes the engine runs the one created last in the "
                f"forward pass, and this one was.")
    return f"Also ready: {others}. The engine picked this one."


def panel_lines(trace: Trace, index: int) -> list[tuple[str, str]]:
    """(heading, text) pairs for step index (1-based, 0 before backward)."""
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
             ("arriving", arriving(step)),
             ("sent on", sent_on(step))]
    saved = [(k, v) for k, v in node.saved.items() if not k.endswith(("_sym_sizes", "_sym_strides"))]
    if node.freed:
        lines.append(("saved", "freed by a later backward(); re-run the cell that built the graph to see them"))
    elif saved:
        label = name_of_saved(trace)
        lines.append(("saved", ", ".join(first_few([f"{k}={label(v) or fmt(v)}" for k, v in saved]))))
    elif saved_by_you(node):
        count = saved_by_you(node)
        lines.append(("saved", f"{count} tensor{'s' if count != 1 else ''} with ctx.save_for_backward "
                               f"(your backward reads {'them' if count != 1 else 'it'} as ctx.saved_tensors)"))
    again = recompute_note(trace, step)
    if again:
        lines.append(("recomputed here", again))
    mine = [what for node_, what in trace.hooks_ran if node_ is node]
    if mine:
        lines.append(("your hooks", "; ".join(first_few(list(dict.fromkeys(mine))))))
    lines.append(("why now", why_now(trace, step)))
    return [(h, t if len(t) <= LINE else t[:LINE] + " ...") for h, t in lines]


def panel_text(trace: Trace, index: int) -> str:
    return "\n".join(f"{h}: {t}" if t else h for h, t in panel_lines(trace, index))


# Long lines wrap between words (JupyterLab's own CSS breaks a <pre> anywhere, even mid-word); a
# single word longer than the line still breaks, so nothing overflows the panel.
_WRAP = "margin:0;white-space:pre-wrap;word-break:normal;overflow-wrap:break-word"


def panel_html(trace: Trace, index: int) -> str:
    lines = panel_lines(trace, index)
    head, rest = lines[0], lines[1:]
    body = "".join(f"<tr><th style='text-align:left;padding-right:8px'>{esc(h)}</th>"
                   f"<td><pre style='{_WRAP}'>{esc(t)}</pre></td></tr>" for h, t in rest)
    first = f"<b>{esc(head[0])}</b>" + (f"<div>{esc(head[1])}</div>" if head[1] else "")
    return f"<div>{first}<table>{body}</table></div>"


def next_prompt(trace: Trace, index: int) -> str:
    """In prediction mode, what the learner is asked about the next step (HTML)."""
    if index >= len(trace.steps):
        return ""
    step = trace.steps[index]
    what = (f"what {step.node.label or 'the leaf'}.grad holds after it" if step.node.is_accumulator
            else "what it sends on")
    return f"<p><i>Next: {esc(step.node.title)}. Predict {esc(what)}, then press Check.</i></p>"
