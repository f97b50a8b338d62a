"""What a learner types into an answer box (the exercise widget's, the stepper's --predict), read as
text and never run: numbers (with the digits as written), fractions of numbers (1/3), lists, tuples,
sets and dicts of them, quoted strings, True/False/None, bare words (a, D.weight: kept as words,
never looked up) and tensors or arrays as PyTorch and numpy print them (``tensor([0.6667, 1.3333],
requires_grad=True)``, ``tensor(2., grad_fn=<MeanBackward0>)``). Python parses the text into a
tree (parsing runs nothing); this module walks the tree, accepts only those nodes and builds the
value itself. Anything else (a call, an operation on a name, a comprehension, a lambda) is refused
with a message saying what to type instead; sizes are bounded before anything is built.

>>> read_typed("[0.6670, 1/3, -2]")
[0.6670, 1/3, -2]
>>> read_typed("(a, tensor([1., 2.], requires_grad=True))")
('a', [1., 2.])
"""
from __future__ import annotations

import ast
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from ..format import quote
from ..i18n import _
from .checking import WrongForm
from .digits import Written

LENGTH = 10_000   # characters typed into a box
DEPTH = 12        # nested lists, tuples, signs and operations
ITEMS = 10_000    # numbers and words in one answer
DIGITS = 100      # digits in one number
EXPONENT = 400    # the exponent written in a number such as 1e-5
BITS = 4096       # the size of an exact fraction worked out from numbers typed
TOP = 308         # a number beyond 1e308 is more than a float holds

#: calls that only print data: a tensor or an array, as PyTorch and numpy print them
PRINTED = {"tensor", "torch.tensor", "array", "np.array", "numpy.array", "Parameter", "nn.Parameter",
           "torch.nn.Parameter"}
#: what such a print may carry after the data (only read past, never used)
TAILS = {"dtype", "requires_grad", "device", "grad_fn", "layout"}

_GRAD_FN = re.compile(r",\s*grad_fn=<[A-Za-z0-9_]{0,200}>")
_PARAMETER = re.compile(r"^\s*Parameter containing:\s*")


class Name(str):
    """A bare word typed into a box (a, D.weight, x.grad): a word, never looked up as a variable."""


def box_example() -> str:
    return "[0.5, 1.0]"


def name_message(name: str, cell: str) -> str:
    """What a learner who typed a name where numbers are asked is told: the box reads text."""
    return _("{name} is a name, and this box reads what you type as text: it runs nothing and looks up no "
             "variable. Type the numbers you expect, e.g. {example}, or pass {name} in a cell: {cell}.").format(
                 name=quote(name, 80), example=box_example(), cell=cell.format(value=quote(name, 80)))


def _code(text: str, cell: str) -> WrongForm:
    return WrongForm(_("{typed} is code, and this box runs no code: it reads numbers, lists and tensors as PyTorch "
                       "prints them (tensor([...])). Type the numbers you expect, e.g. {example}, or run the "
                       "code in a cell and pass its value there: {cell}.").format(
                           typed=quote(text), example=box_example(), cell=cell.format(value="...")))


def read_typed(text: str, words: bool = True, cell: str = "ex.check({value})"):
    """The value the text stands for, built by the lab (nothing is run); raises WrongForm saying what
    to type instead. words=False: a bare word is refused (the stepper wants numbers only). `cell` is
    how the message says to pass a value in a cell, with {value} for it.

    >>> try:
    ...     read_typed("x.grad", words=False)
    ... except WrongForm as err:
    ...     print(str(err)[:66])
    x.grad is a name, and this box reads what you type as text: it run
    """
    if len(text) > LENGTH:
        raise WrongForm(_("You typed {count} characters, more than any answer here ({limit} at most): type the "
                          "numbers you expect, e.g. {example}.").format(count=len(text), limit=LENGTH,
                                                                       example=box_example()))
    body = _GRAD_FN.sub("", _PARAMETER.sub("", text.strip()))
    try:
        tree = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise WrongForm(_("Cannot read {typed}: type numbers (e.g. {example}), words, or a tensor as PyTorch "
                          "printed it.").format(typed=quote(text), example=box_example())) from None
    return _Reader(body, text, words, cell).value(tree, 0)


