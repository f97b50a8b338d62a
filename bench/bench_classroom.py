"""A class on one server, measured: N learners on one JupyterHub (classroom/), at the same time.

Learners 2..N are simulated: their servers are started through the hub's REST API (an admin token),
and each runs lesson 01's code cells, in order, in a kernel of its own, through its server's kernels
API (a session for the notebook, then the kernel's websocket, as JupyterLab does), again and again
(a fresh kernel each time, as a learner who reopens the lesson) until learner 1 has finished.
Learner 1 is a real Chromium: it logs in on the hub's page, opens lesson 01 in JupyterLab, runs all
cells and clicks the first stepper's Next and Previous buttons while the others run; then, once the
others have stopped, it clicks as many times again, on an idle machine, for comparison.

Reported, per class size: the peak memory of each learner's kernel (RSS, and USS/PSS, which do not
count twice the torch libraries that every kernel maps from the same files), each learner's server,
the hub and its proxy, and the whole class's PSS at its peak; the time for lesson 01's cells and the
kernel's CPU time for them; the click latency (click to the stepper's panel showing the new step,
measured in the page) under load and idle. Memory is sampled every 0.5 s with psutil.

Not run by `make bench` (it takes minutes and starts a hub); run it with
    make bench-classroom N=4
    AUTOGRAD_LAB_BENCH_CLASSROOM=1 .venv/bin/python bench/bench_classroom.py --learners 4   (the same)
It needs `make classroom-env` (JupyterHub and its proxy) and Debian's chromium.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "classroom"))
sys.path.insert(0, str(ROOT / "tests" / "browser"))

LESSON = "notebooks/01_backward_step_by_step.ipynb"
SEED_STEPS = ["Step 1 of 3: MeanBackward0", "Step 2 of 3: PowBackward0", "Step 3 of 3: AccumulateGrad (x)"]
MB = 1024 * 1024

# The click, timed inside the page: from the button's click to the panel's text showing `want`.
CLICK = """async ([button, panel, want]) => {
    const t0 = performance.now();
    const seen = new Promise((resolve, reject) => {
        const obs = new MutationObserver(() => {
            if (panel.innerText.includes(want)) { obs.disconnect(); resolve(); }
        });
        obs.observe(panel, {childList: true, subtree: true, characterData: true});
        setTimeout(() => { obs.disconnect(); reject(new Error('no ' + want + ' after 60 s')); }, 60000);
    });
    button.click();
    await seen;
    return performance.now() - t0;
}"""


def lesson_cells() -> list[str]:
    import nbformat

    nb = nbformat.read(ROOT / LESSON, as_version=4)
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


class Sampler(threading.Thread):
    """Peak memory of every process under the hub, by role, sampled every 0.5 s."""

    def __init__(self, hub_pid: int):
        super().__init__(daemon=True)
        self.hub_pid = hub_pid
        self.stop_event = threading.Event()
        self.peaks: dict[tuple[str, str, int], dict[str, float]] = {}  # (role, learner, pid) -> peaks
        self.cpu: dict[int, float] = {}  # kernel pid -> its last CPU time (s)
        self.class_pss_peak = 0.0

    def run(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.sample()
            except Exception as err:  # a process that ended mid-read; the next sample has the rest
                print(f"sample: {err}", file=sys.stderr)
            self.stop_event.wait(0.5)

    def sample(self) -> None:
        import psutil

        hub = psutil.Process(self.hub_pid)
        learner_of: dict[int, str] = {}
        total = 0.0
        for proc in [hub, *hub.children(recursive=True)]:
            try:
                cmd = " ".join(proc.cmdline())
                if proc.pid == self.hub_pid:
                    role, learner = "hub", "-"
                elif "configurable-http-proxy" in cmd:
                    role, learner = "proxy", "-"
                elif "jupyterhub-singleuser" in cmd:
                    role, learner = "server", proc.environ().get("JUPYTERHUB_USER", "?")
                    learner_of[proc.pid] = learner
                elif "ipykernel_launcher" in cmd:
                    role, learner = "kernel", learner_of.get(proc.ppid(), "?")
                    learner_of[proc.pid] = learner
                    times = proc.cpu_times()
                    self.cpu[proc.pid] = times.user + times.system
                else:  # what a server or a kernel started (a language server, a terminal), by its parent
                    role, learner = f"other:{proc.name()[:20]}", learner_of.get(proc.ppid(), "-")
                    learner_of[proc.pid] = learner
                mem = proc.memory_full_info()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            total += mem.pss
            peak = self.peaks.setdefault((role, learner, proc.pid), {"rss": 0.0, "uss": 0.0, "pss": 0.0})
            for key in peak:
                peak[key] = max(peak[key], getattr(mem, key) / MB)
        self.class_pss_peak = max(self.class_pss_peak, total / MB)

    def role(self, role: str) -> list[dict[str, float]]:
        return [peak for (r, _, _), peak in self.peaks.items() if r == role]


class Learner(threading.Thread):
    """A simulated learner: lesson 01 in a fresh kernel, run after run, until `done` is set."""

    def __init__(self, hub, name: str, cells: list[str], done: threading.Event, max_runs: int):
        super().__init__(daemon=True)
        self.hub, self.name, self.cells, self.done, self.max_runs = hub, name, cells, done, max_runs
        self.runs: list[dict] = []
        self.error: str | None = None

    def run(self) -> None:
        from kernel import LearnerKernel

        try:
            while len(self.runs) < self.max_runs and (not self.runs or not self.done.is_set()):
                started = time.perf_counter()
                with LearnerKernel(self.hub, self.name, LESSON, timeout=300) as kernel:
                    ready = time.perf_counter()
                    for source in self.cells:
                        kernel.execute(source, timeout=300)
                    cells = time.perf_counter() - ready
                    self.runs.append({"start_s": ready - started, "cells_s": cells, "kernel": kernel.kernel_id})
        except Exception as err:
            self.error = f"{self.name}: {type(err).__name__}: {err}"


class BrowserLearner(threading.Thread):
    """Learner 1 in Chromium: log in, open lesson 01, run all, click under load, then idle."""

    def __init__(self, hub, name: str, clicks: int, others: list[Learner], others_done: threading.Event,
                 loaded_done: threading.Event):
        super().__init__(daemon=True)
        self.hub, self.name, self.clicks, self.others = hub, name, clicks, others
        self.direction = 1
        self.others_done, self.loaded_done = others_done, loaded_done
        self.loaded: list[float] = []
        self.idle: list[float] = []
        self.open_s = self.run_all_s = 0.0
        self.error: str | None = None

    def run(self) -> None:
        try:
            self.drive()
        except Exception as err:
            self.error = f"browser: {type(err).__name__}: {str(err)[:500]}"
        finally:
            self.loaded_done.set()

    def drive(self) -> None:
        from conftest import CHROMIUM_ARGS, find_chromium
        from labpage import LabPage
        from playwright.sync_api import sync_playwright

        chromium = find_chromium()
        if chromium is None:
            raise RuntimeError("no Chromium found (apt-get install chromium)")
        lab_url = f"/user/{self.name}/lab/tree/{LESSON}"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.set_default_timeout(120_000)
                started = time.perf_counter()
                page.goto(f"{self.hub.url}/hub/login?next={quote(lab_url)}")
                page.fill("#username_input", self.name)
                page.fill("#password_input", self.hub.password)
                page.click("#login_submit")
                lab = LabPage(page, lambda path: f"{self.hub.url}/user/{self.name}/lab/tree/{path}", "")
                lab.open(LESSON)
                self.open_s = time.perf_counter() - started
                started = time.perf_counter()
                lab.run_all(timeout=600_000)
                self.run_all_s = time.perf_counter() - started
                stepper = lab.widget("agl-next")
                buttons = {"next": stepper.locator(".agl-next").element_handle(),
                           "prev": stepper.locator(".agl-prev").element_handle()}
                panel = stepper.locator(".agl-step-panel").element_handle()
                position = 0
                # under load: at least `clicks`, and on until every other learner has finished a run
                while len(self.loaded) < self.clicks or not all(o.runs or o.error for o in self.others):
                    position, ms = self.click(page, buttons, panel, position)
                    self.loaded.append(ms)
                self.loaded_done.set()
                self.others_done.wait(timeout=900)
                time.sleep(2)  # the last kernels shut down
                for _ in range(self.clicks):
                    position, ms = self.click(page, buttons, panel, position)
                    self.idle.append(ms)
                lab.assert_no_console_errors()
            finally:
                browser.close()

    def click(self, page, buttons, panel, position: int) -> tuple[int, float]:
        """Next up to step 3, Previous down to step 1, and so on: each click shows a new step."""
        if position >= len(SEED_STEPS):
            self.direction = -1
        elif position <= 1:
            self.direction = 1
        step = position + self.direction
        button = buttons["next" if self.direction > 0 else "prev"]
        return step, page.evaluate(CLICK, [button, panel, SEED_STEPS[step - 1]])


def lab_settings(home: Path) -> None:
    """The browser tests' JupyterLab settings (every cell in the DOM, no news toast) for learner 1."""
    from conftest import LAB_SETTINGS

    for name, values in LAB_SETTINGS.items():
        path = home / ".jupyter" / "lab" / "user-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def mb(values) -> str:
    return f"{max(values):.0f}" if values else "nan"


