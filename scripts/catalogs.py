"""The lab's message catalogs, with Babel: extract the sentences from the code, compile them, check them.

    .venv/bin/python scripts/catalogs.py extract [room ...]  # update .po files from the code (keeps translations)
    .venv/bin/python scripts/catalogs.py untranslated ROOM > todo.json   # {sentence: ""} still to translate
    .venv/bin/python scripts/catalogs.py fill ROOM todo.json             # write translations into ROOM's .po
    .venv/bin/python scripts/catalogs.py compile   # .po -> .mo (make catalogs)
    .venv/bin/python scripts/catalogs.py check     # every sentence translated, placeholders kept

A room's catalog (``autograd_lab/locale/zh/LC_MESSAGES/<room>.po``) holds the sentences of the
modules SOURCES names for it: those marked in their code, and every string of their sentences
files (``<module>.toml``, see autograd_lab/words.py).
"""
from __future__ import annotations

import io
import json
import os
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "autograd_lab"
sys.path.insert(0, str(ROOT))
from autograd_lab.i18n import DOMAINS, LOCALE_DIR  # noqa: E402
from autograd_lab.languages import LANGUAGES  # noqa: E402

KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
HEADER = ("# The sentences of autograd_lab's {domain} catalog in {language} ({code}).\n"
          "# Made with scripts/catalogs.py (Babel): extract, fill, check, compile.")
TRANSLATED = tuple(code for code in LANGUAGES if code != "en")  # English is the code's own
# Header fields that would change every catalog at every run, release or Babel upgrade (a date, the
# version, Babel's version) are left out: a catalog changes only when a sentence does.
CHURN = ("Project-Id-Version", "Report-Msgid-Bugs-To", "POT-Creation-Date", "PO-Revision-Date", "Generated-By")
FIELD = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)?(?:[!:][^{}]*)?\}")


ADVANCED = ["vjp", "freezing", "hooks", "own_backward", "history"]  # the topics of lessons 06-10
SOURCES = {
    "core": ["*.py"],
    "stepper": ["stepper/**/*.py"], "storage": ["storage/**/*.py"], "explain": ["explain/**/*.py"],
    "profile": ["profile/**/*.py"], "jacobians": ["jacobians/**/*.py"],
    "practice": ["practice/*.py"],
    "exercises": ["practice/topics/*.py"],
    "exercises_advanced": [f"practice/topics/{name}.py" for name in ADVANCED],
}


def sources(domain: str) -> list[Path]:
    """The modules whose sentences go into a room's catalog (each module in exactly one), and
    their sentences files."""
    modules = {p for pattern in SOURCES[domain] for p in PACKAGE.glob(pattern)}
    # a module's sentences file is <module>.toml beside it; other .toml files are data (lessons.toml)
    found = modules | {p.with_suffix(".toml") for p in modules if p.with_suffix(".toml").exists()}
    if domain == "exercises":
        found -= set(sources("exercises_advanced"))
    return sorted(found)


TABLE = re.compile(r"^\[\s*([A-Za-z0-9_.-]+)\s*\]\s*(#.*)?$")
KEY = re.compile(r"^([A-Za-z0-9_-]+)\s*=")


def _where(text: str, comment_tags) -> dict[tuple[str, ...], tuple[int, list[str]]]:
    """For each key of a sentences file, its line and the translator comments right above it."""
    found: dict[tuple[str, ...], tuple[int, list[str]]] = {}
    table: tuple[str, ...] = ()
    above: list[str] = []
    in_string = False
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not in_string and stripped.startswith("#"):
            above.append(stripped[1:].strip())
            continue
        if not in_string:
            if (m := TABLE.match(stripped)) is not None:
                table = tuple(m.group(1).split("."))
            elif (m := KEY.match(stripped)) is not None:
                tagged = [k for k, c in enumerate(above) if c.startswith(tuple(comment_tags))]
                found[(*table, m.group(1))] = (n, above[tagged[0]:] if tagged else [])
            above = []
        if line.count('"""') % 2:
            in_string = not in_string
    return found


