"""The lab's two languages: choosing one, the catalogs' completeness, tables by display width,
figures with Chinese text and no missing glyph."""
import io
import os
import re
import subprocess
import sys

import pytest

from autograd_lab import i18n
from autograd_lab.errors import LabInputError
from autograd_lab.format import table, width


def test_language_switches_and_says_which(zh):
    assert i18n.language() == "zh"
    assert i18n.language("en") == "en" and i18n.language() == "en"
    assert i18n.language("zh_CN") == "zh"


def test_bad_language_changes_nothing(zh):
    with pytest.raises(LabInputError, match=r'language\("zh"\)'):
        i18n.language("fr")
    assert i18n.language() == "zh"
    with pytest.raises(LabInputError):
        i18n.language(3)


@pytest.mark.parametrize(("value", "expected"), [("zh", "zh"), ("zh_CN.UTF-8", "zh"), ("en", "en"), ("", "en"),
                                                  ("klingon", "en")])
def test_default_comes_from_the_environment(catalogs, value, expected):
    code = "import autograd_lab.i18n as i; print(i.language())"
    env = {**os.environ, "AUTOGRAD_LAB_LANG": value}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected and out.stderr == ""


def test_every_sentence_has_a_chinese_translation(catalogs):
    assert catalogs.problems("zh") == []


def test_the_check_fails_on_a_missing_translation(catalogs, tmp_path, monkeypatch):
    """Remove one translation from a copy of a catalog: the completeness check names it."""
    from babel.messages.pofile import read_po, write_po

    domain = next(d for d in i18n.DOMAINS if len(catalogs.read("zh", d)) > 1)
    catalog = catalogs.read("zh", domain)
    victim = next(m for m in catalog if m.id)
    victim.string = ""
    target = tmp_path / "zh" / "LC_MESSAGES" / f"{domain}.po"
    target.parent.mkdir(parents=True)
    with target.open("wb") as f:
        write_po(f, catalog)
    for other in i18n.DOMAINS:
        if other != domain:
            (target.parent / f"{other}.po").write_bytes(catalogs.po_path("zh", other).read_bytes())
    monkeypatch.setattr(catalogs, "LOCALE_DIR", tmp_path)
    found = catalogs.problems("zh")
    assert len(found) == 1 and "not translated" in found[0]
    with target.open("rb") as f:
        assert read_po(f).get(victim.id).string == ""


