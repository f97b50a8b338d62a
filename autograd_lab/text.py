"""HTML helpers for every face the lab shows: escaping, small tables, preformatted text, and the
colours that mean the same thing in every room."""
from __future__ import annotations

import html as _html


# One colour per kind of outcome, shared by every room: green is right or harmless, red is wrong
# (or silently wrong), olive is close (right as far as it is written, but too few digits or cut
# instead of rounded: between right and wrong), amber is an error autograd raised, grey is nothing
# to judge yet.
STATUS_COLOURS = {
    "correct": "#1b7f3b", "right": "#1b7f3b", "ok": "#1a7f37", "close": "#6f6400",
    "incorrect": "#b3261e", "wrong": "#b3261e", "silently wrong": "#c00000",
    "error": "#b35900", "refused": "#555555", "not attempted": "#6b6b6b",
}


def status_colour(status: str) -> str:
    """The colour of an outcome in every room's HTML (black for one not listed).

    >>> status_colour("correct")
    '#1b7f3b'
    """
    return STATUS_COLOURS.get(status, "#000")


def esc(text) -> str:
    return _html.escape(str(text), quote=True)


def html_table(headers: list[str], rows: list[list[str]], caption: str | None = None,
               highlight: set[int] | None = None, classes: dict[int, str] | None = None) -> str:
    """A small HTML table with escaped cells; highlight marks rows (0-based) in bold. Chinese words
    are not broken between their characters when a column is narrow (word-break: keep-all)."""
    highlight = highlight or set()
    classes = classes or {}
    parts = ['<table class="autograd-lab" style="word-break:keep-all">']
    if caption:
        parts.append(f"<caption>{esc(caption)}</caption>")
    parts.append("<thead><tr>" + "".join(f"<th scope=\"col\">{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>")
    for i, row in enumerate(rows):
        style = ' style="font-weight:bold;background:#fff3c4"' if i in highlight else ""
        cls = f' class="{esc(classes[i])}"' if i in classes else ""
        parts.append(f"<tr{cls}{style}>" + "".join(f"<td><code>{esc(c)}</code></td>" for c in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def pre(text: str) -> str:
    return f"<pre>{esc(text)}</pre>"
