"""Formulas a learner writes as answers ("2*x/n", "2x/3", "x^2"), read as data and never run.

A small tokenizer and parser accept numbers, the variables x (one element of the input) and n (the
number of elements), ``+ - * / **`` (``^`` too), parentheses, implicit multiplication (``2x/3``,
``2 x``, ``x(x+1)``) and the functions in FUNCTIONS (``len(x)`` is n); anything else (attributes,
subscripts, other names, strings, keywords, other calls) is refused with a message saying what a
formula may hold. The formula is evaluated by the lab's own arithmetic: exact fractions while the
numbers stay small, floats for the functions and for anything bigger, so that every size (the text,
the nesting, each number written, each power) is bounded before it is computed. Nothing of the text
is handed to Python, sympy or any other evaluator.

>>> f = read_formula("2x/n")
>>> f.evaluate(torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)).tolist()
[[0.6666666666666666, 1.3333333333333333, 2.0]]
>>> f.uses_n, f.decimals
(True, False)
"""
from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import torch

from ..format import quote
from ..i18n import _
from .checking import WrongForm

LENGTH = 1000      # characters in a formula
DEPTH = 40         # nested parentheses, signs, powers and calls
DIGITS = 60        # digits in one number written
EXPONENT = 400     # the exponent written in a number such as 1e-5
BITS = 8192        # the size of an exact fraction; beyond it the lab computes with floats

Number = Fraction | float


def _sigmoid(v: float) -> float:
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


class _Undefined(Exception):
    """The formula has no value at some x (a division by zero, log(0))."""


class _Complex(Exception):
    """The formula gives a complex number at some x (a square root or log of a negative number)."""


class _TooLarge(Exception):
    """The formula gives a number beyond what a float holds."""


def _sqrt(v: float) -> float:
    if v < 0:
        raise _Complex
    return math.sqrt(v)


def _log(v: float) -> float:
    if v < 0:
        raise _Complex
    if v == 0:
        raise _Undefined
    return math.log(v)


#: the functions a formula may call: those the bank's solutions and hints use (len(x) is n)
FUNCTIONS: dict[str, Callable[[float], float]] = {
    "exp": math.exp, "log": _log, "ln": _log, "sqrt": _sqrt, "sin": math.sin, "cos": math.cos,
    "tan": math.tan, "tanh": math.tanh, "sigmoid": _sigmoid, "abs": abs,
}
VARIABLES = ("x", "n")

_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
                    r"|(?P<op>\*\*|//|[-+*/^()]))")


@dataclass(frozen=True)
class _Token:
    kind: str   # "num", "name", "op" or "end"
    text: str
    at: int     # the character it starts at, counted from 1


def _functions() -> str:
    return ", ".join(f"{name}()" for name in FUNCTIONS) + ", len(x)"


def cannot(text: str, why: str) -> WrongForm:
    """The one shape of a refusal: the formula quoted (at most 200 characters) and what is wrong."""
    return WrongForm(_("Cannot read the formula '{text}': {why}").format(text=quote(text), why=why))


def _made_of() -> str:
    return _("a formula is made of numbers, x (one element of the input), n (the number of elements), "
             "+ - * / ** ^, parentheses and the functions {functions}.").format(functions=_functions())


def _tokens(text: str) -> list[_Token]:
    body = text.split("#", 1)[0]  # a comment after the formula, as Python writes one
    tokens: list[_Token] = []
    at = 0
    while True:
        found = _TOKEN.match(body, at)
        if found is None or found.end() == at:
            rest = body[at:].lstrip()
            if not rest:
                break
            where = len(body) - len(rest) + 1
            raise _refuse_character(text, rest, where, tokens)
        kind = found.lastgroup or "op"
        tokens.append(_Token(kind, found.group(kind), found.start(kind) + 1))
        at = found.end()
    tokens.append(_Token("end", "", len(body) + 1))
    return tokens


def _refuse_character(text: str, rest: str, where: int, before: list[_Token]) -> WrongForm:
    char = rest[0]
    if char == "." and before and (before[-1].kind == "name" or before[-1].text == ")"):
        return cannot(text, _("a formula has no attributes (the '.' at character {at}): write n for the number "
                              "of elements, and a function as exp(x), not torch.exp(x).").format(at=where))
    if char in "\"'":
        return cannot(text, _("a formula holds no quotes: give the formula itself as the string, such as "
                              "\"2*x/n\"."))
    # Translators: {char} is one character of what the learner typed, {at} its position
    return cannot(text, _("the character '{char}' at character {at} has no place in a formula; {made_of}").format(
        char=char, at=where, made_of=_made_of()))


# the tree: ("num", Fraction, written as a decimal), ("x",), ("n",), ("neg", a), (op, a, b), ("call", name, a)
Tree = tuple


