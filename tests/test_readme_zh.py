"""README.zh.md, the README for Chinese-speaking readers, keeps in step with README.md: it exists, README.md links
to it at its top, every relative link in it leads to a file of the repository (or a heading of its own), it has as
many sections as README.md, and it names every lesson notebook that README.md names, linking it in notebooks/zh/."""
import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_ZH = ROOT / "README.zh.md"


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


def broken_links(text: str, base: Path = ROOT) -> list[str]:
    anchors = {slug(h) for level in range(1, 7) for h in headings(text, level)}
    broken = []
    for target in links(text):
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # an address (https:, mailto:) is not a path of the repository
        path, _, fragment = target.partition("#")
        if not path:
            if unquote(fragment).lower() not in anchors:
                broken.append(target)
        elif not (base / unquote(path)).exists():
            broken.append(target)
    return broken


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


def check_links_lead_somewhere(zh: str) -> None:
    assert not broken_links(zh), f"README.zh.md links to paths or headings that do not exist: {broken_links(zh)}"


def check_sections(en: str, zh: str) -> None:
    for level in (2, 3):
        mine, theirs = headings(zh, level), headings(en, level)
        assert len(mine) == len(theirs), (
            f"README.md has {len(theirs)} {'#' * level} headings {theirs}, README.zh.md {len(mine)} {mine}: "
            "translate the section that is missing or added")


def check_notebooks(en: str, zh: str) -> None:
    named = notebook_names(en)
    assert {"00_start_here.ipynb", "solutions.ipynb"} <= named, "README.md's lesson table is read as it should be"
    missing = sorted(named - notebook_names(zh))
    assert not missing, f"README.zh.md does not mention {missing}, which README.md does"
    course = {Path(t).name for t in links(zh) if t.startswith("notebooks/zh/") and t.endswith(".ipynb")}
    unlinked = sorted(named - course)
    assert not unlinked, f"README.zh.md's lesson table does not link {unlinked} in notebooks/zh/"


def test_readme_zh_exists_and_links_back():
    check_links_back(read_zh())


def test_readme_links_to_readme_zh_at_its_top():
    check_linked_from_the_top(read_en())


def test_every_relative_link_of_readme_zh_leads_somewhere():
    check_links_lead_somewhere(read_zh())


def test_readme_zh_has_a_section_for_each_section_of_readme():
    check_sections(read_en(), read_zh())


def test_readme_zh_names_and_links_every_lesson_notebook_of_readme():
    check_notebooks(read_en(), read_zh())


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
    }
    for case, check in broken.items():
        try:
            check()
        except AssertionError:
            continue
        raise AssertionError(f"not caught: {case}")
    assert broken_links("[a](notebooks/zh/nowhere.ipynb) [b](#b) [c](#a)\n## A\n```\n[d](x)\n```") == [
        "notebooks/zh/nowhere.ipynb", "#b"]
    assert slug("一台服务器上的班级，以及更大规模") == "一台服务器上的班级以及更大规模"
    assert slug("A class on one server, and beyond") == "a-class-on-one-server-and-beyond"
    assert headings("## A\n```\n## not a heading\n```\n### B", 2) == ["A"]
    named = notebook_names("`01_x.ipynb` and [s](notebooks/teachers/solutions.ipynb)")
    assert named == {"01_x.ipynb", "solutions.ipynb"}
