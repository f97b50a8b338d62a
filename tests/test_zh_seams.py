"""Chinese without seams: every Chinese face reachable cheaply (the stepper's walk, panel and HTML over
a small graph with names and without, show_graph's title and table, storage's faces, the profile's
faces, a Jacobian's face, language()'s refusal) and every msgstr of the rooms core, stepper, storage,
profile and jacobians, its placeholders filled with typical values (a number, the learner's name x,
and the lab's own translated fallback words such as 输出 and 输入 1 where the code puts them), has no
ASCII space between two Chinese characters: spaces stay only next to Latin words, code and numbers.
And the glossary's terms are the ones used: no 实验室 (the tool is autograd_lab or 本工具), and
叶子节点 only where a graph node is meant (叶子张量 is the tensor)."""
import html
import json
import re
from pathlib import Path

import pytest
import torch
from babel.messages.pofile import read_po

import autograd_lab as al
from autograd_lab import i18n

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "autograd_lab" / "locale" / "zh" / "LC_MESSAGES"
ROOMS = ("core", "stepper", "storage", "profile", "jacobians")
ALL_ROOMS = sorted(p.stem for p in LOCALE.glob("*.po"))

# Chinese characters and full-width punctuation
CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
SEAM = re.compile(f"[{CJK}] [{CJK}]")
FIELD = re.compile(r"\{([A-Za-z_]\w*)(?:[!:][^{}]*)?\}")

# The placeholders the code fills with its own translated words when the learner gave no name, per
# room: the output ("the output"), the tensor a node made, the leaf, a rule's inputs ("input 2").
OUTPUT, MADE, LEAF, INPUT, INPUT_2 = "output", "made", "leaf", "input", "input 2"
FALLBACKS = {
    "core": {"what": (OUTPUT,)},
    "stepper": {"what": (OUTPUT,), "name": (OUTPUT,), "where": (MADE,), "leaf": (LEAF,), "input": (INPUT, INPUT_2),
                **{f: (INPUT_2,) for f in ("self", "other", "vec", "mat1", "mat2", "exponent")}},
}


def seams(text: str) -> list[str]:
    """The places where a space sits between two Chinese characters, with a little context."""
    return [text[max(0, m.start() - 12):m.end() + 12] for m in SEAM.finditer(text)]


def entries(room: str):
    """(msgid, [msgstr forms]) of every translated entry of a room's catalog."""
    with open(LOCALE / f"{room}.po", "rb") as f:
        catalog = read_po(f)
    for message in catalog:
        if not message.id:
            continue
        msgid = message.id[0] if isinstance(message.id, tuple) else message.id
        forms = list(message.string) if isinstance(message.string, tuple) else [message.string]
        yield msgid, [s for s in forms if s], message.python_brace_format


def fallback_words() -> dict[str, str]:
    """The lab's own words for unnamed things, in Chinese, as the code fills them in."""
    i18n.language("zh")
    try:
        return {OUTPUT: i18n._("the output"), INPUT: i18n._("input"),
                INPUT_2: i18n._("input {number}").format(number=2), LEAF: i18n._("the leaf"),
                MADE: i18n._("the tensor made by {node}").format(node="MulBackward0")}
    finally:
        i18n.language("en")


def filled(msgstr: str, braces: bool, room: str) -> list[str]:
    """msgstr filled in as the lab fills it (i18n.Sentence.format), by typical values: all numbers,
    all the name x, and (for the placeholders the code may fill with its own words) each of those
    words."""
    if not braces:
        return [msgstr]
    fields = set(FIELD.findall(msgstr))

    def fill(values: dict) -> str:
        values = {f: values.get(f, "x") for f in fields}
        try:
            return i18n.Sentence(msgstr).format(**values)
        except (ValueError, KeyError, IndexError, AttributeError):  # a spec for numbers, say {count:,}
            text = msgstr.replace("{{", "\0").replace("}}", "\1")
            text = FIELD.sub(lambda m: str(values[m.group(1)]), text)
            return text.replace("\0", "{").replace("\1", "}")

    out = [fill(dict.fromkeys(fields, 3)), fill(dict.fromkeys(fields, "x"))]
    words = fallback_words()
    for field, kinds in FALLBACKS.get(room, {}).items():
        if field in fields:
            out += [fill({field: words[kind]}) for kind in kinds]
    return out


@pytest.mark.parametrize("room", ROOMS)
def test_no_msgstr_has_a_seam_once_filled(room):
    found = []
    for msgid, forms, braces in entries(room):
        for form in forms:
            for text in filled(form, braces, room):
                found += [f"{msgid[:60]!r}: {s!r}" for s in seams(text)]
    assert not found, "\n".join(sorted(set(found)))


def test_the_fill_finds_a_seam():
    """A learner's name keeps its space, the lab's own word fills in without one, and a seam the
    translation itself has is found whatever fills it."""
    assert filled("{what} 的反向图", True, "stepper") == ["3 的反向图", "x 的反向图", "输出的反向图"]
    assert seams(filled("传给 输入：{what}", True, "stepper")[1]) == ["传给 输入：x"]
    assert seams("输出 的反向图") and seams("重新计算 输出。") and not seams("x 的反向图") and not seams("节点  梯度")
    assert str.format("{what} 的反向图", what="输出") == "输出 的反向图"  # what a plain format would show


