"""The storage lab: pick a copy and an in-place edit in the controls, apply it, see the table change."""
import pytest

from labpage import expect

pytestmark = pytest.mark.browser


def pick(select, wanted: str) -> str:
    """Choose the first option whose label contains `wanted` (else the first option); its label."""
    labels = select.locator("option").all_inner_texts()
    assert labels, "a storage dropdown has no choices"
    label = next((text for text in labels if wanted in text), labels[0])
    select.select_option(label=label)
    return label


def test_applying_an_in_place_edit_changes_the_table(lab):
    lab.open_fixture("storage_lab.ipynb")
    lab.run_all()
    storage = lab.widget("agl-storage-apply")
    table = storage.locator(".agl-storage-table")
    expect(table).to_contain_text("a.detach()")
    expect(table).to_contain_text("[1., 2., 3.]")

    # an edit through a.detach() writes into a's own memory: the table must show it
    copy = pick(storage.locator(".agl-storage-copy select"), "detach()")
    assert copy.strip() == "a.detach()", f"expected the a.detach() choice first, got {copy!r}"
    edit = pick(storage.locator(".agl-storage-edit select"), "mul_(2)")
    lab.settle(table)  # choosing may redraw the table; compare against what it shows before Apply
    before = table.inner_text()
    storage.locator(".agl-storage-apply").click()

    expect(table).not_to_have_text(before)
    if "mul_(2)" in edit:  # [1, 2, 3] doubled, seen through the shared memory
        expect(table).to_contain_text("[2., 4., 6.]")
    expect(storage.locator(".agl-storage-result")).not_to_be_empty()
    lab.assert_no_console_errors()