def extract_toml(fileobj, keywords, comment_tags, options) -> Iterator[tuple[int, None, str, list[str]]]:
    """Babel's extraction method for a sentences file: every string is a sentence (in a table or in
    an array); a value that is not a string, or a key the scan cannot place, is an error."""
    text = fileobj.read().decode("utf-8")
    where = _where(text, comment_tags)

    def leaves(table: dict, path: tuple[str, ...]):
        for key, value in table.items():
            if isinstance(value, dict):
                yield from leaves(value, (*path, key))
                continue
            if (*path, key) not in where:  # an inline table, a dotted or quoted key: not a plain table
                raise ValueError(f"{'.'.join((*path, key))}: write it as `key = ...` under a [table] header")
            line, comments = where[(*path, key)]
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, str):
                    raise ValueError(f"{'.'.join((*path, key))}: a sentences file holds strings only")
                yield line, None, item, comments

    yield from leaves(tomllib.loads(text), ())


def extracted(domain: str) -> Iterator[tuple[str | tuple[str, str], Path, int, list[str]]]:
    """(message, file, line, translator comments) for every sentence of the room."""
    for path in sources(domain):
        method = extract_toml if path.suffix == ".toml" else "python"
        for lineno, message, comments, _context in extract_from_file(
            method, str(path), keywords=KEYWORDS, comment_tags=("Translators:",)
        ):
            yield message, path, lineno, comments


def template(domain: str) -> Catalog:
    catalog = Catalog(project="autograd_lab", domain=domain, fuzzy=False)
    for message, path, lineno, comments in extracted(domain):
        catalog.add(message, None, [(str(path.relative_to(ROOT)), lineno)], auto_comments=comments)
    return catalog


def po_path(code: str, domain: str) -> Path:
    return LOCALE_DIR / code / "LC_MESSAGES" / f"{domain}.po"


def read(code: str, domain: str) -> Catalog:
    path = po_path(code, domain)
    if not path.exists():
        return Catalog(locale=code, domain=domain, project="autograd_lab", fuzzy=False)
    with path.open("rb") as f:
        return read_po(f, locale=code, domain=domain)


def extract(domains: list[str] | None = None) -> None:
    """Bring .po files up to date with the code (every room's, or the rooms named): new sentences
    added untranslated, gone ones dropped, translations kept."""
    for code in TRANSLATED:
        for domain in domains or DOMAINS:
            catalog = read(code, domain)
            catalog.update(template(domain), no_fuzzy_matching=True)
            catalog.obsolete.clear()
            catalog.header_comment = HEADER.format(language=LANGUAGES[code].name, code=code, domain=domain)
            catalog.last_translator = catalog.language_team = "the autograd_lab authors"
            write(code, domain, catalog)
            print(f"{os.path.relpath(po_path(code, domain), ROOT)}: {len(catalog)} sentences")


def write(code: str, domain: str, catalog: Catalog) -> None:
    """Write a room's .po: entries grouped by file, with the file but no line number (a sentence
    added above others moves none of them), and a header without the fields in CHURN."""
    out = io.BytesIO()
    write_po(out, catalog, width=100, sort_by_file=True, include_lineno=False)
    lines = out.getvalue().decode("utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(tuple(f'"{field}:' for field in CHURN))]
    path = po_path(code, domain)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(kept), encoding="utf-8")


def _done(message) -> bool:
    strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
    return all(strings) and not message.fuzzy


def untranslated(domain: str, code: str = "zh") -> dict[str, str | list[str]]:
    """The sentences of a room that have no translation yet (after extract), keyed by the English
    (a plural by its singular, with one empty form per plural form of the language)."""
    out: dict[str, str | list[str]] = {}
    for m in read(code, domain):
        if m.id and not _done(m):
            if isinstance(m.id, (tuple, list)):
                out[m.id[0]] = [""] * len(m.string)
            else:
                out[m.id] = ""
    return out


