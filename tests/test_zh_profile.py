"""The backward profiler in Chinese: profile_backward, compare_inputs and %%backward_profile speak
Chinese in their verdicts, evidence, tables, figure and refusals (PyTorch's own message, quoted in a
verdict, stays as PyTorch wrote it); the tables align by display width; timings keep their 'N.NN ms'
format, which the lessons normalise. The English faces are unchanged."""
import html
import io
import re

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from autograd_lab import compare_inputs, profile_backward
from autograd_lab.errors import LabInputError
from autograd_lab.format import width
from autograd_lab.profile import faces
from autograd_lab.profile.records import Profile, StepRecord
from autograd_lab.profile.verdict import failure_fix, judge
from helpers import CHINESE
from helpers import assert_chinese as chinese

TIMING = re.compile(r"\d+(\.\d+)? ?(ms|s|µs)\b")  # what the lessons' sanitize.cfg normalises
# PyTorch's own words the profiler quotes: the message of a backward through a freed graph
FREED = "Trying to backward through the graph a second time"
PYTORCH = (FREED, "(or directly access saved tensors after they have already been freed)",
           "as is")  # 'as is' is the name of a variant, typed as such: variants=("as is", ...)


def assert_chinese(text: str) -> None:
    """Chinese, with no English sentence left: PyTorch's quoted words, the variants' names, timings
    ('0.12 ms') and the tables' Python values (True, False) set aside."""
    allowed = PYTORCH + tuple(html.escape(p, quote=True) for p in PYTORCH)
    chinese(re.sub(r"\b(True|False)\b", " ", TIMING.sub(" ", text)), allowed)


def translated(words) -> list[str]:
    """Headers as the catalogs give them now (a word another room also uses has that room's
    translation: the first catalog wins), each Chinese."""
    from autograd_lab.i18n import _

    out = [_(w) for w in words]
    assert all(CHINESE.search(w) for w in out), out
    return out


torch.manual_seed(0)
W = torch.nn.Parameter(torch.randn(4, 4) * 0.3)
inp = torch.randn(4)
data = torch.randn(64, 4, requires_grad=True)
made = W * 2
made2 = W * 3
state: dict = {"kept": {}}


def two_carriers():
    global h2, h3
    h2 = torch.tanh(W @ h2 + inp)
    h3 = torch.tanh(W @ h3 + inp)
    return (h2 + h3).sum()


def rnn_one():
    global h
    h = torch.tanh(W @ h + inp)
    return h.pow(2).sum()


def kept_in_a_dict():
    kept = state["kept"]
    kept["s"] = torch.tanh(W @ kept.get("s", torch.zeros(4)) + inp)
    return kept["s"].pow(2).sum()


def data_step():
    return (data[:8] @ W).pow(2).mean()


def history_step():
    return (made @ inp + made2 @ inp).pow(2).mean()


def flat_step():
    return (W @ inp).pow(2).sum()


def own_backward():
    loss = (W @ inp).sum()
    loss.backward()
    return loss


def twice():
    loss = (W @ inp).sum()
    loss.backward()
    loss.backward()


h = h2 = h3 = torch.zeros(4)


def fresh():
    global h, h2, h3
    h = h2 = h3 = torch.zeros(4)
    state["kept"] = {}


STEPS = {"carried": (rnn_one, {}), "two carriers": (two_carriers, {}), "kept in a dict": (kept_in_a_dict, {}),
         "data": (data_step, {}), "history": (history_step, {}), "flat": (flat_step, {}),
         "own backward": (own_backward, {}), "failed": (twice, {}),
         "failed without retain_graph": (rnn_one, {"retain_graph": False})}


@pytest.mark.parametrize("name", list(STEPS))
def test_every_verdict_speaks_chinese(zh, name):
    fn, options = STEPS[name]
    fresh()
    prof = profile_backward(fn, steps=3, warmup=1, **options)
    assert_chinese(prof.text())
    assert_chinese(prof.html())
    assert_chinese(prof.verdict)
    if "#" in prof.fix:
        assert CHINESE.search(prof.fix.split("#", 1)[1])
    W.grad = None


