"""Every magic of the lab, declared once in MAGICS: its name, line or cell, its flags with their
types, and what it does. From that one table come the usage line, the docstring ``%backward?``
shows, the parsing of ``--flag value`` and ``--flag=value``, and the registration. A magic's body
only evaluates the learner's expressions and hands the work to its room; anything that goes wrong
reaches the learner as one short UsageError, never a traceback through the lab."""
from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from IPython.core.error import UsageError

from .display import show
from .errors import LabInputError
from .format import message


@dataclass(frozen=True)
class Flag:
    """One option: a switch (kind None) or a value of kind "expr" (Python code) or "int"."""

    name: str
    kind: str | None
    help: str
    metavar: str = ""

    def usage(self) -> str:
        return f"--{self.name} {self.metavar}".rstrip()


@dataclass(frozen=True)
class Magic:
    name: str
    cell: bool  # a cell magic (%%name) or a line magic (%name)
    subject: str  # what the line's expression is ("" when the line takes none)
    summary: str
    run: Callable
    flags: tuple[Flag, ...] = ()
    example: str = ""

    def usage(self) -> str:
        prefix = "%%" if self.cell else "%"
        parts = [prefix + self.name] + ([self.subject] if self.subject else [])
        parts += [f"[{f.usage()}]" for f in self.flags]
        tail = "  (then the cell's code)" if self.cell else ""
        return " ".join(parts) + tail

    def doc(self) -> str:
        """The docstring IPython shows for %name?: usage, what it does, every flag, an example."""
        lines = [self.usage(), "", self.summary]
        if self.flags:
            lines += ["", "Options:"] + [f"  {f.usage():<22} {f.help}" for f in self.flags]
        if self.example:
            lines += ["", "Example:", "  " + self.example.replace("\n", "\n  ")]
        return "\n".join(lines)

    def parse(self, line: str) -> tuple[str, dict]:
        """Split 'EXPR --flag value --flag=value --switch' into the expression and typed flags."""
        try:
            words = shlex.split(line, posix=False)
        except ValueError as err:
            raise self.error(f"cannot read the line ({err})") from None
        flags = {f.name: f for f in self.flags}
        expr: list[str] = []
        found: dict = {}
        i = 0
        while i < len(words):
            word = words[i]
            if not (word.startswith("--") and not _open(expr)):
                expr.append(word)
                i += 1
                continue
            name, eq, inline = word[2:].partition("=")
            flag = flags.get(name.replace("-", "_"))
            if flag is None:
                known = ", ".join("--" + f for f in flags) or "none"
                raise self.error(f"unknown option --{name} (options: {known})")
            i += 1
            if flag.kind is None:
                if eq:
                    raise self.error(f"--{name} is a switch and takes no value")
                found[flag.name] = True
                continue
            # the value runs to the next flag outside brackets: "--gradient=torch.ones(2, 3)" too
            taken: list[str] = [inline] if eq else []
            while i < len(words) and not (words[i].startswith("--") and not _open(taken)):
                if eq and not _open(taken):
                    break  # "--flag=value" with its value complete: what follows is the expression
                taken.append(words[i])
                i += 1
            value = " ".join(taken)
            if not value:
                raise self.error(f"--{name} needs a value")
            found[flag.name] = self.convert(flag, value)
        return " ".join(expr).strip(), found

    def convert(self, flag: Flag, value: str):
        if flag.kind != "int":
            return value
        try:
            number = int(value)
        except ValueError:
            raise self.error(f"--{flag.name} takes a whole number, got {value!r}") from None
        if not 0 <= number < 2**32:
            raise self.error(f"--{flag.name} takes a whole number from 0 to {2**32 - 1}, got {value}")
        return number

    def error(self, text: str) -> UsageError:
        return UsageError(f"{text}. Usage: {self.usage()}")


def _open(words) -> bool:
    """True while brackets are still open, so '--' inside an expression is not taken for a flag."""
    text = " ".join(words)
    return sum(text.count(c) for c in "([{") > sum(text.count(c) for c in ")]}")


def evaluate(shell, expr: str, magic: Magic, what: str = "expression"):
    """Evaluate expr in the learner's namespace; a mistake becomes a short UsageError."""
    if not expr:
        raise magic.error(f"give the {what} to look at")
    try:
        return shell.ev(expr)
    except NameError as err:
        raise magic.error(f"{err}: run the cell that creates it first, or check the spelling") from None
    except SyntaxError as err:
        raise magic.error(f"'{expr}' is not a Python expression ({err.msg})") from None
    except Exception as err:  # the learner's expression failed: say so, in one line
        raise UsageError(f"evaluating '{expr}' raised {type(err).__name__}: {message(err)}") from None


# The bodies: each gets (magic, expression, flags, shell[, cell]) and returns a view to show, or for
# %%explain the cell's own result, which IPython shows as the cell's output.

def _backward(magic, expr, opts, shell):
    from .stepper.view import step

    output = evaluate(shell, expr, magic, "tensor to backward")
    gradient = evaluate(shell, opts["gradient"], magic, "gradient") if "gradient" in opts else None
    return step(output, gradient=gradient, predict=opts.get("predict", False),
                apply=opts.get("apply", False), names=shell.user_ns, label=expr)


def _graph(magic, expr, opts, shell):
    from .stepper.graph_view import show_graph

    return show_graph(evaluate(shell, expr, magic, "tensor"), names=shell.user_ns, label=expr)


def _jacobian(magic, expr, opts, shell):
    from .jacobians.view import jacobian_view

    parts = _expressions(expr)
    if len(parts) != 2:
        raise magic.error("give two expressions, the output and the input, each without spaces or in "
                          "brackets, e.g. %jacobian y x or %jacobian (x ** 2) x")
    y, x = (evaluate(shell, p, magic) for p in parts)
    v = evaluate(shell, opts["v"], magic, "weights") if "v" in opts else None
    return jacobian_view(y, x, v=v, names=shell.user_ns, y_label=parts[0], x_label=parts[1])


