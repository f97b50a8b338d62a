"""Drive one JupyterLab page the way a learner does, and read back only what the page shows.

Cells are run through Lab's own command (the "Run All Cells" menu entry); everything checked
afterwards is read from the DOM, never from the kernel.
"""
from __future__ import annotations

KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const s = w && w.sessionContext && w.sessionContext.session;
    const k = s && s.kernel;
    return !!k && k.status === 'idle' && k.connectionStatus === 'connected' && w.context.isReady;
}"""

RUN_ALL = """() => {
    window.__aglRun = undefined;
    window.jupyterapp.commands.execute('notebook:run-all-cells').then(
        (ok) => { window.__aglRun = 'done'; },
        (err) => { window.__aglRun = 'failed: ' + err; });
}"""

CELL_TYPES = """() => {
    const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
    const types = [];
    for (let i = 0; i < cells.length; i++) types.push(cells.get(i).type);
    return types;
}"""


def expect(locator):
    from playwright.sync_api import expect as pw_expect

    return pw_expect(locator)


class LabPage:
    """One page of JupyterLab. `console_errors` collects console errors and uncaught exceptions."""

    def __init__(self, page, url_for, fixtures_dir: str):
        self.page = page
        self.url_for = url_for
        self.fixtures_dir = fixtures_dir
        self.console_errors: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda err: self.console_errors.append(f"uncaught: {err}"))

    def _on_console(self, msg) -> None:
        if msg.type == "error":
            self.console_errors.append(msg.text)

    # -- notebooks -------------------------------------------------------------------------
    def open(self, path: str) -> None:
        """Open a notebook (a path in the server's root) and wait until its kernel is idle."""
        self.page.goto(self.url_for(path))
        expect(self.page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=60_000)
        self.wait_idle()

    def open_fixture(self, name: str) -> None:
        self.open(f"{self.fixtures_dir}/{name}")

    def wait_idle(self, timeout: float = 90_000) -> None:
        self.page.wait_for_function(KERNEL_IDLE, timeout=timeout)

    def run_all(self, timeout: float = 120_000) -> None:
        """Run every cell with Lab's Run All Cells command and wait for the last one to finish."""
        self.page.evaluate(RUN_ALL)
        self.page.wait_for_function("() => window.__aglRun !== undefined", timeout=timeout)
        state = self.page.evaluate("() => window.__aglRun")
        assert state == "done", f"Run All Cells {state}; cell errors: {self.output_errors()}"
        self.wait_idle(timeout)

    def cell_types(self) -> list[str]:
        """The notebook's cells as Lab's model holds them, e.g. ['markdown', 'code']."""
        return self.page.evaluate(CELL_TYPES)

    def output_errors(self) -> list[str]:
        """Tracebacks and stderr the cells printed, as shown on the page."""
        errs = self.page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        return [text[-800:] for text in errs.all_inner_texts()]

    def widget(self, css_class: str, index: int = 0):
        """The output (a cell's rendered widget) holding an element with css_class, e.g. 'agl-next'."""
        outputs = self.page.locator(".jp-OutputArea-output").filter(has=self.page.locator(f".{css_class}"))
        found = outputs.nth(index)
        # a cell that raised will not produce the widget: do not wait long for it
        wait = 5_000 if self.output_errors() else 30_000
        try:
            expect(found).to_be_visible(timeout=wait)
        except AssertionError:
            raise AssertionError(f"no rendered widget with .{css_class} on the page; "
                                 f"cell errors: {self.output_errors()}; console: {self.console_errors}") from None
        found.scroll_into_view_if_needed()
        return found

    def settle(self, locator, timeout: float = 30_000) -> None:
        """Wait until the kernel is idle and the locator's text stops changing (a redraw in flight)."""
        self.wait_idle(timeout)
        previous = None
        for _ in range(int(timeout / 300)):
            text = locator.inner_text()
            if text == previous:
                return
            previous = text
            self.page.wait_for_timeout(300)

    # -- checks ----------------------------------------------------------------------------
    def assert_no_console_errors(self) -> None:
        assert not self.console_errors, "JavaScript errors on the page:\n" + "\n".join(self.console_errors)


def click_next_and_expect(widget, steps: list[str], *final: str, timeout: float = 10_000) -> None:
    """Click the stepper's Next once per entry of `steps`; after click k the panel must contain
    steps[k-1] (e.g. "Step 1 of 3: MeanBackward0"), and at the end every string in `final`.
    Raises AssertionError otherwise.

    The texts are read from the page, so a Next button that does nothing, a panel that never
    redraws or a widget that renders blank all fail here."""
    next_button = widget.locator(".agl-next")
    panel = widget.locator(".agl-step-panel")
    expect(next_button).to_be_visible(timeout=timeout)
    expect(panel).to_be_visible(timeout=timeout)
    for text in steps:
        next_button.click()
        expect(panel).to_contain_text(text, timeout=timeout)
    for text in final:
        expect(panel).to_contain_text(text, timeout=timeout)
