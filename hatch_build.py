"""The build hook of autograd_lab (hatchling runs it for the sdist, the wheel and an editable install).

1. The catalogs: every ``autograd_lab/locale/<code>/LC_MESSAGES/<room>.po`` is compiled with Babel to
   the ``.mo`` beside it, which the lab reads at run time. The ``.mo`` files are not committed (they
   are built, like ``make catalogs`` does in the edit loop), so the build makes them itself: from a
   fresh clone, from an unpacked sdist (the wheel is built from the sdist) and for ``pip install -e .``
   (whose package is the checkout itself, so the ``.mo`` files are written there). A file whose bytes
   would not change is not rewritten, so make's timestamps stay true.
2. The course: the learners' lessons, ``notebooks/NN_*.ipynb`` and ``notebooks/<code>/NN_*.ipynb``
   (never the teachers' solutions in ``teachers/``), go into the wheel as
   ``autograd_lab/notebooks/...``, from the one copy in ``notebooks/``; ``python -m autograd_lab
   course`` copies them out (``autograd_lab/course.py``). An editable install reads them from the
   checkout instead.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

LOCALE = "autograd_lab/locale"

def compile_catalogs(root: Path) -> list[str]:
    """Compile every .po under the locale folder to its .mo; return the .mo paths, relative to root."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for po in sorted((root / LOCALE).glob("*/LC_MESSAGES/*.po")):
        with po.open("rb") as f:
            catalog = read_po(f, locale=po.parts[-3])
        buffer = io.BytesIO()
        write_mo(buffer, catalog)
        mo = po.with_suffix(".mo")
        if not mo.is_file() or mo.read_bytes() != buffer.getvalue():
            partial = mo.with_name(f".{mo.name}.{os.getpid()}")
            partial.write_bytes(buffer.getvalue())
            os.replace(partial, mo)  # a kernel reading the catalog never sees half a file
        written.append(mo.relative_to(root).as_posix())
    if not written:
        raise RuntimeError(f"no catalog (.po) found under {LOCALE}: the build would lose every translation")
    return written


def lessons(root: Path) -> list[str]:
    """The learners' notebooks, relative to root: the numbered lessons of notebooks/ (English) and of
    notebooks/<code>/ for each language with catalogs; never a teachers' folder or Jupyter's checkpoints."""
    codes = sorted(p.name for p in (root / LOCALE).glob("*") if p.is_dir())
    folders = [root / "notebooks"] + [root / "notebooks" / code for code in codes]
    found = [p.relative_to(root).as_posix() for folder in folders for p in sorted(folder.glob("[0-9]*.ipynb"))]
    if not found:
        raise RuntimeError("no lesson found under notebooks/: the wheel would carry no course")
    return found

class CustomBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        root = Path(self.root)
        build_data["artifacts"].extend(compile_catalogs(root))
        if self.target_name == "wheel" and version != "editable":
            for path in lessons(root):
                build_data["force_include"][path] = "autograd_lab/" + path