def _expressions(text: str) -> list[str]:
    """Split 'y x' or '(x ** 2) x' into expressions at spaces outside brackets."""
    parts: list[str] = []
    for word in text.split():
        if parts and _open([parts[-1]]):
            parts[-1] += " " + word
        else:
            parts.append(word)
    return parts


def _storage(magic, expr, opts, shell):
    from .storage.view import compare_storage

    return compare_storage(evaluate(shell, expr, magic, "tensor"), name=expr, names=shell.user_ns)


def _exercise(magic, expr, opts, shell):
    from .practice.bank import exercise, exercises
    from .practice.view import exercise_view

    if not expr:
        names = ", ".join(e.name for e in exercises())
        raise UsageError(f"name an exercise, e.g. %exercise mean_square. Exercises: {names}")
    return exercise_view(exercise(expr, seed=opts.get("seed")), names=shell.user_ns)


def _explain(magic, expr, opts, shell, cell):
    from .explain.view import run_explained

    return Returned(run_explained(shell, cell, show_original=opts.get("original", False),
                                  anomaly=opts.get("anomaly", False)))


def _backward_profile(magic, expr, opts, shell, cell):
    from .profile.view import profile_cell

    return profile_cell(shell, cell, **{k: v for k, v in opts.items() if k in ("steps", "warmup", "budget")})


MAGICS = (
    Magic("backward", False, "z", "Step through z.backward() node by node: each node the engine ran, in "
          "its order, with the gradients it really computed. Nothing of yours changes unless --apply.",
          _backward, (Flag("gradient", "expr", "the starting gradient, shaped like z (for a non-scalar z)", "g"),
                      Flag("predict", None, "ask for your prediction before each step is revealed"),
                      Flag("apply", None, "also accumulate into .grad, as z.backward() does")),
          "z = (x ** 2).mean()\n%backward z"),
    Magic("graph", False, "z", "Draw z's backward graph once, with where backprop stops and why.", _graph,
          example="%graph z"),
    Magic("jacobian", False, "y x", "The Jacobian of y with respect to x (y a tensor computed from x, or a "
          "function of x), and with --v, v @ J beside what y.backward(v) would accumulate: backward never "
          "builds J. Nothing of yours changes.", _jacobian,
          (Flag("v", "expr", "the weights of y.backward(v), shaped like y", "v"),),
          "y = x ** 2\n%jacobian y x --v torch.tensor([1., 0., 2.])"),
    Magic("storage", False, "a", "Which copies of a (detach, clone, .data, a view, numpy) share its memory "
          "and version counter, and what an in-place edit of each does to the next backward. Runs on twins "
          "of a; a is never changed.", _storage, example="%storage a"),
    Magic("exercise", False, "NAME", "Show an exercise with its answer box, hints and solution.", _exercise,
          (Flag("seed", "int", "a personal variant of a numeric exercise", "N"),),
          "%exercise mean_square --seed 7"),
    Magic("explain", True, "", "Run the cell; if autograd raises an error, explain it in plain words, "
          "with the fix.", _explain,
          (Flag("original", None, "also show PyTorch's original message"),
           Flag("anomaly", None, "if backward fails in a node, run the cell AGAIN with anomaly mode "
                "on and show the cell's line whose forward op saved the value (repeats the cell's "
                "side effects)")),
          "%%explain\nz.backward()\nz.backward()"),
    Magic("backward_profile", True, "", "Run one training step (the cell, ending in a loss) several "
          "times and time forward and backward of each, with the graph's size, which of your variables "
          "carries history across steps, and the verdict. Runs your backward for real: .grad fills up.",
          _backward_profile,
          (Flag("steps", "int", "how many steps to measure", "N"),
           Flag("warmup", "int", "steps run first and not counted", "N"),
           Flag("budget", "int", "stop after this many seconds", "SECONDS")),
          "%%backward_profile --steps 20\nloss = model(x).sum()"),
)

USAGE = {m.name: m.usage() for m in MAGICS}


@dataclass(frozen=True)
class Returned:
    """A value the magic hands back to IPython (shown as Out[n]) rather than displays."""

    value: object


def call(magic: Magic, shell, line: str, cell: str | None = None):
    """Run one magic: parse, evaluate, show; every failure becomes one short UsageError."""
    expr, opts = magic.parse(line)
    args = (magic, expr, opts, shell) + ((cell,) if magic.cell else ())
    try:
        result = magic.run(*args)
    except UsageError:
        raise
    except LabInputError as err:
        raise UsageError(str(err)) from None
    except Exception as err:
        if magic.cell:  # the learner's own cell failed: their error, as Python gives it
            raise
        # an error the room did not word: one line, never a traceback through the lab
        raise UsageError(f"%{magic.name} could not finish: {type(err).__name__}: {message(err)}. "
                         f"Usage: {magic.usage()}") from None
    if isinstance(result, Returned):
        return result.value
    if result is not None:
        show(result)
    return None


def register(shell) -> None:
    for magic in MAGICS:
        shell.register_magic_function(_bind(magic, shell), "cell" if magic.cell else "line", magic.name)


def unregister(shell) -> None:
    for magic in MAGICS:
        shell.magics_manager.magics["cell" if magic.cell else "line"].pop(magic.name, None)


def _bind(magic: Magic, shell):
    if magic.cell:
        def bound(line, cell):
            return call(magic, shell, line, cell)
    else:
        def bound(line):  # type: ignore[misc]
            return call(magic, shell, line)
    bound.__doc__ = magic.doc()
    bound.__name__ = magic.name
    return bound
