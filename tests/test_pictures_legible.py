"""The Jacobian heat map, the profiler's chart and the storage picture are legible and do not rest on
colour alone (issue 28), checked on the figures themselves: tick values, legend and bar boxes in
display coordinates, text sizes at the DPI the lab draws at, arrow geometry, and contrasts measured
on the rendered pixels turned into luminance (WCAG's 4.5:1 for text, 3:1 for a mark). Torch is the
oracle for the Jacobian's numbers."""
import inspect
import io
import itertools

import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from matplotlib.image import imread
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

import autograd_lab as al
from autograd_lab.contrast import MARK, TEXT, contrast, luminance, ratio
from autograd_lab.display import png
from autograd_lab.jacobians.faces import READABLE
from autograd_lab.jacobians.picture import cell_text, picture as jacobian_picture
from autograd_lab.profile.faces import profile_figure
from autograd_lab.storage.experiments import build_report
from autograd_lab.storage.memory import memory
from autograd_lab.storage.picture import picture as storage_picture

DPI = inspect.signature(png).parameters["dpi"].default  # the lab's PNGs are drawn at this DPI
BODY_PX = 11  # body text, in pixels at that DPI
WIDGET_PX = 480  # the Jacobian's widget shows its picture at most this wide


@pytest.fixture(params=["en", "zh"])
def lang(request):
    al.language(request.param)
    yield request.param
    al.language("en")


def render(fig) -> np.ndarray:
    """The figure as the lab draws it: RGBA pixels, row 0 at the top; afterwards the figure's display
    coordinates are those pixels' (origin at the bottom left)."""
    FigureCanvasAgg(fig)
    fig.set_dpi(DPI)
    pixels = imread(io.BytesIO(png(fig)))
    fig.canvas.draw()
    assert pixels.shape[:2] == (int(fig.bbox.height), int(fig.bbox.width))
    return pixels


def grey(pixels: np.ndarray) -> np.ndarray:
    """Relative luminance of every pixel (alpha ignored)."""
    return np.vectorize(lambda r, g, b: luminance((r, g, b)))(pixels[..., 0], pixels[..., 1], pixels[..., 2])


def at(pixels, x: float, y: float):
    """The pixel under display point (x, y)."""
    return pixels[pixels.shape[0] - 1 - int(y), int(x)][:3]


def overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def inside(inner, outer, slack: float = 0.5) -> bool:
    return (inner.x0 >= outer.x0 - slack and inner.x1 <= outer.x1 + slack and inner.y0 >= outer.y0 - slack
            and inner.y1 <= outer.y1 + slack)


# --- the Jacobian ------------------------------------------------------------------------------------

def oracle(f, x):
    out = f(x)
    return torch.autograd.functional.jacobian(f, x).reshape(out.numel(), x.numel())


def jacobians():
    torch.manual_seed(3)
    W = torch.randn(5, 3, dtype=torch.double)
    M = torch.randn(12, 12, dtype=torch.double) * 40
    return [
        (lambda t: t ** 2, torch.tensor([1., -2., 3.], dtype=torch.double)),
        (lambda t: torch.softmax(W @ t, 0), torch.randn(3, dtype=torch.double)),
        (lambda t: M @ t * 1e-3, torch.randn(12, dtype=torch.double)),  # 12 x 12, small numbers
        (lambda t: torch.cumsum(t, 0), torch.randn(13, dtype=torch.double)),  # past READABLE
        (lambda t: t.sum(0), torch.randn(20, 3, dtype=torch.double)),  # 3 x 60
    ]


@pytest.mark.parametrize("case", range(5))
def test_the_jacobian_has_its_numbers_while_it_is_small_enough_to_read(lang, case):
    f, x = jacobians()[case]
    J = oracle(f, x)
    fig = jacobian_picture(al.jacobian(f(x.requires_grad_()), x).model)
    ax = fig.axes[0]
    rows, cols = J.shape
    if rows > READABLE or cols > READABLE:
        assert len(ax.texts) == 0
        return
    found = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    assert len(ax.texts) == rows * cols == len(found)
    for (i, j), text in found.items():
        v = float(J[i, j])
        assert text in (cell_text(v), cell_text(v, 2)), (i, j, text, v)
        assert float(text) == pytest.approx(v, rel=0.05, abs=0 if v else 1e-300), (i, j, text, v)
    render(fig)
    smallest = min(t.get_fontsize() for t in ax.texts)
    # never shrunk by the widget, so the numbers stay their size; past the smallest size, the cells grow
    assert fig.bbox.width <= WIDGET_PX or smallest == 7
    renderer = fig.canvas.get_renderer()
    for t in ax.texts:  # each number inside its own cell, at least 7 pt
        i, j = round(t.get_position()[1]), round(t.get_position()[0])
        (x0, y0), (x1, y1) = ax.transData.transform([(j - 0.5, i + 0.5), (j + 0.5, i - 0.5)])
        box = t.get_window_extent(renderer)
        assert x0 < box.x0 and box.x1 < x1 and y0 < box.y0 and box.y1 < y1, (t.get_text(), box, (x0, x1))
        assert t.get_fontsize() >= 7


