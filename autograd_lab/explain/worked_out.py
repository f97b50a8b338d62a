"""The errors whose explanation is worked out from the message and the learner's code: which tensor
was changed in place and who saved it, which leaf was edited, what to write instead of an integer
tensor, which device met which. Each builder gives (summary, why, fix) in the language of the moment."""
from __future__ import annotations

import ast
import re

from ..i18n import _
from ..format import quote
from ..names import label, learner_tensors
from . import context as c
from .reading import named, saves
from .wording import either, listing


def inplace_modified(msg, ctx):
    shape = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\]", msg)
    op = re.search(r"which is output (\d+) of (\w+)", msg)
    version = re.search(r"is at version (\d+); expected version (\d+)", msg)
    dims = tuple(int(d) for d in shape.group(1).replace(" ", "").split(",") if d) if shape else None
    now = int(version.group(1)) if version else None
    hits = sorted(label(k) for k, v in learner_tensors(ctx.names)
                  if (dims is None or tuple(v.shape) == dims) and v._version == now and v.is_floating_point())
    name = hits[0] if len(hits) == 1 else None
    what = name or (either(hits) if hits else _("a tensor"))
    z, t = named(ctx, "loss")
    z = label(z)
    savers = saves(t, "modified by an inplace operation", ctx.names)
    saver = _("{nodes} saved it").format(nodes=listing(savers)) if savers else _("a later operation saved it")
    if op:
        saved = _("{what}, made by {op}, was saved in the graph for the backward pass: {saver}.").format(
            what=what, op=label(op.group(2).lower()), saver=saver)
    else:
        saved = _("{what} (a leaf) was saved in the graph for the backward pass: {saver}.").format(
            what=what, saver=saver)
    if version:
        changed = _("Then it was changed in place (its version went from {before} to {now}).").format(
            before=version.group(2), now=version.group(1))
    else:
        changed = _("Then it was changed in place.")
    # Translators: {saved} and {changed} are whole sentences: where the tensor was saved, how it changed
    why = _("{saved} {changed} Autograd checks each saved tensor's version and refuses a changed value, "
            "because the gradient computed from it would be wrong.").format(saved=saved, changed=changed)
    edit = _inplace_edit(ctx, [name] if name else hits)
    # Translators: {loss} is the learner's name for the tensor backward ran from
    fix = _("# find the in-place line: anomaly mode names the forward operation that saved the tensor,\n"
            "# but only for a forward that ran while it was on. Run the whole cell again as\n"
            "# %%explain --anomaly, or run the forward inside it too:\n"
            "with torch.autograd.detect_anomaly():\n"
            "    ...                 # the forward, from the inputs to {loss}\n"
            "    {loss}.backward()").format(loss=z)
    if edit is not None:
        old, new = edit
        # Translators: {new} is the learner's line rewritten, {old} their in-place line; keep both as they are
        fix += "\n" + _("# then make your in-place change out of place (a new tensor):\n"
                        "{new}      # instead of {old}").format(new=new, old=old)
    else:
        target = name or "y"
        fix += "\n" + _("# then make that change out of place (a new tensor), e.g.\n"
                        "{target} = {target} * 3      # instead of {target} *= 3 or {target}.mul_(3)").format(
                            target=target)
    if hits:
        summary = _("{what} was changed in place after the graph saved it.").format(what=what)
    else:
        summary = _("a tensor was changed in place after the graph saved it.")
    return summary, why, fix


def _inplace_edit(ctx, names) -> tuple[str, str] | None:
    """(the learner's line that changed one of names in place, that line out of place), the last such
    line above the failing one; None when none is found (the edit ran in another cell or function)."""
    for line in reversed(ctx.before):
        target = c.inplace_target(c.parse_line(line))[0]
        if ctx.tensor(target) is None:
            continue  # not an edit of one of the learner's tensors (nn.init.zeros_(w) edits w, not nn.init)
        for tensor in names or [None]:
            rewritten = c.out_of_place(line, tensor)
            if rewritten is not None:
                old = ast.unparse(c.parse_line(line))
                # the learner's code as the explanation quotes it: shortened when long (display only)
                return quote(old), quote(rewritten)
    return None