class _Reader:
    def __init__(self, body: str, text: str, words: bool, cell: str):
        self.body, self.text, self.words, self.cell = body, text, words, cell
        self.items = 0

    def count(self):
        self.items += 1
        if self.items > ITEMS:
            raise WrongForm(_("Your answer holds more than {limit} numbers and words; an answer here is a few "
                              "numbers: type them, e.g. {example}.").format(limit=ITEMS, example=box_example()))

    def value(self, node: ast.AST, depth: int):
        if depth > DEPTH:
            raise WrongForm(_("Your answer is nested more than {depth} levels deep; type the numbers you expect, "
                              "e.g. {example}.").format(depth=DEPTH, example=box_example()))
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            return self.container(node, depth)
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = _dotted(node)
            if name is None:
                raise _code(self.text, self.cell)
            if not self.words:
                raise WrongForm(name_message(name, self.cell))
            self.count()
            return Name(name)
        if isinstance(node, ast.Call) and _dotted(node.func) in PRINTED:
            return self.printed(node, depth)
        if isinstance(node, (ast.UnaryOp, ast.BinOp)):
            return self.arithmetic(node, depth)
        raise _code(self.text, self.cell)

    def container(self, node: ast.List | ast.Tuple | ast.Set | ast.Dict, depth: int):
        try:
            if isinstance(node, ast.Dict):
                if any(k is None for k in node.keys):  # {**other}
                    raise _code(self.text, self.cell)
                return {self.value(k, depth + 1): self.value(v, depth + 1)
                        for k, v in zip(node.keys, node.values, strict=True) if k is not None}
            items = [self.value(e, depth + 1) for e in node.elts]
            return items if isinstance(node, ast.List) else tuple(items) if isinstance(node, ast.Tuple) else set(items)
        except TypeError:  # a set of lists, a list as a key
            raise _code(self.text, self.cell) from None

    def constant(self, node: ast.Constant):
        v = node.value
        if isinstance(v, bool) or v is None:
            return v
        if isinstance(v, str):
            self.count()
            return v
        if v is Ellipsis:
            raise WrongForm(_("This print leaves numbers out ('...' stands for them): type every number, or pass "
                              "the tensor in a cell: {cell}.").format(cell=self.cell.format(value="...")))
        if isinstance(v, complex):
            raise WrongForm(_("{typed} holds a complex number; a gradient here is made of real numbers.").format(
                typed=quote(self.text)))
        if isinstance(v, (int, float)):
            self.count()
            return self.number(ast.get_source_segment(self.body, node) or repr(v))
        raise _code(self.text, self.cell)  # bytes

    def number(self, written: str) -> Written:
        plain = written.replace("_", "")
        mantissa, _sep, exponent = plain.lower().partition("e")
        if len(mantissa.replace(".", "").lstrip("0")) > DIGITS or (exponent and abs(int(exponent)) > EXPONENT):
            raise WrongForm(_("The number {number} is longer or larger than an answer needs (at most {digits} digits "
                              "and an exponent up to {exponent}).").format(number=quote(written, 40), digits=DIGITS,
                                                                           exponent=EXPONENT))
        try:
            d = Decimal(plain)
        except InvalidOperation:  # 0x10, 0o7: not how a gradient is written
            raise _code(self.text, self.cell) from None
        if d and d.adjusted() > TOP:
            raise too_large(written)
        return Written(d, written)

    def printed(self, node: ast.Call, depth: int):
        if len(node.args) != 1 or any(k.arg not in TAILS for k in node.keywords):
            raise _code(self.text, self.cell)
        return self.value(node.args[0], depth + 1)

    def arithmetic(self, node: ast.AST, depth: int) -> Written:
        """A number worked out from numbers typed (-2, 1/3, 2**-1): exact, every size bounded first."""
        value = self.exact(node, depth)
        text = ast.get_source_segment(self.body, node) or ""
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            operand = self.value(node.operand, depth + 1)  # -0.50 keeps its digits
            if isinstance(operand, Written) and isinstance(operand.written, Decimal):
                sign = -1 if isinstance(node.op, ast.USub) else 1
                return Written(sign * operand.written, text)
        if value and abs(value) >= Fraction(10) ** TOP:
            raise too_large(text)
        return Written(value, text)

    def exact(self, node: ast.AST, depth: int) -> Fraction:
        if depth > DEPTH:
            raise WrongForm(_("Your answer is nested more than {depth} levels deep; type the numbers you expect, "
                              "e.g. {example}.").format(depth=DEPTH, example=box_example()))
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            number = self.number(ast.get_source_segment(self.body, node) or repr(node.value))
            return Fraction(number.written)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = self.exact(node.operand, depth + 1)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
            a, b = self.exact(node.left, depth + 1), self.exact(node.right, depth + 1)
            try:
                if isinstance(node.op, ast.Add):
                    out = a + b
                elif isinstance(node.op, ast.Sub):
                    out = a - b
                elif isinstance(node.op, ast.Mult):
                    out = a * b
                elif isinstance(node.op, ast.Div):
                    out = a / b
                else:
                    out = self.power(a, b)
            except ZeroDivisionError:
                raise WrongForm(_("{typed} divides by zero; type the numbers you expect, e.g. {example}.").format(
                    typed=quote(self.text), example=box_example())) from None
            if out.numerator.bit_length() + out.denominator.bit_length() > BITS:
                raise too_large(ast.get_source_segment(self.body, node) or self.text)
            return out
        if isinstance(node, (ast.Name, ast.Attribute)) and _dotted(node) is not None:
            raise WrongForm(name_message(_dotted(node) or "", self.cell))
        raise _code(self.text, self.cell)

    def power(self, base: Fraction, exponent: Fraction) -> Fraction:
        whole = exponent.denominator == 1
        size = (base.numerator.bit_length() + base.denominator.bit_length()) * abs(exponent.numerator)
        if whole and (base in (0, 1, -1) or size <= BITS):
            return base ** int(exponent)
        if not whole:
            raise WrongForm(_("{typed}: a power with a fractional exponent is not worked out in this box; type its "
                              "value as a number.").format(typed=quote(self.text)))
        raise too_large(self.text)


def too_large(written: str) -> WrongForm:
    return WrongForm(_("{number} is beyond what a float holds (about 1.8e308); every entry of a gradient here is "
                       "a modest number.").format(number=quote(written, 60)))


def _dotted(node: ast.AST) -> str | None:
    """x, x.grad, torch.nn.Parameter as one dotted word; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
