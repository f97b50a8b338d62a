"""Where an autograd error happened in the learner's code: the line they wrote, the names they had,
and the pieces of that line an explanation talks about (the tensor backward was called on, the
tensor changed in place). Only reads; never evaluates the learner's code."""
from __future__ import annotations

import ast
import itertools
import linecache
import os
from dataclasses import dataclass, field

import torch

_TORCH_DIR = os.path.dirname(torch.__file__)
_LAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_cells = itertools.count(1)
# characters of a failing line read as code: a longer line is not parsed (its explanation uses the
# general words), so that explaining stays quick and never recurses deep into a huge expression
READ = 4000
# lines of the learner's code before the failing line that an explanation may read (the same
# function or cell): the in-place edit that broke a backward is one of them
BEFORE = 200


@dataclass
class Context:
    """The learner's failing line (stripped, may be empty) and the names visible there."""

    line: str = ""
    names: dict = field(default_factory=dict, repr=False)
    before: tuple[str, ...] = field(default=(), repr=False)  # the lines above it, stripped, in order

    def value(self, expr: str | None):
        """The learner's object for a plain name or dotted name ('z', 'model.h'); None otherwise."""
        if not expr or not all(part.isidentifier() for part in expr.split(".")):
            return None
        parts = expr.split(".")
        if parts[0] not in self.names:
            return None
        value = self.names[parts[0]]
        for part in parts[1:]:
            value = getattr(value, part, None)
        return value

    def tensor(self, expr: str | None):
        value = self.value(expr)
        return value if isinstance(value, torch.Tensor) else None

    def statement(self):
        """The failing line parsed as one statement, or None (part of a block, a continuation)."""
        return parse_line(self.line)


def parse_line(line: str):
    """One line of code parsed as one statement, or None (part of a block, a continuation)."""
    text = line.strip()
    if len(text) > READ:
        return None
    for candidate in (text, text + " pass" if text.endswith(":") else None):
        if candidate:
            try:
                tree = ast.parse(candidate)
            except SyntaxError:
                continue
            if tree.body:
                return tree.body[0]
    return None


def from_exception(exc: BaseException, names=None) -> Context:
    """The context of the innermost frame of exc's traceback that is the learner's own code."""
    frame, lineno = None, None
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith("<"):  # a cell's pseudo-file is the learner's, and has no path
            filename = os.path.abspath(filename)
        if not filename.startswith((_TORCH_DIR, _LAB_DIR)):
            frame, lineno = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    if frame is None or lineno is None:
        return Context("", dict(names or {}))
    seen = dict(frame.f_globals)
    seen.update(frame.f_locals)
    if names:
        seen.update(names)
    lines = linecache.getlines(frame.f_code.co_filename, frame.f_globals)
    first = max(frame.f_code.co_firstlineno, lineno - BEFORE, 1)
    before = tuple(text.strip() for text in lines[first - 1:lineno - 1])
    return Context(linecache.getline(frame.f_code.co_filename, lineno, frame.f_globals).strip(), seen, before)


def compile_cell(shell, cell: str, tag: str):
    """The cell as (statements, last expression or None), compiled under a name linecache knows, so
    tracebacks and explanations can quote the learner's line. shell: anything with transform_cell.

    >>> class Plain:
    ...     transform_cell = staticmethod(lambda cell: cell)
    >>> body, last = compile_cell(Plain(), "a = 2\\na * 3", "demo")
    >>> names = {}
    >>> exec(body, names); eval(last, names)
    6
    """
    source = shell.transform_cell(cell)
    tree = ast.parse(source)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    filename = f"<{tag}-{next(_cells)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    body = compile(tree, filename, "exec")
    return body, (compile(last, filename, "eval") if last is not None else None)


def from_warning(filename: str | None, lineno: int | None, names=None) -> Context:
    line = linecache.getline(filename, lineno).strip() if filename and lineno else ""
    return Context(line, dict(names or {}))


def receiver(stmt, attr: str) -> str | None:
    """The code before `.attr` in the statement (`z` in `z.backward()`), the first one met."""
    if stmt is None:
        return None
    for node in ast.walk(stmt):
        if isinstance(node, ast.Attribute) and node.attr == attr:
            return ast.unparse(node.value)
    return None


