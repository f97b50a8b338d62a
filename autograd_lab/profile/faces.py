"""The faces of the profiler: a backward profile and an input comparison as text and HTML, and the
profile's figure. Only the timings vary between runs; they are printed as 'N.NN ms', last and at a
fixed width, so that the deterministic columns never move."""
from __future__ import annotations

from matplotlib.figure import Figure

from ..format import table
from ..text import esc, html_table
from .measure import median
from ..fonts import figure_text


def _ms(value: float) -> str:
    return f"{value:.2f} ms"


def _rows(prof):
    return [[f"{s.index}{'*' if s.warmup else ''}", str(s.nodes), str(s.input_nodes), ", ".join(s.carried) or "-",
             _ms(s.forward_ms).rjust(10), _ms(s.backward_ms).rjust(10)] for s in prof.steps]


HEAD = ["step", "nodes", "from inputs", "carried in", "forward".rjust(10), "backward".rjust(10)]


def _facts(prof) -> list[str]:
    counts = prof.node_counts
    warm = sum(s.warmup for s in prof.steps)
    measured = len(prof.steps) - warm
    how = "the step's own backward()" if prof.own_backward else f"backward(retain_graph={prof.retain_graph})"
    lines = [f"backward profile: {measured} step{'s' if measured != 1 else ''} measured after "
             f"{warm} warm-up (marked *), {how}{' on a GPU, synchronised' if prof.gpu else ''}"]
    if prof.budget is not None:
        lines.append(f"stopped after {len(prof.steps)} of {prof.planned} steps: the time budget of "
                     f"{prof.budget:g} s was used up (give a bigger budget to run them all)")
    if counts:
        grows = f"grows by {prof.growth:g} per step" if prof.growth else "flat"
        lines.append(f"graph: {counts[0]} -> {counts[-1]} nodes ({grows})")
    lines.append("carries history across steps: " + (", ".join(prof.carriers) or "nothing"))
    lines.append("arrives with history: " + (", ".join(prof.history_in) or "nothing"))
    lines.append("data that requires grad: " + (", ".join(f"{n} ({k} numbers)" for n, k in prof.data) or "none"))
    return lines


def _timing(prof) -> list[str]:
    timed = prof.timed
    lines = [f"timing (steps {timed[0].index}-{timed[-1].index}): forward median "
             f"{_ms(median(s.forward_ms for s in timed))}, backward median "
             f"{_ms(median(s.backward_ms for s in timed))}, last backward {_ms(timed[-1].backward_ms)}"]
    if prof.without_data_ms is not None:
        lines.append(f"last step: backward {_ms(timed[-1].backward_ms)}; without the data's gradient "
                     f"{_ms(prof.without_data_ms)}")
    return lines


def profile_text(prof) -> str:
    """The profile as plain text: facts, one row per step, timing, verdict and fix."""
    out = _facts(prof) + ["", table(HEAD, _rows(prof)), ""]
    if prof.steps:
        out += _timing(prof) + [""]
    out += ["verdict: " + prof.verdict, "fix:"] + ["    " + line for line in prof.fix.splitlines()]
    return "\n".join(out)


def profile_html(prof) -> str:
    """The profile as HTML: the steps that carried history in are highlighted."""
    facts = "".join(f"<li>{esc(line)}</li>" for line in _facts(prof)[1:])
    timing = "".join(f"<li>{esc(line)}</li>" for line in (_timing(prof) if prof.steps else []))
    return (f'<div class="agl-profile"><p>{esc(_facts(prof)[0])}</p><ul>{facts}{timing}</ul>'
            f"{html_table(HEAD, _rows(prof), highlight={i for i, s in enumerate(prof.steps) if s.carried})}"
            f'<p class="agl-verdict"><b>Verdict:</b> {esc(prof.verdict)}</p>'
            f'<p><b>Fix:</b></p><pre class="agl-fix">{esc(prof.fix)}</pre></div>')


@figure_text
def profile_figure(prof) -> Figure:
    """Backward time per step (bars, warm-up steps pale) and the number of graph nodes backward
    walked (line), so growth and its cost are seen side by side."""
    fig = Figure(figsize=(7, 3))
    ax = fig.add_subplot(1, 1, 1)
    steps = [s.index for s in prof.steps]
    colors = ["#c9d6ea" if s.warmup else "#4c72b0" for s in prof.steps]
    ax.bar(steps, [s.backward_ms for s in prof.steps], color=colors, label="backward (ms)")
    ax.set_xlabel("step (pale: warm-up)")
    ax.set_ylabel("backward time (ms)")
    nodes = ax.twinx()
    nodes.plot(steps, prof.node_counts, color="#dd8452", marker="o", label="nodes from the loss")
    nodes.plot(steps, prof.input_node_counts, color="#55a868", marker=".", linestyle="--",
               label="nodes from the inputs")
    nodes.set_ylabel("graph nodes")
    nodes.set_ylim(bottom=0)
    nodes.legend(loc="upper left", fontsize=8)
    ax.set_title(f"backward profile: {prof.kind.replace('_', ' ')}", fontsize=10)
    fig.tight_layout()
    return fig


COMPARE_HEAD = ["variant", "requires grad", "shares storage", "nodes", "growth/step", "grad elements",
                "forward", "backward"]


def _compare_rows(comp) -> list[list[str]]:
    return [[r.variant, str(r.requires_grad), str(r.shares_storage),
             f"{r.nodes} -> {r.last_nodes}" if r.last_nodes != r.nodes else str(r.nodes),
             f"{r.growth:g}", f"{r.grad_elements:,}", _ms(r.forward_ms), _ms(r.backward_ms)] for r in comp.rows]


def comparison_text(comp) -> str:
    """One row per way of passing the data (times are medians over the timed steps), then the verdict."""
    return table(COMPARE_HEAD, _compare_rows(comp)) + "\n" + comp.verdict


def comparison_html(comp) -> str:
    """The comparison as an HTML table, the verdict under it."""
    return (f'<div class="agl-compare">{html_table(COMPARE_HEAD, _compare_rows(comp))}'
            f'<p class="agl-verdict"><b>Verdict:</b> {esc(comp.verdict)}</p></div>')