@pytest.mark.parametrize("room", ALL_ROOMS)
def test_the_tool_is_not_a_laboratory(room):
    found = [msgid for msgid, forms, _b in entries(room) if any("实验室" in s for s in forms)]
    assert not found, f"实验室 in {room}: {found} (say autograd_lab or 本工具)"


def test_the_chinese_course_calls_the_tool_autograd_lab_or_this_tool():
    texts = {"README.zh.md": (ROOT / "README.zh.md").read_text(encoding="utf-8")}
    texts |= {f"docs/zh/{p.name}": p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs" / "zh").glob("*.md"))}
    for path in sorted((ROOT / "notebooks" / "zh").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[path.name] = "\n".join("".join(c["source"]) for c in cells)
    assert not [name for name, text in texts.items() if "实验室" in text]


def test_the_glossary_states_the_leaf_convention():
    cells = json.loads((ROOT / "notebooks" / "zh" / "00_start_here.ipynb").read_text(encoding="utf-8"))["cells"]
    glossary = "".join(cells[0]["source"])
    assert re.search(r"^\| leaf tensor[^|]*\| 叶子张量 \|", glossary, re.M)
    assert re.search(r"^\| leaf node[^|]*\| 叶子节点 \|", glossary, re.M)


@pytest.mark.parametrize("room", [*ROOMS, "exercises", "exercises_advanced", "practice"])
def test_a_leaf_node_only_where_a_node_is_meant(room):
    """叶子张量 for the tensor, 叶子节点 for the graph node: a msgstr says 叶子节点 only for an English
    sentence about a node, and every English "leaf tensor" is a 叶子张量."""
    wrong = []
    for msgid, forms, _b in entries(room):
        text = " ".join(forms)
        if "叶子节点" in text and "node" not in msgid.lower():
            wrong.append(msgid)
        if "leaf tensor" in msgid.lower() and "叶子张量" not in text:
            wrong.append(msgid)
        if "leaf node" in msgid.lower() and "叶子节点" not in text:
            wrong.append(msgid)
    assert not wrong, wrong


# --- the rendered faces ------------------------------------------------------------------------

def text_of(face: str) -> str:
    """An HTML face read as its text: code blocks and pictures left out, tags dropped."""
    face = re.sub(r"<(pre|code)\b[^>]*>.*?</\1>|data:image/png;base64,[A-Za-z0-9+/=]+", " ", face, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", face))


def stepper_faces(output, names=None) -> list[str]:
    s = al.step(output, names=names) if names else al.step(output)
    faces = []
    for index in range(len(s.trace.steps) + 1):
        s.goto(index)
        faces += [repr(s), s.panel(), text_of(s.html()), s.figure_title()]
    graph = al.show_graph(output, names=names) if names else al.show_graph(output)
    faces += [repr(graph), graph.figure().texts[0].get_text()]
    return faces


def chinese_faces() -> dict[str, str]:
    faces: dict[str, str] = {}
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    w, c = torch.tensor([1., 2.], requires_grad=True), torch.tensor([3., 4.])
    y = x ** 2
    z = y.mean()
    for i, face in enumerate(stepper_faces(z, names={"x": x, "y": y, "z": z})):
        faces[f"stepper, named {i}"] = face
    for i, face in enumerate(stepper_faces((x ** 2).mean())):  # no names: the output, the inputs
        faces[f"stepper, unnamed {i}"] = face
    for i, face in enumerate(stepper_faces((w * c + w.exp()).sum())):
        faces[f"stepper, a stop and two inputs {i}"] = face
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    for edit in (None, "mul_", "zero_"):
        view = al.compare_storage(a, edit=edit, name="a") if edit else al.compare_storage(a, name="a")
        faces[f"storage {edit}"] = view.text()
        faces[f"storage html {edit}"] = text_of(view.html())
    h = torch.zeros(2)
    wh = torch.ones(2, requires_grad=True)

    def carried():
        nonlocal h
        h = h * 0.5 + wh
        return h.sum()

    prof = al.profile_backward(carried, steps=2, warmup=0)
    faces["profile"], faces["profile html"] = prof.text(), text_of(prof.html())
    data = torch.ones(4, requires_grad=True)
    comp = al.compare_inputs(lambda d: (d * 2).sum(), data, steps=1, warmup=0)
    faces["compare_inputs"], faces["compare_inputs html"] = comp.text(), text_of(comp.html())
    jac = al.jacobian(x ** 2, x, v=torch.tensor([1., 0., 2.]))
    faces["jacobian"], faces["jacobian html"] = jac.text(), text_of(jac.html())
    with pytest.raises(Exception) as refused:
        al.language("fr")
    faces["language"] = str(refused.value)
    return faces


def test_every_rendered_chinese_face_is_seamless(zh):
    faces = chinese_faces()
    found = [f"{name}: {s!r}" for name, face in faces.items() for s in seams(face)]
    assert not found, "\n".join(found)
    assert not [name for name, face in faces.items() if "实验室" in face]
    assert not [name for name, face in faces.items() if "叶子节点" in face]  # these faces speak of leaf tensors
