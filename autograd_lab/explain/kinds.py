"""One builder per autograd error: from the message and the learner's context, the one-line summary,
why it happened in terms of the graph (with the learner's names when known), and the fix as code.
Most builders are a Told: the learner's name for one tensor put into three templates. KINDS lists
(kind, how the message starts, builder); the first match wins."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..graph import FREED, saved_values, walk
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
    for node, _ in walk(root):
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


def _listing(items) -> str:
    return ", ".join(items[:4]) + (f" and {len(items) - 4} more" if len(items) > 4 else "")


@dataclass(frozen=True)
class Told:
    """An error explained by putting the learner's name for one tensor into three texts: summary,
    why and fix are str.format templates over {name} (found by _named from default and attr) and
    the words that words(msg, ctx, tensor) adds.

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
        words = {"name": name, **(self.words(msg, ctx, t) if self.words else {})}
        return self.summary.format(**words), self.why.format(**words), self.fix.format(**words)


def _freed(msg, ctx, t) -> dict:
    freed = _saves(t, FREED, ctx.names)
    return {"where": f" ({_listing(freed)} had saved values for it)" if freed else ""}


backward_twice = Told(
    "z", "backward ran a second time through {name}'s graph, whose saved values were already freed.",
    "{name}'s graph was freed by the first `{name}.backward()`: to save memory, backward releases the values "
    "the graph's nodes saved{where}. The second backward walks the same nodes and finds them gone. In a "
    "training loop the same happens when a tensor (a hidden state, a running total) carries the previous "
    "step's graph into the next step.",
    "# usually: compute {name} again (a fresh forward builds a fresh graph), then\n{name}.backward()\n"
    "# in a loop: detach what crosses from one step to the next, e.g.  h = h.detach()\n"
    "# only if you truly need two backwards through one graph, keep it on the FIRST call:\n"
    "{name}.backward(retain_graph=True)", words=_freed)

non_scalar = Told(
    "z", "backward() needs a scalar, and {name} is not one.",
    "{name}{shape}. backward() with no argument starts the graph with d{name}/d{name} = 1, which only exists "
    "for a single number. For many outputs autograd needs the weight of each one: the gradient of which "
    "scalar do you want?",
    "{name}.sum().backward()\n# the same, with the weights given explicitly (one per element):\n"
    "{name}.backward(torch.ones_like({name}))",
    words=lambda msg, ctx, t: {"shape": f" has shape {tuple(t.shape)} ({t.numel()} numbers)" if t is not None
                               else " holds several numbers"})


def inplace_modified(msg, ctx):
    shape = re.search(r"\[torch\.\w+ \[([\d, ]*)\]\]", msg)
    op = re.search(r"which is output (\d+) of (\w+)", msg)
    version = re.search(r"is at version (\d+); expected version (\d+)", msg)
    dims = tuple(int(d) for d in shape.group(1).replace(" ", "").split(",") if d) if shape else None
    now = int(version.group(1)) if version else None
    hits = sorted(k for k, v in learner_tensors(ctx.names)
                  if (dims is None or tuple(v.shape) == dims) and v._version == now and v.is_floating_point())
    name = hits[0] if len(hits) == 1 else None
    what = name or (" or ".join(hits) if hits else "a tensor")
    made = f", made by {op.group(2).lower()}," if op else " (a leaf)"
    z, t = _named(ctx, "loss")
    savers = _saves(t, "modified by an inplace operation", ctx.names)
    saver = f"{_listing(savers)} saved it" if savers else "a later operation saved it"
    versions = f" (its version went from {version.group(2)} to {version.group(1)})" if version else ""
    why = (f"{what}{made} was saved in the graph for the backward pass: {saver}. Then it was changed in "
           f"place{versions}. Autograd checks each saved tensor's version and refuses a changed value, "
           f"because the gradient computed from it would be wrong.")
    target = name or "y"
    fix = (f"# find the in-place line: anomaly mode names the forward operation that saved it\n"
           f"with torch.autograd.detect_anomaly():\n    {z}.backward()\n"
           f"# then make that change out of place (a new tensor), e.g.\n"
           f"{target} = {target} + 1      # instead of {target} += 1 or {target}.add_(1)")
    return f"{what} was changed in place after the graph saved it.", why, fix


