"""The text and HTML faces of an explained error: the kind in words, the summary, why it happened in
the graph, the fix as code, and PyTorch's own message on request. An error the lab does not know is
shown as Python would show it."""
from __future__ import annotations

from ..format import MESSAGE, quote
from ..i18n import _
from ..names import label
from ..text import esc
from .kinds import TITLES

def _title(e) -> str:
    kind = _(TITLES[e.kind]) if e.kind in TITLES else e.kind.replace("_", " ")
    return _("autograd error explained ({kind})").format(kind=kind)


def explanation_text(e, show_original: bool = False) -> str:
    """The explanation as plain text, the fix indented as code.

    >>> from autograd_lab.explain.explanation import explanation_of
    >>> print(explanation_text(explanation_of("Can't call numpy() on Tensor that requires grad",
    ...                                       line="z.numpy()")).splitlines()[-1])
        z.detach().numpy()
    """
    if not e.known:
        return f"{label(e.category)}: {original(e)}"
    parts = [_title(e), e.summary, "", _("Why: {why}").format(why=e.why), "", _("Fix:")]
    parts += ["    " + line for line in e.fix.splitlines()]
    if e.anomaly is not None:
        parts += ["", _("Anomaly mode:")] + ["    " + line for line in anomaly_lines(e.anomaly)]
    if show_original:
        parts += ["", _("PyTorch said ({category}):").format(category=label(e.category)), "    " + original(e)]
    return "\n".join(parts)


def original(e) -> str:
    """PyTorch's own message as the faces show it: at most i18n.MESSAGE characters (head and tail)."""
    return quote(e.original, MESSAGE)


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
        return _("not used: this error happens before backward runs any node, so anomaly mode has no\n"
                 "forward call to point at. The cell was not run again.").splitlines()
    lines = [_("the cell ran a second time, with anomaly mode on (its side effects ran twice).")]
    c = rerun.culprit
    if c is None:
        return lines + _("It named no forward call: the failing node's forward ran before this cell\n"
                         "(anomaly mode only records forwards that run while it is on). Put the forward\n"
                         "and the backward in one %%explain --anomaly cell.").splitlines()
    if c.in_cell:
        return lines + [_("{node} failed in backward; its forward call is line {line} of this cell:").format(
                        node=label(c.node), line=c.lineno), f"  {c.lineno} | {quote(c.line)}"]
    if c.function:
        said = _("{node} failed in backward; its forward call ran in {function}, called from this cell:").format(
            node=label(c.node), function=label(c.function))
    else:
        said = _("{node} failed in backward; its forward call ran outside this cell:").format(node=label(c.node))
    return lines + [said, f"  {quote(c.line)}"]


def explanation_html(e, show_original: bool = False) -> str:
    """The explanation as HTML: the fix in a <pre class="agl-fix">.

    >>> from autograd_lab.explain.explanation import explanation_of
    >>> 'class="agl-fix"' in explanation_html(explanation_of("Only Tensors of floating point"))
    True
    """
    why, fix, anomaly = _("Why:"), _("Fix:"), _("Anomaly mode:")
    parts = ['<div class="agl-explain">',
             f"<p><b>{esc(_title(e))}</b> &mdash; {esc(e.summary)}</p>",
             f"<p><b>{esc(why)}</b> {esc(e.why)}</p>",
             f'<p><b>{esc(fix)}</b></p><pre class="agl-fix">{esc(e.fix)}</pre>']
    if e.anomaly is not None:
        parts.append(f'<p><b>{esc(anomaly)}</b></p><pre class="agl-anomaly">'
                     f'{esc(chr(10).join(anomaly_lines(e.anomaly)))}</pre>')
    if show_original:
        said = _("PyTorch said ({category}):").format(category=label(e.category))
        parts.append(f'<p><b>{esc(said)}</b></p>'
                     f'<pre class="agl-original">{esc(original(e))}</pre>')
    parts.append("</div>")
    return "".join(parts)