def test_the_words_of_a_verdict(zh):
    fresh()
    prof = profile_backward(two_carriers, steps=2, warmup=0)
    assert prof.verdict.startswith("计算图每步增加 6 个节点（9 -> 15）：h2 和 h3 把历史从一步带进下一步")
    assert f"'{FREED}'" in prof.verdict and "。 " not in prof.verdict  # sentences follow without a space
    assert prof.fix.splitlines() == ["h2 = h2.detach()   # 放在这一步的开头：保留值，丢掉历史",
                                     "h3 = h3.detach()   # 放在这一步的开头：保留值，丢掉历史"]
    text = prof.text()
    assert "计算图：9 -> 15 个节点（每步增加 6 个）" in text and "把历史带到下一步的张量：h2, h3" in text
    assert "没有张量带着历史传入" in text and "需要梯度的数据：无" in text
    prof = profile_backward(data_step, steps=1, warmup=0)
    assert "需要梯度的数据：data（256 个数）" in prof.text() and prof.fix.startswith("data = data.detach()")


def test_anomaly_mode_and_the_budget_are_said_in_chinese(zh):
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        prof = profile_backward(data_step, steps=1, warmup=0)
    assert prof.verdict.endswith("调试结束后请调用 torch.autograd.set_detect_anomaly(False)。")
    assert_chinese(prof.text())
    import time

    def slow():
        time.sleep(0.03)
        return (W * 2).sum()
    prof = profile_backward(slow, steps=3, warmup=0, budget=0.01)
    assert "运行了 3 步中的 1 步后停止：0.01 s 的时间预算已用完" in prof.text()
    assert_chinese(prof.text())


def records(gpu: bool, measured: int) -> Profile:
    prof = Profile([StepRecord(1, True, 1.0, 2.0, 3, 0)] + [StepRecord(i + 2, False, 1.25, 2.5, 3, 0)
                                                           for i in range(measured)], gpu=gpu, planned=measured + 1)
    judge(prof)
    return prof


@pytest.mark.parametrize("gpu", [False, True])
@pytest.mark.parametrize("measured", [1, 2])
def test_the_first_line_in_both_languages(zh, gpu, measured):
    """One step or several, on a GPU or not: a whole sentence each (the GPU path needs CUDA to run)."""
    prof = records(gpu, measured)
    chinese = faces.profile_text(prof).splitlines()[0]
    assert_chinese(chinese)
    assert chinese.startswith(f"反向传播性能分析：1 步预热（标有 *）之后测量了 {measured} 步")
    assert ("GPU" in chinese) == gpu
    zh.language("en")
    english = faces.profile_text(prof).splitlines()[0]
    steps = "1 step" if measured == 1 else f"{measured} steps"
    assert english == (f"backward profile: {steps} measured after 1 warm-up (marked *), "
                       f"backward(retain_graph=True){' on a GPU, synchronised' if gpu else ''}")


def test_timings_keep_their_format(zh):
    """The lessons normalise 'N.NN ms' and 'N s': in Chinese every timing is still found by that pattern."""
    prof = records(False, 2)
    prof.without_data_ms, prof.budget = 0.5, 0.01
    text = faces.profile_text(prof)
    assert "前向传播中位数 1.25 ms，反向传播中位数 2.50 ms，最后一次反向传播 2.50 ms" in text
    assert "最后一步：反向传播 2.50 ms；不计算数据的梯度时 0.50 ms" in text
    assert "0.01 s 的时间预算" in text
    timings = [m.group(0) for m in TIMING.finditer(text)]
    assert len(timings) == 3 * 2 + 3 + 2 + 1  # the table's, the timing line's, the last step's, the budget


def cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """The cells of a table line cut at display columns (a Chinese character takes two)."""
    columns: list[str] = []
    for ch in line:
        columns += [ch] + [""] * (width(ch) - 1)
    return ["".join(columns[a:b]).strip() for a, b in spans]


