"""What a recording refuses (bad input), and what the engine's errors during it mean, each in one
short paragraph with the fix: the lab never passes a traceback through itself. Messages name the
output with the expression the learner typed."""
from __future__ import annotations

import re

import torch

from ..errors import LabInputError
from ..format import message as one_line
from ..graph import MAX_DEPTH, Graph, walk
from ..saved import FREED, freed_message
from ..i18n import _
from ..names import learner_tensors

REENTRANT_CHECKPOINT = "CheckpointFunctionBackward"
# What PyTorch says when a meta tensor's backward needs values (meta tensors have none): an op with no
# meta kernel ("attempted to run this operator with Meta tensors"), .item() or a copy out of one. A
# meta tensor's backward otherwise runs, and a message that merely names the device (a gradient sent
# to meta) or lists the Meta backend among others is not this.
META = re.compile(r"\bwith Meta tensors\b|\bon meta tensors\b|\bout of meta tensor\b|from the 'Meta' backend")
# an operation without a sparse kernel: "Could not run 'aten::tanh_backward' with arguments from the
# 'SparseCPU' backend", or "... is not implemented for sparse tensors"
SPARSE = re.compile(r"from the 'Sparse\w*' backend|\bsparse tensors?\b", re.IGNORECASE)


class TraceError(LabInputError):
    """Bad input to trace(): the message says what is wrong and what to write instead."""


def check_input(output, gradient, what: str = "the output"):
    """Refuse what backward() would refuse, with a message that teaches; returns the gradient."""
    code = code_for(what)
    if not isinstance(output, torch.Tensor):
        raise TraceError(_(
            "{what} is of type {kind}, not a tensor. Pass the tensor you would call .backward() on, e.g. "
            "z = (x ** 2).mean(), then %backward z.").format(what=what, kind=type(output).__name__))
    if output.is_nested:
        raise TraceError(_(
            "{what} is a nested tensor (torch.nested): the lab steps through backwards of ordinary, sparse and "
            "meta tensors. Step through a padded copy instead, e.g. %backward {code}.to_padded_tensor(0.).sum(). "
            "Nothing was changed.").format(what=what, code=code))
    if output.grad_fn is None and not (output.is_floating_point() or output.is_complex()):
        raise TraceError(_(
            "{what} has dtype {dtype}: an integer (or bool) result, such as argmax, argmin, a comparison or a "
            "count, has no gradient, because a small change of the input does not change it smoothly. Step "
            "through a floating-point result instead, e.g. the value at that place: x.max() rather than "
            "x.argmax().").format(what=what, dtype=str(output.dtype).replace("torch.", "")))
    if output.grad_fn is None:
        if output.requires_grad:
            raise TraceError(_(
                "{what} is a leaf tensor (you created it, with requires_grad=True): backward() on it only sets "
                "{code}.grad, there is no graph to step through. Step through a result computed from it, e.g. "
                "%backward ({what} ** 2).sum()").format(what=what, code=code))
        raise TraceError(_(
            "{what} has no grad_fn, so autograd recorded no graph for it. Either none of its inputs has "
            "requires_grad=True, or it was computed under torch.no_grad(), or it comes from .detach(). Create "
            "the input with requires_grad=True, e.g. x = torch.tensor([1., 2., 3.], requires_grad=True), and "
            "compute {what} again.").format(what=what))
    if gradient is None:
        _starts_by_itself(output, what, code)
        return None
    if not isinstance(gradient, torch.Tensor):
        try:
            gradient = torch.as_tensor(gradient, dtype=output.dtype, device=output.device)
        except (TypeError, ValueError, RuntimeError):
            raise TraceError(_(
                "the gradient must be a tensor shaped like {what}, got {kind}. Try "
                "gradient=torch.ones_like({what}).").format(what=what, kind=type(gradient).__name__)) from None
    if gradient.shape != output.shape:
        raise TraceError(_(
            "the gradient has shape {given} but {what} has shape {shape}: they must match, one number per "
            "element of {what}. Try gradient=torch.ones_like({what}).").format(
            given=tuple(gradient.shape), what=what, shape=tuple(output.shape)))
    wrong = typed_gradient(output, gradient, what)
    if wrong:
        raise TraceError(wrong)
    return gradient


def _starts_by_itself(output, what: str, code: str) -> None:
    """Refuse an output that backward() cannot start from without a gradient."""
    if output.numel() != 1:
        raise TraceError(_(
            "{what} has shape {shape}, and backward() can only start by itself from a single number. "
            "Reduce it first: %backward {code}.sum() (or .mean()), or give the starting gradient: "
            "%backward {what} --gradient torch.ones_like({what})").format(
            what=what, shape=tuple(output.shape), code=code))
    if output.is_complex():  # backward() needs a gradient it cannot make up for a complex number
        raise TraceError(_(
            "{what} is one complex number ({dtype}), and backward() starts by itself only from a real one. "
            "Step through a real number made from it, e.g. %backward {code}.abs(), or give the starting "
            "gradient: %backward {what} --gradient torch.ones_like({what}). Nothing was changed.").format(
            what=what, dtype=str(output.dtype).replace("torch.", ""), code=code))


