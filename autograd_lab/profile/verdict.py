"""The profiler's verdict in plain words, from what it measured: which cause it sees first (a run
that failed, history carried across steps, data that requires grad, data that arrives with history,
or nothing), the evidence in node counts, and the fix as code. Uses no timing, so it is deterministic."""
from __future__ import annotations

from ..explain.explanation import explanation_of
from ..explain.wording import sentences
from ..format import MESSAGE, quote
from ..i18n import _, ngettext
from ..names import label

NAMED = 6  # names a verdict or a fix names one by one; more are quoted as one bounded list


def _names(names) -> str:
    names = [label(n) for n in names]
    if len(names) == 1:
        return names[0]
    if len(names) > NAMED:  # head and tail of the whole list, with its length (format.quote)
        return quote(", ".join(names))
    return _("{names} and {last}").format(names=", ".join(names[:-1]), last=names[-1])


def _growth(prof) -> str:
    g = prof.growth
    return f"{g:g}"


def failure_fix(message: str) -> str:
    """The fix for a backward that failed, in the explainer's words (the loss named `loss`).

    >>> print(failure_fix("grad can be implicitly created only for scalar outputs").splitlines()[0])
    loss.sum().backward()
    >>> failure_fix("something else went wrong")
    "# run one step by itself to read PyTorch's whole message"
    """
    explained = explanation_of(message, line="loss.backward()")
    return explained.fix if explained.known else _("# run one step by itself to read PyTorch's whole message")


def judge(prof) -> None:
    """Fill prof.kind, prof.verdict and prof.fix."""
    counts = prof.node_counts
    first, last = (counts[0], counts[-1]) if counts else (0, 0)
    notes = []
    if prof.anomaly:
        notes.append(_("Anomaly detection is on, which slows every backward: "
                       "torch.autograd.set_detect_anomaly(False) when you are done debugging."))
    if prof.failed:
        step = len(prof.steps)
        prof.kind = "failed"
        first = quote(" ".join(prof.failed.split(". ")[0].rstrip(".").split()), MESSAGE)
        # Translators: {message} is PyTorch's own message, which stays in English
        verdict = _("backward failed at step {step}: {message}.").format(step=step, message=first)
        who = prof.carriers or [n for s in prof.steps for n in s.carried]
        prof.fix = (_("{name} = {name}.detach()   # at the start of the step: keep the value, drop the history"
                      ).format(name=label(who[0])) if who else failure_fix(prof.failed))
    elif prof.growth > 0:
        prof.kind = "carried_history"
        if prof.carriers:
            verdict = ngettext(
                "The graph grows by {growth} nodes per step ({first} -> {last}): {names} carries history from "
                "one step into the next, so every backward walks back through all earlier steps and gets "
                "slower each step.",
                "The graph grows by {growth} nodes per step ({first} -> {last}): {names} carry history from "
                "one step into the next, so every backward walks back through all earlier steps and gets "
                "slower each step.", len(prof.carriers)).format(
                    growth=_growth(prof), first=first, last=last, names=_names(prof.carriers))
            if prof.retain_graph and not prof.own_backward:
                verdict = sentences([verdict, _("(Without retain_graph=True, the second backward would fail with "
                                                "'Trying to backward through the graph a second time'.)")])
            prof.fix = "\n".join(_("{name} = {name}.detach()   # at the start of the step: keep the value, drop "
                                   "the history").format(name=label(n)) for n in prof.carriers[:NAMED])
        else:
            verdict = _("The graph grows by {growth} nodes per step ({first} -> {last}), but none of the variables "
                        "the step reads carries it: look for state kept across steps inside a model, a list or a "
                        "dict, and detach it.").format(growth=_growth(prof), first=first, last=last)
            prof.fix = _("state = state.detach()   # wherever a value is kept from one step to the next")
    elif prof.data:
        name, numel = prof.data[0]
        prof.kind = "data_requires_grad"
        verdict = _("{name} requires grad ({count} numbers), but it is no trained weight (not an nn.Parameter, no "
                    "optimizer updates it): every backward also computes a gradient for all of {name}, however "
                    "small the batch taken from it.").format(name=label(name), count=numel)
        prof.fix = _("{name} = {name}.detach()   # or create it without requires_grad=True").format(name=label(name))
    elif prof.history_in:
        who = _names(prof.history_in)
        came = max(prof.input_node_counts)
        prof.kind = "data_history"
        verdict = ngettext(
            "{names} arrives with a history of {came} of the {last} nodes (it was computed from a parameter or a "
            "model output): every backward walks that history again and sends gradients into whatever {names} "
            "came from.",
            "{names} arrive with a history of {came} of the {last} nodes (they were computed from a parameter or a "
            "model output): every backward walks that history again and sends gradients into whatever {names} "
            "came from.", len(prof.history_in)).format(names=who, came=came, last=last)
        prof.fix = "\n".join(_("{name} = {name}.detach()   # before the step uses it").format(name=label(n))
                             for n in prof.history_in[:NAMED])
    else:
        prof.kind = "flat"
        verdict = _("The graph is flat: {last} nodes every step, none of them brought in by the inputs. Backward "
                    "walks only this step's work.").format(last=last)
        prof.fix = _("# nothing to detach; first steps are slower (warm-up): judge the later ones")
    prof.verdict = sentences([verdict, *notes])