@pytest.mark.parametrize("case", range(5))
def test_the_jacobians_ticks_are_whole_indices_and_a_colour_bar_reads_the_colours(case):
    f, x = jacobians()[case]
    fig = jacobian_picture(al.jacobian(f(x.requires_grad_()), x).model)
    render(fig)
    ax, bar = fig.axes
    rows, cols = oracle(f, x).shape
    for ticks, count in ((ax.get_xticks(), cols), (ax.get_yticks(), rows)):
        shown = [t for t in ticks if -0.5 <= t <= count - 0.5]
        assert len(shown) >= min(count, 2) and all(float(t).is_integer() for t in shown), ticks
        assert 0 in shown
        if count <= READABLE:
            assert shown == list(range(count))
    assert bar.get_ylabel() and bar.get_ylabel().startswith("d")


def test_every_number_contrasts_with_its_cell():
    f, x = jacobians()[1]
    J = oracle(f, x)
    # every shade: strongly red, strongly blue and near white cells side by side
    shades = torch.tensor([1., -1., 0.05, -0.4, 0.6, -0.7, 0.], dtype=torch.double)
    x2 = torch.ones(7, dtype=torch.double, requires_grad=True)
    figs = [jacobian_picture(al.jacobian(shades * x2, x2).model),
            jacobian_picture(al.jacobian(f(x.requires_grad_()), x).model)]
    assert J.abs().max() > 0
    for fig in figs:
        pixels = render(fig)
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        for t in ax.texts:
            i, j = round(t.get_position()[1]), round(t.get_position()[0])
            corner = ax.transData.transform((j - 0.4, i + 0.4))  # inside the cell, clear of its number
            fill = at(pixels, *corner)
            ink = (1.0, 1.0, 1.0) if t.get_color() == "white" else (0.0, 0.0, 0.0)
            assert contrast(fill, ink) >= TEXT, (t.get_text(), fill, t.get_color())
            assert t.get_window_extent(renderer).width > 0


def test_the_jacobian_picture_is_the_same_bytes_every_time():
    x = torch.tensor([0.5, -1.5, 2.0], requires_grad=True)
    first, again = (png(jacobian_picture(al.jacobian(torch.tanh(x) * x, x).model)) for _ in range(2))
    assert again == first


# --- the profiler's chart ----------------------------------------------------------------------------

def profile(steps=8, warmup=2, spike_first=True):
    torch.manual_seed(0)
    W = torch.nn.Parameter(torch.randn(4, 4) * 0.3)
    state = {"h": torch.zeros(4)}

    def step():
        state["h"] = torch.tanh(W @ state["h"] + 1)
        return state["h"].pow(2).sum()

    prof = al.profile_backward(step, steps=steps, warmup=warmup).model
    if spike_first:  # the tallest bars at both ends, where a legend inside the axes would sit
        prof.steps[0].backward_ms = prof.steps[-1].backward_ms = 10 * max(s.backward_ms for s in prof.steps)
    return prof


def bars(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle)]


@pytest.mark.parametrize("steps,warmup", [(8, 2), (1, 1), (30, 3)])
def test_the_profile_legends_cover_no_bar_and_no_point(lang, steps, warmup):
    fig = profile_figure(profile(steps, warmup))
    render(fig)
    ax, nodes = fig.axes
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend(), nodes.get_legend()]
    assert all(legends)
    assert len(bars(ax)) == steps + warmup
    for legend in legends:
        box = legend.get_window_extent(renderer)
        assert inside(box, fig.bbox), (box, fig.bbox)  # all of it is in the picture
        for bar in bars(ax):
            assert not overlap(box, bar.get_window_extent(renderer)), (box, bar.get_window_extent(renderer))
        for line in nodes.get_lines():
            for x, y in nodes.transData.transform(line.get_xydata()):
                assert not (box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1)
        for panel in (ax, nodes):
            assert not overlap(box, panel.get_window_extent(renderer))


