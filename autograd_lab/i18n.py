"""The language the lab speaks (English, Simplified Chinese: locale/languages.toml), from gettext catalogs.

Every sentence the lab shows a learner is written in English in the code, inside ``_()`` (or
``N_()`` for a module-level constant, translated where it is shown), as one whole sentence with
named placeholders: ``_("x.grad has shape {shape}").format(shape=...)``, so that a translator can
put the words in their own order. Numbers, code and PyTorch's names stay as they are. A module
whose sentences form a table keeps them in a sentences file beside it instead (words.py).

The catalogs live in ``autograd_lab/locale/zh/LC_MESSAGES/``, one ``.po`` file a room (``core`` for
the modules at the top of the package, ``exercises`` and ``exercises_advanced`` for the exercises'
topics); ``scripts/catalogs.py`` extracts them with Babel and
compiles them to ``.mo`` (``make catalogs``). The language is ``language("zh")`` or
``language("en")``; at import it is read from the environment variable ``AUTOGRAD_LAB_LANG``
(``zh``, ``zh_CN``, ``zh-Hans``, ... or ``en``), else English. It is the same for every call until
changed, so a lesson's outputs are the same on every run.

>>> language("en")
'en'
>>> _("Correct.")
'Correct.'
"""
from __future__ import annotations

import contextlib
import gettext
import os
import re
import string
from pathlib import Path

from .errors import LabInputError
from .languages import LANGUAGES as _TABLE

LANGUAGES = tuple(_TABLE)
#: one catalog a room ("core": the modules at the top of the package; the exercises' topics in two)
DOMAINS = ("core", "stepper", "storage", "practice", "exercises", "exercises_advanced", "explain", "profile",
           "jacobians")
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
ENV = "AUTOGRAD_LAB_LANG"

_NULL = gettext.NullTranslations()


class _State:
    code = "en"
    catalog: gettext.NullTranslations = _NULL


_state = _State()


def _code(value: str) -> str | None:
    """The language a name asks for: 'zh', 'zh_CN', 'zh-Hans', 'ZH' -> 'zh'; None if unknown."""
    text = value.strip().lower()
    for code, lang in _TABLE.items():
        if text in (a.lower() for a in lang.aliases):
            return code
    head = text.replace("-", "_").split("_")[0].split(".")[0]
    return head if head in LANGUAGES else None


def _catalog(code: str) -> gettext.NullTranslations:
    if code == "en":
        return _NULL
    chain: gettext.NullTranslations | None = None
    missing = []
    for domain in DOMAINS:
        path = LOCALE_DIR / code / "LC_MESSAGES" / f"{domain}.mo"
        if not path.exists():
            missing.append(domain)
            continue
        with path.open("rb") as f:
            catalog = gettext.GNUTranslations(f)
        if chain is None:
            chain = catalog
        else:
            chain.add_fallback(catalog)
    if missing:
        raise LabInputError(_(
            "The {language} catalogs are not compiled ({missing}): run `make catalogs` in the "
            "autograd_lab checkout, then language() again. Nothing was changed."
        ).format(language=code, missing=", ".join(missing)))
    assert chain is not None
    return chain


def language(code: str | None = None) -> str:
    """Choose the language of everything the lab shows from now on: ``language("zh")`` for
    Simplified Chinese, ``language("en")`` for English. With no argument, says which is in use.
    Returns the language's code.

    >>> language("fr")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    autograd_lab.errors.LabInputError: The lab speaks English, 中文: type one of language("en"), ... not 'fr'. ...
    """
    if code is None:
        return _state.code
    chosen = _code(code) if isinstance(code, str) else None
    if chosen is None:
        raise LabInputError(_(
            "The lab speaks {languages}: type one of {examples}, not {given}. Nothing was changed."
        ).format(languages=_(", ").join(lang.name for lang in _TABLE.values()),  # as format.listed
                 examples=_(", ").join(f'language("{c}")' for c in LANGUAGES), given=_given(code)))
    catalog = _catalog(chosen)
    _check_font(chosen)
    _state.catalog = catalog
    _state.code = chosen
    return chosen


