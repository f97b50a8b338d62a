"""What a magic of the lab is: its flags with their types, its usage line and the docstring
``%name?`` shows, how its line is parsed (``--flag value`` and ``--flag=value``), and how it is run
so that anything that goes wrong reaches the learner as one short UsageError. The table of the lab's
magics itself is in magics.py."""
from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass

from IPython.core.error import UsageError

from .display import show
from .errors import LabInputError
from .format import MESSAGE, message, quote
from .i18n import N_, _


@dataclass(frozen=True)
class Flag:
    """One option: a switch (kind None) or a value of kind "expr" (Python code) or "int"."""

    name: str
    kind: str | None
    help: str  # marked N_() where it is written, translated where it is shown
    metavar: str = ""

    def usage(self) -> str:
        return f"--{self.name} {self.metavar}".rstrip()


@dataclass(frozen=True)
class Magic:
    name: str
    cell: bool  # a cell magic (%%name) or a line magic (%name)
    subject: str  # what the line's expression is ("" when the line takes none)
    summary: str  # marked N_() where it is written, translated where it is shown
    run: Callable
    flags: tuple[Flag, ...] = ()
    example: str = ""

    def usage(self) -> str:
        prefix = "%%" if self.cell else "%"
        parts = [prefix + self.name] + ([self.subject] if self.subject else [])
        parts += [f"[{f.usage()}]" for f in self.flags]
        line = " ".join(parts)
        return _("{usage}  (then the cell's code)").format(usage=line) if self.cell else line

    def doc(self) -> str:
        """The docstring IPython shows for %name?: usage, what it does, every flag, an example, in the
        language of the moment (bind() hands IPython this method as the function's getdoc)."""
        lines = [self.usage(), "", _(self.summary)]
        if self.flags:
            lines += ["", _("Options:")] + [f"  {f.usage():<22} {_(f.help)}" for f in self.flags]
        if self.example:
            lines += ["", _("Example:"), "  " + self.example.replace("\n", "\n  ")]
        return "\n".join(lines)

    def parse(self, line: str) -> tuple[str, dict]:
        """Split 'EXPR --flag value --flag=value --switch' into the expression and typed flags."""
        try:
            words = shlex.split(line, posix=False)
        except ValueError as err:
            raise self.error(_("cannot read the line ({error})").format(error=message(err))) from None
        flags = {f.name: f for f in self.flags}
        expr: list[str] = []
        found: dict = {}
        i, depth = 0, 0  # depth: brackets open in expr (counted as it grows: a long line stays linear)
        while i < len(words):
            word = words[i]
            if not (word.startswith("--") and depth <= 0):
                expr.append(word)
                depth += opened(word)
                i += 1
                continue
            name, eq, inline = word[2:].partition("=")
            flag = flags.get(name.replace("-", "_"))
            if flag is None:
                if not flags:
                    raise self.error(_("unknown option --{name} (options: none)").format(name=quote(name)))
                known = ", ".join("--" + f for f in flags)
                raise self.error(_("unknown option --{name} (options: {known})").format(name=quote(name),
                                                                                        known=known))
            i += 1
            if flag.kind is None:
                if eq:
                    raise self.error(_("--{name} is a switch and takes no value").format(name=name))
                found[flag.name] = True
                continue
            # the value runs to the next flag outside brackets: "--gradient=torch.ones(2, 3)" too
            taken: list[str] = [inline] if eq else []
            open_in_value = opened(inline) if eq else 0
            while i < len(words) and not (words[i].startswith("--") and open_in_value <= 0):
                if eq and open_in_value <= 0:
                    break  # "--flag=value" with its value complete: what follows is the expression
                taken.append(words[i])
                open_in_value += opened(words[i])
                i += 1
            value = " ".join(taken)
            if not value:
                raise self.error(_("--{name} needs a value").format(name=name))
            found[flag.name] = self.convert(flag, value)
        return " ".join(expr).strip(), found

    def convert(self, flag: Flag, value: str):
        if flag.kind != "int":
            return value
        try:
            number = int(value)
        except ValueError:
            raise self.error(_("--{name} takes a whole number, got {value}").format(
                name=flag.name, value=quote(repr(value)))) from None
        if not 0 <= number < 2**32:
            raise self.error(_("--{name} takes a whole number from 0 to {most}, got {value}").format(
                name=flag.name, most=2**32 - 1, value=quote(value)))
        return number

    def error(self, text: str) -> UsageError:
        """A UsageError: what went wrong (a sentence in the current language), then the usage line."""
        return UsageError(_("{error}. Usage: {usage}").format(error=text, usage=self.usage()))


def brackets_open(words: list[str]) -> bool:
    """True while brackets are still open, so '--' inside an expression is not taken for a flag."""
    return sum(opened(word) for word in words) > 0


def opened(word: str) -> int:
    """How many more brackets word opens than it closes (negative when it closes more).

    >>> opened("f(x,"), opened("y))")
    (1, -2)
    """
    return sum(word.count(c) for c in "([{") - sum(word.count(c) for c in ")]}")


# what a magic asks for when its line is empty: evaluate()'s "what", one whole sentence each
MISSING = {
    "expression": N_("give the expression to look at"),
    "tensor": N_("give the tensor to look at"),
    "tensor to backward": N_("give the tensor to backward to look at"),
    "gradient": N_("give the gradient to look at"),
    "weights": N_("give the weights to look at"),
    "inputs": N_("give the tensors the gradient is wanted for, e.g. --inputs w or --inputs [w,b]"),
}


def evaluate(shell, expr: str, magic: Magic, what: str = "expression"):
    """Evaluate expr in the learner's namespace; a mistake becomes a short UsageError. what (a key of
    MISSING) says what the magic wanted when expr is empty."""
    if not expr:
        raise magic.error(_(MISSING[what]))
    try:
        return shell.ev(expr)
    except NameError as err:
        raise magic.error(_("{error}: run the cell that creates it first, or check the spelling").format(
            error=quote(message(err)))) from None
    except SyntaxError as err:
        raise magic.error(_("'{expr}' is not a Python expression ({error})").format(
            expr=quote(expr), error=quote(err.msg))) from None
    except BaseException as err:  # the learner's expression failed (Ctrl-C included): say so, in one line
        if isinstance(err, SystemExit):
            raise
        raise UsageError(_("evaluating '{expr}' raised {type}: {error}").format(
            expr=quote(expr), type=quote(type(err).__name__), error=message(err))) from None


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
    except LabInputError as err:  # the room's own words, bounded as every message is
        raise UsageError(quote(str(err), MESSAGE)) from None
    except Exception as err:
        if magic.cell:  # the learner's own cell failed: their error, as Python gives it
            raise
        # an error the room did not word: one line, never a traceback through the lab
        raise UsageError(_("%{magic} could not finish: {type}: {error}. Usage: {usage}").format(
            magic=magic.name, type=quote(type(err).__name__), error=message(err), usage=magic.usage())) from None
    if isinstance(result, Returned):
        return result.value
    if result is not None:
        show(result)
    return None


def bind(magic: Magic, shell):
    if magic.cell:
        def bound(line, cell):
            return call(magic, shell, line, cell)
    else:
        def bound(line):  # type: ignore[misc]
            return call(magic, shell, line)
    bound.__doc__ = magic.doc()  # in the language of the registration; %name? asks getdoc, below
    bound.getdoc = magic.doc  # type: ignore[attr-defined]  # IPython's ? calls it: the language of the moment
    bound.__name__ = magic.name
    return bound
