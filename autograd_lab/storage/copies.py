"""The ways of copying a tensor that the storage lab compares, the in-place edits it tries on a copy,
and the twin: a fresh tensor with the learner's values on which every experiment runs, so that the
learner's own tensor, its .grad and its version counter are never touched."""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import torch

from ..errors import LabInputError
from ..format import quote
from ..i18n import _
from ..names import label

# Every row of a report makes a few twins of the whole storage: keep that small.
MAX_ELEMENTS = 1_000_000


@dataclass(frozen=True)
class Copy:
    """One way of copying a: its key (the code after 'a'), and how to take it from a tensor."""

    key: str
    take: Callable
    numpy: bool = False  # the copy is a numpy array, not a tensor

    def code(self, name: str = "a") -> str:
        """The code a learner would type: Copy('detach()', ...).code('a') == 'a.detach()'."""
        return code_of(self.key, name)


def code_of(key: str, name: str = "a", shown: bool = False) -> str:
    """The code of the copy key of name; shown: as the faces show it, a long name shortened
    (names.label; the rows keep the whole code).

    >>> code_of("detach()", "w * 2"), code_of("torch.tensor(a)", "w"), code_of("", "w * 2")
    ('(w * 2).detach()', 'torch.tensor(w)', '(w * 2)')
    """
    if key.startswith("torch."):
        return key.replace("(a)", f"({label(name) if shown else name})")
    base = label(wrap(name)) if shown else wrap(name)
    return base + key if not key or key[0] in ".[" else f"{base}.{key}"


def shown(name: str) -> str:
    """The learner's name (or expression) for a tensor as the faces show it (names.label)."""
    return label(name)


def wrap(name: str) -> str:
    """The expression in brackets unless it is a plain name, attribute or subscript: 'w * 2' -> '(w * 2)'."""
    simple = all(c.isalnum() or c in "_.[]:" for c in name) and name.count("[") == name.count("]")
    return name if simple else f"({name})"


def view_key(a: torch.Tensor) -> str:
    """'view(-1)' when a flat view of a exists (PyTorch decides), else a slice."""
    try:
        a.detach().view(-1)
        return "view(-1)"
    except RuntimeError:  # a non-contiguous tensor has no flat view
        return "[1:]" if a.shape[0] > 1 else "[:]"


def copies(a: torch.Tensor) -> list[Copy]:
    """The copies the lab compares, in the order the table shows them."""
    view = view_key(a)
    found = [
        Copy("detach()", lambda t: t.detach()),
        Copy("clone()", lambda t: t.clone()),
        Copy("clone().detach()", lambda t: t.clone().detach()),
        Copy("detach().clone()", lambda t: t.detach().clone()),
        Copy(".data", lambda t: t.data),
        Copy(view, _viewer(view)),
    ]
    if a.device.type == "cpu":  # numpy arrays live in CPU memory only
        found.append(Copy("detach().numpy()", lambda t: t.detach().numpy(), numpy=True))
    found.append(Copy("torch.tensor(a)", lambda t: torch.tensor(t)))
    return found


def _viewer(key: str) -> Callable:
    if key == "view(-1)":
        return lambda t: t.view(-1)
    if key == "[1:]":
        return lambda t: t[1:]
    return lambda t: t[:]


@dataclass(frozen=True)
class Edit:
    """An in-place edit of the copy b: on a tensor, or on a numpy array."""

    name: str
    on_tensor: str  # the code shown for a tensor copy
    on_array: str  # the code shown for a numpy copy
    tensor: Callable
    array: Callable

    def code(self, copy: Copy) -> str:
        return self.on_array if copy.numpy else self.on_tensor

    def apply(self, b) -> None:
        (self.array if not isinstance(b, torch.Tensor) else self.tensor)(b)


def _times_two(n):
    n *= 2


def _plus_one(n):
    n += 1


def _zero(n):
    n[...] = 0


