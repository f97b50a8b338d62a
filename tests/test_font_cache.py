"""A matplotlib font cache made before the CJK font (or one of its weights) was installed: the lab
registers every weight of the font its figures need, so Chinese %storage and bold Chinese text draw
with the font's own weights and print no warning. Each case runs in a fresh process whose
MPLCONFIGDIR holds a cache built without the font; warnings are errors there and stderr must stay
empty (a findfont warning would reach a lesson's stderr and fail strict nbval)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograd_lab.languages import LANGUAGES
from helpers import printed

FONT = LANGUAGES["zh"].font
ROOT = Path(__file__).resolve().parents[1]

# builds the cache of a fresh MPLCONFIGDIR from the fonts of this machine, leaving out the font's
# files whose name contains DROP (all of them, or only one weight)
BUILD = """
import os, sys
from matplotlib import font_manager as fm
files, drop = sys.argv[1], sys.argv[2]
fresh = fm.FontManager()
fresh.ttflist = [f for f in fresh.ttflist if not (os.path.basename(f.fname).startswith(files) and drop in f.fname)]
fm.json_dump(fresh, os.path.join(os.environ["MPLCONFIGDIR"], f"fontlist-v{fm.FontManager.__version__}.json"))
"""

# the learner's session: Chinese %storage and a bold Chinese title, then what matplotlib knows
SESSION = """
import json, logging, sys, warnings
warnings.simplefilter("error")
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())
logging.getLogger("matplotlib").addHandler(Keep(logging.WARNING))
family = sys.argv[1]
from matplotlib import font_manager as fm
before = sorted({f.weight for f in fm.fontManager.ttflist if f.name == family})
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output
import io
ip = get_ipython()
ip.display_formatter.active_types = list(ip.display_formatter.format_types)  # as a kernel (IPython 7)
ip.display_formatter.ipython_display_formatter.enabled = True
ip.run_line_magic("load_ext", "autograd_lab")
import autograd_lab
autograd_lab.language("zh")
ip.run_cell("import torch\\na = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)")
with capture_output() as out:
    ok = ip.run_cell("%storage a").success
from matplotlib.figure import Figure
from autograd_lab.fonts import figure_text
@figure_text
def build():
    fig = Figure(figsize=(2, 1))
    fig.add_subplot().set_title("反向传播 x.grad", fontweight="bold")
    return fig
build().savefig(io.BytesIO(), format="png")
after = sorted({f.weight for f in fm.fontManager.ttflist if f.name == family})
on_disk = sorted({f.weight for f in fm.FontManager().ttflist if f.name == family})
png = [o.data.get("image/png", b"")[:4] == b"\\x89PNG" for o in out.outputs]
print(json.dumps({"ok": ok, "before": before, "after": after, "on_disk": on_disk, "records": records,
                  "png": any(png), "stderr": out.stderr}))
"""


def _installed() -> bool:
    from matplotlib import font_manager

    return any(Path(p).name.startswith(FONT.files) for p in font_manager.findSystemFonts())


@pytest.mark.skipif(not _installed(), reason=f"the Chinese font is not installed ({FONT.install})")
@pytest.mark.parametrize("drop", ["", "Bold"], ids=["the font missing", "its bold weight missing"])
def test_a_cache_older_than_the_font_prints_no_warning(catalogs, tmp_path, drop):
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path), "OMP_NUM_THREADS": "1", "AUTOGRAD_LAB_LANG": "en"}
    subprocess.run([sys.executable, "-c", BUILD, FONT.files, drop], env=env, check=True, cwd=ROOT)
    run = subprocess.run([sys.executable, "-W", "error", "-c", SESSION, FONT.family], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr == ""
    seen = json.loads(printed(run.stdout).splitlines()[-1])
    assert seen["ok"] and seen["png"] and seen["stderr"] == "" and seen["records"] == []
    # the cache really lacked it: no weight at all, or no bold
    assert seen["before"] == ([] if not drop else [w for w in seen["on_disk"] if w < 700])
    assert 700 in seen["on_disk"] and seen["after"] == seen["on_disk"]  # every weight, bold included