def leaf_inplace(msg, ctx):
    w, code, _view = c.inplace_target(ctx.statement())
    w, code = w or "w", code or "w -= 0.1 * w.grad"
    renamed = c.rename_base(code, w, w + "2") if w.isidentifier() else ""
    # the learner's code as the explanation quotes it: shortened when long (display only)
    w, code, renamed = label(w), quote(code), quote(renamed)
    view = msg.lower().startswith("a view")
    part = _("a part of {tensor} (a view)").format(tensor=w) if view else w
    why = _("{tensor} is a leaf that requires grad: autograd will put its gradient in {tensor}.grad, and the "
            "operations that used {tensor} may have saved its value. Changing {part} in place while autograd "
            "records would make those saved values lie, so PyTorch refuses.").format(tensor=w, part=part)
    fix = _("# an update autograd should not record (a weight step, an initialisation):\n"
            "with torch.no_grad():\n    {code}").format(code=code)
    if renamed:
        fix += "\n" + _("# or, to get a new value inside the graph, change a copy instead:\n"
                        "{copy} = {tensor}.clone()\n{changed}").format(copy=w + "2", tensor=w, changed=renamed)
    if view:
        summary = _("a part of {tensor} (a view) was changed in place, and {tensor} is a leaf that requires "
                    "grad.").format(tensor=w)
    else:
        summary = _("{tensor} was changed in place, and {tensor} is a leaf that requires grad.").format(tensor=w)
    return summary, why, fix


def int_requires_grad(msg, ctx):
    stmt = ctx.statement()
    fixed = c.float_creation(stmt)
    owner = c.receiver(stmt, "requires_grad_")
    fixed, owner = (quote(fixed) if fixed is not None else None), (label(owner) if owner else owner)
    if fixed is None:
        fixed = f"{owner} = {owner}.float().requires_grad_()" if owner else \
            _("x = torch.tensor([1., 2., 3.], requires_grad=True)   # 1. not 1: floats")
    why = _("A gradient says how the result changes when an input changes a tiny bit; whole numbers cannot "
            "change a tiny bit, so only floating point (and complex) tensors can require grad. "
            "torch.tensor([1, 2, 3]) makes int64 numbers.")
    return _("an integer tensor cannot require grad."), why, fixed


def device_mismatch(msg, ctx):
    # "expected device cpu but got meta" names the wanted device first; "Tensor on device meta is not
    # on the expected device cpu!" names the one it got first
    found = re.search(r"expected (?:device )?(\S+?)!? but got (\S+)", msg)
    other = None if found else re.search(r"on device (\S+) is not on the expected device (\S+?)!", msg)
    fn = re.match(r"Function (\w+) returned", msg)
    name, _t = named(ctx, "z")
    name = label(name)
    names = (found.group(1), found.group(2)) if found else (other.group(2), other.group(1)) if other else None
    names = (label(names[0]), label(names[1])) if names else None
    function = label(fn.group(1)) if fn else ""
    if names:
        want, got = names
        summary = _("a gradient on {got} met a tensor on {want}.").format(got=got, want=want)
        if fn:
            first = _("{function} returned a tensor on {got}, but the tensor it belongs to lives on {want}.")
        else:
            first = _("the gradient given to backward is a tensor on {got}, but the tensor it belongs to lives on "
                      "{want}.")
        first = first.format(function=function, got=got, want=want)
    else:  # the message names no devices
        summary = _("a gradient on another met a tensor on one device.")
        if fn:
            first = _("{function} returned a tensor on another, but the tensor it belongs to lives on one "
                      "device.").format(function=function)
        else:
            first = _("the gradient given to backward is a tensor on another, but the tensor it belongs to lives "
                      "on one device.")
    # Translators: {first} is a whole sentence: which gradient is on which device
    why = _("{first} Every gradient must be on the same device as its tensor, and autograd does not move them "
            "for you.").format(first=first)
    fix = _("{name}.backward(torch.ones_like({name}))   # ones_like makes the gradient on {name}'s device\n"
            "# or move a gradient you built:  g = g.to({name}.device)\n"
            "# in a custom Function: save ctx.device = x.device in forward, return grad.to(ctx.device)").format(
                name=name)
    return summary, why, fix
