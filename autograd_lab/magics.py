"""Every magic of the lab. Each parses its line, turns bad input into a short UsageError, and hands
the work to its room. Registered by load_ipython_extension."""
from __future__ import annotations

import shlex

from IPython.core.error import UsageError

from .display import show
from .errors import LabInputError

USAGE = {
    "backward": "%backward z [--gradient g] [--predict] [--apply]",
    "graph": "%graph z",
    "storage": "%storage a",
    "exercise": "%exercise NAME [--seed N]",
    "explain": "%%explain [--original]  (then the cell's code)",
    "backward_profile": "%%backward_profile [--steps N] [--warmup N]  (then one training step ending in a loss)",
}


def split_flags(magic: str, line: str, flags: dict[str, bool]) -> tuple[str, dict]:
    """Split 'EXPR --flag value --switch' into the expression and the flags' values.

    flags maps each flag name to True when it takes a value and False for a switch."""
    try:
        words = shlex.split(line, posix=False)
    except ValueError as err:
        raise UsageError(f"cannot read the line ({err}). Usage: {USAGE[magic]}") from None
    expr, found, i = [], {}, 0
    while i < len(words):
        word = words[i]
        if word.startswith("--") and not expr_open(expr):
            name = word[2:].replace("-", "_")
            if name not in flags:
                known = ", ".join("--" + f for f in flags) or "none"
                raise UsageError(f"unknown option {word} (options: {known}). Usage: {USAGE[magic]}")
            if flags[name]:
                if i + 1 >= len(words):
                    raise UsageError(f"{word} needs a value. Usage: {USAGE[magic]}")
                value, i = _value_until_flag(words, i + 1)
                found[name] = value
                continue
            found[name] = True
        else:
            expr.append(word)
        i += 1
    return " ".join(expr).strip(), found


def expr_open(words) -> bool:
    """True while brackets are still open, so '--' inside an expression is not taken for a flag."""
    text = " ".join(words)
    return sum(text.count(c) for c in "([{") > sum(text.count(c) for c in ")]}")


def _value_until_flag(words, start):
    value = []
    i = start
    while i < len(words) and not (words[i].startswith("--") and not expr_open(value)):
        value.append(words[i])
        i += 1
    return " ".join(value), i


def evaluate(shell, expr: str, magic: str, what: str = "expression"):
    """Evaluate expr in the learner's namespace; a mistake becomes a short UsageError."""
    if not expr:
        raise UsageError(f"give the {what} to look at. Usage: {USAGE[magic]}")
    try:
        return shell.ev(expr)
    except NameError as err:
        raise UsageError(f"{err}: run the cell that creates it first, or check the spelling. "
                         f"Usage: {USAGE[magic]}") from None
    except SyntaxError as err:
        raise UsageError(f"'{expr}' is not a Python expression ({err.msg}). Usage: {USAGE[magic]}") from None
    except Exception as err:  # the learner's expression failed: say so, in one line
        raise UsageError(f"evaluating '{expr}' raised {type(err).__name__}: {err}") from None


def backward(line, shell):
    """%backward z [--gradient g] [--predict] [--apply]: step through z.backward() node by node."""
    from .stepper.view import step

    expr, opts = split_flags("backward", line, {"gradient": True, "predict": False, "apply": False})
    output = evaluate(shell, expr, "backward", "tensor to backward")
    gradient = evaluate(shell, opts["gradient"], "backward", "gradient") if "gradient" in opts else None
    with usage_errors():
        view = step(output, gradient=gradient, predict=opts.get("predict", False),
                    apply=opts.get("apply", False), names=shell.user_ns, label=expr)
    show(view)


def graph(line, shell):
    """%graph z: draw z's backward graph once, with where backprop stops."""
    from .stepper.graph_view import show_graph

    expr, _ = split_flags("graph", line, {})
    output = evaluate(shell, expr, "graph", "tensor")
    with usage_errors():
        show(show_graph(output, names=shell.user_ns, label=expr))


def storage(line, shell):
    """%storage a: which copies of a share its memory, and what an in-place edit then does."""
    from .storage.view import compare_storage

    expr, _ = split_flags("storage", line, {})
    tensor = evaluate(shell, expr, "storage", "tensor")
    with usage_errors():
        show(compare_storage(tensor, name=expr, names=shell.user_ns))


def exercise(line, shell):
    """%exercise NAME [--seed N]: show an exercise with its answer box and buttons."""
    from .practice.bank import exercise as make
    from .practice.view import exercise_view

    name, opts = split_flags("exercise", line, {"seed": True})
    if not name:
        from .practice.bank import exercises

        raise UsageError(f"name an exercise, e.g. %exercise mean_square. Exercises: "
                         f"{', '.join(e.name for e in exercises())}")
    seed = None
    if "seed" in opts:
        try:
            seed = int(opts["seed"])
        except ValueError:
            raise UsageError(f"--seed takes a whole number, got {opts['seed']!r}. Usage: {USAGE['exercise']}") from None
    with usage_errors():
        show(exercise_view(make(name, seed=seed), names=shell.user_ns))


def explain(line, cell, shell):
    """%%explain [--original]: run the cell; if autograd fails, explain why and how to fix it."""
    from .diagnose.view import run_explained

    _, opts = split_flags("explain", line, {"original": False})
    return run_explained(shell, cell, show_original=opts.get("original", False))


def backward_profile(line, cell, shell):
    """%%backward_profile [--steps N] [--warmup N]: time forward and backward of a training step."""
    from .diagnose.view import profile_cell

    _, opts = split_flags("backward_profile", line, {"steps": True, "warmup": True})
    numbers = {}
    for key in ("steps", "warmup"):
        if key in opts:
            try:
                numbers[key] = int(opts[key])
            except ValueError:
                raise UsageError(f"--{key} takes a whole number, got {opts[key]!r}. "
                                 f"Usage: {USAGE['backward_profile']}") from None
    with usage_errors():
        show(profile_cell(shell, cell, **numbers))


class usage_errors:
    """Turn the lab's LabInputError into IPython's short UsageError (no traceback wall)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, err, tb):
        if kind is not None and issubclass(kind, LabInputError):
            raise UsageError(str(err)) from None
        return False


LINE = {"backward": backward, "graph": graph, "storage": storage, "exercise": exercise}
CELL = {"explain": explain, "backward_profile": backward_profile}


def register(shell) -> None:
    for name, fn in LINE.items():
        shell.register_magic_function(_bind_line(fn, shell), "line", name)
    for name, fn in CELL.items():
        shell.register_magic_function(_bind_cell(fn, shell), "cell", name)


def _bind_line(fn, shell):
    def magic(line):
        return fn(line, shell)
    magic.__doc__ = fn.__doc__
    return magic


def _bind_cell(fn, shell):
    def magic(line, cell):
        return fn(line, cell, shell)
    magic.__doc__ = fn.__doc__
    return magic
