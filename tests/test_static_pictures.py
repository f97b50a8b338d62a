"""A lesson read without a kernel (GitHub, nbviewer, an HTML export) shows every picture of the lab.

Renderers pick text/html over image/png in one output, so each view that has a figure carries it
inside its HTML face as an <img> with a data URI. Here every stored lesson is converted to HTML with
nbconvert, as nbviewer does, and every lab output that has a picture must bring it along."""
import base64
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(p for p in NOTEBOOKS.glob("**/*.ipynb") if ".ipynb_checkpoints" not in p.parts)
WIDGET = "application/vnd.jupyter.widget-view+json"
IMG = re.compile(r'(?:<div lang="zh">)?'  # a Chinese face says its language
                 r'<div class="agl-static-scroll" style="overflow-x:auto"><img class="agl-static-figure" '
                 r'style="max-width:none" alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)"/></div>')
# in the export, as nbconvert writes the tag back (attributes in another order)
EXPORTED = re.compile(r'<img\b(?=[^>]*\bclass="agl-static-figure")'
                      r'(?=[^>]*\bsrc="data:image/png;base64,[A-Za-z0-9+/=]+")[^>]*>')
# the first line of the text face of each view that has a figure
# (English | Chinese: the Chinese course's views)
WITH_PICTURE = {
    "stepper": re.compile(r"backward of .+: \d+ steps?|.+ 的反向传播：共 \d+ 步"),
    "graph": re.compile(r"backward graph of .+: \d+ nodes|.+ 的反向图：\d+ 个节点"),
    "storage": re.compile(r".+: a (leaf|non-leaf) tensor\b.*, of shape|.+：.*叶子张量.*形状"),
    "profile": re.compile(r"backward profile: |反向传播性能分析："),
    "jacobian": re.compile(r"Jacobian d.+/d.+: \d+ x \d+|雅可比矩阵 d.+/d.+：\d+ x \d+"),
}


def lab_outputs(nb):
    """(kind, output) for every stored output of a lab view that has a picture."""
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "text/html" not in data or "text/plain" not in data:
                continue
            first = data["text/plain"].splitlines()[0] if data["text/plain"] else ""
            for kind, pattern in WITH_PICTURE.items():
                if pattern.match(first):
                    yield kind, out


def test_lessons_are_found():
    names = [p.relative_to(NOTEBOOKS).as_posix() for p in LESSONS]
    assert "00_start_here.ipynb" in names and "teachers/solutions.ipynb" in names


@pytest.mark.parametrize("course", ["en", "zh"])
def test_every_kind_of_picture_is_in_the_lessons(course):
    lessons = [p for p in LESSONS if ("zh" in p.relative_to(NOTEBOOKS).parts) == (course == "zh")]
    kinds = {kind for path in lessons for kind, _ in lab_outputs(nbformat.read(path, as_version=4))}
    assert kinds == set(WITH_PICTURE)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.relative_to(NOTEBOOKS).as_posix())
def test_every_lab_picture_survives_an_html_export(path):
    nb = nbformat.read(path, as_version=4)
    outputs = list(lab_outputs(nb))
    for kind, out in outputs:
        html = out["data"]["text/html"]
        found = IMG.match(html)
        assert found, f"{kind} output without its picture in text/html: {html[:120]}"
        assert base64.b64decode(found.group(1)).startswith(b"\x89PNG"), kind
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    assert len(EXPORTED.findall(body)) == len(outputs)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.relative_to(NOTEBOOKS).as_posix())
def test_no_bare_widget_repr_is_stored(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            assert not (WIDGET in data and set(data) <= {WIDGET, "text/plain"}), data.get("text/plain")