def _given(value: object) -> str:
    """What was passed, as a message quotes it: its repr, shortened by quote()."""
    try:
        text = repr(value)
    except Exception:  # a repr that raises: the type names it
        text = f"<{type(value).__name__}>"
    return quote(text)


QUOTED = 200     # at most this many characters of what a learner typed, in any message
MESSAGE = 1000   # at most this many characters of an error's own message


def quote(text: object, limit: int = QUOTED) -> str:
    """What a learner typed or passed, as a message may quote it: whole when short, else its head
    and tail around the number of characters left out, so that the place of a mistake stays visible.

    >>> quote("x" * 10)
    'xxxxxxxxxx'
    >>> quote("0123456789" * 10, limit=50)
    '012345678901234567 … (100 characters) … 0123456789'
    """
    try:
        text = text if isinstance(text, str) else str(text)
    except Exception:  # an object whose __str__ raises is named by its type
        text = f"<{type(text).__name__}>"
    if len(text) <= limit:
        return text
    # Translators: what is left out of a long text quoted in a message; {n} is its whole length
    middle = _(" … ({n} characters) … ").format(n=len(text))
    keep = max(limit - len(middle), 2)
    head = keep * 2 // 3
    return text[:head] + middle + text[len(text) - (keep - head):]


# Chinese characters and full-width punctuation; the marks put around each value while it is filled in
_CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
_OPEN, _CLOSE = "\x02", "\x03"
_SEAM_BEFORE = re.compile(f"(?<=[{_CJK}]) (?={_OPEN}[{_CJK}])")
_SEAM_AFTER = re.compile(f"(?<=[{_CJK}]{_CLOSE}) (?=[{_CJK}])")


class _Marked(string.Formatter):
    def format_field(self, value: object, format_spec: str) -> str:
        return _OPEN + str(super().format_field(value, format_spec)) + _CLOSE


class Sentence(str):
    """A translated sentence. Its format() fills it in as str.format does, and leaves out the space
    the translation keeps between a Chinese character and a placeholder whose value starts (or ends)
    with a Chinese character: a learner's name keeps its space ("x 的反向图"), the lab's own word for
    an unnamed output reads without a seam ("输出的反向图", not "输出 的反向图").

    >>> Sentence("{what} 的反向图").format(what="x"), Sentence("{what} 的反向图").format(what="输出")
    ('x 的反向图', '输出的反向图')
    """

    __slots__ = ()

    def format(self, /, *args: object, **kwargs: object) -> str:
        text = str.format(self, *args, **kwargs)
        if not re.search(f"[{_CJK}]", self) or not re.search(f"[{_CJK}]", text):
            return text
        marked = _Marked().vformat(self, args, kwargs)
        marked = _SEAM_AFTER.sub("", _SEAM_BEFORE.sub("", marked))
        return marked.replace(_OPEN, "").replace(_CLOSE, "")


def _(message: str) -> str:
    """The message in the current language (itself in English, or when it has no translation)."""
    catalog = _state.catalog
    return message if catalog is _NULL else Sentence(catalog.gettext(message))


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural sentence for n, in the current language (Chinese has one form)."""
    catalog = _state.catalog
    text = catalog.ngettext(singular, plural, n)
    return text if catalog is _NULL else Sentence(text)


def N_(message: str) -> str:
    """Mark a module-level constant for translation; ``_(CONSTANT)`` translates it where it is shown."""
    return message


def _from_environment() -> None:
    value = os.environ.get(ENV, "")
    code = _code(value) if value else None
    if code and code != "en":
        with contextlib.suppress(LabInputError):  # not compiled: English, and language("zh") says why
            language(code)


FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")


def _has_font(files: str) -> bool:
    """Is a font whose file names start with files installed where fontconfig and matplotlib look?"""
    return any(next(Path(d).expanduser().rglob(files + "*"), None) for d in FONT_DIRS
               if Path(d).expanduser().is_dir())


def _check_font(code: str) -> None:
    font = _TABLE[code].font
    if font is not None and not _has_font(font.files):
        raise LabInputError(_(
            "Figures in {language} need the font {font}, which is not installed: type `{install}` "
            "(Debian or Ubuntu), then language(\"{code}\") again. Nothing was changed."
        ).format(language=_TABLE[code].name, font=font.family, install=font.install, code=code))


_from_environment()