def test_placeholders_are_compared():
    from_scripts = pytest.importorskip("babel")  # noqa: F841 -- the catalogs script needs Babel
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("c", Path(__file__).parents[1] / "scripts" / "catalogs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.fields("{name} has {n:d} steps {{literal}}") == ["n", "name"]
    assert module.fields("第 {n:d} 步") != module.fields("{name} has {n:d} steps")


def test_every_module_is_in_exactly_one_catalog(catalogs):
    from pathlib import Path

    package = Path(i18n.__file__).parent
    modules = sorted(package.rglob("*.py"))
    owners = {m: [d for d in i18n.DOMAINS if m in catalogs.sources(d)] for m in modules}
    assert {str(m.relative_to(package)): d for m, d in owners.items() if len(d) != 1} == {}


def test_tables_align_by_display_width():
    text = table(["名称", "值"], [["梯度", "1"], ["x.grad", "22"]])
    lines = text.splitlines()
    starts = {width(line[: line.index(c)]) for line, c in zip(lines, ["值", "-", "1", "2"], strict=True)
              if c != "-"}
    assert starts == {8}, text


def test_chinese_figure_has_every_glyph(zh):
    """matplotlib warns of a missing glyph; tests turn warnings into errors."""
    from matplotlib.figure import Figure

    from autograd_lab.fonts import figure_text

    @figure_text
    def build():
        fig = Figure(figsize=(2, 1))
        fig.add_subplot().set_title("反向传播的计算图 x.grad")
        return fig

    buffer = io.BytesIO()
    build().savefig(buffer, format="png")
    assert buffer.getvalue()[:4] == b"\x89PNG"


def test_a_font_installed_after_matplotlibs_cache_draws_bold_text_without_a_word(zh, monkeypatch, caplog):
    """matplotlib's font cache may predate the font (installed after it was built): the lab adds
    every file of the family, bold included, so that bold text logs no "findfont" warning (it would
    reach a lesson's stderr and fail strict nbval)."""
    import logging

    from matplotlib import font_manager
    from matplotlib.figure import Figure

    from autograd_lab import fonts
    from autograd_lab.languages import LANGUAGES

    family = LANGUAGES["zh"].font.family
    monkeypatch.setattr(font_manager.fontManager, "ttflist",
                        [f for f in font_manager.fontManager.ttflist if f.name != family])
    monkeypatch.setattr(fonts, "_found", {})
    font_manager.fontManager._findfont_cached.cache_clear()

    @fonts.figure_text
    def build():
        fig = Figure(figsize=(2, 1))
        fig.add_subplot().set_title("反向传播 x.grad", fontweight="bold")
        return fig

    with caplog.at_level(logging.WARNING, logger="matplotlib"):
        build().savefig(io.BytesIO(), format="png")
    font_manager.fontManager._findfont_cached.cache_clear()
    assert [r.getMessage() for r in caplog.records] == []


def test_english_is_the_default_in_tests():
    assert i18n.language() == "en"
    assert re.fullmatch(r"[ -~]+", i18n._("Correct."))


def test_make_lab_opens_the_chinese_course_when_asked():
    """`make lab AUTOGRAD_LAB_LANG=zh` starts JupyterLab on the Chinese lesson 00 with the lab in Chinese."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    dry = subprocess.run(["make", "-n", "-o", ".venv/.installed", "lab", "AUTOGRAD_LAB_LANG=zh"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    line = next(li for li in dry.splitlines() if "jupyter lab" in li)
    assert "AUTOGRAD_LAB_LANG=zh" in line and "notebooks/zh/00_start_here.ipynb" in line
    english = subprocess.run(["make", "-n", "-o", ".venv/.installed", "lab"], cwd=root, capture_output=True,
                             text=True, check=True, env={**os.environ, "AUTOGRAD_LAB_LANG": ""}).stdout
    line = next(li for li in english.splitlines() if "jupyter lab" in li)
    assert "notebooks/00_start_here.ipynb" in line and "/zh/" not in line


def test_chinese_without_a_cjk_font_is_refused_and_changes_nothing(catalogs, monkeypatch, tmp_path):
    monkeypatch.setattr(i18n, "FONT_DIRS", (str(tmp_path),))
    with pytest.raises(LabInputError, match="fonts-noto-cjk"):
        i18n.language("zh")
    assert i18n.language() == "en" and i18n._("Correct.") == "Correct."


def test_extract_changes_no_catalog_and_one_new_sentence_is_one_new_entry(catalogs, tmp_path, monkeypatch):
    """Catalogs without churn: extracting again at the same code rewrites no byte of any catalog, and
    a sentence added in the middle of a module adds its own entry and changes no other line (no
    source line numbers, no creation date, no version in the header)."""
    import difflib

    real = {d: catalogs.po_path("zh", d).read_text(encoding="utf-8") for d in i18n.DOMAINS}
    target = tmp_path / "zh" / "LC_MESSAGES"
    target.mkdir(parents=True)
    for domain, text in real.items():
        (target / f"{domain}.po").write_text(text, encoding="utf-8")
    monkeypatch.setattr(catalogs, "LOCALE_DIR", tmp_path)
    catalogs.extract()
    assert {d: (target / f"{d}.po").read_text(encoding="utf-8") for d in i18n.DOMAINS} == real, \
        "extract at this commit changes a catalog: run scripts/catalogs.py extract and commit"

    original = catalogs.template
    path, line = next(m for m in original("stepper") if m.id).locations[0]

    def with_one_more(domain):
        made = original(domain)
        made.add("A sentence added in the middle.", None, [(path, line + 1)])
        return made

    monkeypatch.setattr(catalogs, "template", with_one_more)
    catalogs.extract(["stepper"])
    after = (target / "stepper.po").read_text(encoding="utf-8").splitlines()
    changes = [op for op in difflib.SequenceMatcher(None, real["stepper"].splitlines(), after).get_opcodes()
               if op[0] != "equal"]
    assert len(changes) == 1 and changes[0][0] == "insert", changes
    inserted = after[changes[0][3]:changes[0][4]]
    assert sorted(inserted) == sorted(["#: " + path, 'msgid "A sentence added in the middle."', 'msgstr ""', ""])


def test_a_language_is_one_table(tmp_path):
    """What the code knows of a language comes from its table: a third language's words are read
    as answers, in every language."""
    from autograd_lab import languages

    text = languages.TABLE.read_text(encoding="utf-8") + (
        '\n[fr]\nname = "Français"\nyes = ["oui"]\nno = ["non"]\n\n[fr.outcomes]\nerror = ["erreur"]\n')
    table = languages._read(text)
    assert table["fr"].name == "Français" and table["fr"].font is None
    assert table["fr"].outcomes == {"error": ("erreur",)}
    assert table["zh"].font is not None and table["zh"].font.install.startswith("apt-get")


def test_every_outcome_a_learner_may_type_is_one_the_storage_lab_gives():
    from autograd_lab import languages
    from autograd_lab.storage.experiments import OUTCOMES

    assert {o for lang in languages.LANGUAGES.values() for o in lang.outcomes} == set(OUTCOMES)
    for lang in languages.LANGUAGES.values():
        assert lang.yes and lang.no and set(lang.outcomes) == set(OUTCOMES), lang.code


def test_a_filled_catalog_is_one_that_extract_leaves_as_it_is(catalogs, tmp_path, monkeypatch):
    """fill writes the catalog in the order extract writes it: a translation set by fill is not
    moved by the next extract."""
    target = tmp_path / "zh" / "LC_MESSAGES"
    target.mkdir(parents=True)
    for domain in i18n.DOMAINS:
        (target / f"{domain}.po").write_bytes(catalogs.po_path("zh", domain).read_bytes())
    monkeypatch.setattr(catalogs, "LOCALE_DIR", tmp_path)
    message = next(m for m in catalogs.read("zh", "stepper") if m.id and isinstance(m.id, str))
    catalogs.fill("stepper", {message.id: message.string + " "})
    filled = (target / "stepper.po").read_text(encoding="utf-8")
    catalogs.extract(["stepper"])
    assert (target / "stepper.po").read_text(encoding="utf-8") == filled
    assert catalogs.read("zh", "stepper").get(message.id).string == message.string + " "
