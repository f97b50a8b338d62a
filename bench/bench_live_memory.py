"""Benchmark: a live kernel's memory while a learner re-runs one %backward cell.

A real ipykernel is started with jupyter_client, the lab loaded, and one cell (a 4 MB leaf,
z = (x * 2).sin().sum(), %backward z) is run 30 times as the same notebook cell (JupyterLab sends
the cell's id with each run). After each run the kernel's resident memory is read from
/proc/self/statm after gc.collect(). A stepper made for the same cell releases the one before, so
the kernel should hold one recording, not thirty.
Goal (issue 12): after 20 runs at most 1.2x what the kernel held after the second run. Reference
before the release existed: 342 MB -> 719 MB (2.1x)."""
from __future__ import annotations

import sys

import common

sys.path.insert(0, str(common.ROOT / "tests"))

from test_kernel_memory import CELL, SETUP, run


def main():
    print(common.machine())
    with common.live_kernel() as kc:
        run(kc, SETUP)
        sizes = []
        for _ in range(30):
            run(kc, CELL, cell_id="the-backward-cell")
            sizes.append(float(run(kc, "print(rss_mb())")))
    print("kernel MB after each run: " + ", ".join(f"{s:.0f}" for s in sizes))
    print(common.result(("live_memory_20_runs_ratio", sizes[19] / sizes[1], 1.2),
                        ("live_memory_30_runs_ratio", sizes[29] / sizes[1], None),
                        ("kernel_mb_after_2", sizes[1], None), ("kernel_mb_after_20", sizes[19], None)))


if __name__ == "__main__":
    main()