def backward_target(stmt) -> str | None:
    """What backward ran from: `z` in `z.backward()` or `torch.autograd.backward(z)` / `grad(z, x)`."""
    found = receiver(stmt, "backward")
    if found and found not in ("torch.autograd", "autograd"):
        return found
    if stmt is None:
        return None
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and node.args and ast.unparse(node.func).endswith(("backward", "grad")):
            return ast.unparse(node.args[0])
    return None


def inplace_target(stmt) -> tuple[str | None, str | None, bool]:
    """(tensor name, the in-place code, through a view?) for `w -= ...`, `w.add_(1)`, `x[0] = 5`."""
    if stmt is None:
        return None, None, False
    if isinstance(stmt, (ast.AugAssign, ast.Assign)):
        target = stmt.target if isinstance(stmt, ast.AugAssign) else stmt.targets[0]
        if isinstance(target, ast.Subscript):
            return _base(target), ast.unparse(stmt), True
        if isinstance(target, (ast.Name, ast.Attribute)) and isinstance(stmt, ast.AugAssign):
            return ast.unparse(target), ast.unparse(stmt), False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name.endswith("_") and not name.endswith("__") and name != "requires_grad_":
                owner = node.func.value
                view = isinstance(owner, ast.Subscript)
                return (_base(owner) if view else ast.unparse(owner)), ast.unparse(node), view
    return None, None, False


_OPERATORS = {"add_": ast.Add, "sub_": ast.Sub, "mul_": ast.Mult, "div_": ast.Div, "pow_": ast.Pow}


def out_of_place(line: str, tensor: str | None = None) -> str | None:
    """The learner's in-place line written out of place (a new tensor under the same name), or None
    when the line changes nothing in place (or changes another tensor than `tensor`). An edit through
    a view (`a[0] = 5`) becomes a copy first, then the edit of the copy.

    >>> out_of_place("a.mul_(3)  # in place")
    'a = a * 3'
    >>> out_of_place("h += b")
    'h = h + b'
    >>> out_of_place("y.clamp_(min=0)")
    'y = y.clamp(min=0)'
    >>> out_of_place("a[0] = 5")
    'a = a.clone()\\na[0] = 5'
    >>> out_of_place("a.mul_(3)", "b") is None
    True
    """
    stmt = parse_line(line)
    name, code, view = inplace_target(stmt)
    if name is None or code is None or (tensor is not None and name != tensor):
        return None
    if view:
        return f"{name} = {name}.clone()\n{code}" if _is_name(name) else None
    if isinstance(stmt, ast.AugAssign):
        return ast.unparse(ast.Assign([stmt.target], ast.BinOp(stmt.target, stmt.op, stmt.value), lineno=0))
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)) or not _is_name(name):
        return None  # the in-place call is inside a larger expression: no rewrite of one line
    call, method = stmt.value, stmt.value.func.attr
    owner = stmt.value.func.value
    if method in _OPERATORS and len(call.args) == 1 and not call.keywords:
        value: ast.expr = ast.BinOp(owner, _OPERATORS[method](), call.args[0])
    elif callable(getattr(torch.Tensor, method[:-1], None)):
        value = ast.Call(ast.Attribute(owner, method[:-1], ast.Load()), call.args, call.keywords)
    else:
        return None
    return ast.unparse(ast.Assign([owner], value, lineno=0))


def _is_name(code: str) -> bool:
    return all(part.isidentifier() for part in code.split("."))


def _base(node) -> str:
    while isinstance(node, ast.Subscript):
        node = node.value
    return ast.unparse(node)


def rename_base(code: str, old: str, new: str) -> str:
    """The code with the changed tensor `old` written as `new` (`x[0] = x[1]` -> `x2[0] = x[1]`).

    Only the first occurrence is renamed: a breadth-first walk meets the target before the value."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = new
            break
    return ast.unparse(tree)


def float_creation(stmt) -> str | None:
    """The statement with its tensor factory made floating point: dtype=torch.float32 added or set."""
    if stmt is None:
        return None
    tree = ast.Module(body=[stmt], type_ignores=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and any(k.arg == "requires_grad" for k in node.keywords):
            node.keywords = [k for k in node.keywords if k.arg != "dtype"]
            node.keywords.append(ast.keyword("dtype", ast.parse("torch.float32", mode="eval").body))
            return ast.unparse(tree)
    return None
