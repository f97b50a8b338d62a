"""The profiler's verdict in plain words, from what it measured: which cause it sees first (a run
that failed, history carried across steps, data that requires grad, data that arrives with history,
or nothing), the evidence in node counts, and the fix as code. Uses no timing, so it is deterministic."""
from __future__ import annotations

from ..explain.explanation import explanation_of


def _names(names) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


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
    return explained.fix if explained.known else "# run one step by itself to read PyTorch's whole message"


def judge(prof) -> None:
    """Fill prof.kind, prof.verdict and prof.fix."""
    counts = prof.node_counts
    first, last = (counts[0], counts[-1]) if counts else (0, 0)
    notes = []
    if prof.anomaly:
        notes.append(" Anomaly detection is on, which slows every backward: "
                     "torch.autograd.set_detect_anomaly(False) when you are done debugging.")
    if prof.failed:
        step = len(prof.steps)
        prof.kind = "failed"
        first = prof.failed.split(". ")[0].rstrip(".")
        prof.verdict = f"backward failed at step {step}: {first}."
        who = prof.carriers or [n for s in prof.steps for n in s.carried]
        prof.fix = (f"{who[0]} = {who[0]}.detach()   # at the start of the step: keep the value, drop the history"
                    if who else failure_fix(prof.failed))
    elif prof.growth > 0:
        prof.kind = "carried_history"
        if prof.carriers:
            who = _names(prof.carriers)
            verb = "carries" if len(prof.carriers) == 1 else "carry"
            prof.verdict = (f"The graph grows by {_growth(prof)} nodes per step ({first} -> {last}): {who} "
                            f"{verb} history from one step into the next, so every backward walks back "
                            f"through all earlier steps and gets slower each step.")
            if prof.retain_graph and not prof.own_backward:
                prof.verdict += (" (Without retain_graph=True, the second backward would fail with "
                                 "'Trying to backward through the graph a second time'.)")
            prof.fix = "\n".join(f"{n} = {n}.detach()   # at the start of the step: keep the value, drop the history"
                                 for n in prof.carriers)
        else:
            prof.verdict = (f"The graph grows by {_growth(prof)} nodes per step ({first} -> {last}), but none "
                            f"of the variables the step reads carries it: look for state kept across steps "
                            f"inside a model, a list or a dict, and detach it.")
            prof.fix = "state = state.detach()   # wherever a value is kept from one step to the next"
    elif prof.data:
        name, numel = prof.data[0]
        prof.kind = "data_requires_grad"
        prof.verdict = (f"{name} requires grad ({numel} numbers), but it is no trained weight (not an "
                        f"nn.Parameter, no optimizer updates it): every backward also computes a "
                        f"gradient for all of {name}, however small the batch taken from it.")
        prof.fix = f"{name} = {name}.detach()   # or create it without requires_grad=True"
    elif prof.history_in:
        who = _names(prof.history_in)
        came = max(prof.input_node_counts)
        prof.kind = "data_history"
        prof.verdict = (f"{who} arrives with a history of {came} of the {last} nodes (it was computed "
                        f"from a parameter or a model output): every backward walks that history again "
                        f"and sends gradients into whatever {who} came from.")
        prof.fix = "\n".join(f"{n} = {n}.detach()   # before the step uses it" for n in prof.history_in)
    else:
        prof.kind = "flat"
        prof.verdict = (f"The graph is flat: {last} nodes every step, none of them brought in by the "
                        f"inputs. Backward walks only this step's work.")
        prof.fix = "# nothing to detach; first steps are slower (warm-up): judge the later ones"
    prof.verdict += "".join(notes)
