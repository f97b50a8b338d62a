"""README.zh.md and docs/zh/, the pages for Chinese-speaking readers, keep in step with README.md and docs/:
README.md links to README.zh.md at its top and README.zh.md links back; each page of docs/ has its Chinese twin
of the same name in docs/zh/, each linking the other on its first line, and each pair has as many sections; each
README links every page of its language's docs; every relative link of them all leads to a file of the repository
(and to a heading of it, when it names one); each README stays a front door of at most 8,000 characters; and the
Chinese pages name every lesson notebook their English twins name, linking it in notebooks/zh/."""
import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_ZH = ROOT / "README.zh.md"
DOCS = ROOT / "docs"
DOCS_ZH = DOCS / "zh"
FRONT_DOOR = 8000  # characters, at most, in each README


def without_code_blocks(text: str) -> str:
    """The text outside fenced code blocks (a heading or link inside one is code, not Markdown)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            kept.append(line)
    return "\n".join(kept)


def headings(text: str, level: int) -> list[str]:
    mark = "#" * level + " "
    return [line[len(mark):].strip() for line in without_code_blocks(text).splitlines() if line.startswith(mark)]


def links(text: str) -> list[str]:
    """Targets of Markdown links and images, [text](target) or [text](<target> "title")."""
    return [m.group(1) or m.group(2)
            for m in re.finditer(r"\]\(\s*(?:<([^>]*)>|([^)\s]*))[^)]*\)", without_code_blocks(text))]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation (full-width too) dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading).strip().lower()
    return "".join(c for c in text if c.isalnum() or c in "-_ ").replace(" ", "-")


def notebook_names(text: str) -> set[str]:
    """File names of the lesson notebooks a README mentions (solutions.ipynb included)."""
    return {Path(name).name for name in re.findall(r"[\w./-]*?\w+\.ipynb", text)}


def anchors(text: str) -> set[str]:
    return {slug(h) for level in range(1, 7) for h in headings(text, level)}


def broken_links(text: str, base: Path = ROOT) -> list[str]:
    """The relative links of a page in folder `base` that lead to no file of the repository, or to a
    heading its target page does not have."""
    broken = []
    for target in links(text):
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # an address (https:, mailto:) is not a path of the repository
        path, _, fragment = target.partition("#")
        where = (base / unquote(path)).resolve() if path else None
        if where is not None and (not where.exists() or not where.is_relative_to(ROOT)):
            broken.append(target)
        elif fragment:
            page = text if where is None else where.read_text(encoding="utf-8") if where.suffix == ".md" else None
            if page is None or unquote(fragment).lower() not in anchors(page):
                broken.append(target)
    return broken


def pages(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.md"))


def read_zh() -> str:
    """README.zh.md's text; its absence fails the test that reads it (a failure, not an error)."""
    assert README_ZH.is_file(), "README.zh.md is missing: the README for Chinese-speaking readers"
    return README_ZH.read_text(encoding="utf-8")


def read_en() -> str:
    return README.read_text(encoding="utf-8")


def check_links_back(zh: str) -> None:
    assert zh.splitlines()[0].strip() == "[English README](README.md)", "README.zh.md starts with a link back"


def check_linked_from_the_top(en: str) -> None:
    top = "\n".join(en.splitlines()[:5])
    assert "README.zh.md" in links(top), "README.md links to README.zh.md in its first 5 lines"


def check_links_lead_somewhere(text: str, base: Path = ROOT, name: str = "README.zh.md") -> None:
    broken = broken_links(text, base)
    assert not broken, f"{name} links to paths or headings that do not exist: {broken}"


def check_sections(en: str, zh: str, names: str = "README.md, README.zh.md") -> None:
    for level in (2, 3):
        mine, theirs = headings(zh, level), headings(en, level)
        assert len(mine) == len(theirs), (
            f"{names}: {len(theirs)} {'#' * level} headings {theirs} against {len(mine)} {mine}: "
            "translate the section that is missing or added")


def check_notebooks(en: str, zh: str, course_prefix: str = "notebooks/zh/") -> None:
    named = notebook_names(en)
    missing = sorted(named - notebook_names(zh))
    assert not missing, f"the Chinese page does not mention {missing}, which its English twin does"
    course = {Path(t).name for t in links(zh) if t.startswith(course_prefix) and t.endswith(".ipynb")}
    unlinked = sorted(named - course)
    assert not unlinked, f"the Chinese page does not link {unlinked} in notebooks/zh/"


def check_twins(en_names: set[str], zh_names: set[str]) -> None:
    assert en_names == zh_names, (
        f"docs/ without a Chinese twin in docs/zh/: {sorted(en_names - zh_names)}; "
        f"docs/zh/ without an English twin: {sorted(zh_names - en_names)}")


def check_front_door(readme: str, folder: str, names: set[str]) -> None:
    linked = {t.split("#")[0] for t in links(readme)}
    unlinked = sorted(n for n in names if f"{folder}{n}" not in linked)
    assert not unlinked, f"the README does not link {unlinked} of {folder}"


def check_first_line_links(text: str, target: str) -> None:
    assert target in links(text.splitlines()[0] if text else ""), f"the first line does not link {target}"


def check_size(text: str, name: str) -> None:
    assert len(text) <= FRONT_DOOR, f"{name} has {len(text)} characters, more than {FRONT_DOOR}: move the rest to docs/"


