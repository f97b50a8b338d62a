"""The magics' lines read as IPython users expect, with the lab's expressions in them: -h and --help
print the help (which names the function that returns the same object), short forms of the value
options, a word is an option only when it is exactly a known option outside brackets, a value option
takes the next word whatever it starts with, -- ends the options, and -a is never --apply. Torch is
the oracle of every gradient the magics write when asked (--apply)."""
import ast

import pytest
import torch
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import autograd_lab
from autograd_lab import magic_spec
from autograd_lab.magics import BY_NAME, MAGICS

# (magic, the line with short forms, the same line written in full)
ALIASES = [
    ("backward", "z -g torch.ones(3)", "z --gradient torch.ones(3)"),
    ("backward", "z -g=torch.ones(2, 3) --apply", "z --gradient=torch.ones(2, 3) --apply"),
    ("backward", "z -i [x, y]", "z --inputs [x, y]"),
    ("backward", "z -i=x -g g", "z --inputs=x --gradient g"),
    ("jacobian", "y x -v torch.tensor([1., 0., 2.])", "y x --v torch.tensor([1., 0., 2.])"),
    ("exercise", "mean_square -s 3", "mean_square --seed 3"),
    ("exercise", "mean_square -s=3", "mean_square --seed=3"),
    ("exercise", "-s 3 mean_square", "mean_square --seed 3"),
    ("backward_profile", "-n 4 -w 1 -b 5", "--steps 4 --warmup 1 --budget 5"),
]


@pytest.mark.parametrize(("name", "short", "full"), ALIASES)
def test_every_short_form_reads_as_its_long_form(name, short, full):
    magic = BY_NAME[name]
    assert magic.parse(short) == magic.parse(full)
    assert magic.parse(short)[1]  # the option was read, not left in the expression


def test_every_short_form_is_in_the_table_and_in_the_help():
    shorts = {(m.name, f.name): f.short for m in MAGICS for f in m.flags if f.short}
    assert shorts == {("backward", "gradient"): "g", ("backward", "inputs"): "i", ("jacobian", "v"): "v",
                      ("exercise", "seed"): "s", ("backward_profile", "steps"): "n",
                      ("backward_profile", "warmup"): "w", ("backward_profile", "budget"): "b"}
    tested = {(BY_NAME[name], word) for name, short, _ in ALIASES for word in short.split() if word.startswith("-")}
    for (name, flag), letter in shorts.items():  # every alias has a case above
        assert any(m.name == name and w.split("=")[0] == "-" + letter for m, w in tested), (name, flag)
        assert f"-{letter} for --{flag}" in BY_NAME[name].doc()
    for magic in MAGICS:  # switches have no short form: what changes the learner's tensors is typed in full
        assert all(not f.short for f in magic.flags if f.kind is None)


@pytest.mark.parametrize("magic", MAGICS, ids=lambda m: m.name)
@pytest.mark.parametrize("asked", ["-h", "--help"])
def test_h_and_help_print_the_help_and_run_nothing(seeded, magic, asked):
    seeded.user_ns.pop("ran", None)
    with capture_output() as out:
        if magic.cell:
            seeded.run_cell_magic(magic.name, asked, "ran = True\nz.backward()")
        else:
            seeded.run_line_magic(magic.name, ("z " if magic.subject else "") + asked)
    assert out.stdout == magic.doc() + "\n"
    assert out.outputs == [] and out.stderr == ""
    assert "ran" not in seeded.user_ns and seeded.user_ns["x"].grad is None
    assert magic.function and "autograd_lab." in magic.function and magic.function in magic.doc().replace(
        "\n  ", "\n")


def test_help_wins_over_a_line_that_would_fail_later(seeded):
    with capture_output() as out:
        seeded.run_line_magic("backward", "nothing_here --apply -h")
    assert out.stdout.startswith("%backward z [--gradient g]") and "s = autograd_lab.step(z)" in out.stdout
    assert seeded.user_ns["x"].grad is None


def _called(code: str) -> set[str]:
    """The autograd_lab functions a help's code calls."""
    tree = ast.parse(code)
    return {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and isinstance(n.func.value, ast.Name) and n.func.value.id == "autograd_lab"}


# a line magic's line, and what its help's function needs in the namespace besides the seed example
LINES = {"backward": "z", "graph": "z", "jacobian": "y x", "storage": "a", "exercise": "mean_square -s 7"}