EDITS = {
    "mul_": Edit("mul_", "b.mul_(2)", "b *= 2", lambda b: b.mul_(2), _times_two),
    "add_": Edit("add_", "b.add_(1)", "b += 1", lambda b: b.add_(1), _plus_one),
    "zero_": Edit("zero_", "b.zero_()", "b[...] = 0", lambda b: b.zero_(), _zero),
    "numpy": Edit("numpy", "n = b.numpy(); n *= 2", "b *= 2", lambda b: _times_two(b.numpy()), _times_two),
}


def edit_named(name: str) -> Edit:
    if name not in EDITS:
        raise LabInputError(_("unknown edit {edit}: pick one of {edits}").format(edit=quote(repr(name)),
                                                                                  edits=", ".join(EDITS)))
    return EDITS[name]


def check(a, name: str = "a") -> None:
    """Refuse what the experiments cannot run on, with what to type instead (in the learner's name)."""
    n = label(wrap(name))
    if not isinstance(a, torch.Tensor):
        raise LabInputError(_("%storage needs a tensor, got a {type}. "
                              "Try: a = torch.tensor([1., 2., 3.], requires_grad=True); %storage a"
                              ).format(type=label(type(a).__name__)))
    if a.layout != torch.strided or a.is_meta or a.is_quantized:
        raise LabInputError(_("%storage needs an ordinary dense tensor with data (not sparse, meta or "
                              "quantized). Try: %storage {name}.to_dense()").format(name=n))
    if not (a.is_floating_point() or a.is_complex()):
        raise LabInputError(_("a tensor of dtype {dtype} cannot require grad, so the backward experiments "
                              "cannot run. Try: %storage {name}.float()"
                              ).format(dtype=str(a.dtype).replace("torch.", ""), name=n))
    if a.is_inference():
        raise LabInputError(_("this tensor was made under torch.inference_mode() and can never enter a "
                              "graph. Try: %storage {name}.clone() outside inference_mode").format(name=n))
    if _storage_elements(a) > MAX_ELEMENTS:
        raise LabInputError(_("this tensor's storage holds {count} elements; the lab copies it many times "
                              "and takes up to {most}. Try a small piece: %storage {name}.flatten()[:4].clone()"
                              ).format(count=_storage_elements(a), most=MAX_ELEMENTS, name=n))


def _storage_elements(a: torch.Tensor) -> int:
    return a.untyped_storage().nbytes() // a.element_size()


def twin(a: torch.Tensor) -> torch.Tensor:
    """A fresh tensor with a's values, dtype, device and layout (offset, strides, a view if a is one),
    that requires grad (a leaf, or a non-leaf if a is one). Nothing of a is changed.

    >>> t = twin(torch.tensor([1., 2.]))
    >>> t.tolist(), t.requires_grad, t.is_leaf
    ([1.0, 2.0], True, True)
    """
    base = a._base if a._base is not None else a
    with torch.no_grad():
        whole = torch.empty(0, dtype=a.dtype, device=a.device)
        whole.set_(a.untyped_storage(), 0, (_storage_elements(a),), (1,))
        whole = whole.clone()  # reads the learner's memory, writes only to new memory
        # detach() makes the window a fresh tensor (not a view) whose version counter starts at 0;
        # the conjugate and negative bits (z.conj(), z.conj().imag) are kept, they are part of the values
        root = _bits(whole.as_strided(base.size(), base.stride(), base.storage_offset()), base).detach()
    root.requires_grad_(True)
    if base.grad_fn is not None:  # mirror a non-leaf: in-place edits of its views are allowed
        root = root.clone()
    if base is a:
        return root
    offset = a.storage_offset() - base.storage_offset() + root.storage_offset()
    view = root.as_strided(a.size(), a.stride(), offset)  # a view keeps its base's bits
    if a.is_conj() != view.is_conj():
        view = view.conj()
    if a.is_neg() != view.is_neg():
        view = torch._neg_view(view)
    return view


def _bits(t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """t read as like reads its memory: conjugated and negated lazily when like is."""
    if like.is_neg():
        t = torch._neg_view(t)
    return t.conj() if like.is_conj() else t
