"""The module map of docs/built.md ("How it is built") matches the package: every module and room it
names exists, and every module of the package is named there (so the map cannot drift from the tree).
The Chinese page, docs/zh/built.md, shows the same map (module names are code, the map stays English)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "autograd_lab"


BUILT = ROOT / "docs" / "built.md"
BUILT_ZH = ROOT / "docs" / "zh" / "built.md"


def map_block(path: Path = BUILT, heading: str = "## The module map") -> str:
    """The first fenced block under the page's module map heading."""
    text = path.read_text(encoding="utf-8")
    assert heading in text, f"{path.relative_to(ROOT)} has no heading {heading!r}"
    section = text.split(heading, 1)[1]
    return section.split("```", 2)[1]


def named_in_map(block: str | None = None) -> dict[str, set[str]]:
    """{"": top-level modules and rooms, "room": its modules (and sub-folders) named in the map}."""
    named: dict[str, set[str]] = {"": set()}
    room = ""
    for line in (map_block() if block is None else block).splitlines()[1:]:
        head = re.match(r"^  (\S+)", line)
        if head:
            entry = head.group(1)
            named[""].add(entry.rstrip("/"))
            room = entry.rstrip("/") if entry.endswith("/") else ""
            named.setdefault(room, set())
            line = line[head.end():]
        if room:
            named[room] |= set(re.findall(r"\b([a-z_]+(?:\.py|/))", line))
    return named


def actual() -> dict[str, set[str]]:
    tree: dict[str, set[str]] = {"": set()}
    for path in sorted(PACKAGE.iterdir()):
        if path.name.startswith("__pycache__"):
            continue
        if path.is_dir():
            tree[""].add(path.name)
            tree[path.name] = {p.name for p in path.glob("*.py") if p.name != "__init__.py"}
            tree[path.name] |= {p.name + "/" for p in path.iterdir() if p.is_dir() and p.name != "__pycache__"}
        elif path.suffix == ".py":
            tree[""].add(path.name)
    return tree


def test_every_module_of_the_package_is_in_the_map_and_nothing_else():
    named, real = named_in_map(), actual()
    extra, missing = sorted(named[""] - real[""]), sorted(real[""] - named[""])
    assert not extra and not missing, f"top level: the map names {extra} that do not exist, and lacks {missing}"
    for room in sorted(k for k in real if k):
        assert named.get(room, set()) == real[room], (
            f"{room}/: map names {sorted(named.get(room, set()) - real[room])} that do not exist, "
            f"and lacks {sorted(real[room] - named.get(room, set()))}")


def test_the_chinese_page_shows_the_same_map():
    assert map_block(BUILT_ZH, "## 模块地图") == map_block(), (
        "docs/zh/built.md's module map differs from docs/built.md's: copy the English map there")


def test_a_module_left_out_of_the_map_is_caught():
    block = map_block()
    assert "  errors.py" in block
    named = named_in_map(block.replace("  errors.py", "  errorz.py"))
    assert "errors.py" not in named[""] and "errorz.py" in named[""]
    assert "traced.py" not in named_in_map(block.replace("traced.py", ""))["practice"]