@pytest.mark.parametrize("name", sorted(LINES))
def test_the_function_a_help_names_returns_what_the_magic_shows(seeded, monkeypatch, name):
    """Run the help's own code: it returns an object of the kind the magic shows, with the same text."""
    magic = BY_NAME[name]
    seeded.run_cell("a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\nimport autograd_lab")
    shown: list = []
    monkeypatch.setattr(magic_spec, "show", shown.append)
    seeded.run_line_magic(name, LINES[name])
    ns = dict(seeded.user_ns)
    [called] = _called(magic.function)
    assert called in autograd_lab.__all__
    made = next(t.id for node in ast.walk(ast.parse(magic.function)) if isinstance(node, ast.Assign)
                for t in node.targets if isinstance(t, ast.Name))
    ns.pop(made, None)  # the shell may hold that name already (another test's, say)
    exec(magic.function, ns)
    assert made in ns
    assert type(ns[made]) is type(shown[0])
    assert ns[made].text() == shown[0].text()
    assert seeded.user_ns["x"].grad is None


@pytest.mark.parametrize("name", ["explain", "record", "backward_profile"])
def test_a_cell_magics_help_names_a_public_function(name):
    code = BY_NAME[name].function
    assert _called(code) <= set(autograd_lab.__all__) and _called(code)


# --- a value option takes the next word whatever it starts with -----------------------------------------

@pytest.mark.parametrize("line", ["w --gradient -torch.ones(3, dtype=torch.double) --apply",
                                  "w -g -torch.ones(3, dtype=torch.double) --apply",
                                  "w --apply -g=-torch.ones(3, dtype=torch.double)",
                                  "-g -torch.ones(3, dtype=torch.double) w --apply",
                                  "w -g -h --apply"])
def test_a_gradient_with_a_leading_minus_sign(seeded, line):
    seeded.run_cell("w = x * 3\nh = torch.ones(3, dtype=torch.double)")
    x = seeded.user_ns["x"]
    expected, = torch.autograd.grad(x * 3, x, -torch.ones(3, dtype=torch.double))
    with capture_output():
        seeded.run_line_magic("backward", line)
    torch.testing.assert_close(x.grad, expected)


def test_a_value_that_looks_like_an_option_is_the_value():
    backward = BY_NAME["backward"]
    assert backward.parse("z --gradient --g") == ("z", {"gradient": "--g"})
    assert backward.parse("z -g -h") == ("z", {"gradient": "-h"})
    assert backward.parse("z -g --apply") == ("z", {"gradient": "--apply"})
    assert BY_NAME["exercise"].parse("mean_square -s 3")[1] == {"seed": 3}
    with pytest.raises(UsageError, match="whole number from 0"):
        BY_NAME["exercise"].parse("mean_square -s -1")


def test_options_before_the_expression():
    backward = BY_NAME["backward"]
    assert backward.parse("-g torch.ones(3, dtype=torch.double) w") == (
        "w", {"gradient": "torch.ones(3, dtype=torch.double)"})
    assert backward.parse("-g 2 * g w --apply") == ("w", {"gradient": "2 * g", "apply": True})
    assert backward.parse("--gradient g if c else h z.sum()") == ("z.sum()", {"gradient": "g if c else h"})
    # the longest expression wins: "h (z)" is a call of h, so the expression is what follows it
    assert backward.parse("-g h (z) w") == ("w", {"gradient": "h (z)"})
    assert BY_NAME["jacobian"].parse("-v w y x") == ("y x", {"v": "w"})


# --- a word is an option only when it is exactly a known option outside brackets --------------------------

def test_option_looking_text_inside_brackets_is_the_expression(seeded):
    seeded.run_cell("a = torch.tensor(2.0, dtype=torch.double)")
    backward = BY_NAME["backward"]
    line = "(y * --x + torch.stack([x, -x, --x]).sum(dim=0) -a).sum() --gradient ( --1.0 -h) --apply"
    expr, opts = backward.parse(line)
    assert expr == "(y * --x + torch.stack([x, -x, --x]).sum(dim=0) -a).sum()"
    assert opts == {"gradient": "( --1.0 -h)", "apply": True}
    seeded.run_cell("h = torch.tensor(0.5, dtype=torch.double)")
    x = seeded.user_ns["x"]
    out = (x ** 2 * x + torch.stack([x, -x, x]).sum(dim=0) - 2.0).sum()
    expected, = torch.autograd.grad(out, x, torch.tensor(1.0 - 0.5, dtype=torch.double))
    with capture_output():
        seeded.run_line_magic("backward", line)
    torch.testing.assert_close(x.grad, expected)


