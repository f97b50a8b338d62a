"""What a magic of the lab is: its flags with their types and short forms, its usage line and the
help that ``%name?``, ``%name -h`` and ``%name --help`` show, how its line is parsed, and how it is
run so that anything that goes wrong reaches the learner as one short UsageError. The table of the
lab's magics itself is in magics.py.

The line is read as IPython users expect of a magic, with the lab's expressions in it: a word is an
option only when it is exactly a known option (``--gradient``, ``--gradient=...``, ``-g``, ``-h``,
``--help``) outside brackets; a value option takes the next word whatever it starts with (so
``--gradient -torch.ones(3)`` gives a negative gradient), and an expression's value runs on over its
spaces to the next option; ``--`` ends the options, every word after it belongs to the expression.
A one-letter word that is no option is refused rather than read as a subtraction, and a switch that
changes the learner's tensors (``--apply``) has no short form."""
from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from IPython.core.error import UsageError

from .display import show
from .errors import LabInputError
from .format import MESSAGE, message, quote
from .i18n import N_, _

HELP = ("-h", "--help")
END = "--"  # the end of the options
SHORT = re.compile(r"-([A-Za-z])(?:=(.*))?\Z", re.S)  # -g, -g=value: the shape of a short option
SPLIT_WORDS = 32  # an expression value before the expression is split off it within this many words,
SPLIT_CHARACTERS = 10_000  # and when the words are this long at most (each try compiles them)


@dataclass(frozen=True)
class Flag:
    """One option: a switch (kind None) or a value of kind "expr" (Python code) or "int"; short is
    its one-letter form ("g" for -g), "" when it is only ever written in full."""

    name: str
    kind: str | None
    help: str  # marked N_() where it is written, translated where it is shown
    metavar: str = ""
    short: str = ""

    def usage(self) -> str:
        return f"--{self.name} {self.metavar}".rstrip()

    def spelled(self) -> str:
        """How the lists of options name it: -g/--gradient, or --apply."""
        return (f"-{self.short}/" if self.short else "") + f"--{self.name}"


