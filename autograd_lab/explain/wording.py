"""Joining whole sentences and lists of names the way the language of the moment writes them."""
from __future__ import annotations

from ..i18n import _


def sentences(said: list[str]) -> str:
    """Whole sentences one after the other, as the language writes them: a space between them in
    English, none in Chinese (a sentence ends with 。).

    >>> sentences(["It grows.", "Detach it."])
    'It grows. Detach it.'
    """
    text = said[0]
    for sentence in said[1:]:
        # Translators: two whole sentences one after the other ("{before}{after}" in Chinese: no space)
        text = _("{before} {after}").format(before=text, after=sentence)
    return text


def listing(items) -> str:
    shown = ", ".join(items[:4])
    if len(items) > 4:
        return _("{nodes} and {count} more").format(nodes=shown, count=len(items) - 4)
    return shown


def either(names) -> str:
    """'a', 'a or b', 'a or b or c': the tensors it may be (the first four named, then how many
    others)."""
    said = names[0]
    for name in names[1:4]:
        said = _("{first} or {second}").format(first=said, second=name)
    if len(names) > 4:
        said = _("{names} or one of {count} others").format(names=said, count=len(names) - 4)
    return said
