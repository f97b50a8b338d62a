"""The shortest chain graph whose freeing crashes plain PyTorch, once a hook was placed on every node.

    .venv/bin/python scripts/measure_depth.py            # bisect, print the crash depth
    .venv/bin/python scripts/measure_depth.py --no-hooks # the same, the nodes only walked from Python
    .venv/bin/python scripts/measure_depth.py --child N  # one try: exit 0, or die by a signal

Each try runs in a fresh process (the crash kills it): a chain of N nodes, y = x * 1.0001 N times,
a post-hook registered and removed on every node (as a recording does: a node touched from Python
gets a Python object of its own), then the graph dropped. Past some depth, the C++ destructors of
the nodes call each other, one stack frame set per node, and the process dies by SIGSEGV. A try
that exits by a signal crashed; a try that exits 0 did not; anything else stops the measure. The
edge moves by a few nodes from run to run (the process's stack and address layout): each bisection
assumes it does not, and the smallest of a few bisections is kept.

With --no-hooks every node is only reached from Python (its next_functions read, as graph.walk does),
which gives each a Python object for a moment: that is enough for the crash; a chain that Python never
touched is freed without one.

The depth depends on the stack size (ulimit -s), the platform and the torch build: it is printed
with them, for the comment beside CRASH_DEPTH in autograd_lab/graph.py.
"""
from __future__ import annotations

import argparse
import platform
import resource
import signal
import subprocess
import sys


def child(n: int, hooks: bool) -> None:
    import torch

    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    fn = y.grad_fn
    while fn is not None:  # along the chain, iteratively
        if hooks:
            fn.register_hook(lambda grad_inputs, grad_outputs: None).remove()
        edges = fn.next_functions
        fn = edges[0][0] if edges else None
    del y  # the graph is freed here


SIGNALS: set[str] = set()  # the signals the crashed tries died by


def crashes(n: int, hooks: bool = True) -> bool:
    """Whether a chain of n nodes, each hooked once (or only walked), crashes the process that frees it."""
    command = [sys.executable, __file__, "--child", str(n)] + ([] if hooks else ["--no-hooks"])
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode < 0:
        SIGNALS.add(signal.Signals(-done.returncode).name)
        return True
    if done.returncode == 0:
        return False
    raise SystemExit(f"the try at {n} failed without a crash (exit {done.returncode}):\n{done.stderr[-2000:]}")


def bisect(low: int, high: int, hooks: bool) -> int:
    """The smallest n in (low, high] that crashes, given that low does not and high does."""
    while high - low > 1:
        mid = (low + high) // 2
        if crashes(mid, hooks):
            high = mid
        else:
            low = mid
        print(f"  between {low} and {high}", flush=True)
    return high


def measure(low: int, ceiling: int, hooks: bool) -> int:
    if crashes(low, hooks):
        raise SystemExit(f"a chain of {low} already crashes: start lower (--low)")
    high = low * 2
    while not crashes(high, hooks):
        low, high = high, high * 2
        if high > ceiling:
            raise SystemExit(f"no crash up to {ceiling} nodes")
    print(f"  no crash at {low}, a crash at {high}", flush=True)
    return bisect(low, high, hooks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--no-hooks", action="store_true", help="walk the nodes only, place no hook")
    parser.add_argument("--low", type=int, default=5000, help="a length that does not crash")
    parser.add_argument("--ceiling", type=int, default=5_000_000, help="give up above this length")
    parser.add_argument("--repeats", type=int, default=3, help="bisect this many times, keep the smallest")
    args = parser.parse_args()
    if args.child is not None:
        child(args.child, not args.no_hooks)
        return
    import torch

    soft, _hard = resource.getrlimit(resource.RLIMIT_STACK)
    stack = "unlimited" if soft == resource.RLIM_INFINITY else f"{soft // 1024} KiB"
    what = "walked only" if args.no_hooks else "a hook registered and removed on every node"
    print(f"torch {torch.__version__}, Python {platform.python_version()}, {platform.platform()}, stack {stack}; "
          f"{what}")
    found = []
    for i in range(args.repeats):
        print(f"bisection {i + 1} of {args.repeats}", flush=True)
        found.append(measure(args.low, args.ceiling, not args.no_hooks))
    depth = min(found)
    print(f"crash depth: {depth} nodes (the bisections gave {found}; the crashes were by {', '.join(sorted(SIGNALS))})")


if __name__ == "__main__":
    main()