def test_readme_zh_exists_and_links_back():
    check_links_back(read_zh())


def test_readme_links_to_readme_zh_at_its_top():
    check_linked_from_the_top(read_en())


def every_page() -> list[Path]:
    return [README, README_ZH, *pages(DOCS), *pages(DOCS_ZH)]


def test_every_relative_link_leads_somewhere():
    for page in every_page():
        check_links_lead_somewhere(page.read_text(encoding="utf-8"), page.parent, str(page.relative_to(ROOT)))


def test_readme_zh_has_a_section_for_each_section_of_readme():
    check_sections(read_en(), read_zh())


def test_each_page_of_docs_has_a_chinese_twin_with_its_sections():
    en = {p.name for p in pages(DOCS)}
    assert en, "docs/ holds no page"
    check_twins(en, {p.name for p in pages(DOCS_ZH)})
    for name in sorted(en):
        check_sections((DOCS / name).read_text(encoding="utf-8"), (DOCS_ZH / name).read_text(encoding="utf-8"),
                       f"docs/{name}, docs/zh/{name}")


def test_each_twin_links_the_other_on_its_first_line():
    for page in pages(DOCS):
        check_first_line_links(page.read_text(encoding="utf-8"), f"zh/{page.name}")
        check_first_line_links((DOCS_ZH / page.name).read_text(encoding="utf-8"), f"../{page.name}")


def test_each_readme_links_every_page_of_its_docs():
    check_front_door(read_en(), "docs/", {p.name for p in pages(DOCS)})
    check_front_door(read_zh(), "docs/zh/", {p.name for p in pages(DOCS_ZH)})


def test_each_readme_is_a_front_door():
    check_size(read_en(), "README.md")
    check_size(read_zh(), "README.zh.md")


def test_readme_zh_names_and_links_every_lesson_notebook_of_readme():
    named = notebook_names(read_en())
    assert {"00_start_here.ipynb", "solutions.ipynb"} <= named, "README.md's lessons are read as they should be"
    check_notebooks(read_en(), read_zh())


def test_the_chinese_docs_name_and_link_the_notebooks_their_twins_do():
    for page in pages(DOCS):
        check_notebooks(page.read_text(encoding="utf-8"), (DOCS_ZH / page.name).read_text(encoding="utf-8"),
                        "../../notebooks/zh/")


def test_the_checks_catch_what_they_are_for():
    en, zh = read_en(), read_zh()
    broken = {
        "README.md without the link at its top": lambda: check_linked_from_the_top(
            "\n".join(["# autograd_lab", "", "a", "b", "c", "[zh](README.zh.md)"])),
        "no link back": lambda: check_links_back(zh.replace("[English README](README.md)\n", "", 1)),
        "a link to a file that does not exist": lambda: check_links_lead_somewhere(
            zh.replace("(notebooks/zh/08_hooks.ipynb)", "(notebooks/zh/08_hook.ipynb)")),
        "a link to a heading that does not exist": lambda: check_links_lead_somewhere(zh + "\n[x](#nowhere)\n"),
        "a ## section missing": lambda: check_sections(en + "\n## One more\n", zh),
        "a ### section missing": lambda: check_sections(en + "\n### One more\n", zh),
        "a notebook not mentioned": lambda: check_notebooks(en + "\n`11_new.ipynb`\n", zh),
        "a lesson linked in English only": lambda: check_notebooks(
            en, zh.replace("(notebooks/zh/08_hooks.ipynb)", "(notebooks/08_hooks.ipynb)")),
        "a link to a heading another page does not have": lambda: check_links_lead_somewhere(
            "[x](teachers.md#nowhere)", DOCS),
        "a link out of the repository": lambda: check_links_lead_somewhere(f"[x](../{ROOT.name}/../)", ROOT),
        "a page without its twin": lambda: check_twins({"teachers.md", "new.md"}, {"teachers.md"}),
        "a page the README does not link": lambda: check_front_door(en.replace("(docs/teachers.md)", "(x)"),
                                                                    "docs/", {"teachers.md"}),
        "a twin that does not link the other first": lambda: check_first_line_links("# x\n[zh](zh/a.md)", "zh/a.md"),
        "a README grown past the front door": lambda: check_size(en + "x" * FRONT_DOOR, "README.md"),
    }
    for case, check in broken.items():
        try:
            check()
        except AssertionError:
            continue
        raise AssertionError(f"not caught: {case}")
    assert broken_links("[a](notebooks/zh/nowhere.ipynb) [b](#b) [c](#a)\n## A\n```\n[d](x)\n```") == [
        "notebooks/zh/nowhere.ipynb", "#b"]
    fine = "[a](teachers.md#progress) [b](../README.md#the-lessons) [c](images/first_look.png)"
    assert broken_links(fine, DOCS) == []
    assert slug("一台服务器上的班级，以及更大规模") == "一台服务器上的班级以及更大规模"
    assert slug("A class on one server, and beyond") == "a-class-on-one-server-and-beyond"
    assert headings("## A\n```\n## not a heading\n```\n### B", 2) == ["A"]
    named = notebook_names("`01_x.ipynb` and [s](notebooks/teachers/solutions.ipynb)")
    assert named == {"01_x.ipynb", "solutions.ipynb"}
