"""HTML helpers for every face the lab shows (small escaped tables), and the plain-text formatting
of autograd_lab.format under the names the faces use."""
from __future__ import annotations

import html as _html

from .format import DECIMALS, fmt, message, number, table  # noqa: F401  (the faces' vocabulary)


def esc(text) -> str:
    return _html.escape(str(text), quote=True)


def html_table(headers: list[str], rows: list[list[str]], caption: str | None = None,
               highlight: set[int] | None = None, classes: dict[int, str] | None = None) -> str:
    """A small HTML table with escaped cells; highlight marks rows (0-based) in bold."""
    highlight = highlight or set()
    classes = classes or {}
    parts = ['<table class="autograd-lab">']
    if caption:
        parts.append(f"<caption>{esc(caption)}</caption>")
    parts.append("<thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>")
    for i, row in enumerate(rows):
        style = ' style="font-weight:bold;background:#fff3c4"' if i in highlight else ""
        cls = f' class="{esc(classes[i])}"' if i in classes else ""
        parts.append(f"<tr{cls}{style}>" + "".join(f"<td><code>{esc(c)}</code></td>" for c in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"
