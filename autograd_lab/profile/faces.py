"""The faces of the profiler: a backward profile and an input comparison as text and HTML, and the
profile's figure. Only the timings vary between runs; they are printed as 'N.NN ms', last and at a
fixed width, so that the deterministic columns never move."""
from __future__ import annotations

from matplotlib.figure import Figure

from ..fonts import figure_text
from ..format import quote, table, width
from ..i18n import N_, _, ngettext
from ..names import label
from ..text import esc, html_table
from .measure import median


def _ms(value: float) -> str:
    return f"{value:.2f} ms"


def _rows(prof):
    """One row per step; a long run shows its first and last ROWS // 2 steps around a row of dots."""
    steps = prof.steps
    half = ROWS // 2
    shown = steps if len(steps) <= ROWS else [*steps[:half], None, *steps[-half:]]
    return [[f"{s.index}{'*' if s.warmup else ''}", str(s.nodes), str(s.input_nodes), names(s.carried) or "-",
             _ms(s.forward_ms).rjust(TIMES), _ms(s.backward_ms).rjust(TIMES)] if s is not None
            else ["...", "", "", "", "", ""] for s in shown]


ROWS = 40  # steps the table shows one by one


def names(found) -> str:
    """The learner's names as a list shows them: each shortened when long, the whole list bounded."""
    return quote(", ".join(label(n) for n in found))


HEAD = [N_("step"), N_("nodes"), N_("from inputs"), N_("carried in"), N_("forward"), N_("backward")]
TIMES = 10  # the width of a time column ('N.NN ms' right-aligned, header included)


def _rjust(text: str, columns: int) -> str:
    """text right-aligned to columns by display width (a Chinese character takes two)."""
    return " " * max(0, columns - width(text)) + text


def _head() -> list[str]:
    """The step table's headers in the current language, the two time columns right-aligned."""
    words = [_(h) for h in HEAD]
    return words[:4] + [_rjust(h, TIMES) for h in words[4:]]


# each verdict's kind in words, for the figure's title (the kinds are the names judge gives them)
KIND_NAMES = {
    "failed": N_("failed"),
    "carried_history": N_("carried history"),
    "data_requires_grad": N_("data requires grad"),
    "data_history": N_("data history"),
    "flat": N_("flat"),
}


def _facts(prof) -> list[str]:
    counts = prof.node_counts
    warm = sum(s.warmup for s in prof.steps)
    measured = len(prof.steps) - warm
    how = _("the step's own backward()") if prof.own_backward else f"backward(retain_graph={prof.retain_graph})"
    if prof.gpu:
        first = ngettext("backward profile: {count} step measured after {warm} warm-up (marked *), {how} on a "
                         "GPU, synchronised",
                         "backward profile: {count} steps measured after {warm} warm-up (marked *), {how} on a "
                         "GPU, synchronised", measured)
    else:
        first = ngettext("backward profile: {count} step measured after {warm} warm-up (marked *), {how}",
                         "backward profile: {count} steps measured after {warm} warm-up (marked *), {how}",
                         measured)
    lines = [first.format(count=measured, warm=warm, how=how)]
    if prof.budget is not None:
        lines.append(_("stopped after {done} of {planned} steps: the time budget of {budget} s was used up "
                       "(give a bigger budget to run them all)").format(
                           done=len(prof.steps), planned=prof.planned, budget=f"{prof.budget:g}"))
    if counts:
        if prof.growth:
            lines.append(_("graph: {first} -> {last} nodes (grows by {growth} per step)").format(
                first=counts[0], last=counts[-1], growth=f"{prof.growth:g}"))
        else:
            lines.append(_("graph: {first} -> {last} nodes (flat)").format(first=counts[0], last=counts[-1]))
    if prof.carriers:
        lines.append(_("carries history across steps: {names}").format(names=names(prof.carriers)))
    else:
        lines.append(_("carries history across steps: nothing"))
    if prof.history_in:
        lines.append(_("arrives with history: {names}").format(names=names(prof.history_in)))
    else:
        lines.append(_("arrives with history: nothing"))
    if prof.data:
        data = quote(", ".join(_("{name} ({count} numbers)").format(name=label(n), count=k) for n, k in prof.data))
        lines.append(_("data that requires grad: {data}").format(data=data))
    else:
        lines.append(_("data that requires grad: none"))
    return lines


def _timing(prof) -> list[str]:
    timed = prof.timed
    lines = [_("timing (steps {first}-{last}): forward median {forward}, backward median {backward}, "
               "last backward {last_backward}").format(
                   first=timed[0].index, last=timed[-1].index, forward=_ms(median(s.forward_ms for s in timed)),
                   backward=_ms(median(s.backward_ms for s in timed)), last_backward=_ms(timed[-1].backward_ms))]
    if prof.without_data_ms is not None:
        lines.append(_("last step: backward {backward}; without the data's gradient {without}").format(
            backward=_ms(timed[-1].backward_ms), without=_ms(prof.without_data_ms)))
    return lines