def code_for(what: str) -> str:
    """The learner's expression, ready to be followed by .sum() or .backward(): a name or a call
    chain stays as it is, anything else gets brackets.

    >>> code_for("y"), code_for("model.out"), code_for("y * 2")
    ('y', 'model.out', '(y * 2)')
    """
    if what in ("the output", _("the output")):  # the name trace() gives an unnamed output
        return "output"
    return what if re.fullmatch(r"[A-Za-z_][\w.]*(\([^()\s]*\))*", what) else f"({what})"


def deeper_than_the_limit(what: str) -> str:
    """Said when a graph is found deeper than MAX_DEPTH before the lab reached its deeper nodes."""
    return _("{what}'s graph is more than {limit} nodes deep, more than the lab can record (PyTorch can crash "
             "freeing so deep a graph once its nodes were reached from Python); nothing was changed: record a "
             "shorter part, e.g. from h = t.detach().requires_grad_() for a tensor t part way along.").format(
        what=what, limit=MAX_DEPTH)


def reentrant_checkpoint(what: str) -> str:
    return _("{what} goes through torch.utils.checkpoint(..., use_reentrant=True), which runs a second backward "
             "of its own inside the first one: the lab cannot record that nested backward faithfully, and it "
             "would write .grad of the checkpointed layer's parameters. Checkpoint with use_reentrant=False "
             "instead (PyTorch recommends it): checkpoint(fn, x, use_reentrant=False), then compute {what} again "
             "and step through it.").format(what=what)


def freed(what: str, graph: Graph, names=None) -> str:
    """A graph freed by an earlier backward. When that backward was another output's, through a
    part the two share, re-running only the cell of this output would fail again: say which tensor
    to compute again."""
    freed_nodes = {n.fn for n in graph.nodes if not n.is_accumulator and _is_freed(n)}
    other = _other_output(graph, freed_nodes, names) if freed_nodes else None
    if other is None:
        return freed_message(what)
    name, start = other
    where = f"{start.label}" if start.label else _("the tensor made by {node}").format(node=start.name)
    return _("{what}'s graph shares its part from {where} on with {name}, and a backward() of {name} already "
             "went through it and freed the values it saved. Re-running the cell of {what} alone would fail "
             "again: compute {where} again (re-run the cell that made it and the cells after it, up to {what}); "
             "or call the first backward as {name}.backward(retain_graph=True), which keeps the saved values "
             "alive.").format(what=what, where=where, name=name)


def _other_output(graph: Graph, freed_fns: set, names):
    """(name, first freed node) of a learner's tensor outside this graph whose graph reaches it."""
    for name, value in learner_tensors(names):
        fn = value.grad_fn
        if fn is None or graph.node_of(fn) is not None:
            continue
        for other_fn, _next in walk(fn):
            if other_fn in freed_fns:
                return name, graph.node_of(other_fn)
    return None


def _is_freed(node) -> bool:
    try:
        node.saved  # noqa: B018 -- reading tells whether a backward freed them
    except RuntimeError:
        return False
    return node.freed


def explain(err: BaseException, what: str, graph: Graph, names=None, applied: bool = False) -> str:
    """The engine's error err, raised while recording the backward of what, as one paragraph.
    applied: the run was the learner's own backward (--apply), so .grad may be partly written."""
    text = one_line(err)
    if "post accumulate grad hooks should return None" in text:
        if applied:
            return _("one of your post-accumulate-grad hooks (register_post_accumulate_grad_hook) returned a "
                     "value: such a hook works on the parameter itself and must return None. Write it as a def "
                     "without return (or end the lambda with 'or None'), zero .grad, and run the cell again.")
        return _("one of your post-accumulate-grad hooks (register_post_accumulate_grad_hook) returned a value: "
                 "such a hook works on the parameter itself and must return None. Write it as a def without "
                 "return (or end the lambda with 'or None').")
    if FREED in text:
        return freed(what, graph, names)
    if "modified by an inplace operation" in text:
        fix = _("Fix: make that change out of place (y = y + 1 instead of y += 1 or y.add_(1)), or edit a "
                ".clone(), then compute {what} again. To find the line: run {code}.backward() inside with "
                "torch.autograd.detect_anomaly():").format(what=what, code=code_for(what))
        words = _explainer(err, names, what)
        if words:  # the explainer names the tensor and the node that saved it
            return _("{problem} {fix}").format(problem=words, fix=fix)
        return _changed_in_place(text, what, fix)
    nan = re.search(r"Function '(\w+)' returned nan values in its (\d+)\w* output", text)
    if nan:
        return _("anomaly detection is on, and {node} sent on NaN (not a number) while backpropagating {what}: "
                 "its local derivative is undefined at the values it saved (log or sqrt of 0, 0/0, a huge exp). "
                 "Fix: keep the input away from that point, e.g. x.clamp_min(1e-12) before log or sqrt, or add a "
                 "small eps; then compute {what} again.").format(node=nan.group(1), what=what)
    if "nan" in text.lower() and "anomaly" in text.lower():
        return _("anomaly detection found NaN while backpropagating {what}: {message}").format(what=what,
                                                                                               message=text)
    if META.search(text):
        return _("{what} lives on the meta device: meta tensors have shapes but no values, so the engine has no "
                 "numbers to compute gradients with. Build it from real tensors (device='cpu') to step through "
                 "its backward.").format(what=what)
    if isinstance(err, NotImplementedError) and SPARSE.search(text):
        sparse = (_("the backward of {what} needs an operation that PyTorch has no sparse version of: \"{message}\" "
                    "Call .to_dense() on the sparse tensor before that operation, then compute {what} again.")
                  if applied else
                  _("the backward of {what} needs an operation that PyTorch has no sparse version of: \"{message}\" "
                    "Nothing of yours was changed. Call .to_dense() on the sparse tensor before that operation, "
                    "then compute {what} again."))
        return sparse.format(what=what, message=first_line(err))
    if "complex" in text.lower():
        return _("backward of {what} failed on complex numbers: {message}. Give a gradient of the same dtype as "
                 "{what} (complex for a complex {what}, real for a real one).").format(what=what, message=text)
    failed = (_("the engine failed while backpropagating {what}: {error}: {message}. Run {code}.backward() inside "
                "%%explain to have the error explained in more detail.") if applied
              else _("the engine failed while backpropagating {what}: {error}: {message}. Nothing of yours was "
                     "changed. Run {code}.backward() inside %%explain to have the error explained in more "
                     "detail."))
    return failed.format(what=what, error=type(err).__name__, message=text[:300], code=code_for(what))


