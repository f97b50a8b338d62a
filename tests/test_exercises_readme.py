"""README's exercise table is true: it lists every exercise of autograd_lab.exercises(), each with
its title and the lessons that use it (read off the notebooks), grouped by its own lesson (the
first of 01 to 09 that uses it, lesson 04 being the mixed practice set).
`python tests/test_exercises_readme.py` prints the table to paste."""
import re
from pathlib import Path

import autograd_lab

ROOT = Path(__file__).resolve().parents[1]
USES = re.compile(r'exercise\(\\?"(\w+)\\?"|%exercise (\w+)')


def lessons_using() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for a, b in USES.findall(path.read_text()):
            lessons = found.setdefault(a or b, [])
            if path.name[:2] not in lessons:
                lessons.append(path.name[:2])
    return found


def exercise_table() -> str:
    used = lessons_using()
    rows = []
    for place, e in enumerate(autograd_lab.exercises()):
        lessons = used.get(e.name, [])
        own = [n for n in lessons if "01" <= n <= "09" and n != "04"]  # 04 is the mixed practice set
        first = (own or [n for n in lessons if n != "00"] or ["--"])[0]
        rows.append((first, place, f"| {first} | `{e.name}` | {e.title} | {', '.join(lessons)} |"))
    head = "| lesson | exercise | what it asks | used in lessons |\n|---|---|---|---|\n"
    return head + "\n".join(row for _, _, row in sorted(rows))


def test_every_exercise_is_used_in_a_lesson():
    used = lessons_using()
    assert [e.name for e in autograd_lab.exercises() if not used.get(e.name)] == []
    for lesson in ("01", "02", "03", "04", "05", "06", "07", "08", "09"):
        assert any(lesson in found for found in used.values()), lesson


def test_readme_lists_every_exercise_by_lesson():
    readme = (ROOT / "README.md").read_text()
    assert exercise_table() in readme


if __name__ == "__main__":
    print(exercise_table())
