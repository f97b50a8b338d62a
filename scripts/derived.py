"""The files that are derived from the code and the lessons, written again from them.

    .venv/bin/python scripts/derived.py          # write them (make derived)
    .venv/bin/python scripts/derived.py --check  # say which are out of date; exit 1 if any is

What is derived, and from what:
- autograd_lab/practice/lessons.toml: each lesson's exercises (the lesson an exercise names in its
  register() call) in the order the lesson's English notebook first uses them; the bank's order;
- the exercise tables of the teachers' page, docs/teachers.md and docs/zh/teachers.md (between
  their `exercises` markers): every exercise of the bank in course order, its title in that page's
  language and the lessons that use it.
An exercise that its own lesson never uses is an error, named with what to do.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NOTEBOOKS = ROOT / "notebooks"
LESSONS_FILE = ROOT / "autograd_lab" / "practice" / "lessons.toml"
USES = re.compile(r'exercise\(\s*["\'](\w+)["\']|%exercise\s+(\w+)')
# The pages that hold an exercise table: (the language of its titles, the table's head)
TABLES = {"docs/teachers.md": ("en", "| lesson | exercise | what it asks | used in lessons |"),
          "docs/zh/teachers.md": ("zh", "| 课 | 练习 | 问的是什么 | 用在哪些课 |")}
START, END = "<!-- exercises: made by scripts/derived.py from the bank and the lessons -->", "<!-- /exercises -->"


def lessons() -> dict[int, Path]:
    """The English lesson notebooks by number (00_start_here.ipynb is 0)."""
    return {int(p.name[:2]): p for p in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))}


def uses(path: Path) -> list[str]:
    """The exercises a notebook builds, in the order its code cells first do."""
    found: list[str] = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            for a, b in USES.findall("".join(cell["source"])):
                if (a or b) not in found:
                    found.append(a or b)
    return found


def lessons_toml() -> str:
    from autograd_lab.practice.registry import _REGISTERED
    import autograd_lab.practice.bank  # noqa: F401  (registers every exercise)

    found = lessons()
    order = {n: uses(p) for n, p in found.items()}
    lines = ["# Made by scripts/derived.py (make derived) from the lessons: do not edit. Each lesson's",
             "# exercises (the lesson an exercise names when it registers) in the order its notebook first",
             "# uses them, which is the order of the bank.", "", "[lessons]"]
    problems = []
    for n in sorted({e.lesson for e in _REGISTERED}):
        mine = {e.name for e in _REGISTERED if e.lesson == n}
        missing = sorted(mine - set(order.get(n, [])))
        problems += [f"{name}: registered for lesson {n:02d}, which never builds it; use it there "
                     f"(autograd_lab.exercise(\"{name}\")) or register it for the lesson that does"
                     for name in missing]
        listed = ", ".join(f'"{name}"' for name in order.get(n, []) if name in mine)
        lines.append(f'{n:02d} = [{listed}]')
    if problems:
        raise SystemExit("\n".join(problems))
    return "\n".join(lines) + "\n"


def exercise_table(code: str, head: str) -> str:
    from autograd_lab import i18n
    from autograd_lab.practice.bank import catalog

    used: dict[str, list[str]] = {}
    for n, path in lessons().items():
        for name in uses(path):
            used.setdefault(name, []).append(f"{n:02d}")
    before = i18n.language()
    i18n.language(code)
    try:
        rows = [f"| {e.lesson:02d} | `{e.name}` | {i18n._(e.title)} | {', '.join(used.get(e.name, []))} |"
                for e in catalog()]
    finally:
        i18n.language(before)
    return "\n".join([head, "|---|---|---|---|", *rows])


def with_table(name: str) -> str:
    """The page `name` (a path from the repository's root) with its exercise table made again."""
    code, head = TABLES[name]
    text = (ROOT / name).read_text(encoding="utf-8")
    start, end = text.index(START) + len(START), text.index(END)
    return text[:start] + "\n" + exercise_table(code, head) + "\n" + text[end:]


def stale() -> list[str]:
    """The derived files whose text is not what the code and the lessons give."""
    files = {LESSONS_FILE: lessons_toml(), **{ROOT / name: with_table(name) for name in TABLES}}
    return [str(p.relative_to(ROOT)) for p, text in files.items()
            if not p.exists() or p.read_text(encoding="utf-8") != text]


def write() -> None:
    LESSONS_FILE.write_text(lessons_toml(), encoding="utf-8")
    from autograd_lab.practice import registry

    registry.lesson_order.cache_clear()  # the bank's order from the file just written
    for name in TABLES:
        (ROOT / name).write_text(with_table(name), encoding="utf-8")


if __name__ == "__main__":
    if "--check" in sys.argv:
        out = stale()
        print("\n".join(f"{p}: out of date; run `make derived`" for p in out) or "every derived file is current")
        sys.exit(1 if out else 0)
    write()