class _Parser:
    def __init__(self, text: str, tokens: list[_Token]):
        self.text, self.tokens, self.i, self.depth = text, tokens, 0, 0
        self.uses_n = self.decimals = False

    @property
    def token(self) -> _Token:
        return self.tokens[self.i]

    def take(self) -> _Token:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def deeper(self):
        self.depth += 1
        if self.depth > DEPTH:
            raise cannot(self.text, _("it is nested more than {depth} levels deep; write the gradient itself, "
                                      "such as 2*x/n.").format(depth=DEPTH))

    def unexpected(self) -> WrongForm:
        token = self.token
        if token.kind == "end":
            previous = self.tokens[self.i - 1].text if self.i else ""
            if not previous:
                return cannot(self.text, _("it is empty; write the gradient as a formula in x, such as 2*x/n."))
            return cannot(self.text, _("it ends too early, after '{token}'.").format(token=quote(previous, 40)))
        if token.text == "//":
            return cannot(self.text, _("write / for a division (// is not part of a formula)."))
        return cannot(self.text, _("'{token}' at character {at} is not expected there.").format(
            token=quote(token.text, 40), at=token.at))

    def formula(self) -> Tree:
        tree = self.sum()
        if self.token.kind != "end":
            raise self.unexpected()
        return tree

    def sum(self) -> Tree:
        tree = self.product()
        while self.token.text in ("+", "-"):
            op = "add" if self.take().text == "+" else "sub"
            tree = (op, tree, self.product())
        return tree

    def product(self) -> Tree:
        tree = self.signed()
        while True:
            token = self.token
            if token.text in ("*", "/"):
                self.take()
                tree = ("mul" if token.text == "*" else "div", tree, self.signed())
            elif token.kind in ("num", "name") or token.text == "(":  # implicit: 2x, 2 x, x(x+1), (x)(2)
                if token.kind == "num" and self.tokens[self.i - 1].kind == "num":
                    raise cannot(self.text, _("two numbers in a row at character {at}; put an operator between "
                                              "them.").format(at=token.at))
                tree = ("mul", tree, self.power())
            else:
                return tree

    def signed(self) -> Tree:
        if self.token.text in ("+", "-"):
            negative = self.take().text == "-"
            self.deeper()
            inner = self.signed()
            self.depth -= 1
            return ("neg", inner) if negative else inner
        return self.power()

    def power(self) -> Tree:
        base = self.atom()
        if self.token.text in ("**", "^"):
            self.take()
            self.deeper()
            exponent = self.signed()  # right to left: 2**3**2 is 2**9; 2**-1 is a half
            self.depth -= 1
            return ("pow", base, exponent)
        return base

    def atom(self) -> Tree:
        token = self.token
        if token.kind == "num":
            self.take()
            return ("num", self.number(token), None)
        if token.text == "(":
            self.take()
            self.deeper()
            inner = self.sum()
            if self.token.text != ")":
                raise self.unexpected() if self.token.kind != "end" else cannot(
                    self.text, _("a parenthesis opened at character {at} is never closed.").format(at=token.at))
            self.take()
            self.depth -= 1
            return inner
        if token.kind == "name":
            return self.name()
        raise self.unexpected()

    def name(self) -> Tree:
        token = self.take()
        word = token.text
        if word == "x":
            return ("x",)
        if word == "n":
            self.uses_n = True
            return ("n",)
        if word == "len" or word in FUNCTIONS:
            if self.token.text != "(":
                raise cannot(self.text, _("write {name}(...) with parentheses around what it applies to.").format(
                    name=word))
            self.take()
            self.deeper()
            inner = self.sum()
            if self.token.text != ")":
                raise self.unexpected()
            self.take()
            self.depth -= 1
            if word == "len":
                if inner != ("x",):
                    raise cannot(self.text, _("len() is only len(x), the number of elements; write n for it."))
                self.uses_n = True
                return ("n",)
            return ("call", word, inner)
        raise _refuse_name(self.text, word)

    def number(self, token: _Token) -> Fraction:
        mantissa, _sep, exponent = token.text.lower().partition("e")
        digits = len(mantissa.replace(".", "").lstrip("0"))
        if digits > DIGITS or (exponent and abs(int(exponent)) > EXPONENT):
            raise cannot(self.text, _("the number {number} is longer or larger than a formula needs (at most {digits} "
                                      "digits and an exponent up to {exponent}).").format(
                                          number=quote(token.text, 40), digits=DIGITS, exponent=EXPONENT))
        self.decimals = self.decimals or "." in mantissa or bool(exponent)
        try:
            return Fraction(Decimal(token.text))
        except (InvalidOperation, ValueError):  # pragma: no cover - the tokenizer reads only numbers
            raise self.unexpected() from None