def med(values) -> str:
    return f"{statistics.median(values):.0f}" if values else "nan"


def main() -> int:
    parser = argparse.ArgumentParser(description="N learners on one JupyterHub, measured")
    parser.add_argument("--learners", type=int, default=4)
    parser.add_argument("--clicks", type=int, default=20, help="stepper clicks under load and again idle")
    parser.add_argument("--max-runs", type=int, default=6, help="lesson runs per simulated learner at most")
    args = parser.parse_args()
    if os.environ.get("AUTOGRAD_LAB_BENCH_CLASSROOM") != "1":
        print("skipped: the classroom benchmark starts a hub and N kernels; run make bench-classroom N=4")
        return 0
    import psutil
    from hub import Classroom, learners

    names = learners(args.learners)
    base = Path(tempfile.mkdtemp(prefix="bench-classroom-"))
    hub = Classroom(names, state=base / "state", homes=base / "homes",
                    extra_args=("--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None"))
    lab_settings(hub.homes / names[0])
    cells = lesson_cells()
    load_before = os.getloadavg()
    try:
        hub.start()
        sampler = Sampler(hub.proc.pid)
        sampler.start()
        spawn: dict[str, float] = {}

        def spawn_one(name: str) -> None:
            started = time.perf_counter()
            hub.start_server(name, timeout=300)
            spawn[name] = time.perf_counter() - started

        starters = [threading.Thread(target=spawn_one, args=(n,)) for n in names]
        for t in starters:
            t.start()
        for t in starters:
            t.join(timeout=330)
        if len(spawn) != len(names):
            raise RuntimeError(f"servers not ready: {sorted(set(names) - set(spawn))}\n{hub.log_tail()}")

        others_done, loaded_done = threading.Event(), threading.Event()
        simulated = [Learner(hub, name, cells, loaded_done, args.max_runs) for name in names[1:]]
        browser = BrowserLearner(hub, names[0], args.clicks, simulated, others_done, loaded_done)
        started = time.perf_counter()
        browser.start()
        for learner in simulated:
            learner.start()
        for learner in simulated:
            learner.join(timeout=1800)
        others_done.set()
        browser.join(timeout=900)
        wall = time.perf_counter() - started
        sampler.stop_event.set()
        sampler.join(timeout=30)
        errors = [x.error for x in [browser, *simulated] if x.error]
        if errors:
            raise RuntimeError("\n".join(errors))
    finally:
        hub.stop()
        shutil.rmtree(base, ignore_errors=True)

    runs = [run for learner in simulated for run in learner.runs]
    first = [learner.runs[0]["cells_s"] for learner in simulated if learner.runs]
    kernels = sampler.role("kernel")
    servers = sampler.role("server")
    cpu = [sampler.cpu[pid] for (role, _, pid) in sampler.peaks if role == "kernel" and pid in sampler.cpu]
    hub_rss = sampler.role("hub")[0]["rss"] if sampler.role("hub") else float("nan")
    proxy_rss = sampler.role("proxy")[0]["rss"] if sampler.role("proxy") else float("nan")
    hub_and_proxy_pss = sum(p["pss"] for p in sampler.role("hub") + sampler.role("proxy"))
    per_learner_pss = [k["pss"] for k in kernels]
    learner_pss = []  # a learner's server, its biggest kernel (a simulated one has several, one at a time), the rest
    for name in names:
        mine = [(role, peak["pss"]) for (role, who, _), peak in sampler.peaks.items() if who == name]
        kernel_peak = max((pss for role, pss in mine if role == "kernel"), default=0.0)
        learner_pss.append(kernel_peak + sum(pss for role, pss in mine if role != "kernel"))
    print(f"{args.learners} learners ({len(simulated)} through the API, 1 in Chromium), {len(runs)} API lesson runs "
          f"in {wall:.0f} s; load average before {load_before[0]:.1f}, cores {psutil.cpu_count()}")
    print(f"spawn through the REST API: {', '.join(f'{n} {s:.1f} s' for n, s in sorted(spawn.items()))}")
    print(f"browser learner: login+open {browser.open_s:.1f} s, run all {browser.run_all_s:.1f} s")
    for (role, learner, pid), peak in sorted(sampler.peaks.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        print(f"  {role:12} {learner:9} pid {pid:7}: peak RSS {peak['rss']:6.0f} MB  USS {peak['uss']:6.0f} MB  "
              f"PSS {peak['pss']:6.0f} MB")
    fields = {
        "learners": args.learners,
        "kernel_rss_mb_max": mb([k["rss"] for k in kernels]),
        # the median kernel: the last kernel alive (learner 1's, idle clicks) shares its libraries with none
        "kernel_uss_mb_median": med([k["uss"] for k in kernels]),
        "kernel_pss_mb_median": med(per_learner_pss),
        "server_rss_mb_max": mb([s["rss"] for s in servers]),
        "server_pss_mb_max": mb([s["pss"] for s in servers]),
        "hub_rss_mb": f"{hub_rss:.0f}", "proxy_rss_mb": f"{proxy_rss:.0f}",
        "learner_pss_mb_max": mb(learner_pss),
        "class_pss_mb_peak": f"{sampler.class_pss_peak:.0f}",
        "class_pss_mb_per_learner": f"{(sampler.class_pss_peak - hub_and_proxy_pss) / args.learners:.0f}",
        "lesson_cells_s_first_median": f"{statistics.median(first):.1f}" if first else "nan",
        "lesson_cells_s_max": f"{max(r['cells_s'] for r in runs):.1f}" if runs else "nan",
        "kernel_start_s_median": f"{statistics.median(r['start_s'] for r in runs):.1f}" if runs else "nan",
        "kernel_cpu_s_median": f"{statistics.median(cpu):.1f}" if cpu else "nan",
        "browser_run_all_s": f"{browser.run_all_s:.1f}",
        "click_ms_median_load": f"{statistics.median(browser.loaded):.0f}",
        "click_ms_worst_load": f"{max(browser.loaded):.0f}",
        "click_ms_median_idle": f"{statistics.median(browser.idle):.0f}",
        "click_ms_worst_idle": f"{max(browser.idle):.0f}",
        "clicks_load": len(browser.loaded),
    }
    print("RESULT " + " ".join(f"{k}={v}" for k, v in fields.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
