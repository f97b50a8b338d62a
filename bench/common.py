"""Shared helpers of the benchmarks: side-by-side timing (median of interleaved repeats after a
warm-up), the models every benchmark measures, and the RESULT line.

These machines are noisy and shared, so a benchmark never compares two numbers taken at different
times: the candidates run in turns, round after round, in the same process, and the figure quoted is
the ratio of their medians."""
from __future__ import annotations

import contextlib

import gc
import os
import statistics
import sys
import time
from pathlib import Path

# Runnable as `python bench/NAME.py` from a fresh clone: the package is the repository's own.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

# One intra-op thread by default: on a shared 2-core machine, torch's worker threads spin against the
# other load and a plain backward can swing 20x between rounds. One thread keeps the engine's own
# time steady, which is what the ratios need. BENCH_THREADS=2 measures with two.
torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))

# The 1000-node model of benchmarks 2, 3 and 5: the same MLP as benchmark 1 (a), deeper.
# Each Linear+Tanh layer adds 5 nodes (AddmmBackward0, TBackward0, TanhBackward0, 2 AccumulateGrad).
BIG_LAYERS = 200
WIDTH, BATCH = 64, 32


def median(values) -> float:
    return statistics.median(values)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def side_by_side(candidates: dict, repeat: int, warmup: int = 2, tidy=None) -> dict[str, list[float]]:
    """Run every candidate once per round, in turns, for warmup + repeat rounds; return the
    timings (seconds) of the measured rounds. Interleaving spreads the machine's drift evenly.
    tidy, if given, runs after each candidate, untimed (e.g. gc.collect); a dict {name: fn} runs
    fn after that candidate only."""
    times = {name: [] for name in candidates}
    for r in range(warmup + repeat):
        for name, fn in candidates.items():
            t = timed(fn)
            after = tidy.get(name) if isinstance(tidy, dict) else tidy
            if after is not None:
                after()
            if r >= warmup:
                times[name].append(t)
    return times


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def verdict(value: float, goal: float) -> str:
    return "ok" if value <= goal else "MISSED"


def result(*items: tuple) -> str:
    """items: (name, value, goal) with goal None for a figure that has no goal.
    Gives 'RESULT name=1.45 goal<=2.0 ok other=3.10 ...'."""
    parts = []
    for name, value, goal in items:
        if isinstance(value, float):
            text = f"{name}={value:.0f}" if abs(value) >= 100 else f"{name}={value:.3g}"
        else:
            text = f"{name}={value}"
        if goal is not None:
            text += f" goal<={goal:g} {verdict(value, goal)}"
        parts.append(text)
    return "RESULT " + " ".join(parts)


# A learner's kernel holds many objects, and a recording makes one pass over all of them (the
# guard's find()): measured once on this machine (2026-12-02), a fresh ipykernel after `import
# torch, matplotlib, matplotlib.pyplot, ipywidgets, IPython` held 246,210 gc-tracked objects,
# 247,993 after `%load_ext autograd_lab`. BENCH_KERNEL_OBJECTS=0 measures the bare process.
KERNEL_OBJECTS = int(os.environ.get("BENCH_KERNEL_OBJECTS", "250000"))
_BALLAST: list = []


def kernel_sized(target: int = KERNEL_OBJECTS) -> str:
    """Make this process hold about as many gc-tracked objects as a learner's kernel: import what
    a kernel has imported (ipykernel, IPython, ipywidgets, matplotlib with its inline backend), then,
    if still short of target, hold empty lists (each one tracked object) up to it. Returns a line
    saying the counts."""
    bare = len(gc.get_objects())
    if target <= 0:
        return f"gc-tracked objects: {bare:,} (BENCH_KERNEL_OBJECTS=0: the bare process, nothing added)"
    import importlib

    for name in ("IPython", "ipykernel.ipkernel", "ipykernel.kernelapp", "ipywidgets", "matplotlib.pyplot",
                 "matplotlib_inline.backend_inline"):
        importlib.import_module(name)
    imported = len(gc.get_objects())
    _BALLAST.extend([] for _ in range(max(0, target - imported)))
    held = len(gc.get_objects())
    return (f"gc-tracked objects: {bare:,} after the benchmark's imports, {imported:,} after a kernel's "
            f"(ipykernel, IPython, ipywidgets, matplotlib), {held:,} with {len(_BALLAST):,} empty lists "
            f"added (a learner's kernel holds about 250,000)")


def load() -> tuple[float, float, float]:
    """The machine's load average (1, 5 and 15 minutes)."""
    return os.getloadavg()


def machine() -> str:
    return (f"machine: {os.cpu_count()} cores, torch {torch.__version__} with "
            f"{torch.get_num_threads()} threads, Python {sys.version.split()[0]}")


def mlp(layers: int, width: int = WIDTH, batch: int = BATCH, seed: int = 0):
    """A stack of Linear+Tanh and a mean-square loss; returns (model, loss) with the graph built."""
    torch.manual_seed(seed)
    parts = []
    for _ in range(layers):
        parts += [torch.nn.Linear(width, width), torch.nn.Tanh()]
    model = torch.nn.Sequential(*parts)
    x = torch.randn(batch, width)
    loss = (model(x) ** 2).mean()
    return model, loss


def transformer(layers: int = 2, d_model: int = 256, seq: int = 64, batch: int = 8, seed: int = 0):
    """A stack of TransformerEncoderLayer (compute-heavy nodes); returns (model, loss)."""
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(d_model, nhead=4, dim_feedforward=4 * d_model,
                                             dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    x = torch.randn(batch, seq, d_model)
    loss = (model(x) ** 2).mean()
    return model, loss


def big_model():
    """The 1000-node model: (model, loss)."""
    return mlp(BIG_LAYERS)


def leaves_of(leaves) -> list:
    return list(leaves.parameters()) if isinstance(leaves, torch.nn.Module) else list(leaves)


def plain_backward(leaves, loss):
    """The reference: what backward() costs on the same graph (kept for the next round).
    leaves: a Module or a list of leaf tensors; their .grad is cleared first."""
    leaves = leaves_of(leaves)

    def run():
        for leaf in leaves:
            leaf.grad = None
        torch.autograd.backward(loss, retain_graph=True)
    return run


def fresh(leaves, fn):
    """fn run with the leaves' .grad cleared first, as plain_backward does, so that neither
    candidate inherits the other's gradients (a trace of leaves with a .grad does more work)."""
    leaves = leaves_of(leaves)

    def run():
        for leaf in leaves:
            leaf.grad = None
        return fn()
    return run


@contextlib.contextmanager
def live_kernel():
    """A real ipykernel (jupyter_client), its history off, ready; yields its client and shuts it
    down afterwards (the live-memory benchmarks)."""
    import jupyter_client

    km = jupyter_client.KernelManager(kernel_name="python3")
    km.start_kernel(extra_arguments=["--HistoryManager.enabled=False"])
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

