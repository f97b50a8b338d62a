"""The text and HTML faces of the diagnose room: an explained error and a backward profile.
Only the timings vary between runs; they are printed as 'N.NN ms', last and at a fixed width."""
from __future__ import annotations

from ..format import table
from ..text import esc, html_table
from .measure import median


def explanation_text(e, show_original: bool = False) -> str:
    return e.text(show_original)


def explanation_html(e, show_original: bool = False) -> str:
    parts = ['<div class="agl-explain">',
             f'<p><b>autograd error explained ({esc(e.kind.replace("_", " "))})</b> &mdash; {esc(e.summary)}</p>',
             f"<p><b>Why:</b> {esc(e.why)}</p>",
             f'<p><b>Fix:</b></p><pre class="agl-fix">{esc(e.fix)}</pre>']
    if show_original:
        parts.append(f'<p><b>PyTorch said ({esc(e.category)}):</b></p><pre class="agl-original">{esc(e.original)}</pre>')
    parts.append("</div>")
    return "".join(parts)


def _ms(value: float) -> str:
    return f"{value:.2f} ms"


def _rows(prof):
    carried = [", ".join(s.carried) or "-" for s in prof.steps]
    return [[f"{s.index}{'*' if s.warmup else ''}", str(s.nodes), str(s.input_nodes), c,
             _ms(s.forward_ms).rjust(10), _ms(s.backward_ms).rjust(10)] for s, c in zip(prof.steps, carried)]


# timings last and at a fixed width, so that the deterministic columns never move
HEAD = ["step", "nodes", "from inputs", "carried in", "forward".rjust(10), "backward".rjust(10)]


def _facts(prof) -> list[str]:
    counts = prof.node_counts
    warm = sum(s.warmup for s in prof.steps)
    measured = len(prof.steps) - warm
    lines = [f"backward profile: {measured} step{'s' if measured != 1 else ''} measured after "
             f"{warm} warm-up (marked *), "
             f"backward(retain_graph={prof.retain_graph}){' on a GPU, synchronised' if prof.gpu else ''}"]
    if counts:
        grows = f"grows by {prof.growth:g} per step" if prof.growth else "flat"
        lines.append(f"graph: {counts[0]} -> {counts[-1]} nodes ({grows})")
    lines.append("carries history across steps: " + (", ".join(prof.carriers) or "nothing"))
    lines.append("arrives with history: " + (", ".join(prof.history_in) or "nothing"))
    lines.append("data that requires grad: " + (", ".join(f"{n} ({k} numbers)" for n, k in prof.data) or "none"))
    return lines


def _timing(prof) -> list[str]:
    timed = prof.timed
    lines = [f"timing (steps {timed[0].index}-{timed[-1].index}): forward median {_ms(median(s.forward_ms for s in timed))}, "
             f"backward median {_ms(median(s.backward_ms for s in timed))}, last backward {_ms(timed[-1].backward_ms)}"]
    if prof.without_data_ms is not None:
        lines.append(f"last step: backward {_ms(timed[-1].backward_ms)}; without the data's gradient "
                     f"{_ms(prof.without_data_ms)}")
    return lines


def profile_text(prof) -> str:
    out = _facts(prof) + ["", table(HEAD, _rows(prof)), ""]
    if prof.steps:
        out += _timing(prof) + [""]
    out += ["verdict: " + prof.verdict, "fix:"] + ["    " + line for line in prof.fix.splitlines()]
    return "\n".join(out)


def profile_html(prof) -> str:
    facts = "".join(f"<li>{esc(line)}</li>" for line in _facts(prof)[1:])
    timing = "".join(f"<li>{esc(line)}</li>" for line in (_timing(prof) if prof.steps else []))
    return (f'<div class="agl-profile"><p>{esc(_facts(prof)[0])}</p><ul>{facts}{timing}</ul>'
            f"{html_table(HEAD, _rows(prof), highlight={i for i, s in enumerate(prof.steps) if s.carried})}"
            f'<p class="agl-verdict"><b>Verdict:</b> {esc(prof.verdict)}</p>'
            f'<p><b>Fix:</b></p><pre class="agl-fix">{esc(prof.fix)}</pre></div>')
