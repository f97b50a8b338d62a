"""Benchmark 4: what `import autograd_lab` and `%load_ext autograd_lab` add on top of `import torch`.

Each round starts a fresh interpreter (imports are cached per process) that imports torch and
creates an IPython shell first, then times, inside that same process, `import autograd_lab` and
`%load_ext autograd_lab`; it also times `import torch` itself, for scale. Median of the rounds
after a warm-up round (which fills the file system cache). `python -X importtime` then names the
modules the extension pulls in, biggest first.
Goal (issue 8): under 0.2 s extra."""
from __future__ import annotations

import json
import subprocess
import sys

import common

ROUNDS = 5

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import torch
t1 = time.perf_counter()
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
t2 = time.perf_counter()
import autograd_lab
t3 = time.perf_counter()
ip.run_line_magic("load_ext", "autograd_lab")
t4 = time.perf_counter()
print(json.dumps({"torch": t1 - t0, "import": t3 - t2, "load_ext": t4 - t3}))
"""


def one_round() -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(common.ROOT)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def biggest_imports(count: int = 8) -> list[tuple[float, str]]:
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import torch; "
            "from IPython.core.interactiveshell import InteractiveShell; ip = InteractiveShell.instance(); "
            "import autograd_lab; ip.run_line_magic('load_ext', 'autograd_lab')")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code, str(common.ROOT)],
                         capture_output=True, text=True, check=True)
    # importtime lists each module once it is done, children first: everything from the line of
    # `autograd_lab` itself on was imported by the extension
    lines = out.stderr.splitlines()
    start = min(i for i, line in enumerate(lines) if line.rstrip().endswith("| autograd_lab"))
    rows = []
    for line in lines[start:]:
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]) / 1e6, parts[2].rstrip()))
    top = [r for r in rows if not r[1].startswith(" " * 3)]  # modules imported at the top level
    return sorted(top, reverse=True)[:count]


def main():
    print(common.machine())
    one_round()  # warm-up: file system cache
    rounds = [one_round() for _ in range(ROUNDS)]
    med = {k: common.median([r[k] for r in rounds]) for k in rounds[0]}
    extra = common.median([r["import"] + r["load_ext"] for r in rounds])
    print(f"median of {ROUNDS} fresh interpreters: import torch {common.ms(med['torch'])}; "
          f"import autograd_lab {common.ms(med['import'])}; %load_ext autograd_lab {common.ms(med['load_ext'])}")
    print(f"extra on top of import torch: {common.ms(extra)} ({extra / med['torch']:.2f} of import torch)")
    print("what the extension imports (cumulative, top level, one run):")
    for seconds, name in biggest_imports():
        print(f"  {common.ms(seconds):>12s}  {name.strip()}")
    print(common.result(("import_and_load_ext_s", extra, 0.2),
                        ("import_and_load_ext_vs_torch", extra / med["torch"], None)))


if __name__ == "__main__":
    main()
