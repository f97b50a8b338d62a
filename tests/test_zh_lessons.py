"""The Chinese course has every English lesson, with the same code: cells compared parsed, up to
comments, string literals and the one language line; the same tags and grading metadata."""
import ast
import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ENGLISH = sorted(p for p in NOTEBOOKS.glob("**/*.ipynb")
                 if "zh" not in p.relative_to(NOTEBOOKS).parts and ".ipynb_checkpoints" not in p.parts)
LANGUAGE_LINE = re.compile(r'^\s*autograd_lab\.language\("zh"\)\s*$')


def code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


class _Strings(ast.NodeTransformer):
    def visit_Constant(self, node):
        return ast.Constant("S") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node):
        return ast.Constant("S")


def shape(source: str) -> list[str]:
    """A cell's code without comments, string literals or the language line: magic lines as
    written (their comments dropped), the Python between them parsed."""
    out, python = [], []

    def flush():
        if python:
            tree = _Strings().visit(ast.parse("\n".join(python)))
            out.append(ast.dump(tree))
            python.clear()

    for line in source.splitlines():
        if LANGUAGE_LINE.match(line):
            continue
        stripped = line.strip()
        if stripped.startswith(("%", "!")):
            flush()
            out.append(re.sub(r"\s+#.*$", "", stripped))
        else:
            python.append(line)
    flush()
    return out


def counterpart(path: Path) -> Path:
    return NOTEBOOKS / "zh" / path.relative_to(NOTEBOOKS)


def test_the_shape_ignores_comments_strings_and_the_language_line():
    english = 'import autograd_lab\nprint("x.grad is", x.grad)  # the gradient\n%backward z'
    chinese = ('import autograd_lab\nautograd_lab.language("zh")\nprint("x.grad 是", x.grad)  # 梯度\n'
               '%backward z  # 逐步')
    assert shape(english) == shape(chinese)
    assert shape(english) != shape(english.replace("x.grad)", "x.grad * 2)"))
    assert shape("%backward z") != shape("%backward z --apply")


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_every_lesson_has_a_chinese_counterpart_with_the_same_code(path):
    zh = counterpart(path)
    assert zh.exists(), f"notebooks/zh/{path.relative_to(NOTEBOOKS)} is missing"
    english, chinese = code_cells(path), code_cells(zh)
    assert len(english) == len(chinese), "the two lessons have different numbers of code cells"
    for i, (e, c) in enumerate(zip(english, chinese, strict=True)):
        assert shape("".join(c["source"])) == shape("".join(e["source"])), f"code cell {i} differs"
        for key in ("tags", "nbgrader"):
            assert c["metadata"].get(key) == e["metadata"].get(key), f"code cell {i}: metadata {key!r} differs"


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_every_chinese_lesson_speaks_chinese_from_its_first_cell(path):
    zh = counterpart(path)
    if not zh.exists():
        pytest.fail(f"notebooks/zh/{path.relative_to(NOTEBOOKS)} is missing")
    first = "".join(code_cells(zh)[0]["source"])
    assert any(LANGUAGE_LINE.match(line) for line in first.splitlines()), "no language line in the first code cell"


def test_no_chinese_lesson_without_an_english_one():
    chinese = {p.relative_to(NOTEBOOKS / "zh") for p in (NOTEBOOKS / "zh").glob("**/*.ipynb")
               if ".ipynb_checkpoints" not in p.parts}
    assert chinese <= {p.relative_to(NOTEBOOKS) for p in ENGLISH}


def test_the_glossary_opens_the_chinese_course():
    cells = json.loads((NOTEBOOKS / "zh" / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"]
    front = "".join("".join(c["source"]) for c in cells[:2] if c["cell_type"] == "markdown")
    for term in ("叶子节点", "计算图", "反向传播", "梯度累加", "原地操作", "视图"):
        assert term in front, f"the glossary at the front of lesson 00 lacks {term}"


# PyTorch's own messages, which the lab quotes as they are inside Chinese sentences: from their start
# to the next Chinese character or tag
PYTORCH = re.compile("(?:one of the variables needed for gradient computation|a leaf Variable that requires "
                     "grad|To copy construct from a tensor|Trying to backward through the graph)[^<\u4e00-\u9fff]*")
CODE = re.compile(r"<(pre|code)\b[^>]*>.*?</\1>|^  \([a-z]\) .*$|data:image/png;base64,[A-Za-z0-9+/=]+",
                  re.S | re.M)  # code blocks, inline code, an exercise's options (code), pictures


def lab_faces(path: Path):
    """(cell index, HTML) of every stored output of the lab (its views carry agl-/autograd-lab classes)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    for i, cell in enumerate(cells):
        for out in cell.get("outputs", []):
            html = "".join(out.get("data", {}).get("text/html", ""))
            if "agl-" in html or "autograd-lab" in html:
                yield i, html


@pytest.mark.parametrize("path", ENGLISH, ids=lambda p: str(p.relative_to(NOTEBOOKS)))
def test_the_lab_speaks_no_english_sentence_in_the_chinese_lessons(path):
    """What the issue promises a learner who chose Chinese, read off the stored lessons: the lab's
    views hold no English sentence but PyTorch's own messages and code."""
    from helpers import english_words

    faces = list(lab_faces(counterpart(path)))
    assert len(faces) == len(list(lab_faces(path)))  # the same views are there to read
    left = {i: english_words(PYTORCH.sub(" ", CODE.sub(" ", html))) for i, html in faces}
    assert {i: words for i, words in left.items() if words} == {}
