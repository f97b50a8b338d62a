"""autograd_lab: see what PyTorch's autograd really does with your own tensors.

In a notebook: ``%load_ext autograd_lab``, then ``%backward z``, ``%graph z``, ``%storage a``,
``%exercise mean_square``, ``%%explain`` and ``%%backward_profile``. The same tools are plain
functions (``autograd_lab.step(z)``, ``autograd_lab.trace(z)``, ...).

Names are imported on first use, so ``import autograd_lab`` stays cheap.
"""
from __future__ import annotations

import importlib
import sys

__version__ = "0.1.0"

# public name -> module that defines it (all imported lazily)
_PUBLIC = {
    "trace": "autograd_lab.stepper.trace",
    "Trace": "autograd_lab.stepper.trace",
    "TraceError": "autograd_lab.stepper.trace",
    "step": "autograd_lab.stepper.view",
    "record": "autograd_lab.stepper.record",
    "show_graph": "autograd_lab.stepper.graph_view",
    "jacobian": "autograd_lab.jacobians.view",
    "compare_storage": "autograd_lab.storage.view",
    "exercise": "autograd_lab.practice.view",
    "exercises": "autograd_lab.practice.view",
    "progress": "autograd_lab.practice.view",
    "grading": "autograd_lab.practice.progress",
    "____": "autograd_lab.practice.checking",
    "explain": "autograd_lab.explain.view",
    "explain_errors": "autograd_lab.explain.view",
    "profile_backward": "autograd_lab.profile.view",
    "compare_inputs": "autograd_lab.profile.view",
    "LabInputError": "autograd_lab.errors",
    "language": "autograd_lab.i18n",
}

__all__ = sorted(_PUBLIC)

# The room autograd_lab/explain/ has the name of the function explain(), and importing a room sets
# it as an attribute here, which would hide the function. Import the room (a docstring, cheap) now
# and drop the attribute: a module is bound to its parent only on its first import.
importlib.import_module("autograd_lab.explain")
del globals()["explain"]


def __getattr__(name):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'autograd_lab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))


def load_ipython_extension(shell) -> None:
    """Called by ``%load_ext autograd_lab``: register the magics (nothing of torch is touched)."""
    from .magics import register

    register(shell)


def unload_ipython_extension(shell) -> None:
    """Called by ``%unload_ext autograd_lab``: remove the magics and any error handler we installed."""
    from .magics import unregister

    view = sys.modules.get("autograd_lab.explain.view")
    if view is not None:
        view.explain_errors(False)
    unregister(shell)
