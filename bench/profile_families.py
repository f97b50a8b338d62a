"""Where the time goes, per family of bench_families.py: pyinstrument profiles of the recording
(autograd_lab.trace), the opening (step + widget + text + html) and one click that moves the drawn
window. Not run by `make bench` (it prints call trees, not RESULT lines).

    .venv/bin/python -m pip install -c constraints.txt -e '.[bench]'
    .venv/bin/python bench/profile_families.py [family ...]

One thread and a kernel's count of objects, as in the benchmark. Each profile is taken after a
warm-up of the same work."""
from __future__ import annotations

import sys

import common  # one intra-op thread, the repository on sys.path
import torch
from pyinstrument import Profiler

import autograd_lab

import families

torch.set_num_threads(1)  # as bench_families.py: the engine's time steady on a shared machine


def profiled(label: str, fn, rounds: int = 1, setup=lambda: None) -> None:
    setup()
    fn()  # warm-up
    profiler = Profiler(interval=0.0005)
    for _ in range(rounds):
        setup()
        profiler.start()
        fn()
        profiler.stop()
    print(f"--- {label} ({rounds} rounds)")
    print(profiler.output_text(unicode=False, color=False, show_all=False, short_mode=True))


def window_move(loss):
    """The index before the first click that moves the drawn window, and the stepper there."""
    s = autograd_lab.step(loss, names={})
    _ = s.widget
    first = s._drawing
    for i in range(1, len(s.trace.steps) + 1):
        s.next()
        if s._drawing is not first:
            return i - 1, s
    return None, s


def main(keys):
    print(common.kernel_sized())  # as many objects as a kernel: a recording passes over all of them
    for family in families.FAMILIES:
        if keys and family.key not in keys:
            continue
        leaves, loss = family.build()
        print(f"\n===== {family.name}: {family.description}")
        record = common.fresh(leaves, lambda loss=loss: autograd_lab.trace(loss, names={}))
        profiled("recording: trace(loss)", record, 5)

        def open_once(loss=loss):
            s = autograd_lab.step(loss, names={})
            s.widget, s.text(), s.html()
            s.widget.close()
        profiled("opening: step + widget + text + html", common.fresh(leaves, open_once), 2)
        index, s = window_move(loss)
        if index is None:
            print("--- no click moves the window: the whole graph is drawn")
            continue

        def before(s=s, index=index):
            s.goto(index)
            s._drawing = None  # as if the window had just moved: the drawing is made again

        print(f"(the window first moves at click {index + 1})")
        profiled(f"a window-moving click (click {index + 1})", s.buttons["next"].click, 3, before)


if __name__ == "__main__":
    main(sys.argv[1:])
