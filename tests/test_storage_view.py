"""The storage lab's faces, picture, widget and %storage magic."""
import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from matplotlib.figure import Figure

from autograd_lab.errors import LabInputError
from autograd_lab.storage.experiments import build_report as compare_storage
from autograd_lab.storage.memory import memory
from autograd_lab.storage.picture import picture
from autograd_lab.storage.view import StorageView
from autograd_lab.storage.view import compare_storage as storage_view
from helpers import assert_unchanged, state


def leaf():
    return torch.tensor([1.0, 2.0, 3.0], requires_grad=True)


def test_memory_shows_one_block_one_counter_for_detach_and_two_counters_for_data():
    a = leaf()
    mem = memory(a, compare_storage(a))
    me, detach, clone, data = (mem.window(k) for k in ("a", "a.detach()", "a.clone()", "a.data"))
    assert me.block == detach.block == data.block == "S0"
    assert me.counter == detach.counter == "V0"
    assert data.counter not in (None, "V0")
    assert clone.block != "S0" and clone.in_graph and clone.counter != "V0"
    assert mem.window("a.detach().numpy()").counter is None
    assert [b.name for b in mem.blocks] == [f"S{i}" for i in range(len(mem.blocks))]


def test_memory_after_an_edit_shows_the_new_values_and_versions():
    a = leaf()
    report = compare_storage(a)
    mem = memory(a, report, "detach()", "mul_")
    assert mem.blocks[0].values == ("2.", "4.", "6.")
    assert mem.window("a").version == 1 and mem.window("a.clone()").values == "[1., 2., 3.]"
    data = memory(a, report, ".data", "mul_")
    assert data.window("a").version == 0 and data.window("a.data").version == 1
    refused = memory(a, report, "view(-1)", "mul_")
    assert refused.refused.startswith("a view of a leaf") and refused.blocks[0].values[0] == "1."
    assert a._version == 0 and a.tolist() == [1.0, 2.0, 3.0]


def test_a_view_input_is_a_window_at_its_offset():
    x = torch.arange(4.0, requires_grad=True)
    mem = memory(x[1:], compare_storage(x[1:], name="x[1:]"))
    window = mem.window("x[1:]")
    assert (window.block, window.offset, window.cells) == ("S0", 1, (1, 2, 3))
    assert mem.blocks[0].size == 4


def test_picture_is_a_figure_naming_storages_without_addresses():
    a = leaf()
    fig = picture(memory(a, compare_storage(a), ".data"))
    assert isinstance(fig, Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert {"S0", "S1"} <= set(texts) and any(t.startswith("V0 = ") for t in texts)
    assert any("After a.data" in t for t in texts)
    assert not any("0x" in t for t in texts)


def test_text_and_html_faces_are_deterministic_and_say_shares_storage():
    a, b = leaf(), None
    b = a.detach()
    view = storage_view(a, names={"a": a, "b": b, "_": a})
    assert view.text() == storage_view(a, names={"a": a, "b": b}).text()
    assert "In your namespace, b shares storage with a." in view.text()
    assert repr(view) == view.text()
    html = view.html()
    assert '<table class="autograd-lab"' in html and "silently wrong" in html and "0x" not in html


def test_widget_has_its_classes_and_an_edit_runs_on_twins():
    a = leaf()
    before = state([a])
    box = storage_view(a).widget
    found = {c: w for w in _walk(box) for c in getattr(w, "_dom_classes", ())}
    for name in ("agl-storage-table", "agl-storage-copy", "agl-storage-edit", "agl-storage-apply",
                 "agl-storage-result"):
        assert name in found
    assert found["agl-storage-apply"].description == "Apply edit"
    table, result = found["agl-storage-table"], found["agl-storage-result"]
    start = table.value
    found["agl-storage-copy"].value = ".data"
    found["agl-storage-edit"].value = "zero_"
    found["agl-storage-apply"].click()
    assert table.value != start and "After a.data: b.zero_() (applied)" in table.value
    assert "silently wrong" in result.value and "[0., 0., 0.] instead of [2., 4., 6.]" in result.value
    found["agl-storage-copy"].value = "view(-1)"
    found["agl-storage-apply"].click()
    assert "the edit was refused" in result.value and "Changed: nothing" in result.value
    found["agl-storage-copy"].value = "detach()"
    found["agl-storage-edit"].value = "numpy"
    found["agl-storage-apply"].click()
    assert "n = b.numpy(); n *= 2" in result.value and "silently wrong" in result.value
    found["agl-storage-copy"].value = "clone()"
    found["agl-storage-edit"].value = "add_"
    found["agl-storage-apply"].click()
    assert "only b = a.clone()" in result.value and "correct gradient" in result.value
    assert_unchanged([a], before)
    assert a.grad is None


def _walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


def test_apply_rejects_an_unknown_copy():
    with pytest.raises(LabInputError, match="no copy"):
        StorageView(leaf()).apply("copy()", "mul_")


def test_storage_magic_shows_the_table(ip):
    ip.user_ns["a"] = leaf()
    with capture_output() as out:
        ip.run_line_magic("storage", "a")
    shown = "".join(o.data.get("text/plain", "") for o in out.outputs)
    assert "a.detach()" in shown and "silently wrong" in shown
    assert ip.user_ns["a"]._version == 0


@pytest.mark.parametrize("line, value, words", [
    ("nothing_here", None, "run the cell that creates it"),
    ("x", 3, "needs a tensor"),
    ("x", torch.tensor([1, 2]), "cannot require grad"),
])
def test_storage_magic_gives_short_usage_messages(ip, line, value, words):
    if value is not None:
        ip.user_ns["x"] = value
    with pytest.raises(UsageError, match=words):
        ip.run_line_magic("storage", line)


def test_compare_storage_calls_the_tensor_by_the_callers_name_as_the_magic_does():
    h = torch.tensor([1., 2.], requires_grad=True)
    from autograd_lab import compare_storage as public

    report = public(h)
    assert report.name == "h" and "h.detach()" in report.text() and "a.detach()" not in report.text()
    unnamed = public(h * 1)  # (outside an assert: pytest keeps an assert's temporaries under names)
    assert unnamed.name == "a"  # no name of the caller's: the texts' own letter
    assert public(h, name="mine").name == "mine"
