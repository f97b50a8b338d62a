"""The course as a website: every lesson in every language, and the docs a teacher needs, built by
Jupyter Book 1 from the stored outputs (nothing is executed) into _build/html.

The table of contents is made from the folders each time: notebooks/*.ipynb is the English course,
notebooks/<code>/*.ipynb the course of every other language of autograd_lab/locale/languages.toml;
README.md, README.<code>.md and docs/*.md (docs/<name>.<code>.md or docs/<code>/<name>.md for another
language) are the docs. The teachers' notebooks (notebooks/teachers, notebooks/<code>/teachers) are
never copied: they would hand every learner the answers.

The book is built from copies in _build/source, laid out as in the repository, so that the docs'
links between pages keep working; a link to a file that is not a page of the book is left as its
text. Each copy starts with a link to its twin in every other language (the stored notebooks are
not touched). `make book` runs it with the book's own venv (.book/):

    .book/bin/python scripts/book.py                 # _build/source, then _build/html
    .book/bin/python scripts/book.py --source-only   # only the source folder (_config.yml, _toc.yml)
"""
from __future__ import annotations

import argparse
import json
import posixpath
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = "en"  # the language of notebooks/, README.md and docs/*.md themselves
WIDGET = "application/vnd.jupyter.widget-view+json"
LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(([^)\s]+)\)")  # [text](target), not an image
IMAGE = re.compile(r"!\[[^\]\n]*\]\(([^)\s]+)\)|<img\b[^>]*\bsrc=\"([^\"]+)\"")  # ![alt](target), <img src>
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:")  # https:, mailto:, data:


@dataclass
class Page:
    """One page of the book: its file in the repository, its language and its twins by language."""

    path: PurePosixPath  # relative to the repository, as in the book's source folder
    language: str
    twins: dict[str, PurePosixPath] = field(default_factory=dict)

    @property
    def docname(self) -> str:
        return str(self.path.with_suffix(""))


def languages(root: Path = ROOT) -> dict[str, str]:
    """Each language's code to its own name, English first (languages.toml's order after it)."""
    table = tomllib.loads((root / "autograd_lab/locale/languages.toml").read_text(encoding="utf-8"))
    names = {code: entry["name"] for code, entry in table.items()}
    return {ENGLISH: names.pop(ENGLISH), **names}


def _docs(root: Path, codes: list[str]) -> list[tuple[str, str, PurePosixPath]]:
    """(language, the page's name across languages, path) of every doc page."""
    found = [(ENGLISH, "README", PurePosixPath("README.md"))]
    found += [(code, "README", PurePosixPath(f"README.{code}.md")) for code in codes
              if code != ENGLISH and (root / f"README.{code}.md").is_file()]
    docs = root / "docs"
    for path in sorted(docs.glob("*.md")) if docs.is_dir() else []:
        stem, _, code = path.stem.rpartition(".")
        if stem and code in codes:
            found.append((code, f"docs/{stem}", PurePosixPath(f"docs/{path.name}")))
        else:
            found.append((ENGLISH, f"docs/{path.stem}", PurePosixPath(f"docs/{path.name}")))
    for code in codes:
        if code != ENGLISH and (docs / code).is_dir():
            found += [(code, f"docs/{p.stem}", PurePosixPath(f"docs/{code}/{p.name}"))
                      for p in sorted((docs / code).glob("*.md"))]
    # each language's docs in the order its README first links them (the others after, by name)
    readmes = {code: (root / path).read_text(encoding="utf-8") for code, name, path in found if name == "README"}

    def place(entry: tuple[str, str, PurePosixPath]) -> tuple[int, int]:
        code, name, path = entry
        at = readmes.get(code, "").find(f"]({path}")
        return (0, 0) if name == "README" else (1, at if at >= 0 else sys.maxsize)
    return sorted(found, key=place)


def pages(root: Path = ROOT) -> tuple[list[Page], list[Page]]:
    """The book's lesson pages and doc pages, each language's in its order, twins found by name."""
    codes = list(languages(root))
    lessons: list[tuple[str, str, PurePosixPath]] = []
    for code in codes:
        folder = root / "notebooks" if code == ENGLISH else root / "notebooks" / code
        # notebooks/<folder>/*.ipynb only: the teachers' solutions live one folder further down
        lessons += [(code, p.name, PurePosixPath(p.relative_to(root).as_posix()))
                    for p in sorted(folder.glob("*.ipynb")) if "teachers" not in p.parts]
    return _paired(lessons), _paired(_docs(root, codes))


def _paired(found: list[tuple[str, str, PurePosixPath]]) -> list[Page]:
    by_name: dict[str, dict[str, PurePosixPath]] = {}
    for code, name, path in found:
        by_name.setdefault(name, {})[code] = path
    return [Page(path, code, {c: p for c, p in by_name[name].items() if c != code}) for code, name, path in found]


def _relative(target: PurePosixPath, start: PurePosixPath) -> str:
    """target as a link from the page at start (both relative to the repository)."""
    return posixpath.relpath(str(target), str(start.parent) or ".")


def twin_header(page: Page, names: dict[str, str], text: str = "") -> str:
    """The line each page starts with: its twin in every other language, named in its own words
    (but for a twin that text, the page's own words, links to already: the READMEs do)."""
    linked = {PurePosixPath(*_normal(page.path.parent / target.split("#", 1)[0])) for _, target in LINK.findall(text)}
    return " · ".join(f"[{names[code]}]({_relative(path, page.path)})" for code, path in page.twins.items()
                      if path not in linked)