@pytest.mark.parametrize("steps,warmup", [(2, 1), (3, 0), (30, 3)])
def test_the_profile_axes_count_in_whole_numbers_and_say_their_units(lang, steps, warmup):
    fig = profile_figure(profile(steps, warmup, spike_first=False))
    render(fig)
    ax, nodes = fig.axes
    low, high = nodes.get_xlim()
    xs = [t for t in nodes.get_xticks() if low <= t <= high]
    low, high = nodes.get_ylim()
    ys = [t for t in nodes.get_yticks() if low <= t <= high]
    assert len(xs) >= 2 and all(float(t).is_integer() for t in xs), xs
    assert len(ys) >= 2 and all(float(t).is_integer() for t in ys), ys
    assert "ms" in ax.get_ylabel() and nodes.get_ylabel() and nodes.get_xlabel()


def test_the_profile_encodings_survive_greyscale():
    fig = profile_figure(profile(6, 2, spike_first=False))
    light = grey(render(fig))
    ax, nodes = fig.axes
    renderer = fig.canvas.get_renderer()
    height = light.shape[0]

    def median(bar):  # the bar's inside, a few pixels in from its edges, hatch lines and all
        b = bar.get_window_extent(renderer)
        return float(np.median(light[height - int(b.y1) + 3: height - int(b.y0) - 3, int(b.x0) + 3: int(b.x1) - 3]))

    warm = [b for b in bars(ax) if b.get_hatch()]
    measured = [b for b in bars(ax) if not b.get_hatch()]
    assert len(warm) == 2 and len(measured) == 6  # the warm-up bars carry a hatch, the others none
    assert ratio(median(warm[0]), median(measured[0])) >= MARK
    loss, inputs = nodes.get_lines()
    assert loss.get_linestyle() != inputs.get_linestyle() and loss.get_marker() != inputs.get_marker()
    for line in (loss, inputs):  # each line stands out from the white page
        assert contrast(to_rgb(line.get_color()), (1, 1, 1)) >= MARK


# --- the storage picture -----------------------------------------------------------------------------

def memories():
    b = torch.tensor([1., 2., 3., 4.], requires_grad=True) * 2
    base = torch.arange(6.).requires_grad_()
    a = base[2:]
    w = torch.randn(2, 3, requires_grad=True).t()
    return [memory(b, build_report(b, name="b")),
            memory(b, build_report(b, name="b", edit="mul_"), "detach()", "mul_"),
            memory(a, build_report(a, name="a")),
            memory(a, build_report(a, name="a", edit="mul_"), "view(-1)", "mul_"),  # refused by PyTorch
            memory(w, build_report(w, name="weights_of_the_first_layer"))]


def row_boxes(ax):
    return [p for p in ax.patches if isinstance(p, FancyBboxPatch) and p.get_gid() == "row"]


def row_arrows(ax):
    return [p for p in ax.patches if isinstance(p, FancyArrowPatch) and p.get_gid() == "row arrow"]


def cells(ax):
    return [p for p in ax.patches if type(p) is Rectangle]


def points(arrow, ax):
    return ax.transData.transform(arrow.get_path().vertices)


@pytest.mark.parametrize("case", range(5))
def test_the_storage_text_is_body_sized_and_stays_in_its_boxes(lang, case):
    mem = memories()[case]
    fig = storage_picture(mem)
    render(fig)
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    texts = [*ax.texts, *(t for t in (ax.title, ax._left_title) if t.get_text())]  # the axis is off
    assert len(texts) > 4 * len(mem.windows)
    for t in texts:
        assert t.get_fontsize() * DPI / 72 >= BODY_PX, (t.get_text(), t.get_fontsize())
        assert inside(t.get_window_extent(renderer), fig.bbox), t.get_text()
    boxes = row_boxes(ax)
    assert len(boxes) == len(mem.windows)
    for box in boxes:
        frame = box.get_window_extent(renderer)
        mine = [t for t in ax.texts if frame.y0 < t.get_window_extent(renderer).y0 + 1
                and t.get_window_extent(renderer).y1 < frame.y1 + 1 and t.get_window_extent(renderer).x0 < frame.x1]
        assert len(mine) == 4  # name, geometry, counter, storage word
        for t in mine:
            assert inside(t.get_window_extent(renderer), frame, slack=0), (t.get_text(), frame)