def first_line(err: BaseException, limit: int = 120) -> str:
    """The first sentence of PyTorch's first line, cut to limit characters: the rest of a dispatcher
    error lists every backend and the files the kernels were registered in.

    >>> first_line(NotImplementedError("Could not run 'aten::cos' with arguments from the 'SparseCPU' backend. "
    ...                                "This could be because ...\\nCPU: registered at ..."))
    "Could not run 'aten::cos' with arguments from the 'SparseCPU' backend."
    """
    lines = str(err).strip().splitlines()
    line = lines[0].strip() if lines else type(err).__name__
    sentence = re.match(r".*?[.!?](?=\s|$)", line)
    line = sentence.group(0) if sentence else line
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


def _changed_in_place(text: str, what: str, fix: str) -> str:
    """The engine's in-place error told from its own message: which node made the tensor and how far its
    version moved, when the message says."""
    version = re.search(r"is at version (\d+); expected version (\d+)", text)
    op = re.search(r"which is output \d+ of (\w+)", text)
    if op and version:
        said = _("a tensor (made by {op}) that {what}'s graph saved for backward was changed in place after it "
                 "was saved; its version went from {before} to {after}, so the gradient computed from it would "
                 "be wrong and the engine refuses it.").format(op=op.group(1), what=what, before=version.group(2),
                                                               after=version.group(1))
    elif op:
        said = _("a tensor (made by {op}) that {what}'s graph saved for backward was changed in place after it "
                 "was saved, so the gradient computed from it would be wrong and the engine refuses it.").format(
            op=op.group(1), what=what)
    elif version:
        said = _("a tensor that {what}'s graph saved for backward was changed in place after it was saved; its "
                 "version went from {before} to {after}, so the gradient computed from it would be wrong and the "
                 "engine refuses it.").format(what=what, before=version.group(2), after=version.group(1))
    else:
        said = _("a tensor that {what}'s graph saved for backward was changed in place after it was saved, so the "
                 "gradient computed from it would be wrong and the engine refuses it.").format(what=what)
    return _("{problem} {fix}").format(problem=said, fix=fix)


def _explainer(err, names, what: str) -> str | None:
    """The error explainer's summary and why, in one paragraph, when it knows the error."""
    try:
        from ..explain.explanation import explanation_of

        found = explanation_of(err, names=names or {}, line=f"{code_for(what)}.backward()")
    except Exception:  # the explainer is a help here, never a new failure
        return None
    if not found.known or not found.summary:
        return None
    return " ".join(f"{found.summary} {found.why}".split())


def typed_gradient(output: torch.Tensor, gradient: torch.Tensor, what: str) -> str | None:
    """Why a gradient of the right shape still cannot start the backward of output, or None."""
    if gradient.device != output.device:
        return _("the gradient is on the {device} device but {what} is on {other}: give one on the same device, "
                 "e.g. torch.ones_like({what}).").format(device=gradient.device.type, what=what,
                                                          other=output.device.type)
    if gradient.is_complex() != output.is_complex():
        said = (_("the gradient is complex but {what} is not: its dtype must match {what}'s ({dtype}), e.g. "
                  "torch.ones_like({what}).") if gradient.is_complex()
                else _("the gradient is real but {what} is not: its dtype must match {what}'s ({dtype}), e.g. "
                       "torch.ones_like({what})."))
        return said.format(what=what, dtype=str(output.dtype).replace("torch.", ""))
    return None