def profile_text(prof) -> str:
    """The profile as plain text: facts, one row per step, timing, verdict and fix."""
    out = _facts(prof) + ["", table(_head(), _rows(prof)), ""]
    if prof.steps:
        out += _timing(prof) + [""]
    out += [_("verdict: {verdict}").format(verdict=prof.verdict), _("fix:")]
    out += ["    " + line for line in prof.fix.splitlines()]
    return "\n".join(out)


def profile_html(prof) -> str:
    """The profile as HTML: the steps that carried history in are highlighted."""
    facts = "".join(f"<li>{esc(line)}</li>" for line in _facts(prof)[1:])
    timing = "".join(f"<li>{esc(line)}</li>" for line in (_timing(prof) if prof.steps else []))
    verdict, fix = _("Verdict:"), _("Fix:")
    return (f'<div class="agl-profile"><p>{esc(_facts(prof)[0])}</p><ul>{facts}{timing}</ul>'
            f"{html_table(_head(), _rows(prof), highlight={i for i, s in enumerate(prof.steps) if s.carried})}"
            f'<p class="agl-verdict"><b>{esc(verdict)}</b> {esc(prof.verdict)}</p>'
            f'<p><b>{esc(fix)}</b></p><pre class="agl-fix">{esc(prof.fix)}</pre></div>')


# the chart's encodings, each with a mark beside its colour that survives greyscale
MEASURED = dict(color="#4c72b0", edgecolor="#1f3d73", linewidth=0.8)
WARMUP = dict(color="#d5deee", edgecolor="#4c72b0", linewidth=0.8, hatch="///")
FROM_LOSS = dict(color="#b3531b", marker="o", linestyle="-")
FROM_INPUTS = dict(color="#2d7a3e", marker="s", markersize=4, linestyle="--")


@figure_text
def profile_figure(prof) -> Figure:
    """Backward time per step above (bars; warm-up steps pale and hatched) and the number of graph
    nodes backward walked below (lines with markers, solid and dashed), on one step axis, so growth
    and its cost are seen side by side. Each legend stands to the right of its panel, over no bar;
    steps and node counts are counted in whole numbers."""
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(7.6, 4.4), layout="constrained")
    ax, nodes = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    steps = [s.index for s in prof.steps]
    for warm, style, words in ((False, MEASURED, _("backward time of a measured step")),
                               (True, WARMUP, _("backward time of a warm-up step"))):
        shown = [s for s in prof.steps if s.warmup == warm]
        if shown:
            ax.bar([s.index for s in shown], [s.backward_ms for s in shown], label=words, **style)
    ax.set_ylabel(_("backward time (ms)"))
    ax.set_ylim(bottom=0)
    nodes.plot(steps, prof.node_counts, label=_("nodes from the loss"), **FROM_LOSS)
    nodes.plot(steps, prof.input_node_counts, label=_("nodes from the inputs"), **FROM_INPUTS)
    nodes.set_xlabel(_("step (pale, hatched: warm-up)"))
    nodes.set_ylabel(_("graph nodes"))
    nodes.set_ylim(bottom=0)
    nodes.yaxis.set_major_locator(MaxNLocator(integer=True))
    nodes.xaxis.set_major_locator(MaxNLocator(integer=True))
    for panel in (ax, nodes):
        panel.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=9)
    kind = _(KIND_NAMES[prof.kind]) if prof.kind in KIND_NAMES else prof.kind.replace("_", " ")
    ax.set_title(_("backward profile: {kind}").format(kind=kind), fontsize=10)
    return fig


COMPARE_HEAD = [N_("variant"), N_("requires grad"), N_("shares storage"), N_("nodes"), N_("growth/step"),
                N_("grad elements"), N_("forward"), N_("backward")]


def _compare_head() -> list[str]:
    return [_(h) for h in COMPARE_HEAD]


def _compare_rows(comp) -> list[list[str]]:
    return [[label(r.variant), str(r.requires_grad), str(r.shares_storage),
             f"{r.nodes} -> {r.last_nodes}" if r.last_nodes != r.nodes else str(r.nodes),
             f"{r.growth:g}", f"{r.grad_elements:,}", _ms(r.forward_ms), _ms(r.backward_ms)] for r in comp.rows]


def comparison_text(comp) -> str:
    """One row per way of passing the data (times are medians over the timed steps), then the verdict."""
    return table(_compare_head(), _compare_rows(comp)) + "\n" + comp.verdict


def comparison_html(comp) -> str:
    """The comparison as an HTML table, the verdict under it."""
    verdict = _("Verdict:")
    return (f'<div class="agl-compare">{html_table(_compare_head(), _compare_rows(comp))}'
            f'<p class="agl-verdict"><b>{esc(verdict)}</b> {esc(comp.verdict)}</p></div>')
