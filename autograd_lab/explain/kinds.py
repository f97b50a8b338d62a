"""One builder per autograd error: from the message and the learner's context, the one-line summary,
why it happened in terms of the graph (with the learner's names when known), and the fix as code.
Most builders are a Told (told.py: the learner's name for one tensor put into three templates);
the others work their explanation out (worked_out.py). KINDS lists each kind once (its name, its
title, how the message starts, its builder); the first match wins. Every sentence is a whole
template of the catalog (i18n): a part that varies (a node list, a shape) is a whole sentence of its
own put into the template, never a fragment of one."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from ..i18n import N_
from ..saved import FREED
from . import context as c
from .told import backward_twice, gradient_shape, no_grad_fn, non_scalar, nonleaf_grad, numpy_requires_grad
from .worked_out import device_mismatch, inplace_modified, int_requires_grad, leaf_inplace

Builder = Callable[[str, c.Context], tuple[str, str, str]]


class Kind(NamedTuple):
    """One kind of autograd error: its name (Explanation.kind), its name in words for the title, how
    PyTorch's message starts (strings or patterns), and the builder of its explanation."""

    name: str
    title: str
    starts: tuple
    build: Builder


KINDS: list[Kind] = [
    Kind("backward_twice", N_("backward twice"), (FREED,), backward_twice),
    Kind("non_scalar", N_("non scalar"), ("grad can be implicitly created only for scalar outputs",), non_scalar),
    Kind("inplace_modified", N_("inplace modified"),
         ("one of the variables needed for gradient computation has been modified",), inplace_modified),
    Kind("no_grad_fn", N_("no grad fn"), ("element 0 of tensors does not require grad",), no_grad_fn),
    Kind("leaf_inplace", N_("leaf inplace"), ("a leaf Variable that requires grad is being used in an in-place",
                                              "a view of a leaf Variable that requires grad is being used in an "
                                              "in-place"), leaf_inplace),
    Kind("numpy_requires_grad", N_("numpy requires grad"), ("Can't call numpy() on Tensor that requires grad",),
         numpy_requires_grad),
    Kind("int_requires_grad", N_("int requires grad"), ("Only Tensors of floating point",), int_requires_grad),
    Kind("nonleaf_grad", N_("nonleaf grad"),
         ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",), nonleaf_grad),
    Kind("device_mismatch", N_("device mismatch"),
         (re.compile(r"Function \w+ returned an invalid gradient at index \d+ - expected device"),
          "invalid gradient at index", "Expected all tensors to be on the same device", "Tensor on device"),
         device_mismatch),
    Kind("gradient_shape", N_("gradient shape"), ("Mismatch in shape: grad_output",), gradient_shape),
]
TITLES = {k.name: k.title for k in KINDS}
