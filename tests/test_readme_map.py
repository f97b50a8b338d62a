"""README's "How it is built" map matches the package: every module and room it names exists, and
every module of the package is named there (so the map cannot drift from the tree)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "autograd_lab"


def map_block() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## How it is built", 1)[1]
    return section.split("```", 2)[1]


def named_in_map() -> dict[str, set[str]]:
    """{"": top-level modules and rooms, "room": its modules (and sub-folders) named in the map}."""
    named: dict[str, set[str]] = {"": set()}
    room = ""
    for line in map_block().splitlines()[1:]:
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
