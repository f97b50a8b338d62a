"""Wrong-answer messages that several exercises share, written once (in ``messages.toml``) so that
the same mistake is explained in the same words wherever it is made. ``SHARED(key)`` gives one in
the learner's language; the key is the mistake's name ("missing_mean", "doubled", ...)."""
from __future__ import annotations

from ..i18n import _
from ..words import words_of

SHARED = words_of(__name__)


#: the mistakes whose first making is asked a question (ask_<key> of messages.toml) before it is told
ASKED = ("ask_no_factor", "ask_wrong_power", "ask_dz_dy", "ask_dz_dy_sum", "ask_two_over_n")


def shared_ask(key: str) -> str:
    """What a first mistake `key` is asked (ask_<key> of messages.toml, in the learner's language), or "".

    >>> shared_ask("no_factor").startswith("A factor is missing"), shared_ask("doubled")
    (True, '')
    """
    return SHARED(f"ask_{key}") if f"ask_{key}" in ASKED else ""


def ambiguous(messages: list[str]) -> str:
    """One message for a wrong answer that fits several mistakes on these inputs only (each message
    translated, the shared ones included).

    >>> ambiguous(["A.", "B."]).startswith("These numbers fit more than one mistake")
    True
    """
    listed = _(messages[0])
    for message in messages[1:]:
        # Translators: one more possible mistake added to the list ("A. Or: B.")
        listed = _("{listed} Or: {message}").format(listed=listed, message=_(message))
    return _("These numbers fit more than one mistake for this x (with other inputs they differ): {listed} "
             "Work it out as a formula in x and n to tell which.").format(listed=listed)


def for_part(label: str, message: str) -> str:
    """A shared message said about one part of a several-part answer (the message translated).

    >>> for_part("x.grad", "The power rule ...")
    'For x.grad the power rule ...'
    """
    text = _(message)
    # Translators: {message} is a whole sentence about the part {label}; in English its first letter is lowered
    return _("For {label} {message}").format(label=label, message=text[:1].lower() + text[1:])
