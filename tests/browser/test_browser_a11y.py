"""Accessibility in the real JupyterLab: axe-core's automated rules tagged wcag2a, wcag2aa and
wcag21aa on a page holding one of each kind of lab view (stepper with its prediction box, graph,
storage lab, exercise with its answer box, explainer, profiler, Jacobian), in English and in
Chinese, counted only inside the outputs of the lab's cells; and keyboard-only stepping.

axe-core is installed from npm into tests/browser/node_modules by the Makefile (make .venv/.installed).
An automated check covers part of WCAG only: it claims no conformance.

JupyterLab's own page, outside the outputs, is left alone; what axe reports for it is printed by
test_every_view_has_no_serious_violation (run with -s to read it). Measured with axe-core 4.10.3 on
JupyterLab's page with the every_view fixture: aria-allowed-attr (critical, 3 nodes),
aria-required-children (critical, 1), aria-input-field-name (serious, 9), all outside the outputs."""
import json
from pathlib import Path

import pytest

from labpage import expect

pytestmark = pytest.mark.browser

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21aa"]
ARTIFACTS = Path(__file__).parent / "artifacts"

RUN = """async (include) => {
  const context = include ? {include: [[include]]} : document;
  const result = await axe.run(context, {runOnly: {type: "tag", values: TAGS}});
  return result.violations.map(v => ({id: v.id, impact: v.impact, nodes: v.nodes.length,
                                      html: v.nodes.slice(0, 3).map(n => n.html.slice(0, 200))}));
}""".replace("TAGS", json.dumps(TAGS))


def axe(lab, include: str | None):
    if not AXE.exists():
        pytest.skip("axe-core is not installed: run make .venv/.installed (npm install in tests/browser)")
    lab.page.add_script_tag(path=str(AXE))
    return lab.page.evaluate(RUN, include)


@pytest.mark.xfail(strict=True, reason="image-alt (critical, 5 nodes): ipywidgets 8's Image draws an <img> "
                   "with no alt, and a tooltip on it stops JupyterLab from drawing it; the HTML face's <img> "
                   "has its alt. Strict: passes, and so fails here, once the widget's pictures are named.")
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_view_has_no_serious_violation(lab, language):
    lab.open_fixture(f"every_view_{language}.ipynb")
    lab.run_all()
    for css in ("agl-next", "agl-graph", "agl-storage-apply", "agl-predict-check"):
        lab.widget(css)
    lab.wait_idle()
    lab.page.wait_for_timeout(1500)
    ARTIFACTS.mkdir(exist_ok=True)
    lab.page.screenshot(path=str(ARTIFACTS / f"a11y_every_view_{language}.png"), full_page=True)
    inside = axe(lab, ".jp-OutputArea-output")
    serious = [v for v in inside if v["impact"] in ("serious", "critical")]
    page = axe(lab, None)
    print(f"\n[{language}] JupyterLab's page as a whole:",
          [(v["id"], v["impact"], v["nodes"]) for v in page])
    print(f"[{language}] inside the lab's outputs:", [(v["id"], v["impact"], v["nodes"]) for v in inside])
    assert not serious, serious
    assert lab.output_errors() == []


def test_keyboard_only_stepping_and_checking(lab):
    lab.open_fixture("every_view_en.ipynb")
    lab.run_all()
    stepper = lab.widget("agl-next")
    next_button = stepper.locator(".agl-next")
    next_button.focus()
    panel = stepper.locator(".agl-step-panel")
    for key in ("Enter", "Space", "Enter"):
        lab.page.keyboard.press(key)
        lab.wait_idle()
    expect(panel).to_contain_text("Step 3 of 3", timeout=10_000)
    # the exercise: Tab from its answer box to its Check button, Enter to check
    box = lab.page.locator(".jp-OutputArea-output input[type=text]").last
    box.focus()
    lab.page.keyboard.type("[0.6667, 1.3333, 2.0000]")
    lab.page.keyboard.press("Tab")
    focused = lab.page.evaluate("() => document.activeElement.textContent")
    lab.page.keyboard.press("Enter")
    lab.wait_idle()
    ARTIFACTS.mkdir(exist_ok=True)
    lab.page.screenshot(path=str(ARTIFACTS / "a11y_keyboard.png"), full_page=True)
    assert focused.strip(), "Tab from the answer box reached no named control"
