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
    if show_original:
        parts += ["", f"PyTorch said ({e.category}):", "    " + e.original]
    return "\n".join(parts)


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
    if show_original:
        parts.append(f'<p><b>PyTorch said ({esc(e.category)}):</b></p>'
                     f'<pre class="agl-original">{esc(e.original)}</pre>')
    parts.append("</div>")
    return "".join(parts)
