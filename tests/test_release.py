"""What a release carries, checked in the checkout (the built artifacts themselves: test_release_build.py).

- One version: autograd_lab/__init__.py is the source (hatch reads it); CITATION.cff, the image's tag
  in deploy/ and the Dockerfile's build lines say the same.
- The build hook (hatch_build.py) compiles every catalog to the .mo that gettext reads, rewrites none
  that would not change, and picks the learners' lessons, never the teachers'.
- `python -m autograd_lab course` (autograd_lab/course.py): copies the lessons and their record,
  updates the lessons the learner left alone, keeps every one they changed, and refuses bad input
  with a short message, changing nothing.
- Each lesson's first code cell says in one line how to install the lab when it is missing, and
  nothing when it is there.
"""
from __future__ import annotations

import ast
import gettext
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import types
from pathlib import Path

import nbformat
import pytest

import autograd_lab
from autograd_lab import course
from autograd_lab.__main__ import main
from autograd_lab.errors import LabInputError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LEARNERS = {"en": sorted(NOTEBOOKS.glob("[0-9]*.ipynb")), "zh": sorted((NOTEBOOKS / "zh").glob("[0-9]*.ipynb"))}


def hatch_build():
    """The build hook's module. Outside a build hatchling may be missing (the lab's venv does not need
    it): then its one import, the base class, is stood in for; the functions tested need nothing of it."""
    saved = {}
    if importlib.util.find_spec("hatchling") is None:
        names = ["hatchling", "hatchling.builders", "hatchling.builders.hooks", "hatchling.builders.hooks.plugin",
                 "hatchling.builders.hooks.plugin.interface"]
        for name in names:
            saved[name] = sys.modules.get(name)
            sys.modules[name] = types.ModuleType(name)
        sys.modules[names[-1]].BuildHookInterface = object  # type: ignore[attr-defined]
    try:
        spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for name, old in saved.items():
            if old is None:
                del sys.modules[name]
            else:
                sys.modules[name] = old
    return module


# -- one version -------------------------------------------------------------------------------------

def source_version() -> str:
    """The version as hatch reads it: the __version__ assignment of autograd_lab/__init__.py."""
    match = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "autograd_lab" / "__init__.py").read_text(), re.M)
    assert match, "autograd_lab/__init__.py has no __version__ line"
    return match.group(1)


def test_the_version_is_written_once_and_every_other_place_agrees():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "autograd_lab/__init__.py"
    version = source_version()
    assert autograd_lab.__version__ == version
    cff = re.search(r'^version: "([^"]+)"$', (ROOT / "CITATION.cff").read_text(), re.M)
    assert cff and cff.group(1) == version, "CITATION.cff's version differs from autograd_lab/__init__.py's"
    tag = re.search(r'^\s+tag: "([^"]+)"$', (ROOT / "deploy" / "values.yaml").read_text(), re.M)
    assert tag and tag.group(1) == version, "deploy/values.yaml's image tag differs from the package's version"
    tags = re.findall(r"autograd-lab-singleuser:(\S+)", (ROOT / "deploy" / "Dockerfile").read_text())
    assert tags and set(tags) == {version}, f"deploy/Dockerfile builds {sorted(set(tags))}, not {version}"
    assert f"## {version} " in (ROOT / "CHANGELOG.md").read_text(), "CHANGELOG.md has no entry for this version"