@pytest.mark.parametrize(("line", "says"), [
    ("z -a", ["-a is not an option", "--apply has no short form, type it in full"]),
    ("z -p", ["-p is not an option", "--predict has no short form"]),
    ("z -x", ["unknown option -x", "-g/--gradient, --predict, --apply, -i/--inputs", "(z -x)"]),
    ("z --grad torch.ones(3)", ["unknown option --grad"]),
    ("z --gradient-x g", ["unknown option --gradient-x"]),
    ("z -G g", ["unknown option -G"]),
    ("z -g", ["--gradient needs a value"]),
    ("z -g --", ["--gradient needs a value"]),
    ("z -i= ", ["--inputs needs a value"]),
])
def test_words_that_are_no_known_option_are_refused(seeded, line, says):
    with pytest.raises(UsageError) as err:
        seeded.run_line_magic("backward", line)
    for said in says:
        assert said in str(err.value)
    assert "Usage: %backward z" in str(err.value) and "\n" not in str(err.value)
    assert seeded.user_ns["x"].grad is None


def test_backward_a_never_writes_grad_even_when_a_is_a_tensor(seeded):
    """`loss -a` could be read as loss minus a: it is refused, and nothing is written."""
    seeded.run_cell("a = torch.tensor(1.0, dtype=torch.double)\nloss = z * 2")
    for line in ("loss -a", "loss -a --predict", "-a loss"):
        with capture_output() as out, pytest.raises(UsageError, match="--apply has no short form"):
            seeded.run_line_magic("backward", line)
        assert out.outputs == []
    assert seeded.user_ns["x"].grad is None
    with capture_output():  # in brackets it is the expression: (loss - a), recorded, nothing written
        seeded.run_line_magic("backward", "(loss -a)")
    assert seeded.user_ns["x"].grad is None


# --- -- ends the options ----------------------------------------------------------------------------

def test_double_dash_ends_the_options(seeded):
    backward = BY_NAME["backward"]
    assert backward.parse("-- -z") == ("-z", {})
    assert backward.parse("--predict -- -z") == ("-z", {"predict": True})
    assert backward.parse("z -- --apply") == ("z --apply", {})  # no switch after --: z minus (-apply)
    assert backward.parse("z -- -h") == ("z -h", {})
    assert backward.parse("(x -- x).sum() --apply") == ("(x -- x).sum()", {"apply": True})
    with capture_output() as out:
        seeded.run_line_magic("backward", "-- -z")
    assert "backward of -z:" in out.outputs[-1].data["text/plain"]
    with pytest.raises(UsageError, match="apply"):  # the word is the learner's: evaluated, never a switch
        seeded.run_line_magic("backward", "z -- --apply")
    assert seeded.user_ns["x"].grad is None


def test_a_cell_magic_refuses_words_that_are_no_option(seeded):
    seeded.user_ns.pop("ran", None)
    with pytest.raises(UsageError, match="%%explain takes only options on its line, got 'foo'"):
        seeded.run_cell_magic("explain", "foo", "ran = True")
    with pytest.raises(UsageError, match="takes only options"):
        seeded.run_cell_magic("backward_profile", "--steps 20 30", "ran = True\nz")
    assert "ran" not in seeded.user_ns


# --- %exercise with a seed's short form -----------------------------------------------------------------

def test_exercise_with_s_is_the_seeded_exercise(seeded, monkeypatch, fresh_progress):
    shown: list = []
    monkeypatch.setattr(magic_spec, "show", shown.append)
    seeded.run_line_magic("exercise", "mean_square -s 3")
    seeded.run_line_magic("exercise", "-s 4 mean_square")
    assert [v.seed for v in shown] == [3, 4]
    assert shown[0].text() == autograd_lab.exercise("mean_square", seed=3).text()
    assert shown[0].text() != autograd_lab.exercise("mean_square").text()
    with pytest.raises(UsageError, match="no exercise called 'mean_square -s3'"):
        seeded.run_line_magic("exercise", "mean_square -s3")


# --- in Chinese ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("magic", "line"), [("backward", "z -a"), ("backward", "z -x"), ("graph", "z -q"),
                                             ("exercise", "mean_square -s"), ("explain", "foo")])
def test_the_new_refusals_are_chinese(zh, seeded, magic, line):
    from helpers import assert_chinese

    with pytest.raises(UsageError) as err:
        if BY_NAME[magic].cell:
            seeded.run_cell_magic(magic, line, "ran = True")
        else:
            seeded.run_line_magic(magic, line)
    assert_chinese(str(err.value))
    assert seeded.user_ns["x"].grad is None and "ran" not in seeded.user_ns


def test_the_help_is_chinese(zh, seeded):
    from helpers import assert_chinese

    with capture_output() as out:
        seeded.run_line_magic("backward", "z -h")
    assert_chinese(out.stdout)
    assert "简写：-g 即 --gradient, -i 即 --inputs。" in out.stdout
    assert "s = autograd_lab.step(z)" in out.stdout
