"""Anomaly mode on request: run the learner's compiled cell again under
torch.autograd.detect_anomaly(), keep its warnings off stderr, and read from the warning the forward
call of the node that failed, as a line of the learner's own cell (never a file path)."""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import torch

# anomaly mode says it is on, then, for a node that fails in backward, where its forward ran
ENABLED = "Anomaly Detection has been enabled"
DETECTED = "Error detected in"
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)\n(?P<text>[^\n]*)')
_NODE = re.compile(r"Error detected in (\w+)")


@dataclass
class Culprit:
    """The forward call anomaly mode found: the node that failed, and where its forward ran.

    lineno is the line of the learner's cell (None when the forward ran outside the cell, in a
    function or an earlier cell; then function names where). line is that line's code.

    >>> Culprit("SigmoidBackward0", 2, "y = x.sigmoid()", "<module>")
    Culprit(SigmoidBackward0 at line 2: y = x.sigmoid())
    """

    node: str
    lineno: int | None
    line: str
    function: str = "<module>"

    @property
    def in_cell(self) -> bool:
        return self.lineno is not None

    def __repr__(self) -> str:
        where = f"line {self.lineno}" if self.in_cell else f"in {self.function}"
        return f"Culprit({self.node} at {where}: {self.line})"


def culprit(message: str, cell_file: str) -> Culprit | None:
    """Where the failing node's forward ran, read from anomaly mode's warning text: the last frame in
    the cell (cell_file is the name the cell was compiled under), else the innermost frame outside
    torch; None when the text is not anomaly mode's or has no forward call.

    >>> text = ('Error detected in MulBackward0. Traceback of forward call that caused the error:\\n'
    ...         '  File "<explain-3>", line 2, in <module>\\n    y = x * w\\n')
    >>> culprit(text, "<explain-3>")
    Culprit(MulBackward0 at line 2: y = x * w)
    """
    node = _NODE.search(message)
    if node is None:
        return None
    frames = [m for m in _FRAME.finditer(message)]
    mine = [m for m in frames if m.group("file") == cell_file]
    if mine:
        m = mine[-1]
        return Culprit(node.group(1), int(m.group("line")), m.group("text").strip())
    outside = [m for m in frames if "torch" not in m.group("file").replace("\\", "/").split("/")]
    if outside:
        m = outside[-1]
        return Culprit(node.group(1), None, m.group("text").strip(), m.group("func"))
    return None  # "No forward pass information available": the forward ran before anomaly mode


def run_under_anomaly(body, expr, global_ns, local_ns):
    """Run compiled code (compile_cell's body and last expression) with anomaly mode on. Returns the
    exception it raised (or None), the culprit anomaly mode named (or None) and the other warnings
    caught (warnings.WarningMessage), for the caller to show or drop. Nothing reaches stderr.

    >>> from autograd_lab.explain.context import compile_cell
    >>> class Plain:
    ...     transform_cell = staticmethod(lambda cell: cell)
    >>> cell = "x = torch.ones(2, requires_grad=True)\\ny = x.exp()\\ny += 1\\ny.sum().backward()"
    >>> body, last = compile_cell(Plain(), cell, "demo")
    >>> err, found, others = run_under_anomaly(body, last, {"torch": torch}, None)
    >>> type(err).__name__, found.lineno, found.line
    ('RuntimeError', 2, 'y = x.exp()')
    """
    error: BaseException | None = None
    with warnings.catch_warnings(record=True) as caught:
        # inserted last, so matched first: these two never reach stderr (nor an "error" filter)
        warnings.filterwarnings("always", message=ENABLED)
        warnings.filterwarnings("always", message=DETECTED)
        try:
            with torch.autograd.detect_anomaly():
                exec(body, global_ns, local_ns)
                if expr is not None:
                    eval(expr, global_ns, local_ns)
        except Exception as err:
            error = err
    found, others = None, []
    for w in caught:
        text = str(w.message)
        if text.startswith(DETECTED):
            found = found or culprit(text, body.co_filename)
        elif not text.startswith(ENABLED):
            others.append(w)
    return error, found, others


# errors raised inside a node's backward: the only ones anomaly mode can trace to a forward call
TRACEABLE = ("inplace_modified", "backward_twice")


@dataclass
class Rerun:
    """What %%explain --anomaly did: ran (the cell ran a second time with anomaly mode) and the
    culprit it found, or None."""

    ran: bool
    culprit: Culprit | None = None