def spans(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def test_the_step_table_is_chinese_and_aligned_by_display_width(zh):
    fresh()
    prof = profile_backward(rnn_one, steps=2, warmup=1)
    lines = faces.profile_text(prof.model).split("\n\n")[1].splitlines()
    cut = spans(lines[1])
    assert cells(lines[0], cut) == translated(faces.HEAD)
    assert [cells(line, cut)[:4] for line in lines[2:]] == [["1*", "6", "0", "-"], ["2", "9", "4", "h"],
                                                            ["3", "12", "7", "h"]]
    assert all(re.fullmatch(r"\d+\.\d\d ms", c) for line in lines[2:] for c in cells(line, cut)[4:])
    # the time columns are right-aligned: every line ends at the same display column
    assert len({width(line) for line in lines}) == 1, lines


def test_the_comparison_speaks_chinese_and_aligns(zh):
    w = torch.nn.Parameter(torch.randn(4, 4) * 0.3)
    comp = compare_inputs(lambda d: (d[:8] @ w).pow(2).mean(), data, steps=1, warmup=0)
    assert_chinese(comp.text())
    assert_chinese(comp.html())
    assert comp.verdict.startswith("反向传播工作量最少（每步 16 个梯度元素，计算图不增长）："
                                   "detach(), clone().detach()。")
    assert "as is 每步计算 272 个梯度元素" in comp.verdict and "。 " not in comp.verdict
    lines = comp.text().splitlines()
    cut = spans(lines[1])
    assert cells(lines[0], cut) == translated(faces.COMPARE_HEAD)
    assert [cells(line, cut)[:6] for line in lines[2:6]] == [
        ["as is", "True", "True", "6", "0", "272"], ["clone()", "True", "False", "7", "0", "272"],
        ["detach()", "False", "True", "4", "0", "16"], ["clone().detach()", "False", "False", "4", "0", "16"]]
    assert comp.row("as is").nodes == 6  # the variants keep their names: they are typed as such
    assert lines[-1] == comp.verdict


def test_the_hidden_state_comparison_speaks_chinese(zh):
    w = torch.nn.Parameter(torch.randn(4, 4) * 0.3)

    def step(hh):
        nxt = torch.tanh(w @ hh + inp)
        return nxt.pow(2).sum(), nxt
    comp = compare_inputs(step, torch.zeros(4), steps=3, warmup=0,
                          variants=("as is", "clone()", "detach()", ".data", ("x1", lambda t: t * 1)))
    assert_chinese(comp.text())
    assert "6 -> 12" in comp.text() and comp.row(".data").growth == 0


def test_the_figure_has_chinese_labels_and_draws_without_a_warning(zh):
    fresh()
    prof = profile_backward(rnn_one, steps=2, warmup=1)
    fig = faces.profile_figure(prof.model)
    ax, nodes = fig.axes
    assert ax.get_title() == "反向传播性能分析：跨步携带历史"
    assert (nodes.get_xlabel(), ax.get_ylabel(), nodes.get_ylabel()) == ("步（浅色带斜线：预热）", "反向传播时间（ms）",
                                                                         "计算图节点数")
    assert [t.get_text() for t in nodes.get_legend().get_texts()] == ["从损失可达的节点", "从输入可达的节点"]
    fig.savefig(io.BytesIO(), format="png")  # a missing glyph would warn, and a warning fails the test
    assert prof.figure_title() == "每步的反向传播时间和计算图节点数"
    assert 'alt="每步的反向传播时间和计算图节点数"' in prof.static_html()


@pytest.mark.parametrize("kind", list(faces.KIND_NAMES))
def test_every_kind_has_a_chinese_title(zh, kind):
    prof = records(False, 1)
    prof.kind = kind
    title = faces.profile_figure(prof).axes[0].get_title()
    assert_chinese(title)


def test_refusals_are_chinese(zh):
    refused = [lambda: profile_backward(42), lambda: profile_backward(data_step, steps=0),
               lambda: profile_backward(lambda: 3.0, steps=1), lambda: profile_backward(lambda: torch.ones(2).sum()),
               lambda: profile_backward(data_step, steps=10**9), lambda: profile_backward(data_step, budget=0),
               lambda: compare_inputs(lambda d: d.sum(), data, variants=("copy",)),
               lambda: compare_inputs(lambda d: d.sum(), [1, 2]),
               lambda: compare_inputs(lambda d: d.sum(), data, variants=(3,)),
               lambda: compare_inputs(lambda d: 3, data), lambda: compare_inputs(lambda d: d.sum(), data, steps=0)]
    for refuse in refused:
        with pytest.raises(LabInputError) as info:
            refuse()
        assert_chinese(str(info.value))
    with pytest.raises(LabInputError, match=r"最多 10000 步.*请这样写：profile_backward\(step, steps=20\)"):
        profile_backward(data_step, steps=10**9)


def test_a_failure_the_explainer_does_not_know_gets_a_chinese_fix(zh):
    assert failure_fix("something else went wrong") == "# 单独运行一步，就能读到 PyTorch 的完整错误信息"
    assert failure_fix("grad can be implicitly created only for scalar outputs").startswith("loss.sum().backward()")


# -- in a real IPython shell ---------------------------------------------------------------------

RNN = "h = torch.tanh(W @ h + inp)\nh.pow(2).sum()"


@pytest.fixture
def ns(ip):
    ip.run_cell("import torch\ntorch.manual_seed(0)\nW = torch.nn.Parameter(torch.randn(4, 4) * 0.3)\n"
                "inp = torch.randn(4)\nh = torch.zeros(4)\ndata = torch.randn(32, 4, requires_grad=True)")
    return ip


def test_the_magic_speaks_chinese(zh, ns):
    with capture_output() as cap:
        ns.run_cell_magic("backward_profile", "--steps 3 --warmup 1", RNN)
    assert cap.stderr == ""
    text, page = cap.outputs[-1].data["text/plain"], cap.outputs[-1].data["text/html"]
    assert_chinese(text)
    assert_chinese(page)
    assert "把历史带到下一步的张量：h" in text and "修复方法：\n    h = h.detach()" in text
    assert "每步的反向传播时间和计算图节点数" in cap.outputs[0].data["text/plain"]


def test_the_magics_usage_errors_are_chinese(zh, ns):
    with pytest.raises(UsageError) as info:
        ns.run_cell_magic("backward_profile", "", "loss = (W @ inp).sum()")
    assert_chinese(str(info.value))
    with pytest.raises(UsageError, match=r"请这样写：%%backward_profile --steps 20"):
        ns.run_cell_magic("backward_profile", "--steps 1000000000", RNN)


def test_the_progress_bar_is_labelled_in_chinese(zh, ns, monkeypatch):
    import ipywidgets

    from autograd_lab.profile import view

    bars = []
    real = ipywidgets.IntProgress
    monkeypatch.setattr("IPython.display.display", lambda *a, **k: None)
    monkeypatch.setattr(ipywidgets, "IntProgress", lambda *a, **k: bars.append(real(*a, **k)) or bars[-1])
    monkeypatch.setattr(view, "live", lambda: True)
    view.profile_cell(ns, RNN, steps=1, warmup=0)
    [bar] = bars
    assert bar.description == "性能分析中"


# -- the English faces, unchanged ----------------------------------------------------------------

def test_the_english_table_figure_and_labels():
    fresh()
    prof = profile_backward(rnn_one, steps=2, warmup=1)
    text = prof.text()
    assert text.split("\n\n")[1].splitlines()[0] == "step  nodes  from inputs  carried in     forward    backward"
    assert "\ngraph: 6 -> 12 nodes (grows by 3 per step)\ncarries history across steps: h\n" in text
    assert "\narrives with history: nothing\ndata that requires grad: none\n" in text
    assert re.search(r"\ntiming \(steps 2-3\): forward median \d+\.\d\d ms, backward median \d+\.\d\d ms, "
                     r"last backward \d+\.\d\d ms\n", text)
    assert "\nverdict: The graph grows by 3 nodes per step (6 -> 12): h carries history" in text
    assert "'Trying to backward through the graph a second time'.)\nfix:\n    h = h.detach()   # at the start" in text
    assert '<p class="agl-verdict"><b>Verdict:</b> The graph grows' in prof.html()
    assert '<p><b>Fix:</b></p><pre class="agl-fix">h = h.detach()' in prof.html()
    fig = faces.profile_figure(prof.model)
    ax, nodes = fig.axes
    assert (ax.get_title(), nodes.get_xlabel(), ax.get_ylabel(), nodes.get_ylabel()) == (
        "backward profile: carried history", "step (pale, hatched: warm-up)", "backward time (ms)", "graph nodes")
    assert [t.get_text() for t in nodes.get_legend().get_texts()] == ["nodes from the loss", "nodes from the inputs"]
    assert prof.figure_title() == "backward time and graph nodes per step"


def test_the_english_verdicts():
    fresh()
    prof = profile_backward(two_carriers, steps=2, warmup=0)
    assert prof.verdict == (
        "The graph grows by 6 nodes per step (9 -> 15): h2 and h3 carry history from one step into the next, so "
        "every backward walks back through all earlier steps and gets slower each step. (Without "
        "retain_graph=True, the second backward would fail with 'Trying to backward through the graph a second "
        "time'.)")
    prof = profile_backward(history_step, steps=1, warmup=0)
    assert prof.verdict == (
        "made and made2 arrive with a history of 3 of the 8 nodes (they were computed from a parameter or a model "
        "output): every backward walks that history again and sends gradients into whatever made and made2 came "
        "from.")
    assert prof.fix.splitlines() == ["made = made.detach()   # before the step uses it",
                                     "made2 = made2.detach()   # before the step uses it"]
    fresh()
    prof = profile_backward(kept_in_a_dict, steps=2, warmup=0)
    assert prof.verdict.startswith("The graph grows by 3 nodes per step (6 -> 9), but none of the variables")
    assert prof.fix == "state = state.detach()   # wherever a value is kept from one step to the next"
    prof = profile_backward(flat_step, steps=1, warmup=0)
    assert prof.verdict == ("The graph is flat: 4 nodes every step, none of them brought in by the inputs. "
                            "Backward walks only this step's work.")
    assert prof.fix == "# nothing to detach; first steps are slower (warm-up): judge the later ones"
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        prof = profile_backward(flat_step, steps=1, warmup=0)
    assert prof.verdict.endswith("this step's work. Anomaly detection is on, which slows every backward: "
                                 "torch.autograd.set_detect_anomaly(False) when you are done debugging.")


def test_the_english_comparison():
    comp = compare_inputs(lambda d: (d * 2).sum(), data, variants=("detach().clone()", "view(-1)", ".data",
                                                                     ("x1", lambda t: t * 1)), steps=1)
    assert comp.verdict == (
        "Least backward work (0 gradient elements per step, graph flat): detach().clone(), .data. view(-1) "
        "computes 256 gradient elements per step: the data's own gradient is computed and written at every step. "
        "A copy alone does not cut the graph: x1 still does more. Sharing memory costs nothing: .data shares "
        "storage with the data.")
    assert comp.text().splitlines()[0] == ("variant           requires grad  shares storage  nodes  growth/step  "
                                           "grad elements  forward  backward")
    headers = '<th scope="col">variant</th><th scope="col">requires grad</th>'
    assert headers in comp.html() and "<b>Verdict:</b>" in comp.html()


def test_the_english_refusals():
    expected = [
        (lambda: profile_backward(lambda: torch.ones(2).sum(), steps=1),
         "the step must end in the loss: a tensor with a grad_fn, got Tensor without a graph. End the step with "
         "the loss, e.g. loss = (model(x) - y).pow(2).mean(); loss"),
        (lambda: profile_backward(data_step, budget="soon"),
         "budget is the time the profiler may take, in seconds: a number above 0, got 'soon'. "
         "Type: profile_backward(step, budget=60)"),
        (lambda: compare_inputs(lambda d: d.sum(), data, variants=(3,)),
         "a variant is a name or a (name, function) pair, not 3. Type: variants=('as is', 'detach()')"),
        (lambda: compare_inputs(lambda d: 3, data),
         "the step must return the loss (a tensor with a grad_fn), or (loss, carry). "
         "Type: compare_inputs(lambda d: model(d).pow(2).mean(), data)"),
    ]
    for refuse, said in expected:
        with pytest.raises(LabInputError) as info:
            refuse()
        assert str(info.value) == said
