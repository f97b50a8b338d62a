"""Every magic of the lab, declared once in MAGICS: its name, line or cell, its flags with their
types, and what it does. From that one table come the usage line, the docstring ``%backward?``
and ``%backward -h`` show (with the function that returns the same object), the parsing of
``--flag value``, ``--flag=value`` and the short forms (``-g value``), and the registration (the
machinery is in magic_spec.py). A magic's body only evaluates the learner's expressions and hands
the work to its room; anything that goes wrong reaches the learner as one short UsageError."""
from __future__ import annotations

from IPython.core.error import UsageError

from .i18n import N_, _
from .display import show
from .magic_spec import Flag, Magic, Returned, bind, evaluate, opened


# The bodies: each gets (magic, expression, flags, shell[, cell]) and returns a view to show, or for
# %%explain the cell's own result, which IPython shows as the cell's output.

def _backward(magic, expr, opts, shell):
    from .stepper.view import step

    output = evaluate(shell, expr, magic, "tensor to backward")
    gradient = evaluate(shell, opts["gradient"], magic, "gradient") if "gradient" in opts else None
    inputs = evaluate(shell, opts["inputs"], magic, "inputs") if "inputs" in opts else None
    return step(output, gradient=gradient, predict=opts.get("predict", False),
                apply=opts.get("apply", False), names=shell.user_ns, label=expr, inputs=inputs)


def _graph(magic, expr, opts, shell):
    from .stepper.graph_view import show_graph

    return show_graph(evaluate(shell, expr, magic, "tensor"), names=shell.user_ns, label=expr)


def _jacobian(magic, expr, opts, shell):
    from .jacobians.view import jacobian_view

    parts = _expressions(expr)
    if len(parts) != 2:
        raise magic.error(_("give two expressions, the output and the input, each without spaces or in "
                            "brackets, e.g. %jacobian y x or %jacobian (x ** 2) x"))
    y, x = (evaluate(shell, p, magic) for p in parts)
    v = evaluate(shell, opts["v"], magic, "weights") if "v" in opts else None
    return jacobian_view(y, x, v=v, names=shell.user_ns, y_label=parts[0], x_label=parts[1])


def _expressions(text: str) -> list[str]:
    """Split 'y x' or '(x ** 2) x' into expressions at spaces outside brackets."""
    parts: list[list[str]] = []
    depth = 0  # brackets open in the last part, counted as it grows (a long line stays linear)
    for word in text.split():
        if parts and depth > 0:
            parts[-1].append(word)
            depth += opened(word)
        else:
            parts.append([word])
            depth = opened(word)
    return [" ".join(words) for words in parts]


def _storage(magic, expr, opts, shell):
    from .storage.view import compare_storage

    return compare_storage(evaluate(shell, expr, magic, "tensor"), name=expr, names=shell.user_ns)


def _exercise(magic, expr, opts, shell):
    from .practice.bank import exercise, exercises
    from .practice.view import exercise_view

    if not expr:
        names = ", ".join(e.name for e in exercises())
        raise UsageError(_("name an exercise, e.g. %exercise mean_square. Exercises: {names}").format(names=names))
    return exercise_view(exercise(expr, seed=opts.get("seed")), names=shell.user_ns)


def _explain(magic, expr, opts, shell, cell):
    from .explain.view import run_explained

    return Returned(run_explained(shell, cell, show_original=opts.get("original", False),
                                  anomaly=opts.get("anomaly", False)))


def _backward_profile(magic, expr, opts, shell, cell):
    from .profile.view import profile_cell

    return profile_cell(shell, cell, **{k: v for k, v in opts.items() if k in ("steps", "warmup", "budget")})


def _record(magic, expr, opts, shell, cell):
    from .explain.context import compile_cell
    from .stepper.record import Record

    body, last = compile_cell(shell, cell, "record")
    with Record(names=shell.user_ns) as rec:
        exec(body, shell.user_global_ns, shell.user_ns)
        value = eval(last, shell.user_global_ns, shell.user_ns) if last is not None else None
    show(rec)
    return Returned(value)


