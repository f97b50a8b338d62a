"""Sentences files (autograd_lab/words.py): a module's table of sentences in <module>.toml beside it.
Every file sits beside the module that reads it, holds sentences only, every key of it is read by
the code, every sentence reaches a catalog, and a sentence is given in the language of the moment."""
import ast
import io
import tomllib
from pathlib import Path

import pytest

from autograd_lab.words import Words, words_of

PACKAGE = Path(__file__).resolve().parents[1] / "autograd_lab"
# a module's sentences file is <module>.toml beside <module>.py; other .toml files are data
# (locale/languages.toml, practice/lessons.toml)
FILES = sorted(p for p in PACKAGE.rglob("*.toml") if p.with_suffix(".py").exists())
SOURCE = {p: p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py")}


def keys(table: dict, path=()):
    for key, value in table.items():
        yield (*path, key), value
        if isinstance(value, dict):
            yield from keys(value, (*path, key))


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)


def test_there_are_sentences_files():
    assert len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_sentences_file_sits_beside_the_module_that_reads_it(path):
    module = path.with_suffix(".py")
    assert module.exists(), f"{path.name} has no module beside it"
    calls = [n for n in ast.walk(ast.parse(SOURCE[module])) if isinstance(n, ast.Call)
             and getattr(n.func, "id", "") == "words_of" and ast.unparse(n.args[0]) == "__name__"]
    assert calls, f"{module.name} does not read its sentences (words_of(__name__))"
    assert isinstance(words_of(module_name(module)), Words)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_sentences_file_holds_sentences_only_and_every_key_is_read(path):
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    code = "\n".join(SOURCE.values())
    unread, not_sentences = [], []
    for where, value in keys(table):
        if f'"{where[-1]}"' not in code and f"'{where[-1]}'" not in code:
            unread.append(".".join(where))
        items = value if isinstance(value, list) else [value]
        if not isinstance(value, dict) and not all(isinstance(v, str) and v.strip() for v in items):
            not_sentences.append(".".join(where))
    assert not unread, f"{path.name}: keys no code reads (a sentence no one shows): {unread}"
    assert not not_sentences, f"{path.name}: values that are not sentences: {not_sentences}"


def test_every_sentence_of_the_files_is_in_a_catalog(catalogs):
    found = {(str(p), m) for domain in catalogs.DOMAINS for m, p, _line, _c in catalogs.extracted(domain)
             if p.suffix == ".toml"}
    for path in FILES:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        for where, value in keys(table):
            for sentence in value if isinstance(value, list) else [value] if isinstance(value, str) else []:
                assert (str(path), sentence) in found, f"{path.name}: {'.'.join(where)} is not extracted"


def test_the_extractor_places_keys_and_keeps_translator_comments(catalogs):
    text = ('# what the file holds\n\n[ex]\ntitle = "A title"\n# Translators: {x} is a number\n'
            'intro = """\nA long \\\nsentence {x}."""\nhints = [\n    "one",\n    """\ntwo"""\n]\n\n'
            '[ex.diagnoses]\nswapped = "Swapped."\n')
    found = list(catalogs.extract_toml(io.BytesIO(text.encode()), {}, ("Translators:",), {}))
    assert [(line, message, comments) for line, _f, message, comments in found] == [
        (4, "A title", []), (6, "A long sentence {x}.", ["Translators: {x} is a number"]),
        (9, "one", []), (9, "two", []), (16, "Swapped.", [])]
    with pytest.raises(ValueError, match="strings only"):
        list(catalogs.extract_toml(io.BytesIO(b"[ex]\nplace = 3\n"), {}, (), {}))
    with pytest.raises(ValueError, match="under a \\[table\\] header"):
        list(catalogs.extract_toml(io.BytesIO(b'ex = { intro = "Hi." }\n'), {}, (), {}))


def test_a_sentence_is_given_in_the_language_of_the_moment(zh):
    shared = words_of("autograd_lab.practice.messages")
    english = shared["missing_mean"]
    assert english.startswith("This is the gradient of the sum.")
    chinese = shared("missing_mean")
    assert chinese != english and any("\u4e00" <= ch <= "\u9fff" for ch in chinese)
    zh.language("en")
    assert shared("missing_mean") == english


def test_a_missing_key_says_which_file_and_key():
    with pytest.raises(KeyError, match="messages has no sentence 'nope'"):
        words_of("autograd_lab.practice.messages")("nope")
