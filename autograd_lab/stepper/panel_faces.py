"""The panel of the stepper: one step told in words, the node, its rule, what arrived, what it
sent on, what it saved, whether a checkpoint's forward ran again there, which of the learner's
hooks ran, and why the engine ran it now; and, in prediction mode, what to predict next."""
from __future__ import annotations

from ..format import message
from ..graph import Node
from ..i18n import _, ngettext
from ..names import label
from ..practice.checking import WrongForm
from ..practice.digits import CUT, CUT_REASON
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
    return _("unpacking what this node saved ran the forward of {which} again (torch.utils.checkpoint, "
             "use_reentrant=False, kept none of its values); the recomputation runs through saved-tensor hooks "
             "and adds no nodes").format(which=found.which)



def why_now(trace: Trace, step: Step) -> str:
    """Why the engine ran this node next. Among ready nodes the engine runs the one created last:
    that is how PyTorch's engine works today (sequence numbers), not a documented guarantee."""
    ready = step.ready
    if len(ready) <= 1:
        if step.index == 0:
            return _("It runs first: backward starts at the node that made the output.")
        return _("It is the only node ready: every gradient it waits for has arrived.")
    others = ", ".join(first_few([n.title for n in ready if n is not step.node]))
    if step.node.is_accumulator:
        return _("Also ready: {others}. An AccumulateGrad runs as soon as it is ready: the engine gives "
                 "accumulators the highest priority.").format(others=others)
    latest = max(ready, key=lambda n: n.seq)
    if latest is step.node:
        return _("Also ready: {others}. Among ready nodes the engine runs the one created last in the forward "
                 "pass, and this one was.").format(others=others)
    return _("Also ready: {others}. The engine picked this one.").format(others=others)


def panel_lines(trace: Trace, index: int) -> list[tuple[str, str]]:
    """(heading, text) pairs for step index (1-based, 0 before backward)."""
    n = len(trace.steps)
    if index == 0:
        first = trace.steps[0].node.title if trace.steps else _("nothing")
        given = trace.gradient if isinstance(trace.gradient, tuple) else (trace.gradient,)
        gradient = "; ".join(fmt(g) if g is not None else "1" for g in given)
        return [(_("Before backward"), _("{count} steps to go. backward() starts at {first}, with gradient "
                                         "{gradient} (d output / d output).").format(count=n, first=first,
                                                                                      gradient=gradient))]
    step = trace.steps[index - 1]
    node: Node = step.node
    lines = [(_("Step {index} of {count}: {node}").format(index=index, count=n, node=step_title(step)), ""),
             (_("rule"), formula(node, name_of_saved(trace))),
             (_("arriving"), arriving(step)),
             (_("sent on"), sent_on(step))]
    saved = [(k, v) for k, v in node.saved.items() if not k.endswith(("_sym_sizes", "_sym_strides"))]
    if node.freed:
        lines.append((_("saved"), _("freed by a later backward(); re-run the cell that built the graph to see "
                                    "them")))
    elif saved:
        named = name_of_saved(trace)
        lines.append((_("saved"), ", ".join(first_few([f"{k}={named(v) or fmt(v)}" for k, v in saved]))))
    elif saved_by_you(node):
        count = saved_by_you(node) or 0
        lines.append((_("saved"), ngettext(
            "{count} tensor with ctx.save_for_backward (your backward reads it as ctx.saved_tensors)",
            "{count} tensors with ctx.save_for_backward (your backward reads them as ctx.saved_tensors)",
            count).format(count=count)))
    again = recompute_note(trace, step)
    if again:
        lines.append((_("recomputed here"), again))
    mine = [what for node_, what in trace.hooks_ran if node_ is node]
    if mine:
        lines.append((_("your hooks"), "; ".join(first_few([label(what) for what in dict.fromkeys(mine)]))))
        before = [label(s.node.label) if s.node.label else s.node.title for s in trace.steps[:step.index]
                  if s.node.is_accumulator]
        if before and getattr(trace, "captured", False) and not node.is_accumulator:
            # the leaves' gradients were captured, not accumulated: .grad still holds the old value
            lines.append((_("note"), _("{leaves} already got a gradient in this backward (earlier steps). A hook "
                                       "here that reads their .grad sees what .grad held before it: backward() "
                                       "would have added the new gradient by now, a recording adds nothing").format(
                                           leaves=", ".join(first_few(list(dict.fromkeys(before)), 3)))))
    lines.append((_("why now"), why_now(trace, step)))
    return [(h, t if len(t) <= LINE else t[:LINE] + " ...") for h, t in lines]


def panel_text(trace: Trace, index: int) -> str:
    return "\n".join(_("{heading}: {text}").format(heading=h, text=t) if t else h for h, t in panel_lines(trace, index))


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
    if step.node.is_accumulator:
        sentence = _("Next: {node}. Predict what {leaf}.grad holds after it, then press Check.").format(
            node=step.node.title, leaf=label(step.node.label) if step.node.label else _("the leaf"))
    else:
        sentence = _("Next: {node}. Predict what it sends on, then press Check.").format(node=step.node.title)
    return f"<p><i>{esc(sentence)}</i></p>"


def unread_html(err: Exception) -> str:
    """What the prediction box says when it cannot read what was typed (nothing is revealed): not
    checked, and the reader's own words (which say what could not be read, and what to type)."""
    unread = esc(_("not checked"))
    said = esc(message(err)) if isinstance(err, WrongForm) else f"{esc(type(err).__name__)}: {esc(message(err))}"
    return _("{heading}: {text}").format(heading=f"<b>{unread}</b>", text=said)


def verdict_html(verdict) -> str:
    """A prediction's verdict in the box: the word once, in bold, then what to know."""
    close = verdict.diagnosis in ("too_few_digits", CUT)
    word = _("right") if verdict.right else _("close") if close else _("wrong")
    # 'close: give three significant digits' and 'close: round, do not cut' keep their word once
    message = (_("give three significant digits") if verdict.diagnosis == "too_few_digits"
               else _(CUT_REASON) if verdict.diagnosis == CUT else verdict.message)
    return _("{heading}: {text}").format(heading=f"<b>{esc(word)}</b>", text=esc(message))