def fill(domain: str, translations: dict[str, str | list[str]], code: str = "zh") -> int:
    """Set translations {English sentence: translation} in a room's .po; returns how many were set.
    A plural is keyed by its singular and given as a list of forms (Chinese has one). A sentence
    that is not in the catalog (extract first) is refused, with its text."""
    catalog = read(code, domain)
    by_singular = {m.id[0]: m for m in catalog if isinstance(m.id, (tuple, list))}
    found = {k: catalog.get(k) or by_singular.get(k) for k in translations}
    unknown = [k for k, m in found.items() if m is None]
    if unknown:
        raise SystemExit("not in the catalog (run extract first, or check the text):\n" + "\n".join(map(repr, unknown)))
    for english, text in translations.items():
        message = found[english]
        plural = isinstance(message.id, (tuple, list))
        if plural != isinstance(text, list):
            raise SystemExit(f"{english!r}: a plural takes a list of forms, a sentence one string")
        message.string = tuple(text) if plural else text
        message.flags.discard("fuzzy")
    write(code, domain, catalog)
    extract([domain])  # in the code's order again, as extract writes it: a later extract changes nothing
    return len(translations)


def compile_all() -> None:
    for code in TRANSLATED:
        for domain in DOMAINS:
            catalog = read(code, domain)
            target = po_path(code, domain).with_suffix(".mo")
            partial = target.with_name(f".{target.name}.{os.getpid()}")
            with partial.open("wb") as f:
                write_mo(f, catalog)
            os.replace(partial, target)  # a kernel reading the catalog never sees half a file


def fields(text: str) -> list[str]:
    return sorted(m.group(1) or "" for m in FIELD.finditer(text))


def problems(code: str = "zh") -> list[str]:
    """What keeps a language from being complete: sentences in the code with no translation, fuzzy
    translations, and translations whose {placeholders} differ from the English sentence's."""
    out = []
    for domain in DOMAINS:
        catalog = read(code, domain)
        wanted = template(domain)
        for message in wanted:
            if not message.id:
                continue
            where = ", ".join(f"{p}:{n}" for p, n in message.locations[:1])
            have = catalog.get(message.id)
            if have is None:
                out.append(f"{domain}: not in the catalog ({where}): {message.id!r}")
                continue
            if not _done(have):
                out.append(f"{domain}: not translated ({where}): {message.id!r}")
                continue
            strings = have.string if isinstance(have.string, (tuple, list)) else (have.string,)
            ids = message.id if isinstance(message.id, (tuple, list)) else (message.id,)
            for s in strings:
                if fields(s) != fields(ids[0]):
                    out.append(f"{domain}: placeholders differ ({where}): {message.id!r} -> {s!r}")
    return out + conflicts(code)


def conflicts(code: str = "zh") -> list[str]:
    """The lab looks a sentence up in every room's catalog in turn (i18n.DOMAINS' order) and takes
    the first translation: the same English translated two ways in two rooms would show the first
    room's words in the second. Each such sentence, with its rooms."""
    seen: dict = {}
    out = []
    for domain in DOMAINS:
        for m in read(code, domain):
            if m.id and _done(m):
                first = seen.setdefault(m.id, (domain, m.string))
                if first[1] != m.string:
                    out.append(f"{domain}: translated otherwise in {first[0]}: {m.id!r} -> {m.string!r} "
                               f"against {first[1]!r}")
    return out


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else "check"
    if command == "extract":
        extract(sys.argv[2:])
    elif command == "untranslated":
        print(json.dumps(untranslated(sys.argv[2]), ensure_ascii=False, indent=1))
    elif command == "fill":
        print(fill(sys.argv[2], json.loads(Path(sys.argv[3]).read_text(encoding="utf-8"))), "set")
    elif command == "compile":
        compile_all()
    elif command == "check":
        found = problems()
        print("\n".join(found) or "every sentence is translated")
        sys.exit(1 if found else 0)
    else:
        sys.exit("usage: catalogs.py extract [room ...] | untranslated ROOM | fill ROOM FILE.json | compile | check")