def relink(text: str, page: Page, in_book: set[PurePosixPath]) -> str:
    """text with every link to a repository file that is not a page of the book left as its text."""
    def one(match: re.Match) -> str:
        words, target = match.groups()
        where = target.split("#", 1)[0]
        if not where or re.match(SCHEME, where):  # an anchor, or a web address
            return match.group(0)
        resolved = PurePosixPath(*_normal(page.path.parent / where))
        return match.group(0) if resolved in in_book else words
    return LINK.sub(one, text)


def pictures(text: str, page: Page, root: Path = ROOT) -> set[PurePosixPath]:
    """The repository's files that text (of page) shows as pictures: copied into the book with it."""
    found = set()
    for match in IMAGE.finditer(text):
        target = (match.group(1) or match.group(2)).split("#", 1)[0]
        if not target or re.match(SCHEME, target):  # a web address, or data: (the picture itself)
            continue
        path = PurePosixPath(*_normal(page.path.parent / target))
        if (root / path).is_file() and "teachers" not in path.parts:
            found.add(path)
    return found


def _normal(path: PurePosixPath) -> list[str]:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return parts


def write_source(source: Path, root: Path = ROOT) -> tuple[list[Page], list[Page]]:
    """The book's source folder: a copy of every page with its twin header, _config.yml, _toc.yml."""
    names = languages(root)
    lessons, docs = pages(root)
    notebooks = {page.path: json.loads((root / page.path).read_text(encoding="utf-8")) for page in lessons}
    texts = {page.path: (root / page.path).read_text(encoding="utf-8") for page in docs}
    for page in lessons:
        texts[page.path] = "\n".join(cell["source"] for cell in _markdown(notebooks[page.path]))
    shown = {picture for page in lessons + docs for picture in pictures(texts[page.path], page, root)}
    in_book = {p.path for p in lessons + docs} | shown
    if source.exists():
        shutil.rmtree(source)
    for picture in sorted(shown):
        (source / picture).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / picture, source / picture)
    for page in lessons:
        nb = notebooks[page.path]
        for cell in _markdown(nb):
            cell["source"] = relink(cell["source"], page, in_book)
        if page.twins:
            nb["cells"].insert(0, {"cell_type": "markdown", "id": "twins", "metadata": {},
                                    "source": twin_header(page, names)})
        _write(source / page.path, json.dumps(nb, ensure_ascii=False, indent=1) + "\n")
    for page in docs:
        text = relink(texts[page.path], page, in_book)
        header = twin_header(page, names, text)
        if header:
            text = header + "\n\n" + text
        _write(source / page.path, text)
    _write(source / "_toc.yml", _yaml(toc(lessons, docs, names)))
    _write(source / "_config.yml", _yaml(config(root)))
    return lessons, docs


def _markdown(nb: dict) -> list[dict]:
    """The notebook's markdown cells, each source made one string."""
    cells = [cell for cell in nb["cells"] if cell["cell_type"] == "markdown"]
    for cell in cells:
        cell["source"] = "".join(cell["source"])
    return cells


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def toc(lessons: list[Page], docs: list[Page], names: dict[str, str]) -> dict:
    """The table of contents: the English README as the home page, then one part per language
    (named in its own words): its README, its lessons in order, its docs."""
    root = next(p for p in docs if p.path == PurePosixPath("README.md"))
    parts = []
    for code, name in names.items():
        chapters = [p for p in docs if p.language == code and p is not root and p.path.name.startswith("README")]
        chapters += [p for p in lessons if p.language == code]
        chapters += [p for p in docs if p.language == code and not p.path.name.startswith("README")]
        if chapters:
            parts.append({"caption": name, "chapters": [{"file": p.docname} for p in chapters]})
    return {"format": "jb-book", "root": root.docname, "parts": parts}


def config(root: Path = ROOT) -> dict:
    """Jupyter Book's _config.yml: stored outputs only, and the static face of every lab view."""
    cff = root / "CITATION.cff"
    author = re.search(r'^\s*- name: "([^"]+)"', cff.read_text(encoding="utf-8") if cff.exists() else "", re.M)
    return {
        "title": "autograd_lab",
        "author": author.group(1) if author else "autograd_lab",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "sphinx": {"config": {
            "myst_heading_anchors": 3,  # the READMEs link to their own sections
            # The stored lessons carry no widget state, so a widget view would be an empty box: the
            # lab's text/html face (its picture and tables) comes first, and the widget never.
            "nb_mime_priority_overrides": [
                ["*", "text/html", 0],
                ["*", "image/png", 1],
                ["*", WIDGET, None],
            ],
        }},
    }


def _yaml(value: dict) -> str:
    """YAML for Jupyter Book: JSON is YAML, so the standard library writes it."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def build(out: Path, jupyter_book: Path, root: Path = ROOT) -> int:
    """Write out/_build/source and build it into out/_build/html; jupyter-book's exit status."""
    source = out / "_build" / "source"
    write_source(source, root)
    done = subprocess.run([str(jupyter_book), "build", str(source), "--path-output", str(out),
                           "--builder", "html", "--all"])
    if done.returncode == 0:
        print(f"the course as a website: {out / '_build' / 'html' / 'index.html'}")
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="the folder _build/ goes in (default: the repository)")
    parser.add_argument("--jupyter-book", type=Path, default=Path(sys.executable).parent / "jupyter-book",
                        help="the jupyter-book command (default: the one beside this python)")
    parser.add_argument("--source-only", action="store_true", help="write _build/source and stop")
    args = parser.parse_args(argv)
    if args.source_only:
        write_source(args.out / "_build" / "source")
        return 0
    return build(args.out, args.jupyter_book)


if __name__ == "__main__":
    sys.exit(main())