def test_the_package_metadata_names_its_audience_and_licence():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for classifier in ("Framework :: Jupyter", "Intended Audience :: Education",
                       "Topic :: Scientific/Engineering :: Artificial Intelligence",
                       "License :: OSI Approved :: MIT License", "Programming Language :: Python :: 3.11"):
        assert classifier in project["classifiers"]
    assert project["license-files"] == ["LICENSE"] and (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Copyright (c) 2026 the autograd_lab authors" in (ROOT / "LICENSE").read_text()
    build = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert any(r.lower().startswith("babel") for r in build), "the build compiles the catalogs with Babel"


# -- the build hook ----------------------------------------------------------------------------------

def test_the_hook_compiles_every_catalog_to_what_gettext_reads(tmp_path):
    locale = tmp_path / "autograd_lab" / "locale"
    shutil.copytree(ROOT / "autograd_lab" / "locale", locale, ignore=shutil.ignore_patterns("*.mo"))
    written = hatch_build().compile_catalogs(tmp_path)
    pos = sorted(locale.glob("*/LC_MESSAGES/*.po"))
    assert written == [p.with_suffix(".mo").relative_to(tmp_path).as_posix() for p in pos] and pos
    from babel.messages.pofile import read_po  # the oracle: Babel's own reading of each .po
    for po in pos:
        with po.open("rb") as f:
            catalog = read_po(f)
        translated = next(m for m in catalog if m.id and isinstance(m.id, str) and m.string and not m.fuzzy)
        with po.with_suffix(".mo").open("rb") as f:
            assert gettext.GNUTranslations(f).gettext(translated.id) == translated.string, po.name


def test_the_hook_rewrites_no_catalog_that_would_not_change_and_refuses_an_empty_locale(tmp_path):
    shutil.copytree(ROOT / "autograd_lab" / "locale", tmp_path / "autograd_lab" / "locale",
                    ignore=shutil.ignore_patterns("*.mo"))
    hook = hatch_build()
    hook.compile_catalogs(tmp_path)
    mo = next((tmp_path / "autograd_lab" / "locale").glob("*/LC_MESSAGES/core.mo"))
    os.utime(mo, (1_000_000, 1_000_000))
    hook.compile_catalogs(tmp_path)
    assert mo.stat().st_mtime == 1_000_000, "an unchanged catalog was written again (make would rebuild it)"
    mo.write_bytes(b"stale")
    hook.compile_catalogs(tmp_path)
    assert mo.read_bytes() != b"stale"
    with pytest.raises(RuntimeError, match="no catalog"):
        hook.compile_catalogs(tmp_path / "elsewhere")


def test_the_hook_takes_the_learners_lessons_and_never_the_teachers(tmp_path):
    for name in ("notebooks/00_a.ipynb", "notebooks/zh/00_a.ipynb", "notebooks/teachers/solutions.ipynb",
                 "notebooks/teachers/01_answers.ipynb", "autograd_lab/locale/zh/LC_MESSAGES/core.po",
                 "notebooks/zh/teachers/solutions.ipynb", "notebooks/zh/teachers/01_b.ipynb",
                 "notebooks/.ipynb_checkpoints/00_a-checkpoint.ipynb", "notebooks/sanitize.cfg"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert hatch_build().lessons(tmp_path) == ["notebooks/00_a.ipynb", "notebooks/zh/00_a.ipynb"]
    real = hatch_build().lessons(ROOT)
    assert real == sorted(p.relative_to(ROOT).as_posix() for p in LEARNERS["en"] + LEARNERS["zh"])
    assert not any("teachers" in p for p in real) and len(LEARNERS["en"]) == len(LEARNERS["zh"]) > 0


# -- python -m autograd_lab course -------------------------------------------------------------------

def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.exists() else {}


def test_the_course_is_copied_with_a_record_of_each_lesson(tmp_path):
    outcome = course.copy_course(tmp_path / "c", "en")
    assert outcome.copied == [p.name for p in LEARNERS["en"]] and not outcome.kept
    for lesson in LEARNERS["en"]:
        assert (tmp_path / "c" / lesson.name).read_bytes() == lesson.read_bytes()
    record = json.loads((tmp_path / "c" / course.MANIFEST).read_text())
    assert record["language"] == "en" and record["version"] == autograd_lab.__version__
    assert record["files"] == {p.name: sha(p) for p in LEARNERS["en"]}
    zh = course.copy_course(tmp_path / "z", "zh_CN")
    assert zh.code == "zh" and all((tmp_path / "z" / p.name).read_bytes() == p.read_bytes() for p in LEARNERS["zh"])
    assert snapshot(tmp_path / "c").keys() == {course.MANIFEST} | {p.name for p in LEARNERS["en"]}


def test_a_second_copy_updates_untouched_lessons_and_keeps_changed_ones(tmp_path, monkeypatch):
    source = tmp_path / "release"
    source.mkdir()
    for name in ("00_a.ipynb", "01_b.ipynb", "02_c.ipynb", "03_d.ipynb"):
        (source / name).write_text(f"{name} v1")
    monkeypatch.setattr(course, "lessons", lambda code: sorted(source.glob("*.ipynb")))
    target = tmp_path / "mine"
    target.mkdir()
    (target / "03_d.ipynb").write_text("the learner's own file, there first")
    first = course.copy_course(target, "en")
    assert first.copied == ["00_a.ipynb", "01_b.ipynb", "02_c.ipynb"] and first.kept == ["03_d.ipynb"]
    # a new release changes every lesson; the learner edited 01 and deleted 02
    for name in ("00_a.ipynb", "01_b.ipynb", "02_c.ipynb", "03_d.ipynb"):
        (source / name).write_text(f"{name} v2")
    (target / "01_b.ipynb").write_text("my notes")
    (target / "02_c.ipynb").unlink()
    second = course.copy_course(target, "en")
    assert second.updated == ["00_a.ipynb"] and second.copied == ["02_c.ipynb"]
    assert second.kept == ["01_b.ipynb", "03_d.ipynb"]
    assert [(target / n).read_text() for n in ("00_a.ipynb", "02_c.ipynb")] == ["00_a.ipynb v2", "02_c.ipynb v2"]
    assert (target / "01_b.ipynb").read_text() == "my notes"
    assert (target / "03_d.ipynb").read_text() == "the learner's own file, there first"
    text = course.report(second)
    assert "Kept 2 lessons" in text and "01_b.ipynb, 03_d.ipynb" in text and "Updated 1 lesson " in text
    # an edited lesson stays the learner's on every later run, also when the course has not changed
    third = course.copy_course(target, "en")
    assert third.kept == ["01_b.ipynb", "03_d.ipynb"] and third.unchanged == ["00_a.ipynb", "02_c.ipynb"]
    # a learner's file equal to the course's is the course's again
    (target / "03_d.ipynb").write_text("03_d.ipynb v2")
    assert course.copy_course(target, "en").kept == ["01_b.ipynb"]
    assert not [p for p in target.iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize("setup, lang, says", [
    (lambda d: (d / "c").write_text("a file"), "en", "is a file, not a folder"),
    (lambda d: ((d / "c").mkdir(), (d / "c" / course.MANIFEST).write_text("{not json")), "en", "cannot be read"),
    (lambda d: ((d / "c").mkdir(), (d / "c" / course.MANIFEST).write_text('{"files": []}')), "en", "cannot be read"),
    (lambda d: ((d / "c").mkdir(), (d / "c" / course.MANIFEST).write_text('{"language": "en", "files": {}}')), "zh",
     "holds the course in English"),
    (lambda d: None, "fr", "The course exists in English, 中文: type --lang en or --lang zh, not 'fr'"),
    (lambda d: None, "x" * 5000, "characters"),
])
def test_bad_input_is_one_short_message_and_changes_nothing(tmp_path, setup, lang, says):
    setup(tmp_path)
    before = snapshot(tmp_path / "c") if (tmp_path / "c").is_dir() else None
    with pytest.raises(LabInputError) as err:
        course.copy_course(tmp_path / "c", lang)
    assert says in str(err.value) and len(str(err.value)) < 500 and "\n" not in str(err.value)
    if before is not None:
        assert snapshot(tmp_path / "c") == before
    else:
        assert not (tmp_path / "c").is_dir()


def test_a_folder_in_place_of_a_lesson_is_kept_and_a_folder_it_cannot_make_is_a_short_message(tmp_path):
    (tmp_path / "c" / "00_start_here.ipynb").mkdir(parents=True)  # whatever stands where a lesson goes is theirs
    outcome = course.copy_course(tmp_path / "c", "en")
    assert outcome.kept == ["00_start_here.ipynb"] and (tmp_path / "c" / "00_start_here.ipynb").is_dir()
    (tmp_path / "a file").write_text("x")
    with pytest.raises(LabInputError, match="could not be copied into") as err:
        course.copy_course(tmp_path / "a file" / "deeper", "en")
    assert "\n" not in str(err.value) and (tmp_path / "a file").read_text() == "x"


def test_the_command_line_copies_says_what_it_did_and_refuses_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["course"]) == 0
    out = capsys.readouterr().out
    assert f"Copied {len(LEARNERS['en'])} lessons of the course in English into autograd_lab_course" in out
    assert (tmp_path / "autograd_lab_course" / course.MANIFEST).is_file()
    assert main(["course", "zh_course", "--lang", "zh"]) == 0
    assert (tmp_path / "zh_course" / LEARNERS["zh"][0].name).read_bytes() == LEARNERS["zh"][0].read_bytes()
    capsys.readouterr()
    assert main(["course", "autograd_lab_course", "--lang", "zh"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "python -m autograd_lab course autograd_lab_course_zh --lang zh" in err
    with pytest.raises(SystemExit) as code:
        main(["course", "-h"])
    assert code.value.code == 0 and "--lang CODE" in capsys.readouterr().out
    assert main([]) == 2 and "course" in capsys.readouterr().err


def test_the_lessons_come_from_the_checkout_in_an_editable_install_and_never_include_the_teachers():
    assert course.lessons("en") == LEARNERS["en"] and course.lessons("zh") == LEARNERS["zh"]
    assert not any("teachers" in p.parts for p in course.lessons("en") + course.lessons("zh"))


# -- each lesson's first cell ------------------------------------------------------------------------

def first_code(path: Path) -> str:
    return next(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")


def check_part(source: str) -> str:
    """The lines of a first cell before its first magic: the plain Python that checks the install."""
    lines = source.splitlines()
    return "\n".join(lines[:next(i for i, line in enumerate(lines) if line.startswith("%"))])


LESSONS = [p for code in ("en", "zh") for p in LEARNERS[code]]


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.relative_to(NOTEBOOKS).as_posix())
def test_each_lesson_says_in_one_line_how_to_install_the_lab_when_it_is_missing(path, tmp_path):
    source = first_code(path)
    check = check_part(source)
    assert source.startswith(check) and "%load_ext autograd_lab" in source
    ast.parse(check)
    assert not re.search(r"pip\s+install\s+(-\S+\s+)*autograd[_-]lab\b", source), "autograd_lab on PyPI is not ours"
    # a Python without the lab (no site-packages, run from an empty folder): one line that says how
    missing = subprocess.run([sys.executable, "-S", "-I", "-c", check], capture_output=True, text=True,
                             cwd=tmp_path, timeout=60)
    last = missing.stderr.strip().splitlines()[-1]
    assert missing.returncode == 1 and last.startswith("ModuleNotFoundError: ")
    assert "%pip install <" in last and "wheel" in last and len(last) < 300
    if "/zh/" in path.as_posix():
        assert "内核" in last
    # with the lab there, the check prints nothing and raises nothing
    present = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert present.returncode == 0 and present.stdout == present.stderr == ""


def test_the_course_command_speaks_chinese(zh, tmp_path, capsys):
    from helpers import assert_chinese

    names = [p.name for p in LEARNERS["zh"]]
    assert main(["course", str(tmp_path / "c"), "--lang", "zh"]) == 0
    (tmp_path / "c" / names[1]).write_text("我的笔记")
    assert main(["course", str(tmp_path / "c"), "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert_chinese(out, allowed=(str(tmp_path / "c"), *names, "jupyter lab", "VS Code", "Colab"))
    assert "保留了 1 课" in out and names[1] in out
    for argv in (["course", str(tmp_path / "c"), "--lang", "en"], ["course", str(tmp_path / "c"), "--lang", "fr"]):
        assert main(argv) == 2
        assert_chinese(capsys.readouterr().err, allowed=("python -m autograd_lab course", str(tmp_path / "c"),
                                                         "--lang en", "--lang zh", "English"))
