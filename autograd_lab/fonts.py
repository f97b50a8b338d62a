"""Fonts for the lab's figures: in Chinese, a CJK font behind DejaVu, so that no glyph is missing
(matplotlib warns of a missing glyph, and a warning fails a strict nbval cell)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

from .i18n import language

P = ParamSpec("P")
R = TypeVar("R")


_found: list[str] = []  # the family once found (the font list changes only by the addfont below)


def _cjk_family() -> str | None:
    """The name matplotlib knows the installed Noto Sans CJK by (Debian's fonts-noto-cjk), added to
    its font list if its cache was built before the font was installed; None if there is none."""
    if _found:
        return _found[0]
    from matplotlib import font_manager

    def known() -> str | None:
        names = sorted(f.name for f in font_manager.fontManager.ttflist if f.name.startswith("Noto Sans CJK"))
        return "Noto Sans CJK SC" if "Noto Sans CJK SC" in names else (names[0] if names else None)

    if known() is None:
        for path in sorted(font_manager.findSystemFonts()):
            if "NotoSansCJK-Regular" in Path(path).name:
                font_manager.fontManager.addfont(path)
    family = known()
    if family is not None:  # not found is asked again: the font may be installed while the kernel runs
        _found.append(family)
    return family


def figure_fonts() -> dict[str, object]:
    """matplotlib settings for the lab's figures in the current language: in Chinese, a CJK font
    behind DejaVu (so Latin text looks the same in both languages). Use with ``rc_context``.

    >>> language("en"); figure_fonts()
    'en'
    {}
    """
    if language() == "en":
        return {}
    family = _cjk_family()
    if family is None:  # language("zh") checked it; the font was removed since
        return {}
    return {"font.family": ["DejaVu Sans", family]}


def figure_text(build: Callable[P, R]) -> Callable[P, R]:
    """Decorate a function that builds a matplotlib figure, so that its text is drawn with the
    current language's fonts (matplotlib fixes a text's font when the text is made)."""

    @functools.wraps(build)
    def building(*args: P.args, **kwargs: P.kwargs) -> R:
        fonts = figure_fonts()
        if not fonts:  # English: matplotlib's own settings, without copying them back and forth
            return build(*args, **kwargs)
        from matplotlib import rc_context

        with rc_context(fonts):  # type: ignore[arg-type]
            return build(*args, **kwargs)

    return building

