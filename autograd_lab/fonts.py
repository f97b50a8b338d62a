"""Fonts for the lab's figures: the current language's font (locale/languages.toml) behind DejaVu
Sans, so that no glyph is missing (matplotlib warns of a missing glyph, and a warning fails a strict
nbval cell)."""
from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

from .i18n import language
from .languages import LANGUAGES, Font

P = ParamSpec("P")
R = TypeVar("R")


#: one figure built or drawn at a time: rc_context changes matplotlib's settings for the whole
#: process, so a figure built in a thread (the stepper draws the next window between clicks) while
#: another leaves its rc_context would take the other's fonts, or none (stepper/draw.py: RENDERING)
FIGURES = threading.RLock()
_found: dict[str, str] = {}  # family -> the name matplotlib knows it by, once found and completed


def _family(font: Font) -> str | None:
    """The name matplotlib knows the language's font by, None if there is none. Every file of the
    font on this machine (each weight: regular, bold, ...) is added to matplotlib's font list that
    its cache lacks: a cache built before the font, or before some of its weights, was installed
    would otherwise draw bold text from another weight, or log a "findfont" warning. A matplotlib
    older than 3.11 reads only the first face of a font collection (Noto Sans CJK's .ttc files: the
    Japanese face, which has the same ideographs): then that face's name is the one to draw with."""
    if font.family in _found:
        return _found[font.family]
    from matplotlib import font_manager

    manager = font_manager.fontManager

    def files_of_the_font():
        return [f for f in manager.ttflist if Path(f.fname).name.startswith(font.files)]

    listed = {os.path.realpath(f.fname) for f in files_of_the_font()}  # its files known
    for path in sorted(font_manager.findSystemFonts()):
        if Path(path).name.startswith(font.files) and os.path.realpath(path) not in listed:
            try:
                manager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # a file FreeType cannot read: the others serve
                continue
    if any(f.name == font.family for f in manager.ttflist):
        name = font.family
    else:  # a collection read by its first face only, or no file of the font at all
        faces = sorted({f.name for f in files_of_the_font()})
        if not faces:
            return None  # not found is asked again: the font may be installed while the kernel runs
        name = faces[0]
    _found[font.family] = name
    return name


def figure_fonts() -> dict[str, object]:
    """matplotlib settings for the lab's figures in the current language: its font (languages.toml)
    behind DejaVu Sans, so that Latin text looks the same in every language. Use with ``rc_context``.

    >>> language("en"); figure_fonts()
    'en'
    {}
    """
    font = LANGUAGES[language()].font
    if font is None:
        return {}
    family = _family(font)
    if family is None:  # language() checked it; the font was removed since
        return {}
    return {"font.family": ["DejaVu Sans", family]}


def figure_text(build: Callable[P, R]) -> Callable[P, R]:
    """Decorate a function that builds a matplotlib figure, so that its text is drawn with the
    current language's fonts (matplotlib fixes a text's font when the text is made)."""

    @functools.wraps(build)
    def building(*args: P.args, **kwargs: P.kwargs) -> R:
        with FIGURES:
            fonts = figure_fonts()
            if not fonts:  # English: matplotlib's own settings, without copying them back and forth
                return build(*args, **kwargs)
            from matplotlib import rc_context

            with rc_context(fonts):  # type: ignore[arg-type]
                return build(*args, **kwargs)

    return building