def _refuse_name(text: str, word: str) -> WrongForm:
    if word == "lambda":
        return WrongForm(lambda_text())
    if word in ("torch", "math", "np", "numpy", "sympy"):
        return cannot(text, _("write a function without its module, as exp(x), not {module}.exp(x).").format(
            module=word))
    # Translators: {names} is a name the learner used that is not x or n
    return WrongForm(_("The formula uses {names}; write it with x (one element of the input) and numbers, or n "
                       "for the number of elements (functions: {functions}).").format(
                           names=quote(word, 60), functions=_functions()))


def lambda_text() -> str:
    """What a lambda written as a string is told (a lambda is given as a function, in a cell)."""
    return _("A string is read as a formula, never run as code, so it cannot hold a lambda. Give your Python "
             "function itself in a cell, ex.check(lambda x: 2 * x), or a formula string in x and n, such as "
             "\"2*x/n\".")


@dataclass(frozen=True)
class Formula:
    """A formula read from text: its tree, whether it uses n, whether it writes decimal constants."""

    text: str
    tree: Tree
    uses_n: bool
    decimals: bool

    def evaluate(self, samples: torch.Tensor) -> torch.Tensor:
        """The formula at each x of samples (rows of inputs; n is a row's length), in float64.
        Raises WrongForm when it has no real, finite value at some x."""
        n = samples.shape[-1]
        try:
            rows = [[_float(_value(self.tree, Fraction(float(v)), n)) for v in row] for row in samples.tolist()]
        except _Complex:
            raise WrongForm(_("The formula '{text}' gives complex numbers for some x.").format(
                text=quote(self.text))) from None
        except _TooLarge:
            raise WrongForm(_("The formula '{text}' gives numbers too large for a float (beyond 1e308) for some x; "
                              "a gradient here is a modest number.").format(text=quote(self.text))) from None
        except _Undefined:
            raise WrongForm(_("The formula '{text}' cannot be evaluated at every x.").format(
                text=quote(self.text))) from None
        return torch.tensor(rows, dtype=torch.float64)


def read_formula(text: str) -> Formula:
    """The formula in text, read by the lab's own parser; raises WrongForm saying what is wrong.

    >>> read_formula("x^2").tree
    ('pow', ('x',), ('num', Fraction(2, 1), None))
    >>> try:
    ...     read_formula("x.numel()")
    ... except WrongForm as err:
    ...     print(str(err)[:64])
    Cannot read the formula 'x.numel()': a formula has no attributes
    """
    if len(text) > LENGTH:
        raise cannot(text, _("it has {count} characters, more than the {limit} a formula may have; write the "
                             "gradient itself, such as 2*x/n.").format(count=len(text), limit=LENGTH))
    if text.strip().startswith("lambda"):
        raise WrongForm(lambda_text())
    parser = _Parser(text, _tokens(text))
    tree = parser.formula()
    return Formula(text, tree, parser.uses_n, parser.decimals)


def _bits(v: Fraction) -> int:
    return v.numerator.bit_length() + v.denominator.bit_length()


def _float(v: Number) -> float:
    try:
        out = float(v)
    except OverflowError:
        raise _TooLarge from None
    if math.isnan(out):
        raise _Undefined
    if math.isinf(out):
        raise _TooLarge
    return out


def _kept(v: Number) -> Number:
    """An exact fraction while it is small; a float beyond that (every size bounded)."""
    if isinstance(v, Fraction) and _bits(v) > BITS:
        return _float(v)
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        raise _TooLarge if math.isinf(v) else _Undefined
    return v


_BINARY: dict[str, Callable[[Number, Number], Number]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv}


def _value(tree: Tree, x: Fraction, n: int) -> Number:
    kind = tree[0]
    if kind == "num":
        return tree[1]
    if kind == "x":
        return x
    if kind == "n":
        return Fraction(n)
    if kind == "neg":
        return -_value(tree[1], x, n)
    if kind == "call":
        try:
            return _kept(FUNCTIONS[tree[1]](_float(_value(tree[2], x, n))))
        except OverflowError:
            raise _TooLarge from None
        except ValueError:
            raise _Undefined from None
    a, b = _value(tree[1], x, n), _value(tree[2], x, n)
    try:
        return _power(a, b) if kind == "pow" else _kept(_BINARY[kind](a, b))
    except ZeroDivisionError:
        raise _Undefined from None
    except OverflowError:
        raise _TooLarge from None


def _power(base: Number, exponent: Number) -> Number:
    """base ** exponent: exact when both are fractions, the exponent whole and the result small (its size
    worked out before it is computed), else in floats."""
    if isinstance(base, Fraction) and isinstance(exponent, Fraction) and exponent.denominator == 1:
        if base in (0, 1, -1) and exponent >= 0:
            return base ** int(exponent)
        if abs(exponent.numerator) * _bits(base) <= BITS:
            return base ** int(exponent)
    b, e = _float(base), _float(exponent)
    if b < 0 and not e.is_integer():
        raise _Complex
    if b == 0 and e < 0:
        raise _Undefined
    return _kept(math.pow(b, e))
