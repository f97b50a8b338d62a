"""One builder per autograd error: from the message and the learner's context, the one-line summary,
why it happened in terms of the graph (with the learner's names when known), and the fix as code.
Most builders are a Told: the learner's name for one tensor put into three templates. KINDS lists
(kind, how the message starts, builder); the first match wins. Every sentence is a whole template of
the catalog (i18n): a part that varies (a node list, a shape) is a whole sentence of its own put
into the template, never a fragment of one."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..graph import FREED, saved_values, walk
from ..i18n import N_, _
from ..names import learner_tensors
from . import context as c


def _labels(names) -> dict:
    return {v.grad_fn: k for k, v in learner_tensors(names) if v.grad_fn is not None}


def _title(node, labels) -> str:
    name = node.name().replace("torch::autograd::", "")
    return f"{name} ({labels[node]})" if node in labels else name


def _failing_saves(root, needle: str, names) -> list[str]:
    """Titles of the nodes whose saved values are gone (needle is FREED) or raise an error that
    contains needle (a saved value changed in place since)."""
    labels, found = _labels(names), []
    for node, _edge in walk(root):
        try:
            hit = saved_values(node)[1] and needle == FREED
        except RuntimeError as err:  # saved_values raises every error but "freed"
            hit = needle in str(err)
        if hit:
            found.append(_title(node, labels))
    return found


def _named(ctx, default: str, attr: str | None = None):
    """The learner's name for the tensor at stake in the failing line, and their tensor of that name
    (None when unknown): what backward ran from, or with attr what `.attr` was read on; else default."""
    stmt = ctx.statement()
    name = (c.receiver(stmt, attr) if attr else c.backward_target(stmt)) or default
    return name, ctx.tensor(name)


def _saves(t, needle: str, names) -> list[str]:
    return _failing_saves(t.grad_fn, needle, names) if t is not None and t.grad_fn else []


def sentences(said: list[str]) -> str:
    """Whole sentences one after the other, as the language writes them: a space between them in
    English, none in Chinese (a sentence ends with 。).

    >>> sentences(["It grows.", "Detach it."])
    'It grows. Detach it.'
    """
    text = said[0]
    for sentence in said[1:]:
        # Translators: two whole sentences one after the other ("{before}{after}" in Chinese: no space)
        text = _("{before} {after}").format(before=text, after=sentence)
    return text


def _listing(items) -> str:
    shown = ", ".join(items[:4])
    if len(items) > 4:
        return _("{nodes} and {count} more").format(nodes=shown, count=len(items) - 4)
    return shown


def _either(names) -> str:
    """'a', 'a or b', 'a or b or c': the tensors it may be."""
    said = names[0]
    for name in names[1:]:
        said = _("{first} or {second}").format(first=said, second=name)
    return said


@dataclass(frozen=True)
class Told:
    """An error explained by putting the learner's name for one tensor into three texts: summary,
    why and fix are str.format templates over {name} (found by _named from default and attr) and
    the words that words(msg, ctx, tensor, name) adds. The templates are marked N_ and translated
    when an error is explained; words are already in the language of the moment.

    >>> from autograd_lab.explain.context import Context
    >>> gradient_shape("Mismatch in shape", Context("q.backward(g)"))[0]
    'the gradient given to q.backward() has the wrong shape.'
    """

    default: str
    summary: str
    why: str
    fix: str
    attr: str | None = None
    words: Callable[..., dict] | None = None

    def __call__(self, msg, ctx) -> tuple[str, str, str]:
        name, t = _named(ctx, self.default, self.attr)
        words = {"name": name, **(self.words(msg, ctx, t, name) if self.words else {})}
        return _(self.summary).format(**words), _(self.why).format(**words), _(self.fix).format(**words)


def _freed(msg, ctx, t, name) -> dict:
    freed = _saves(t, FREED, ctx.names)
    if freed:
        first = _("{name}'s graph was freed by the first `{name}.backward()`: to save memory, backward releases "
                  "the values the graph's nodes saved ({nodes} had saved values for it).").format(
                      name=name, nodes=_listing(freed))
    else:
        first = _("{name}'s graph was freed by the first `{name}.backward()`: to save memory, backward releases "
                  "the values the graph's nodes saved.").format(name=name)
    return {"first": first}


backward_twice = Told(
    "z", N_("backward ran a second time through {name}'s graph, whose saved values were already freed."),
    # Translators: {first} is a whole sentence: how the first backward freed the graph
    N_("{first} The second backward walks the same nodes and finds them gone. In a training loop the same "
       "happens when a tensor (a hidden state, a running total) carries the previous step's graph into the "
       "next step."),
    N_("# usually: compute {name} again (a fresh forward builds a fresh graph), then\n{name}.backward()\n"
       "# in a loop: detach what crosses from one step to the next, e.g.  h = h.detach()\n"
       "# only if you truly need two backwards through one graph, keep it on the FIRST call:\n"
       "{name}.backward(retain_graph=True)"), words=_freed)


def _size(msg, ctx, t, name) -> dict:
    if t is not None:
        return {"first": _("{name} has shape {shape} ({count} numbers).").format(
            name=name, shape=tuple(t.shape), count=t.numel())}
    return {"first": _("{name} holds several numbers.").format(name=name)}


non_scalar = Told(
    "z", N_("backward() needs a scalar, and {name} is not one."),
    # Translators: {first} is a whole sentence: the shape of {name}
    N_("{first} backward() with no argument starts the graph with d{name}/d{name} = 1, which only exists "
       "for a single number. For many outputs autograd needs the weight of each one: the gradient of which "
       "scalar do you want?"),
    N_("{name}.sum().backward()\n# the same, with the weights given explicitly (one per element):\n"
       "{name}.backward(torch.ones_like({name}))"),
    words=_size)


def inplace_modified(msg, ctx):
    shape = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\]", msg)
    op = re.search(r"which is output (\d+) of (\w+)", msg)
    version = re.search(r"is at version (\d+); expected version (\d+)", msg)
    dims = tuple(int(d) for d in shape.group(1).replace(" ", "").split(",") if d) if shape else None
    now = int(version.group(1)) if version else None
    hits = sorted(k for k, v in learner_tensors(ctx.names)
                  if (dims is None or tuple(v.shape) == dims) and v._version == now and v.is_floating_point())
    name = hits[0] if len(hits) == 1 else None
    what = name or (_either(hits) if hits else _("a tensor"))
    z, t = _named(ctx, "loss")
    savers = _saves(t, "modified by an inplace operation", ctx.names)
    saver = _("{nodes} saved it").format(nodes=_listing(savers)) if savers else _("a later operation saved it")
    if op:
        saved = _("{what}, made by {op}, was saved in the graph for the backward pass: {saver}.").format(
            what=what, op=op.group(2).lower(), saver=saver)
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
    target = name or "y"
    fix = _("# find the in-place line: anomaly mode names the forward operation that saved it\n"
            "with torch.autograd.detect_anomaly():\n    {loss}.backward()\n"
            "# then make that change out of place (a new tensor), e.g.\n"
            "{target} = {target} + 1      # instead of {target} += 1 or {target}.add_(1)").format(loss=z, target=target)
    if hits:
        summary = _("{what} was changed in place after the graph saved it.").format(what=what)
    else:
        summary = _("a tensor was changed in place after the graph saved it.")
    return summary, why, fix


no_grad_fn = Told(
    "z", N_("{name} is not part of any graph: nothing it came from requires grad."),
    N_("{name} does not require grad, so it has no grad_fn: there is no graph to walk back. That happens when "
       "none of the tensors {name} was computed from requires grad, when it was computed inside "
       "torch.no_grad(), or from a .detach(), .item() or .numpy() copy."),
    N_("# mark the inputs you want gradients for, before computing from them:\n"
       "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
       "# or, on an existing tensor x:  x.requires_grad_()\n"
       "# then compute {name} again from x and call {name}.backward()"))


def leaf_inplace(msg, ctx):
    w, code, _view = c.inplace_target(ctx.statement())
    w, code = w or "w", code or "w -= 0.1 * w.grad"
    view = msg.lower().startswith("a view")
    part = _("a part of {tensor} (a view)").format(tensor=w) if view else w
    why = _("{tensor} is a leaf that requires grad: autograd will put its gradient in {tensor}.grad, and the "
            "operations that used {tensor} may have saved its value. Changing {part} in place while autograd "
            "records would make those saved values lie, so PyTorch refuses.").format(tensor=w, part=part)
    fix = _("# an update autograd should not record (a weight step, an initialisation):\n"
            "with torch.no_grad():\n    {code}").format(code=code)
    if w.isidentifier():
        fix += "\n" + _("# or, to get a new value inside the graph, change a copy instead:\n"
                        "{copy} = {tensor}.clone()\n{changed}").format(
                            copy=w + "2", tensor=w, changed=c.rename_base(code, w, w + "2"))
    if view:
        summary = _("a part of {tensor} (a view) was changed in place, and {tensor} is a leaf that requires "
                    "grad.").format(tensor=w)
    else:
        summary = _("{tensor} was changed in place, and {tensor} is a leaf that requires grad.").format(tensor=w)
    return summary, why, fix


numpy_requires_grad = Told(
    "z", N_("numpy() refused {name} because it requires grad."),
    N_("{name} requires grad: autograd tracks it. A NumPy array lives outside autograd, so PyTorch wants you to "
       "step out of the graph first: .detach() gives a tensor with the same memory and no graph (on a GPU add "
       ".cpu())."),
    "{name}.detach().numpy()", attr="numpy")


def int_requires_grad(msg, ctx):
    stmt = ctx.statement()
    fixed = c.float_creation(stmt)
    owner = c.receiver(stmt, "requires_grad_")
    if fixed is None:
        fixed = f"{owner} = {owner}.float().requires_grad_()" if owner else \
            _("x = torch.tensor([1., 2., 3.], requires_grad=True)   # 1. not 1: floats")
    why = _("A gradient says how the result changes when an input changes a tiny bit; whole numbers cannot "
            "change a tiny bit, so only floating point (and complex) tensors can require grad. "
            "torch.tensor([1, 2, 3]) makes int64 numbers.")
    return _("an integer tensor cannot require grad."), why, fixed


def _made(msg, ctx, t, name) -> dict:
    if t is not None and t.grad_fn is not None:
        return {"first": _("{name} is not a leaf (made by {node}): it is an intermediate result in the graph.").format(
            name=name, node=t.grad_fn.name())}
    return {"first": _("{name} is not a leaf: it is an intermediate result in the graph.").format(name=name)}


nonleaf_grad = Told(
    "y", N_("{name}.grad is None because {name} is not a leaf."),
    # Translators: {first} is a whole sentence: {name} is not a leaf
    N_("{first} backward() keeps gradients only in leaves (the tensors you created with requires_grad=True); "
       "a gradient passes through {name} on its way and is dropped, so {name}.grad is None."),
    N_("{name}.retain_grad()   # right after {name} is computed, before backward\n# ... backward ...\n{name}.grad"),
    attr="grad", words=_made)


def device_mismatch(msg, ctx):
    # "expected device cpu but got meta" names the wanted device first; "Tensor on device meta is not
    # on the expected device cpu!" names the one it got first
    found = re.search(r"expected (?:device )?(\S+?)!? but got (\S+)", msg)
    other = None if found else re.search(r"on device (\S+) is not on the expected device (\S+?)!", msg)
    fn = re.match(r"Function (\w+) returned", msg)
    name, _t = _named(ctx, "z")
    names = (found.group(1), found.group(2)) if found else (other.group(2), other.group(1)) if other else None
    if names:
        want, got = names
        summary = _("a gradient on {got} met a tensor on {want}.").format(got=got, want=want)
        if fn:
            first = _("{function} returned a tensor on {got}, but the tensor it belongs to lives on {want}.")
        else:
            first = _("the gradient given to backward is a tensor on {got}, but the tensor it belongs to lives on "
                      "{want}.")
        first = first.format(function=fn.group(1) if fn else "", got=got, want=want)
    else:  # the message names no devices
        summary = _("a gradient on another met a tensor on one device.")
        if fn:
            first = _("{function} returned a tensor on another, but the tensor it belongs to lives on one "
                      "device.").format(function=fn.group(1))
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


gradient_shape = Told(
    "z", N_("the gradient given to {name}.backward() has the wrong shape."),
    N_("the gradient passed to backward stands for d(result)/d{name}, so it must have {name}'s shape: one "
       "weight per element of {name}."),
    "{name}.backward(torch.ones_like({name}))")


Builder = Callable[[str, c.Context], tuple[str, str, str]]
KINDS: list[tuple[str, tuple, Builder]] = [
    ("backward_twice", (FREED,), backward_twice),
    ("non_scalar", ("grad can be implicitly created only for scalar outputs",), non_scalar),
    ("inplace_modified", ("one of the variables needed for gradient computation has been modified",), inplace_modified),
    ("no_grad_fn", ("element 0 of tensors does not require grad",), no_grad_fn),
    ("leaf_inplace", ("a leaf Variable that requires grad is being used in an in-place",
                      "a view of a leaf Variable that requires grad is being used in an in-place"), leaf_inplace),
    ("numpy_requires_grad", ("Can't call numpy() on Tensor that requires grad",), numpy_requires_grad),
    ("int_requires_grad", ("Only Tensors of floating point",), int_requires_grad),
    ("nonleaf_grad", ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",), nonleaf_grad),
    ("device_mismatch", (re.compile(r"Function \w+ returned an invalid gradient at index \d+ - expected device"),
                         "invalid gradient at index", "Expected all tensors to be on the same device",
                         "Tensor on device"), device_mismatch),
    ("gradient_shape", ("Mismatch in shape: grad_output",), gradient_shape),
]
