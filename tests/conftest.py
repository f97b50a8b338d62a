import pytest


@pytest.fixture
def ip():
    """A global IPython shell with the extension loaded; magics are called on it. It formats every
    mime type and calls _ipython_display_, as a kernel's shell does (IPython 7's terminal shell
    formats text/plain alone)."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.display_formatter.active_types = list(shell.display_formatter.format_types)
    shell.display_formatter.ipython_display_formatter.enabled = True
    shell.run_line_magic("load_ext", "autograd_lab")
    yield shell
    shell.run_line_magic("unload_ext", "autograd_lab")


@pytest.fixture
def seeded(ip):
    """The shell with the seed example: x = [1, 2, 3] (float64, requires grad), y = x ** 2, z = y.mean()."""
    ip.run_cell("import torch\n"
                "x = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.double)\n"
                "y = x ** 2\n"
                "z = y.mean()\n")
    return ip


@pytest.fixture
def seed():
    """The seed example's tensors by name: x = [1, 2, 3] (float64, requires grad), y = x ** 2, z = y.mean()."""
    import torch

    x = torch.tensor([1, 2, 3], requires_grad=True, dtype=torch.double)
    y = x ** 2
    z = y.mean()
    return {"x": x, "y": y, "z": z}


@pytest.fixture
def fresh_progress(monkeypatch):
    """Exercise progress and grading mode start empty and are emptied afterwards."""
    from autograd_lab.practice import progress

    monkeypatch.delenv("AUTOGRAD_LAB_GRADING", raising=False)
    progress.reset()
    progress._grading = None
    yield
    progress.reset()
    progress._grading = None


@pytest.fixture(scope="session")
def catalogs():
    """The Chinese catalogs compiled from their .po files as they are now (what `make catalogs` does)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("catalogs", Path(__file__).parents[1] / "scripts" / "catalogs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.compile_all()
    return module


@pytest.fixture
def zh(catalogs):
    """The lab speaks Chinese for this test, English again afterwards."""
    from autograd_lab import i18n

    i18n.language("zh")
    yield i18n
    i18n.language("en")


# Tests that start kernels, servers or a browser, bind ports or measure a process's memory run on one
# xdist worker, one after the other (`--dist loadgroup`), while the other workers take the rest.
# (Two such groups side by side were no faster, and a browser test's typing raced a busy kernel.)
PROCESSES = {"test_kernel_memory.py", "test_graders.py", "test_lessons_filled.py", "test_classroom.py", "test_book.py"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.name in PROCESSES or item.path.parent.name == "browser":
            item.add_marker(pytest.mark.xdist_group("processes"))
