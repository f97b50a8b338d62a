"""Shared test helpers: what the learner owns and whether anything of it changed, the widgets' controls,
whether a face speaks Chinese, the exercises' answers, and small graphs several tests build."""
import html
import re

import torch


def walk(fn):
    seen, stack = [], [fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.append(node)
        stack.extend(child for child, _ in node.next_functions)
    return seen


def torch_attributes() -> dict:
    """{(place, name): the object's identity} of every attribute of the places a guest in the
    learner's torch must leave as they were. Submodules (torch imports some lazily) are left out."""
    import types

    import torch.utils.checkpoint

    places = {"torch": torch, "torch.Tensor": torch.Tensor, "torch._C.TensorBase": torch._C.TensorBase,
              "torch.autograd": torch.autograd, "torch.autograd.function": torch.autograd.function,
              "torch.autograd.Function": torch.autograd.Function, "torch.autograd.graph": torch.autograd.graph,
              "torch.utils.checkpoint": torch.utils.checkpoint, "torch.nn.Module": torch.nn.Module}
    return {(place, name): id(value) for place, obj in places.items() for name, value in list(vars(obj).items())
            if not isinstance(value, types.ModuleType)}


def hooks_on(fn) -> int:
    """How many post-hooks and pre-hooks a graph node carries (found through a probe handle)."""
    count = 0
    for register in (fn.register_hook, fn.register_prehook):
        probe = register(lambda *args: None)
        count += len(probe.hooks_dict_ref()) - 1
        probe.remove()
    return count


def state(tensors):
    """Everything of the learner's that must not change: values, versions, .grad objects."""
    out = []
    for t in tensors:
        grad = t.grad if (t.is_leaf or t.retains_grad) else None
        out.append((t.detach().clone(), t._version, grad, None if grad is None else grad.detach().clone(),
                    None if grad is None else grad._version))
    return out


def assert_unchanged(tensors, before):
    after = state(tensors)
    for (v0, ver0, g0, gv0, gver0), (v1, ver1, g1, gv1, gver1) in zip(before, after, strict=True):
        assert torch.equal(v0, v1), "values changed"
        assert ver0 == ver1, "version changed"
        assert g0 is g1, ".grad was replaced"
        if g0 is not None:
            assert torch.equal(gv0, gv1) and gver0 == gver1, ".grad was modified"


def widgets(root):
    """Every widget under root (root included), depth first."""
    found, stack = [], [root]
    while stack:
        w = stack.pop()
        found.append(w)
        stack.extend(reversed(list(getattr(w, "children", ()) or ())))
    return found


def part(view, css_class: str):
    """The one control of view's widget that carries css_class (what a browser test would find)."""
    [control] = [w for w in widgets(view.widget) if css_class in w.get_state().get("_dom_classes", ())]
    return control


def checked(view, typed: str) -> str:
    """Type a prediction into a stepper's widget and press Check: the verdict the widget shows."""
    part(view, "agl-predict").value = typed
    view.buttons["check"].click()
    value = part(view, "agl-verdict").value
    marked = '<div lang="zh">'  # a Chinese face says its language (display.in_language): the verdict inside
    return value[len(marked):-len("</div>")] if value.startswith(marked) else value


_CODE = re.compile(
    r"`[^`]*`"                           # code in backticks
    r"|<[^<>]*>"                          # HTML tags, and tensor summaries like <3x4 float, norm 1.0>
    r"|&[a-z]+;|&#\d+;"                   # HTML entities
    r"|\S*[._()\[\]=*/+%\\{}0-9<>@#$|:-]\S*"  # identifiers, calls, numbers, flags, paths: code, not words
    r"|\b[A-Z][a-z]+[A-Z]\w*"             # CamelCase names (MulBackward0, LabInputError)
)
_WORDS = re.compile(r"\b[A-Za-z]{2,}(?:[ ,;'’]+[A-Za-z]{2,}){2,}\b")


def english_words(text: str, allowed: tuple[str, ...] = ()) -> list[str]:
    """Runs of three or more English words left in a text that should be Chinese (code, names,
    numbers and HTML removed first). allowed: texts that may stay (PyTorch's own messages, say).

    >>> english_words("第 2 步：MulBackward0 把 x.grad 乘以 2。")
    []
    >>> english_words("第 2 步: the gradient flows back")
    ['the gradient flows back']
    >>> english_words("<p>the engine failed</p> <code>x.grad</code>")
    ['the engine failed']
    """
    for keep in allowed:
        text = text.replace(keep, " ")
    text = html.unescape(re.sub(r"<[^<>]*>", " ", text))  # HTML: the words between the tags
    for keep in allowed:
        text = text.replace(keep, " ")
    return _WORDS.findall(_CODE.sub(" ", text))


# ---- the Chinese faces -----------------------------------------------------------------------------

CHINESE = re.compile(r"[\u4e00-\u9fff]")  # a Chinese character


def assert_chinese(text: str, allowed: tuple[str, ...] = (), what: str = "") -> None:
    """The text speaks Chinese, with no English sentence left (allowed: texts quoted as they are, such
    as PyTorch's own messages). what names the face in the failure's message."""
    shown = f"{what}: {text}" if what else text
    assert CHINESE.search(text), shown
    assert english_words(text, allowed) == [], shown


# ---- the exercises -----------------------------------------------------------------------------------

OPTION = re.compile(r"^  \([a-z]\) .*$", re.M)  # a choice's option, on a line of its own


def prose(text: str, code: str) -> str:
    """A statement (text or HTML) without its code: the setup and the options to choose among."""
    return OPTION.sub("", text.replace(code, ""))


def comments(setup: str) -> str:
    """The comments of an exercise's setup code, one a line."""
    return "\n".join(line.split("#", 1)[1] for line in setup.splitlines() if "#" in line)


def statement_faces(ex) -> tuple[str, str, str]:
    """An exercise's statement as text and as HTML, and its setup as the text shows it (indented): each
    face checked to hold the setup as it is."""
    from autograd_lab.practice import faces
    from autograd_lab.text import esc

    text, page = faces.exercise_text(ex), faces.statement_html(ex)
    block = "\n".join("    " + line if line else "" for line in ex.setup.splitlines())
    assert block in text and esc(ex.setup) in page
    return text, page, block


def chinese_statement(ex, check) -> tuple[str, str]:
    """The statement's prose, as text and as HTML (its setup code and options left out), passes
    check(text, what); returns the text face and the setup as it shows there."""
    from autograd_lab.text import esc

    text, page, block = statement_faces(ex)
    check(prose(text, block), "statement")
    check(prose(page, esc(ex.setup)), "statement html")
    return text, block


def hint_notes(ex):
    """Each hint of an exercise with the note ex.hint(i) gives for it, checked to carry that hint."""
    for i, hint in enumerate(ex.hints, 1):
        note = ex.hint(i)
        assert note.text == hint
        yield hint, note


def passes(ex, answer):
    """The verdict on a right answer, checked to be correct."""
    result = ex.check(answer)
    assert result.status == "correct", result.message
    return result


def chinese_verdicts(ex, right, mistakes, check, skip_right: bool = False):
    """Every diagnosis of ex, the praise of the right answer and the verdict on each known mistake
    pass check(text, what) (a test's Chinese check); returns (the right answer's result, the
    diagnoses the mistakes reached). skip_right: the mistakes were enumerated and may hold the right
    answer, which is then passed over."""
    from autograd_lab.practice.checking import ____

    for d in ex.diagnosers:
        check(d.message, "diagnosis")
    right_result = passes(ex, right)
    check(right_result.message, "praise")
    assert ex.check(____).status == "not attempted"
    reached = set()
    for answer in mistakes:
        result = ex.check(answer)
        if skip_right and result.status == "correct":
            continue
        assert result.status == "incorrect", (answer, result.message)
        check(result.message, "verdict")
        reached.add(result.diagnosis)
    return right_result, reached


def answer_of(value):
    """A value of torch (a tensor, or a tuple holding tensors) as the learner types it: numbers."""
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, tuple):
        return tuple(answer_of(v) for v in value)
    return value


