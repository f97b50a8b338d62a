import pytest


@pytest.fixture
def ip():
    """A global IPython shell with the extension loaded; magics are called on it."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.run_line_magic("load_ext", "autograd_lab")
    yield shell
    shell.run_line_magic("unload_ext", "autograd_lab")