@dataclass(frozen=True)
class Magic:
    name: str
    cell: bool  # a cell magic (%%name) or a line magic (%name)
    subject: str  # what the line's expression is ("" when the line takes none)
    summary: str  # marked N_() where it is written, translated where it is shown
    run: Callable
    flags: tuple[Flag, ...] = ()
    example: str = ""
    function: str = ""  # the call that returns the same object, as code: "s = autograd_lab.step(z)"

    @property
    def called(self) -> str:
        return ("%%" if self.cell else "%") + self.name

    def usage(self) -> str:
        parts = [self.called] + ([self.subject] if self.subject else [])
        parts += [f"[{f.usage()}]" for f in self.flags]
        line = " ".join(parts)
        return _("{usage}  (then the cell's code)").format(usage=line) if self.cell else line

    def doc(self) -> str:
        """The help %name?, %name -h and %name --help show: usage, what it does, the short forms,
        every flag, an example and the function that returns the same object, in the language of the
        moment (bind() hands IPython this method as the function's getdoc)."""
        lines = [self.usage(), "", _(self.summary), ""]
        shorts = [_("{short} for {long}").format(short="-" + f.short, long="--" + f.name)
                  for f in self.flags if f.short]
        if shorts:
            lines += [_("Short forms: {forms}.").format(forms=", ".join(shorts))]
        if self.subject:
            lines += [_("-h or --help shows this help; every word after -- is part of {subject}, never an "
                        "option.").format(subject=self.subject)]
        else:
            lines += [_("-h or --help shows this help.")]
        if self.flags:
            lines += ["", _("Options:")] + [f"  {f.usage():<22} {_(f.help)}" for f in self.flags]
        if self.example:
            lines += ["", _("Example:"), "  " + self.example.replace("\n", "\n  ")]
        if self.function:  # the function that returns the same object
            lines += ["", _("Without the magic, in Python:"), "  " + self.function.replace("\n", "\n  ")]
        return "\n".join(lines)

    def parse(self, line: str) -> tuple[str, dict]:
        """Split the line into the expression and typed flags ({"help": True} for -h or --help)."""
        try:
            words = shlex.split(line, posix=False)
        except ValueError as err:
            raise self.error(_("cannot read the line ({error})").format(error=message(err))) from None
        expr: list[str] = []
        found: dict = {}
        i, depth = 0, 0  # depth: brackets open in expr (counted as it grows: a long line stays linear)
        while i < len(words):
            word = words[i]
            if depth > 0 or not is_option(word):
                expr.append(word)
                depth += opened(word)
                i += 1
                continue
            if word == END:  # the rest is the expression, whatever it looks like
                expr += words[i + 1:]
                break
            i += 1
            if word in HELP:
                found["help"] = True
                continue
            flag, eq, inline = self.flag(word, expr)
            if flag.kind is None:
                if eq:
                    raise self.error(_("--{name} is a switch and takes no value").format(name=flag.name))
                found[flag.name] = True
                continue
            given = len(expr)
            value, i = self.value(flag, eq, inline, words, i, expr)
            if not value:
                raise self.error(_("--{name} needs a value").format(name=flag.name))
            found[flag.name] = self.convert(flag, value)
            depth += sum(opened(w) for w in expr[given:])  # the words a value left to the expression, if any
        text = " ".join(expr).strip()
        if text and not self.subject and "help" not in found:
            raise self.error(_("{magic} takes only options on its line, got {text}").format(
                magic=self.called, text=quote(repr(text))))
        return text, found

    def value(self, flag: Flag, eq: str, inline: str, words: list[str], i: int, expr: list[str]) -> tuple[str, int]:
        """The value of a value option whose word ends before words[i], and where the line goes on.
        Given before the magic's expression, an expression value leaves that expression in expr."""
        if eq:  # "--flag=value": the word, and the next ones while its brackets are open
            taken, open_in_value = [inline], opened(inline)
            while i < len(words) and open_in_value > 0:
                taken.append(words[i])
                open_in_value += opened(words[i])
                i += 1
            return " ".join(taken), i
        if i >= len(words) or words[i] == END:
            return "", i
        taken, open_in_value = [words[i]], opened(words[i])  # the next word, whatever it starts with
        i += 1
        if flag.kind == "int":  # a number is one word
            return taken[0], i
        # an expression runs over its spaces to the next option outside brackets
        while i < len(words) and (open_in_value > 0 or not is_option(words[i])):
            taken.append(words[i])
            open_in_value += opened(words[i])
            i += 1
        if self.subject and not expr:  # "-g g z": the option came first, the expression follows it
            taken, rest = split_value(taken)
            expr += rest
        return " ".join(taken), i

    def flag(self, word: str, expr: list[str]) -> tuple[Flag, str, str]:
        """The flag an option word names, with "=" and its inline value; an unknown one is refused,
        a one-letter word saying how to write it when an expression was meant."""
        known = ", ".join(f.spelled() for f in self.flags)
        short = SHORT.match(word)
        if short is None:
            name, eq, inline = word[2:].partition("=")
            for f in self.flags:
                if f.name == name.replace("-", "_"):
                    return f, eq, inline
            if not self.flags:
                raise self.error(_("unknown option --{name} (options: none)").format(name=quote(name)))
            raise self.error(_("unknown option --{name} (options: {known})").format(name=quote(name), known=known))
        letter, inline = short.group(1), short.group(2)
        for f in self.flags:
            if f.short == letter:
                return f, "=" if inline is not None else "", inline or ""
        full = [f for f in self.flags if not f.short and f.name.startswith(letter)]
        if full:  # -a for --apply: what writes .grad is typed in full, never guessed from a letter
            raise self.error(_("-{letter} is not an option: --{name} has no short form, type it in full "
                               "(options: {known})").format(letter=letter, name=full[0].name,
                                                            known=known or _("none")))
        raise self.error(_("unknown option {option} (options: {known}); if it is a minus sign in your "
                           "expression, put the expression in brackets: {example}").format(
            option=quote(word), known=known or _("none"), example=quote("(" + " ".join(expr + [word]) + ")")))

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


def is_option(word: str) -> bool:
    """Whether a word outside brackets is read as an option: --name, --name=value, -x, -x=value or
    the end of the options, --. A word inside brackets never is (the parser does not ask).

    >>> [is_option(w) for w in ("--gradient", "--", "-g", "-torch.ones(3)", "-1", "-", "x--y")]
    [True, True, True, False, False, False, False]
    """
    return word.startswith("--") or SHORT.match(word) is not None


def split_value(words: list[str]) -> tuple[list[str], list[str]]:
    """An expression value given before the magic's expression ("-g torch.ones(3) z"): the longest
    run of its first words that is a Python expression is the value, the rest the expression. A value
    that is an expression whole, or none of whose runs is, stays whole (its own error says what is
    wrong). Nothing is evaluated: the words are only compiled, and only the first SPLIT_WORDS.

    >>> split_value(["torch.ones(3)", "z"]), split_value(["2", "*", "g", "z"]), split_value(["g"])
    ((['torch.ones(3)'], ['z']), (['2', '*', 'g'], ['z']), (['g'], []))
    """
    if len(words) == 1 or sum(map(len, words)) > SPLIT_CHARACTERS or compiles(" ".join(words)):
        return words, []
    best = 0
    for end in range(1, min(len(words), SPLIT_WORDS)):
        if compiles(" ".join(words[:end])):
            best = end
    return (words[:best], words[best:]) if best else (words, [])


def compiles(text: str) -> bool:
    """Whether text is one Python expression (compiled, never run)."""
    try:
        compile(text, "<magic line>", "eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


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
    if opts.get("help"):  # -h or --help: the help, and nothing run (a cell magic's cell neither)
        print(magic.doc())
        return None
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
