"""The course as a website (`make book`): Jupyter Book 1 builds every lesson of every language and
the teachers' docs from the stored outputs, and every view of the lab shows its static face there.

Jupyter Book lives in a venv of its own, `.book/` (`make book` builds it). Without it the tests that
build skip, unless AUTOGRAD_LAB_REQUIRE_BOOK=1, where they fail. The tests of how the pages are found
and linked need no book and always run."""
from __future__ import annotations

import importlib.util
import json
import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / ".book"
WIDGET = "application/vnd.jupyter.widget-view+json"


def _script():
    spec = importlib.util.spec_from_file_location("book", ROOT / "scripts" / "book.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["book"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


book = _script()


def lessons() -> list[Path]:
    """The stored lessons of every language, as the folders hold them (the teachers' left out)."""
    found = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for code in book.languages():
        if code != "en":
            found += sorted((ROOT / "notebooks" / code).glob("*.ipynb"))
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site's html folder (the book built into a temporary folder)."""
    jupyter_book = BOOK / "bin" / "jupyter-book"
    if not (jupyter_book.exists() and (BOOK / ".installed").exists()):
        why = f"the book's venv {BOOK} is missing or incomplete: `make book` builds it, or `make .book/.installed`"
        if os.environ.get("AUTOGRAD_LAB_REQUIRE_BOOK") == "1":
            pytest.fail(why + " (AUTOGRAD_LAB_REQUIRE_BOOK=1)")
        pytest.skip(why)
    out = tmp_path_factory.mktemp("book")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    done = subprocess.run([str(BOOK / "bin" / "python"), str(ROOT / "scripts" / "book.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=540, env=env)
    log = done.stdout + done.stderr
    assert done.returncode == 0, f"the book did not build:\n{log[-6000:]}"
    warnings = [line for line in log.splitlines() if "WARNING" in line or "ERROR" in line]
    assert not warnings, "the build warned:\n" + "\n".join(warnings)
    return out / "_build" / "html"


def page_of(site: Path, lesson: Path) -> Path:
    return site / lesson.relative_to(ROOT).with_suffix(".html")


def parsed(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def lab_faces(lesson: Path) -> list[str]:
    """The text/html of every output of the stored lesson, in order, and which are the lab's."""
    nb = json.loads(lesson.read_text(encoding="utf-8"))
    return ["".join(o["data"]["text/html"]) for cell in nb["cells"] if cell["cell_type"] == "code"
            for o in cell["outputs"] if "text/html" in o.get("data", {})]


def is_lab(html: str) -> bool:
    return bool(re.search(r'class="[^"]*\b(autograd-lab|agl-static[\w-]*)\b', html))


def pictures(soup) -> tuple[list[str], int]:
    """The sources of its pictures, in order, and how many tables it holds."""
    return [img.get("src", "") for img in soup.find_all("img")], len(soup.find_all("table"))


# -- the pages, found and linked (no book needed) -------------------------------------------------

def test_the_pages_are_the_folders_lessons_and_docs_without_the_teachers():
    found, docs = book.pages()
    assert sorted(str(p.path) for p in found) == sorted(str(p.relative_to(ROOT)) for p in lessons())
    assert len(found) >= 22  # eleven lessons in English and in Chinese
    assert not [p for p in found + docs if "teachers" in p.path.parts]
    assert {"README.md", "README.zh.md"} <= {str(p.path) for p in docs}


def test_docs_are_picked_up_when_present_and_paired_by_name(tmp_path):
    (tmp_path / "autograd_lab/locale").mkdir(parents=True)
    (tmp_path / "autograd_lab/locale/languages.toml").write_bytes(
        (ROOT / "autograd_lab/locale/languages.toml").read_bytes())
    for name in ("README.md", "README.zh.md", "docs/teaching.md", "docs/teaching.zh.md", "docs/grading.md",
                 "docs/zh/grading.md", "docs/only_english.md", "notebooks/00_a.ipynb", "notebooks/zh/00_a.ipynb",
                 "notebooks/teachers/solutions.ipynb", "notebooks/zh/teachers/solutions.ipynb"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("# x\n", encoding="utf-8")
    found, docs = book.pages(tmp_path)
    twins = {str(p.path): {c: str(t) for c, t in p.twins.items()} for p in found + docs}
    assert twins == {
        "notebooks/00_a.ipynb": {"zh": "notebooks/zh/00_a.ipynb"},
        "notebooks/zh/00_a.ipynb": {"en": "notebooks/00_a.ipynb"},
        "README.md": {"zh": "README.zh.md"}, "README.zh.md": {"en": "README.md"},
        "docs/grading.md": {"zh": "docs/zh/grading.md"}, "docs/zh/grading.md": {"en": "docs/grading.md"},
        "docs/only_english.md": {},
        "docs/teaching.md": {"zh": "docs/teaching.zh.md"}, "docs/teaching.zh.md": {"en": "docs/teaching.md"},
    }
    toc = book.toc(found, docs, book.languages(tmp_path))
    assert toc["root"] == "README"
    assert [part["caption"] for part in toc["parts"]] == ["English", "中文"]
    assert toc["parts"][1]["chapters"][0] == {"file": "README.zh"}
    english_docs = [c["file"] for c in toc["parts"][0]["chapters"] if c["file"].startswith("docs/")]
    assert english_docs == ["docs/grading", "docs/only_english", "docs/teaching"]  # none linked: by name


def test_the_docs_come_in_their_readmes_order_with_their_pictures(tmp_path):
    (tmp_path / "autograd_lab/locale").mkdir(parents=True)
    (tmp_path / "autograd_lab/locale/languages.toml").write_bytes(
        (ROOT / "autograd_lab/locale/languages.toml").read_bytes())
    (tmp_path / "docs/images").mkdir(parents=True)
    (tmp_path / "notebooks/teachers").mkdir(parents=True)
    (tmp_path / "README.md").write_text("# x\n[b](docs/b.md) then [a](docs/a.md), "
                                        "[answers](notebooks/teachers/solutions.ipynb)\n", encoding="utf-8")
    (tmp_path / "docs/a.md").write_text("# a\n![the figure](images/figure.png)\n", encoding="utf-8")
    (tmp_path / "docs/b.md").write_text("# b\n[back](../README.md)\n", encoding="utf-8")
    (tmp_path / "docs/images/figure.png").write_bytes(b"\x89PNG")
    (tmp_path / "notebooks/teachers/solutions.ipynb").write_text("{}", encoding="utf-8")
    _, docs = book.write_source(tmp_path / "source", tmp_path)
    assert [str(p.path) for p in docs] == ["README.md", "docs/b.md", "docs/a.md"]
    source = tmp_path / "source"
    assert (source / "docs/images/figure.png").read_bytes() == b"\x89PNG"
    assert not (source / "notebooks").exists()
    readme = (source / "README.md").read_text(encoding="utf-8")
    assert readme.splitlines()[1] == "[b](docs/b.md) then [a](docs/a.md), answers"


def test_a_link_to_a_file_outside_the_book_is_left_as_its_text():
    page = book.Page(PurePosixPath("README.zh.md"), "zh")
    in_book = {PurePosixPath("README.md"), PurePosixPath("notebooks/zh/00_start_here.ipynb")}
    text = ("[课程](notebooks/zh/00_start_here.ipynb) [答案](notebooks/zh/teachers/solutions.ipynb) "
            "[贡献](CONTRIBUTING.md#a-lesson) [英文](README.md#tests) [上面](#课程) [网](https://pytorch.org) "
            "![图](figure.png)")
    assert book.relink(text, page, in_book) == (
        "[课程](notebooks/zh/00_start_here.ipynb) 答案 贡献 [英文](README.md#tests) [上面](#课程) "
        "[网](https://pytorch.org) ![图](figure.png)")


def test_each_twin_header_names_the_other_language_in_its_own_words():
    page = book.Page(PurePosixPath("notebooks/zh/01_x.ipynb"), "zh", {"en": PurePosixPath("notebooks/01_x.ipynb")})
    assert book.twin_header(page, book.languages()) == "[English](../01_x.ipynb)"
    readme = book.Page(PurePosixPath("README.md"), "en", {"zh": PurePosixPath("README.zh.md")})
    assert book.twin_header(readme, book.languages(), "# x\n[中文说明](README.zh.md)\n") == ""
    assert book.twin_header(readme, book.languages(), "# x\n") == "[中文](README.zh.md)"


def test_the_config_builds_from_stored_outputs_and_prefers_the_static_face():
    config = book.config()
    assert config["execute"]["execute_notebooks"] == "off"
    priority = {mime: rank for _, mime, rank in config["sphinx"]["config"]["nb_mime_priority_overrides"]}
    assert priority["text/html"] < priority["image/png"] and priority[WIDGET] is None


# -- the built site --------------------------------------------------------------------------------

@pytest.mark.parametrize("lesson", lessons(), ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_every_lab_output_shows_its_picture_and_tables(site, lesson):
    page = page_of(site, lesson)
    assert page.exists(), f"{lesson.name} is not a page of the site"
    soup = parsed(page)
    assert not soup.find("script", type=WIDGET), "a widget view was rendered (it has no state to show)"
    assert not soup.select(".jupyter-widgets, .output.application_vnd_jupyter_widget-view_json")
    built = soup.select(".cell_output .output.text_html")
    stored = lab_faces(lesson)
    assert len(built) == len(stored), f"{len(stored)} HTML outputs stored, {len(built)} on the page"
    lab = 0
    for i, (html, there) in enumerate(zip(stored, built, strict=True)):
        imgs, tables = pictures(BeautifulSoup(html, "html.parser"))
        assert pictures(there) == (imgs, tables), f"output {i} of {lesson.name} lost its picture or a table"
        if is_lab(html):
            lab += 1
            assert imgs or tables, f"lab output {i} of {lesson.name} has neither picture nor table"
            assert all(src.startswith("data:image/png;base64,") and len(src) > 200 for src in imgs)
    expected = sum(is_lab(html) for html in stored)
    assert lab == expected


def test_the_lessons_with_a_stepper_show_its_pictures(site):
    lesson = ROOT / "notebooks" / "01_backward_step_by_step.ipynb"
    imgs, _ = pictures(parsed(page_of(site, lesson)))
    assert len([src for src in imgs if src.startswith("data:image/png")]) >= 5


@pytest.mark.parametrize("lesson", lessons(), ids=lambda p: str(p.relative_to(ROOT / "notebooks")))
def test_each_lesson_page_links_to_its_twin(site, lesson):
    page = page_of(site, lesson)
    names = book.languages()
    here = lesson.relative_to(ROOT / "notebooks").parts
    twins = [ROOT / "notebooks" / lesson.name] if len(here) == 2 else []
    twins += [ROOT / "notebooks" / code / lesson.name for code in names if code != "en" and (code,) != here[:1]]
    twins = [t for t in twins if t.exists()]
    assert twins, f"{lesson.name} has no twin in another language"
    hrefs = {str(a["href"]): a.get_text() for a in parsed(page).select("article a[href]")}
    folder = posixpath.dirname(str(page.relative_to(site)))
    links = {posixpath.normpath(posixpath.join(folder, href)): text for href, text in hrefs.items()
             if not re.match(r"^[a-z]+:|#", href)}
    for twin in twins:
        target = str(page_of(site, twin).relative_to(site))
        assert target in links, f"{lesson.relative_to(ROOT)} does not link to {twin.relative_to(ROOT)}"
        code = "en" if len(twin.relative_to(ROOT / "notebooks").parts) == 1 else twin.parent.name
        assert links[target].strip() == names[code]
        assert (site / target).exists()


def test_the_readmes_are_pages_linked_to_each_other(site):
    assert (site / "index.html").exists()
    for name, twin in (("README", "README.zh"), ("README.zh", "README")):
        hrefs = {str(a["href"]).split("#")[0] for a in parsed(site / f"{name}.html").select("article a[href]")}
        assert f"{twin}.html" in hrefs


def test_the_teachers_notebooks_are_not_in_the_site(site):
    files = [p for p in site.rglob("*") if p.is_file()]
    assert not [p for p in files if "teachers" in p.relative_to(site).parts or "solutions" in p.name]
    headings = set()
    for solutions in sorted((ROOT / "notebooks").glob("**/teachers/*.ipynb")):
        headings.add(first_heading(json.loads(solutions.read_text(encoding="utf-8"))))
    assert len(headings) >= 2
    # the READMEs name the teachers' notebook (as text): no page of the site is that notebook
    titles = {h1.get_text().rstrip("#").strip() for p in files if p.suffix == ".html"
              for h1 in parsed(p).find_all("h1")}
    assert not headings & titles
    stored = {first_heading(json.loads(p.read_text(encoding="utf-8"))) for p in files if p.suffix == ".ipynb"}
    assert not headings & stored
    assert len(stored) == len(lessons())


def first_heading(nb: dict) -> str:
    """The first heading of a notebook (its title), without the twin link the book puts above it."""
    for cell in nb["cells"]:
        for line in "".join(cell["source"]).splitlines() if cell["cell_type"] == "markdown" else []:
            if line.startswith("# "):
                return line[2:].strip()
    return ""