MAGICS = (
    Magic("backward", False, "z", N_("Step through z.backward() node by node: each node the engine ran, in "
          "its order, with the gradients it really computed. Nothing of yours changes unless --apply."),
          _backward, (Flag("gradient", "expr", N_("the starting gradient, shaped like z (for a non-scalar z)"), "g",
                           "g"),
                      Flag("predict", None, N_("ask for your prediction before each step is revealed")),
                      Flag("apply", None, N_("also accumulate into .grad, as z.backward() does")),
                      Flag("inputs", "expr", N_("as backward(inputs=...): only the nodes on a path to these "
                                                "tensors run, and only they get a gradient"), "w", "i")),
          "z = (x ** 2).mean()\n%backward z", "s = autograd_lab.step(z)"),
    Magic("graph", False, "z", N_("Draw z's backward graph once, with where backprop stops and why."), _graph,
          example="%graph z", function="g = autograd_lab.show_graph(z)"),
    Magic("jacobian", False, "y x", N_("The Jacobian of y with respect to x (y a tensor computed from x, or a "
          "function of x), and with --v, v @ J beside what y.backward(v) would accumulate: backward never "
          "builds J. Nothing of yours changes."), _jacobian,
          (Flag("v", "expr", N_("the weights of y.backward(v), shaped like y"), "v", "v"),),
          "y = x ** 2\n%jacobian y x --v torch.tensor([1., 0., 2.])", "j = autograd_lab.jacobian(y, x)"),
    Magic("storage", False, "a", N_("Which copies of a (detach, clone, .data, a view, numpy) share its memory "
          "and version counter, and what an in-place edit of each does to the next backward. Runs on twins "
          "of a; a is never changed."), _storage, example="%storage a",
          function='r = autograd_lab.compare_storage(a, name="a")'),
    Magic("exercise", False, "NAME", N_("Show an exercise with its answer box, hints and solution."), _exercise,
          (Flag("seed", "int", N_("a personal variant of a numeric exercise"), "N", "s"),),
          "%exercise mean_square --seed 7", 'ex = autograd_lab.exercise("mean_square", seed=7)'),
    Magic("explain", True, "", N_("Run the cell; if autograd raises an error, explain it in plain words, "
          "with the fix."), _explain,
          (Flag("original", None, N_("also show PyTorch's original message")),
           Flag("anomaly", None, N_("if backward fails in a node, run the cell AGAIN with anomaly mode "
                "on and show the cell's line whose forward op saved the value (repeats the cell's "
                "side effects)"))),
          "%%explain\nz.backward()\nz.backward()",
          "try:\n    z.backward()\n    z.backward()\nexcept RuntimeError as err:\n    e = autograd_lab.explain(err)"),
    Magic("record", True, "", N_("Run the cell as it is and record each backward() or grad() call it makes: "
          "your own backward, for real (.grad written, hooks run once, the graph freed, as your code does), "
          "shown step by step after the cell. %backward records one beside yours and changes nothing."), _record,
          example="%%record\nloss = (w * x).sum()\nloss.backward()",
          function="with autograd_lab.record() as rec:\n    loss = (w * x).sum()\n    loss.backward()"),
    Magic("backward_profile", True, "", N_("Run one training step (the cell, ending in a loss) several "
          "times and time forward and backward of each, with the graph's size, which of your variables "
          "carries history across steps, and the verdict. Runs your backward for real: .grad fills up."),
          _backward_profile,
          (Flag("steps", "int", N_("how many steps to measure"), "N", "n"),
           Flag("warmup", "int", N_("steps run first and not counted"), "N", "w"),
           Flag("budget", "int", N_("stop after this many seconds"), "SECONDS", "b")),
          "%%backward_profile --steps 20\nloss = model(x).sum()",
          "prof = autograd_lab.profile_backward(lambda: model(x).sum(), steps=20)"),
)


BY_NAME = {m.name: m for m in MAGICS}  # BY_NAME["backward"].usage(): in the language of the moment


def register(shell) -> None:
    for magic in MAGICS:
        shell.register_magic_function(bind(magic, shell), "cell" if magic.cell else "line", magic.name)


def unregister(shell) -> None:
    for magic in MAGICS:
        shell.magics_manager.magics["cell" if magic.cell else "line"].pop(magic.name, None)