@pytest.mark.parametrize("case", range(5))
def test_every_arrow_starts_on_its_rows_edge_and_ends_on_a_block(case):
    mem = memories()[case]
    fig = storage_picture(mem)
    render(fig)
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    arrows, boxes = row_arrows(ax), row_boxes(ax)
    assert len(arrows) == len(boxes) == len(mem.windows)
    starts = []
    for arrow in arrows:
        (x, y) = points(arrow, ax)[0]
        found = [b for b in boxes if abs(b.get_window_extent(renderer).x1 - x) <= 1.5
                 and b.get_window_extent(renderer).y0 < y < b.get_window_extent(renderer).y1]
        assert len(found) == 1, (x, y)
        starts.append(boxes.index(found[0]))
    assert sorted(starts) == list(range(len(boxes)))  # one arrow from each row
    blocks = [c.get_window_extent(renderer) for c in cells(ax)]
    for arrow in arrows:
        tip = ax.transData.transform(arrow._path_original.vertices[-1])
        assert any(b.x0 - 1 <= tip[0] <= b.x1 + 1 and b.y0 - 1 <= tip[1] <= b.y1 + 1 for b in blocks), tip
        way = ax.transData.transform(arrow._path_original.vertices)
        for (x0, y0), (x1, y1) in itertools.pairwise(way):  # crosses no cell and no row
            for k in np.linspace(0, 1, 60)[1:-1]:
                px, py = x0 + (x1 - x0) * k, y0 + (y1 - y0) * k
                for b in blocks + [r.get_window_extent(renderer) for r in boxes]:
                    assert not (b.x0 + 2 < px < b.x1 - 2 and b.y0 + 2 < py < b.y1 - 2), (px, py, b)


@pytest.mark.parametrize("case", range(5))
def test_shared_and_separate_storage_differ_in_greyscale_and_in_words(lang, case):
    mem = memories()[case]
    fig = storage_picture(mem)
    light = grey(render(fig))
    ax = fig.axes[0]
    first = mem.windows[0]
    rows = len(mem.windows)
    # the word beside each row's geometry (the second text on that line)
    words = {round(t.get_position()[1], 2): t.get_text() for t in sorted(ax.texts, key=lambda t: t.get_position()[0])}
    kinds = set()
    for arrow in row_arrows(ax):
        start_y = arrow._path_original.vertices[0][1]
        window = mem.windows[rows - 1 - round(start_y)]
        shared = window.block == first.block
        kinds.add(shared)
        assert (arrow.get_linestyle() in ("-", "solid")) == shared
        said = words[round(start_y - 0.17, 2)]
        assert (window.block in said) and (("S0" in said) == shared)
        (x0, y), (x1, _) = points(arrow, ax)[:2]  # the first run, along the row
        row = light.shape[0] - 1 - int(y)  # the line is antialiased over two pixel rows: the darker counts
        run = light[row - 1: row + 2, int(x0) + 2: int(x1) - 2].min(axis=0)
        ink = run.min()
        gaps = [v for v in run if ratio(v, ink) >= MARK]  # pixels as light as the page, between dashes
        assert ratio(ink, 1.0) >= MARK
        assert (gaps == []) == shared, (window.label, run)
    assert kinds == {True, False}
    legend = [a for a in ax.patches if isinstance(a, FancyArrowPatch) and a.get_gid() == "legend"]
    assert sorted(a.get_linestyle() in ("-", "solid") for a in legend) == [False, True]


def test_badges_and_borders_contrast():
    mem = memories()[0]
    fig = storage_picture(mem)
    render(fig)
    ax = fig.axes[0]
    badges = [t for t in ax.texts if t.get_bbox_patch() is not None]
    assert len(badges) == sum(w.counter is not None for w in mem.windows)
    for t in badges:
        assert contrast(to_rgb(t.get_color()), t.get_bbox_patch().get_facecolor()) >= TEXT, t.get_text()
    boxes = sorted(row_boxes(ax), key=lambda b: -b.get_y())  # top to bottom, as the windows come
    graph = [b for b, w in zip(boxes, mem.windows, strict=True) if w.in_graph]
    other = [b for b, w in zip(boxes, mem.windows, strict=True) if not w.in_graph]
    assert graph and other
    for b in graph:  # a row in the graph: a border thicker than the others', dark against its fill
        assert b.get_linewidth() >= 2 * max(o.get_linewidth() for o in other)
        assert contrast(b.get_edgecolor(), b.get_facecolor()) >= MARK


def test_the_storage_picture_is_the_same_bytes_every_time():
    first, again = memories()[1], memories()[1]
    pictures = [png(storage_picture(m)) for m in (first, again)]
    assert pictures[0] == pictures[1]
    assert not any("0x" in t.get_text() for t in storage_picture(first).axes[0].texts)
