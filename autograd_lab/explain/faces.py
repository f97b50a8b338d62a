"""The text and HTML faces of an explained error: the kind in words, the summary, why it happened in
the graph, the fix as code, and PyTorch's own message on request. An error the lab does not know is
shown as Python would show it."""
from __future__ import annotations

from ..text import esc


def _title(e) -> str:
    return f"autograd error explained ({e.kind.replace('_', ' ')})"


def explanation_text(e, show_original: bool = False) -> str:
    """The explanation as plain text, the fix indented as code.

    >>> from autograd_lab.explain.explanation import explanation_of
    >>> print(explanation_text(explanation_of("Can't call numpy() on Tensor that requires grad",
    ...                                       line="z.numpy()")).splitlines()[-1])
        z.detach().numpy()
    """
    if not e.known:
        return f"{e.category}: {e.original}"
    parts = [_title(e), e.summary, "", "Why: " + e.why, "", "Fix:"]
    parts += ["    " + line for line in e.fix.splitlines()]
    if e.anomaly is not None:
        parts += ["", "Anomaly mode:"] + ["    " + line for line in anomaly_lines(e.anomaly)]
    if show_original:
        parts += ["", f"PyTorch said ({e.category}):", "    " + e.original]
    return "\n".join(parts)


def anomaly_lines(rerun) -> list[str]:
    """What %%explain --anomaly found, in words: the line of the cell whose forward op saved the
    value the failing node needed, or why there is none.

    >>> from autograd_lab.explain.anomaly import Culprit, Rerun
    >>> print("\\n".join(anomaly_lines(Rerun(True, Culprit("SigmoidBackward0", 2, "y = x.sigmoid()")))))
    the cell ran a second time, with anomaly mode on (its side effects ran twice).
    SigmoidBackward0 failed in backward; its forward call is line 2 of this cell:
      2 | y = x.sigmoid()
    """
    if not rerun.ran:
        return ["not used: this error happens before backward runs any node, so anomaly mode has no",
                "forward call to point at. The cell was not run again."]
    lines = ["the cell ran a second time, with anomaly mode on (its side effects ran twice)."]
    c = rerun.culprit
    if c is None:
        return lines + ["It named no forward call: the failing node's forward ran before this cell",
                        "(anomaly mode only records forwards that run while it is on). Put the forward",
                        "and the backward in one %%explain --anomaly cell."]
    if c.in_cell:
        return lines + [f"{c.node} failed in backward; its forward call is line {c.lineno} of this cell:",
                        f"  {c.lineno} | {c.line}"]
    where = f"in {c.function}, called from this cell" if c.function else "outside this cell"
    return lines + [f"{c.node} failed in backward; its forward call ran {where}:", f"  {c.line}"]


def explanation_html(e, show_original: bool = False) -> str:
    """The explanation as HTML: the fix in a <pre class="agl-fix">.

    >>> from autograd_lab.explain.explanation import explanation_of
    >>> 'class="agl-fix"' in explanation_html(explanation_of("Only Tensors of floating point"))
    True
    """
    parts = ['<div class="agl-explain">',
             f"<p><b>{esc(_title(e))}</b> &mdash; {esc(e.summary)}</p>",
             f"<p><b>Why:</b> {esc(e.why)}</p>",
             f'<p><b>Fix:</b></p><pre class="agl-fix">{esc(e.fix)}</pre>']
    if e.anomaly is not None:
        parts.append(f'<p><b>Anomaly mode:</b></p><pre class="agl-anomaly">'
                     f'{esc(chr(10).join(anomaly_lines(e.anomaly)))}</pre>')
    if show_original:
        parts.append(f'<p><b>PyTorch said ({esc(e.category)}):</b></p>'
                     f'<pre class="agl-original">{esc(e.original)}</pre>')
    parts.append("</div>")
    return "".join(parts)
