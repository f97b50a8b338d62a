"""The course outside the repository: ``python -m autograd_lab course [DIR] [--lang zh]`` copies the
learners' lessons of one language into a folder of the learner's (``autograd_lab_course`` unless
named), and records what it copied in a small manifest beside them (``.autograd_lab_course.json``:
the course's language, the lab's version and each lesson's SHA-256 as copied).

Running it again brings the lessons the learner has not changed up to date and never overwrites one
they changed (or a file of theirs that was there first): it says which it kept. A deleted lesson is
copied again. The lessons come from the installed package (the wheel carries them as
``autograd_lab/notebooks/``, hatch_build.py) or, for an editable install, from the checkout's
``notebooks/``; the teachers' solutions are never among them.

Nothing of a lesson is run or read as code: files are copied byte for byte.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .errors import LabInputError
from .format import message, quote
from .i18n import _, language, ngettext
from .languages import LANGUAGES

DEFAULT_FOLDER = "autograd_lab_course"
MANIFEST = ".autograd_lab_course.json"
PACKAGE = Path(__file__).resolve().parent
MANIFEST_LIMIT = 1_000_000  # bytes: a record of a dozen lessons is a few KB; anything larger is not ours


@dataclass
class Outcome:
    """What one run did, lesson by lesson (file names, in the course's order)."""

    folder: Path
    code: str
    copied: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def course_code(value: str | None) -> str:
    """The language a --lang value names ('zh', 'ZH', 'zh_CN', 'zh-Hans' -> 'zh'); None: the lab's own."""
    if value is None:
        return language()
    text = value.strip().lower()
    for code, lang in LANGUAGES.items():
        if text == code or text in (a.lower() for a in lang.aliases):
            return code
    head = text.replace("-", "_").split("_")[0]
    if head in LANGUAGES:
        return head
    raise LabInputError(_(
        "The course exists in {languages}: type {examples}, not {given}. Nothing was copied."
    ).format(languages=_(", ").join(lang.name for lang in LANGUAGES.values()),
             examples=_(" or ").join(f"--lang {c}" for c in LANGUAGES), given=quote(repr(value))))


def lessons(code: str) -> list[Path]:
    """The learners' lessons of a language, in order: the installed package's copy, else the checkout's."""
    for base in (PACKAGE / "notebooks", PACKAGE.parent / "notebooks"):
        if base.parent != PACKAGE and not (base.parent / "pyproject.toml").is_file():
            continue  # a folder named notebooks beside an installed package is not the course
        folder = base if code == "en" else base / code
        found = sorted(p for p in folder.glob("[0-9]*.ipynb") if p.is_file())
        if found:
            return found
    raise LabInputError(_(
        "This installation of autograd_lab holds no lessons in {language}: install it from the course's "
        "wheel or a checkout of its repository (pip install <path to the wheel or checkout>)."
    ).format(language=LANGUAGES[code].name))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_manifest(folder: Path) -> dict:
    """The record of an earlier copy into the folder ({} if there was none)."""
    path = folder / MANIFEST
    if not path.exists():
        return {}
    try:
        if path.stat().st_size > MANIFEST_LIMIT:
            raise ValueError("too large")
        record = json.loads(path.read_text(encoding="utf-8"))
        if not (isinstance(record, dict) and isinstance(record.get("files", {}), dict)
                and isinstance(record.get("language", "en"), str)):
            raise ValueError("not a record of lessons")
    except (OSError, ValueError) as err:
        raise LabInputError(_(
            "The record of the course in {folder} cannot be read ({problem}): delete {manifest} and run "
            "the command again (your lessons are then kept as they are). Nothing was copied."
        ).format(folder=quote(str(folder)), problem=quote(message(err), 120), manifest=MANIFEST)) from None
    return record


def _write(path: Path, data: bytes) -> None:
    """Write a file whole or not at all (a partial copy never replaces a lesson)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()


def _current(path: Path) -> bytes | None:
    """The bytes of a lesson the folder holds (None: none there; b"" stands for a folder in its place)."""
    if not path.exists() and not path.is_symlink():
        return None
    return path.read_bytes() if path.is_file() else b""


def _check_folder(folder: Path) -> None:
    if folder.exists() and not folder.is_dir():
        raise LabInputError(_(
            "{folder} is a file, not a folder: name a folder for the course "
            "(python -m autograd_lab course FOLDER). Nothing was copied."
        ).format(folder=quote(str(folder))))


def copy_course(folder: str | os.PathLike, lang: str | None = None) -> Outcome:
    """Copy the learners' lessons of one language into folder (made if missing); see the module's text."""
    code = course_code(lang)
    target = Path(folder)
    _check_folder(target)
    sources = lessons(code)
    record = read_manifest(target) if target.is_dir() else {}
    had = record.get("language", code) if record else code
    if had != code:
        other = f"{str(target).rstrip('/')}_{code}"
        raise LabInputError(_(
            "{folder} holds the course in {had}: copy the one in {wanted} into another folder "
            "(python -m autograd_lab course {other} --lang {code}). Nothing was copied."
        ).format(folder=quote(str(target)), had=LANGUAGES[had].name if had in LANGUAGES else quote(had),
                 wanted=LANGUAGES[code].name, other=quote(other), code=code))
    recorded = {k: v for k, v in record.get("files", {}).items() if isinstance(k, str) and isinstance(v, str)}
    outcome = Outcome(target, code)
    try:
        target.mkdir(parents=True, exist_ok=True)
        files = dict(recorded)
        for source in sources:
            name, new = source.name, source.read_bytes()
            path = target / name
            there = _current(path)
            if there is None:
                _write(path, new)
                outcome.copied.append(name)
            elif there == new:
                outcome.unchanged.append(name)
            elif name in recorded and path.is_file() and digest(there) == recorded[name]:
                _write(path, new)  # the learner left it as copied: bring it up to date
                outcome.updated.append(name)
            else:
                outcome.kept.append(name)  # theirs: changed since the copy, or there before it
                continue
            files[name] = digest(new)
        manifest = {"course": "autograd_lab", "version": __version__, "language": code, "files": files}
        _write(target / MANIFEST, (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode())
    except OSError as err:
        raise LabInputError(_(
            "The course could not be copied into {folder}: {problem}. Choose a folder you can write to "
            "(python -m autograd_lab course FOLDER)."
        ).format(folder=quote(str(target)), problem=quote(message(err), 200))) from None
    return outcome


def _names(names: list[str]) -> str:
    """The first lessons' names and how many more (a run's report stays a few lines long)."""
    shown = names[:4]
    more = len(names) - len(shown)
    listed = _(", ").join(shown)
    return listed if not more else _("{names} and {n} more").format(names=listed, n=more)


def report(outcome: Outcome) -> str:
    """What a run did, in a few lines (the same for the same run: no time, no absolute path added)."""
    folder = quote(str(outcome.folder))
    lines = []
    if outcome.copied:
        lines.append(ngettext("Copied {n} lesson of the course in {language} into {folder}: {names}.",
                              "Copied {n} lessons of the course in {language} into {folder}: {names}.",
                              len(outcome.copied)).format(
            n=len(outcome.copied), language=LANGUAGES[outcome.code].name, folder=folder,
            names=_names(outcome.copied)))
    if outcome.updated:
        lines.append(ngettext("Updated {n} lesson you had not changed: {names}.",
                              "Updated {n} lessons you had not changed: {names}.", len(outcome.updated)).format(
            n=len(outcome.updated), names=_names(outcome.updated)))
    if outcome.kept:
        lines.append(ngettext(
            "Kept {n} lesson as you have it (changed since it was copied, or yours already): {names}. "
            "To get the course's version, rename yours and run the command again.",
            "Kept {n} lessons as you have them (changed since they were copied, or yours already): {names}. "
            "To get the course's version, rename yours and run the command again.",
            len(outcome.kept)).format(n=len(outcome.kept), names=_names(outcome.kept)))
    if outcome.unchanged:
        lines.append(ngettext("{n} lesson was already up to date.", "{n} lessons were already up to date.",
                              len(outcome.unchanged)).format(n=len(outcome.unchanged)))
    lines.append(_("Open the folder in Jupyter (jupyter lab {folder}), VS Code or Colab and start with "
                   "00_start_here.ipynb.").format(folder=folder))
    return "\n".join(lines)