no_grad_fn = Told(
    "z", "{name} is not part of any graph: nothing it came from requires grad.",
    "{name} does not require grad, so it has no grad_fn: there is no graph to walk back. That happens when "
    "none of the tensors {name} was computed from requires grad, when it was computed inside "
    "torch.no_grad(), or from a .detach(), .item() or .numpy() copy.",
    "# mark the inputs you want gradients for, before computing from them:\n"
    "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
    "# or, on an existing tensor x:  x.requires_grad_()\n"
    "# then compute {name} again from x and call {name}.backward()")


def leaf_inplace(msg, ctx):
    w, code, _ = c.inplace_target(ctx.statement())
    w, code = w or "w", code or "w -= 0.1 * w.grad"
    view = msg.lower().startswith("a view")
    part = f"a part of {w} (a view)" if view else w
    why = (f"{w} is a leaf that requires grad: autograd will put its gradient in {w}.grad, and the "
           f"operations that used {w} may have saved its value. Changing {part} in place while autograd "
           f"records would make those saved values lie, so PyTorch refuses.")
    fix = (f"# an update autograd should not record (a weight step, an initialisation):\n"
           f"with torch.no_grad():\n    {code}")
    if w.isidentifier():
        fix += (f"\n# or, to get a new value inside the graph, change a copy instead:\n"
                f"{w}2 = {w}.clone()\n{c.rename_base(code, w, w + '2')}")
    return f"{part} was changed in place, and {w} is a leaf that requires grad.", why, fix


numpy_requires_grad = Told(
    "z", "numpy() refused {name} because it requires grad.",
    "{name} requires grad: autograd tracks it. A NumPy array lives outside autograd, so PyTorch wants you to "
    "step out of the graph first: .detach() gives a tensor with the same memory and no graph (on a GPU add "
    ".cpu()).",
    "{name}.detach().numpy()", attr="numpy")


def int_requires_grad(msg, ctx):
    stmt = ctx.statement()
    fixed = c.float_creation(stmt)
    owner = c.receiver(stmt, "requires_grad_")
    if fixed is None:
        fixed = f"{owner} = {owner}.float().requires_grad_()" if owner else \
            "x = torch.tensor([1., 2., 3.], requires_grad=True)   # 1. not 1: floats"
    why = ("A gradient says how the result changes when an input changes a tiny bit; whole numbers cannot "
           "change a tiny bit, so only floating point (and complex) tensors can require grad. "
           "torch.tensor([1, 2, 3]) makes int64 numbers.")
    return "an integer tensor cannot require grad.", why, fixed


nonleaf_grad = Told(
    "y", "{name}.grad is None because {name} is not a leaf.",
    "{name} is not a leaf{made}: it is an intermediate result in the graph. backward() keeps gradients only "
    "in leaves (the tensors you created with requires_grad=True); a gradient passes through {name} on its "
    "way and is dropped, so {name}.grad is None.",
    "{name}.retain_grad()   # right after {name} is computed, before backward\n# ... backward ...\n{name}.grad",
    attr="grad", words=lambda msg, ctx, t: {"made": f" (made by {t.grad_fn.name()})"
                                            if t is not None and t.grad_fn is not None else ""})


def _devices(msg, ctx, t) -> dict:
    found = re.search(r"expected (?:device )?(\S+?)!? but got (\S+)", msg) or re.search(
        r"on device (\S+) is not on the expected device (\S+?)!", msg)
    want, got = (found.group(1), found.group(2)) if found and "expected device" in msg else \
        ((found.group(2), found.group(1)) if found else ("one device", "another"))
    fn = re.match(r"Function (\w+) returned", msg)
    return {"want": want, "got": got, "who": f"{fn.group(1)} returned" if fn else "the gradient given to backward is"}


device_mismatch = Told(
    "z", "a gradient on {got} met a tensor on {want}.",
    "{who} a tensor on {got}, but the tensor it belongs to lives on {want}. Every gradient must be on the "
    "same device as its tensor, and autograd does not move them for you.",
    "{name}.backward(torch.ones_like({name}))   # ones_like makes the gradient on {name}'s device\n"
    "# or move a gradient you built:  g = g.to({name}.device)\n"
    "# in a custom Function: save ctx.device = x.device in forward, return grad.to(ctx.device)",
    words=_devices)

gradient_shape = Told(
    "z", "the gradient given to {name}.backward() has the wrong shape.",
    "the gradient passed to backward stands for d(result)/d{name}, so it must have {name}'s shape: one "
    "weight per element of {name}.",
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
