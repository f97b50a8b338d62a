"""The derived files (scripts/derived.py: the bank's order in lessons.toml, the exercise tables of
the teachers' page in both languages) are what the code and the lessons give, and the derivation refuses an
exercise that its own lesson never uses."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def derived():
    spec = importlib.util.spec_from_file_location("derived", ROOT / "scripts" / "derived.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_derived_file_is_current(derived):
    assert derived.stale() == [], "run `make derived` and commit what it wrote"


def test_the_bank_is_in_course_order(derived):
    """By lesson, and inside a lesson in the order its notebook first builds its exercises."""
    import autograd_lab

    entries = list(autograd_lab.exercises())
    assert [e.lesson for e in entries] == sorted(e.lesson for e in entries)
    for n, path in derived.lessons().items():
        mine = [e.name for e in entries if e.lesson == n]
        assert mine == [name for name in derived.uses(path) if name in mine], n


def test_an_exercise_its_lesson_never_uses_is_refused(derived):
    from autograd_lab.practice import registry

    registry.register("never_used", "Never used", lesson=3)(lambda seed=None: None)
    try:
        with pytest.raises(SystemExit, match="never_used: registered for lesson 03"):
            derived.lessons_toml()
    finally:
        registry._REGISTERED.pop()


def test_the_teachers_table_names_every_exercise_once(derived):
    import autograd_lab

    for name in derived.TABLES:
        text = (ROOT / name).read_text(encoding="utf-8")
        table = text[text.index(derived.START):text.index(derived.END)]
        for e in autograd_lab.exercises():
            assert table.count(f"| `{e.name}` |") == 1, (name, e.name)
