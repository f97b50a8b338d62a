"""What the next speed-ups of the recording would gain, measured before anyone makes them: the
recording as it is, against the same recording with one cost taken away. Not run by `make bench`.

    .venv/bin/python bench/next_speedups.py

Candidates, per family, in turns (common.side_by_side), one thread:
- plain: torch.autograd.grad of the leaves; floor: one appending post-hook per node
  (bench_families.bare_hooks);
- trace: autograd_lab.trace as it is;
- no scan: the same, with guard.Found's pass over every object the garbage collector tracks
  replaced by its answer for these graphs (nothing retained, no hooks, no checkpoint: true here, so
  the recording is the same);
- no scan, gc off: also with the cyclic garbage collector paused during the recording (trace
  pauses it itself since commit f8f8215, so this column now equals the previous one);
- probe: alone, what trace's register_prehook probe costs (one per node, to find the learner's
  pre-hooks): register, read the dict, remove."""
from __future__ import annotations

import gc
import os

import common
import torch

import autograd_lab
from autograd_lab.graph import snapshot, walk
from autograd_lab.stepper import guard

import bench_families
import families

torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))  # as bench_families.py
REAL_FOUND_INIT = guard.Found.__init__


def empty_found(self, graph):
    self.retained, self.hooked, self.modules, self.checkpoint = [], [], [], False


def without_scan(fn, gc_off=False):
    def run():
        guard.Found.__init__ = empty_found
        was = gc.isenabled()
        if gc_off:
            gc.disable()
        try:
            return fn()
        finally:
            guard.Found.__init__ = REAL_FOUND_INIT
            if was:
                gc.enable()
    return run


def probe(loss):
    def noop(*args):
        return None

    def run():
        for fn, _ in walk(loss):
            handle = fn.register_prehook(noop)
            handle.hooks_dict_ref()
            handle.remove()
    return run


def main():
    print(common.machine())
    rows = []
    for family in families.FAMILIES:
        leaves, loss = family.build()
        found = guard.Found(snapshot(loss, {}))
        assert not (found.retained or found.hooked or found.checkpoint), "the shortcut would change the recording"

        def record(loss=loss):
            return autograd_lab.trace(loss, names={})
        times = common.side_by_side({
            "plain": bench_families.plain_grad(leaves, loss),
            "floor": bench_families.bare_hooks(leaves, loss),
            "trace": common.fresh(leaves, record),
            "no scan": common.fresh(leaves, without_scan(record)),
            "no scan, gc off": common.fresh(leaves, without_scan(record, gc_off=True)),
            "probe": probe(loss),
        }, repeat=max(5, family.repeat // 2))
        med = {k: common.median(v) for k, v in times.items()}
        rows.append((family.key, med))
        print(f"{family.key}: " + ", ".join(f"{k} {common.ms(v)}" for k, v in med.items()))
        print("   / floor: " + ", ".join(f"{k} {med[k] / med['floor']:.2f}"
                                         for k in ("trace", "no scan", "no scan, gc off")))
        print("   / plain: " + ", ".join(f"{k} {med[k] / med['plain']:.2f}"
                                         for k in ("floor", "trace", "no scan", "no scan, gc off")))


if __name__ == "__main__":
    main()