def diagnosed_answers(ex) -> list:
    """The answers the diagnosers of an exercise hold as their own values: the whole answer, or one part
    of it with the other parts right (a diagnoser that tests the answer instead, when=, gives none)."""
    answers = []
    for d in ex.diagnosers:
        if d.when is not None:
            continue
        if d.part is None:
            answers.append(answer_of(d.value))
        else:
            whole = list(answer_of(ex.expected))
            whole[d.part] = answer_of(d.value)
            answers.append(tuple(whole))
    return answers


# fix_training_step's right answer, a copy of history.reference_step: a test's answer must not be the code it checks
def fixed(w, opt, x, h):
    opt.zero_grad()
    h = torch.tanh(x * w + h.detach())
    loss = (h - 0.5).pow(2).mean()
    loss.backward()
    opt.step()
    return h


def variant(cut_in=lambda h: h, cut_out=lambda h: h, retain=True, loss_of=lambda h: (h - 0.5).pow(2).mean()):
    """A training step for fix_training_step: the given one, with a cut (in or out) or retain_graph changed."""
    def step(w, opt, x, h):
        opt.zero_grad()
        h = cut_out(torch.tanh(x * w + cut_in(h)))
        loss_of(h).backward(retain_graph=retain)
        opt.step()
        return h
    return step


# ---- small graphs ------------------------------------------------------------------------------------

def x3():
    """A float64 leaf [1, 2, 3] that requires grad."""
    return torch.tensor([1., 2., 3.], requires_grad=True, dtype=torch.double)


class Cube(torch.autograd.Function):
    """t ** 3 as the learner's own Function: it saves its input for the backward."""

    @staticmethod
    def forward(ctx, t):
        ctx.save_for_backward(t)
        return t ** 3

    @staticmethod
    def backward(ctx, g):
        (t,) = ctx.saved_tensors
        return 3 * t ** 2 * g


class Bad(torch.autograd.Function):
    """a * 2, whose backward sends its gradient to the meta device: PyTorch refuses it (BadBackward)."""

    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, g):
        return g.to("meta")


class Unsummed(torch.autograd.Function):
    """x + b whose backward hands the output's gradient to both inputs as it is (summing none of it)."""

    @staticmethod
    def forward(ctx, x, b):
        return x + b

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, grad_output


def exercises_in_catalog(domain: str) -> list[str]:
    """The exercises whose sentences the given catalog holds (their topic module is among the
    catalog's sources in scripts/catalogs.py), in course order."""
    import importlib.util
    from pathlib import Path

    from autograd_lab.practice.bank import catalog

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("catalogs_sources", root / "scripts" / "catalogs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    files = {p.resolve() for p in module.sources(domain)}
    return [e.name for e in catalog()
            if Path(importlib.import_module(e.build.__module__).__file__).resolve() in files]


# IPython 7's terminal shell (started by globalipapp in a subprocess) sets the terminal's title with
# escape sequences on stdout; IPython 8 does not. What a test reads is the text around them.
TERMINAL_TITLE = re.compile(r"\x1b\[[0-9;]*t|\x1b\][^\x07]*\x07")


def printed(stdout: str) -> str:
    """What a subprocess printed, without a terminal shell's title escapes."""
    return TERMINAL_TITLE.sub("", stdout)
