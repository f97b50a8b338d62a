"""One builder per autograd error: from the message and the learner's context, the one-line summary,
why it happened in terms of the graph (with the learner's names when known), and the fix as code.
KINDS lists (kind, how the message starts, builder); the first match wins."""
from __future__ import annotations

import re

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


def _backward_tensor(ctx, default: str):
    """What backward ran from in the failing line (its code, or default) and the learner's tensor."""
    z = c.backward_target(ctx.statement()) or default
    return z, ctx.tensor(z)


def _saves(t, needle: str, names) -> list[str]:
    return _failing_saves(t.grad_fn, needle, names) if t is not None and t.grad_fn else []


def _listing(items) -> str:
    return ", ".join(items[:4]) + (f" and {len(items) - 4} more" if len(items) > 4 else "")


def backward_twice(msg, ctx):
    z, t = _backward_tensor(ctx, "z")
    freed = _saves(t, FREED, ctx.names)
    where = f" ({_listing(freed)} had saved values for it)" if freed else ""
    why = (f"{z}'s graph was freed by the first `{z}.backward()`: to save memory, backward releases the "
           f"values the graph's nodes saved{where}. The second backward walks the same nodes and finds "
           f"them gone. In a training loop the same happens when a tensor (a hidden state, a running "
           f"total) carries the previous step's graph into the next step.")
    fix = (f"# usually: compute {z} again (a fresh forward builds a fresh graph), then\n{z}.backward()\n"
           f"# in a loop: detach what crosses from one step to the next, e.g.  h = h.detach()\n"
           f"# only if you truly need two backwards through one graph, keep it on the FIRST call:\n"
           f"{z}.backward(retain_graph=True)")
    return f"backward ran a second time through {z}'s graph, whose saved values were already freed.", why, fix


def non_scalar(msg, ctx):
    z, t = _backward_tensor(ctx, "z")
    shape = f" has shape {tuple(t.shape)} ({t.numel()} numbers)" if t is not None else " holds several numbers"
    why = (f"{z}{shape}. backward() with no argument starts the graph with d{z}/d{z} = 1, which only "
           f"exists for a single number. For many outputs autograd needs the weight of each one: "
           f"the gradient of which scalar do you want?")
    fix = (f"{z}.sum().backward()\n# the same, with the weights given explicitly (one per element):\n"
           f"{z}.backward(torch.ones_like({z}))")
    return f"backward() needs a scalar, and {z} is not one.", why, fix


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
    z, t = _backward_tensor(ctx, "loss")
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


def no_grad_fn(msg, ctx):
    z = c.backward_target(ctx.statement()) or "z"
    why = (f"{z} does not require grad, so it has no grad_fn: there is no graph to walk back. That "
           f"happens when none of the tensors {z} was computed from requires grad, when it was computed "
           f"inside torch.no_grad(), or from a .detach(), .item() or .numpy() copy.")
    fix = ("# mark the inputs you want gradients for, before computing from them:\n"
           "x = torch.tensor([1., 2., 3.], requires_grad=True)\n"
           "# or, on an existing tensor x:  x.requires_grad_()\n"
           f"# then compute {z} again from x and call {z}.backward()")
    return f"{z} is not part of any graph: nothing it came from requires grad.", why, fix


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


def numpy_requires_grad(msg, ctx):
    z = c.receiver(ctx.statement(), "numpy") or "z"
    why = (f"{z} requires grad: autograd tracks it. A NumPy array lives outside autograd, so PyTorch wants "
           f"you to step out of the graph first: .detach() gives a tensor with the same memory and no "
           f"graph (on a GPU add .cpu()).")
    return f"numpy() refused {z} because it requires grad.", why, f"{z}.detach().numpy()"


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


def nonleaf_grad(msg, ctx):
    y = c.receiver(ctx.statement(), "grad") or "y"
    t = ctx.tensor(y)
    made = f" (made by {t.grad_fn.name()})" if t is not None and t.grad_fn is not None else ""
    why = (f"{y} is not a leaf{made}: it is an intermediate result in the graph. backward() keeps gradients "
           f"only in leaves (the tensors you created with requires_grad=True); a gradient passes through "
           f"{y} on its way and is dropped, so {y}.grad is None.")
    fix = (f"{y}.retain_grad()   # right after {y} is computed, before backward\n"
           f"# ... backward ...\n{y}.grad")
    return f"{y}.grad is None because {y} is not a leaf.", why, fix


def device_mismatch(msg, ctx):
    found = re.search(r"expected (?:device )?(\S+?)!? but got (\S+)", msg) or re.search(
        r"on device (\S+) is not on the expected device (\S+?)!", msg)
    want, got = (found.group(1), found.group(2)) if found and "expected device" in msg else \
        ((found.group(2), found.group(1)) if found else ("one device", "another"))
    fn = re.match(r"Function (\w+) returned", msg)
    z = c.backward_target(ctx.statement()) or "z"
    who = f"{fn.group(1)} returned" if fn else "the gradient given to backward is"
    why = (f"{who} a tensor on {got}, but the tensor it belongs to lives on {want}. Every gradient must be "
           f"on the same device as its tensor, and autograd does not move them for you.")
    fix = (f"{z}.backward(torch.ones_like({z}))   # ones_like makes the gradient on {z}'s device\n"
           f"# or move a gradient you built:  g = g.to({z}.device)\n"
           f"# in a custom Function: save ctx.device = x.device in forward, return grad.to(ctx.device)")
    return f"a gradient on {got} met a tensor on {want}.", why, fix


def gradient_shape(msg, ctx):
    z = c.backward_target(ctx.statement()) or "z"
    why = (f"the gradient passed to backward stands for d(result)/d{z}, so it must have {z}'s shape: "
           f"one weight per element of {z}.")
    return f"the gradient given to {z}.backward() has the wrong shape.", why, f"{z}.backward(torch.ones_like({z}))"


KINDS = [
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
