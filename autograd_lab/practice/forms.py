"""Numeric answer forms: a tensor of values, several named tensors at once, and a gradient given
as a function of x (a Python function, or a formula string read by the lab's own parser, formula.py:
no text is ever run). Each form reads an answer
(raising WrongForm when it cannot), compares it with a target within the printed tolerance, and
says what kind of mistake a wrong value looks like without showing the expected values."""
from __future__ import annotations

import torch

from ..format import message
from ..i18n import N_, _
from .checking import WrongForm, near, shape_text
from .digits import CLOSE, FEW_DIGITS, RIGHT, WRONG, Numbers, close_reason, exact, judge
from .formula import read_formula
from .reading import read_numbers


class Form:
    """How one kind of answer is read and compared. takes_text: the widget passes typed text as is;
    takes_function: the answer is the learner's Python function, given in a cell (never in the box);
    box_example: what the widget's box shows as an example, when not read off `example`."""

    takes_text = False
    takes_function = False
    example = "ex.check(answer)"
    box_example = ""

    def read(self, answer):
        raise NotImplementedError

    def same(self, value, target) -> bool:
        return value == target

    def grade(self, value, target) -> str:
        """right, close (the digits written are right but too few) or wrong."""
        return RIGHT if self.same(value, target) else WRONG

    def matches(self, value, target) -> bool:
        """Whether a read answer is a known (wrong) value, to the precision the learner gave."""
        return self.same(value, target)

    def close_reason(self, value, target) -> str:
        """Why a close answer is close: digits.CUT (cut off, not rounded) or digits.FEW_DIGITS."""
        return FEW_DIGITS

    def explain(self, value, expected) -> str | None:
        return None


#: what a wrong answer that is the right one times a constant is told: a first sentence, then one for each
#: kind of constant factor the exercise's computation has (factors_of), or SCALED["none"] when it has none
SCALED = {
    "start": N_("Every entry is the right value times the same constant."),
    "power": N_("Look again at the factor the power rule brings down."),
    "mean": N_("Look again at the 1/n of the mean."),
    "calls": N_("Look again at how many backward() calls add into .grad."),
    "none": N_("A constant factor is missing or extra somewhere: go through the computation again and "
               "collect every constant that multiplies."),
}


def factors_of(code: str) -> str:
    """The kinds of constant factor a setup's computation has, as words in SCALED's keys.

    >>> factors_of("z = (x**2).mean(); z.backward()"), factors_of("y = x * 3; y.sum().backward()")
    ('power mean', '')
    """
    found = []
    if "**" in code or "pow(" in code:
        found.append("power")
    if ".mean(" in code:
        found.append("mean")
    if code.count("backward(") >= 2:
        found.append("calls")
    return " ".join(found)


def scaled_message(factors: str) -> str:
    """What an answer off by a constant is told, naming only the factors the exercise has (translated).

    >>> scaled_message("mean")
    'Every entry is the right value times the same constant. Look again at the 1/n of the mean.'
    """
    said = [_(SCALED[f]) for f in factors.split() if f in SCALED] or [_(SCALED["none"])]
    return " ".join([_(SCALED["start"]), *said])


class TensorForm(Form):
    """Numbers compared entry by entry; `what` names the quantity (e.g. "x.grad"), `of` the tensor it
    belongs to and `noun` what it is ("a gradient", "a diagonal"); `factors` names the constants the
    exercise's computation has (factors_of; None: the exercise reads them off its setup), so that an
    answer off by a constant is told only about the factors it can have missed."""

    def __init__(self, what: str = "x.grad", of: str = "x", factors: str | None = None,
                 noun: str = N_("a gradient")):
        self.what, self.of, self.factors, self.noun = what, of, factors, noun
        self.example = "ex.check([...])"

    def read(self, answer):
        return read_numbers(answer, self.what)

    def grade(self, value, target) -> str:
        if isinstance(value, Numbers):
            return judge(value, target)
        same = value.shape == target.shape and torch.allclose(value.double(), target.double(), rtol=1e-12, atol=1e-12)
        return RIGHT if same else WRONG

    def same(self, value, target) -> bool:
        return self.grade(value, target) == RIGHT

    def matches(self, value, target) -> bool:
        return self.grade(value, target) != WRONG

    def close_reason(self, value, target) -> str:
        return close_reason(value, target) if isinstance(value, Numbers) else FEW_DIGITS

    def explain(self, value, expected) -> str | None:
        if isinstance(value, Numbers):
            if value.note == "decimals" and near(value.values, expected):
                return _("In a formula write each constant exactly, as a fraction (for example 1/3, not "
                         "a rounded decimal) or with n, the number of elements.")
            value = value.values
        if tuple(value.shape) != tuple(expected.shape):
            if value.numel() == 1 and expected.numel() > 1:
                # Translators: {noun} is what the answer is, "a gradient" or "a diagonal"
                return _("You gave a single number, but {what} has one entry per element of {of}, shape {shape}: "
                         "{noun} has one entry per element, it is not added up.").format(
                             what=self.what, of=self.of, shape=shape_text(expected.shape), noun=_(self.noun))
            return _("Your answer has shape {shape}, but {what} has shape {wanted}: {noun} has one entry per "
                     "element of {of}.").format(shape=shape_text(value.shape), what=self.what,
                                                wanted=shape_text(expected.shape), noun=_(self.noun), of=self.of)
        if expected.abs().max() > 0 and torch.allclose(-value.double(), expected.double(), rtol=1e-3, atol=1e-4):
            return _("Every sign is flipped. backward() computes the derivative of the output with "
                     "respect to the input, not a step downhill: no minus sign comes in.")
        if near(value, expected):
            return _("Not right to the last digit you wrote: work the exact value out, then round it (or "
                     "write the fraction exactly).")
        scale = _constant_ratio(value, expected)
        if scale is not None:
            return scaled_message(self.factors or "")
        return None


def _constant_ratio(value, expected):
    e = expected.double()
    v = value.double()
    if e.numel() < 2 or (e == 0).any() or not v.any():  # all zeros is no factor: nothing flowed
        return None
    ratio = v / e
    if (ratio - ratio[(0,) * ratio.dim()]).abs().max() < 1e-3 and abs(float(ratio.flatten()[0]) - 1) > 1e-3:
        return float(ratio.flatten()[0])
    return None


class PartsForm(Form):
    """Several answers at once, as a tuple in the stated order or a dict by name."""

    def __init__(self, parts: list[tuple[str, Form]]):
        self.parts = parts
        self.labels = [label for label, _ in parts]
        self.example = "ex.check((" + ", ".join("[...]" for _ in self.labels) + "))"

    def read(self, answer):
        if isinstance(answer, dict):
            keys = {_key(k): v for k, v in answer.items()}
            missing = [label for label in self.labels if _key(label) not in keys]
            if missing:
                raise WrongForm(_("Your dict has no entry for {missing}; give one per part: {labels}.").format(
                    missing=", ".join(missing), labels=", ".join(self.labels)))
            answer = [keys[_key(label)] for label in self.labels]
        if not isinstance(answer, (tuple, list)) or len(answer) != len(self.parts):
            raise WrongForm(_("Give {n} answers together, as a tuple in this order: {labels}.").format(
                n=len(self.parts), labels="; ".join(self.labels)))
        values = []
        for (label, form), part in zip(self.parts, answer, strict=False):
            try:
                values.append(form.read(part))
            except WrongForm as err:
                raise WrongForm(_("For {label}: {message}").format(label=label, message=err)) from None
        return tuple(values)

    def grade(self, value, target) -> str:
        grades = {form.grade(v, t) for (_, form), v, t in zip(self.parts, value, target, strict=False)}
        return WRONG if WRONG in grades else CLOSE if CLOSE in grades else RIGHT

    def same(self, value, target) -> bool:
        return self.grade(value, target) == RIGHT

    def matches(self, value, target) -> bool:
        return all(form.matches(v, t) for (_, form), v, t in zip(self.parts, value, target, strict=False))

    def close_reason(self, value, target) -> str:
        reasons = {form.close_reason(v, t) for (_, form), v, t in zip(self.parts, value, target, strict=False)
                   if form.grade(v, t) == CLOSE}
        return FEW_DIGITS if FEW_DIGITS in reasons or not reasons else reasons.pop()

    def explain(self, value, expected) -> str | None:
        for (label, form), v, e in zip(self.parts, value, expected, strict=False):
            if not form.same(v, e):
                why = form.explain(v, e)
                # Translators: {label} names one part of the answer (x.grad, diagonal); the sentence starts with it
                if why:
                    return _("Not right yet: {label}. {why}").format(label=label, why=why)
                return _("Not right yet: {label}.").format(label=label)
        return None


def _key(name) -> str:
    return str(name).replace(".grad", "").strip()


class FunctionForm(Form):
    """A gradient as a function of x: a callable (``lambda x: ...``) or a formula string in x (and
    n, the number of elements), compared with torch's gradient on several sample inputs. `variant`
    holds samples of another size: a diagnosis is named only when it holds there too."""

    takes_text = True
    box_example = "x / n"  # the box takes a formula; a Python function is given in a cell
    # Translators: two ways to answer; "formula in x" stands for the formula the learner types
    example = N_('ex.check(lambda x: ...) or ex.check("formula in x")')

    def __init__(self, samples: torch.Tensor, what: str = "dz/dx", variant: torch.Tensor | None = None,
                 factors: str | None = None):
        self.samples, self.what, self.variant = samples, what, variant
        self.numbers = TensorForm(what, factors=factors)

    def read(self, answer):
        if isinstance(answer, str):  # a formula, read by the lab's parser and never run (formula.py)
            formula = read_formula(answer)
            main = exact(formula.evaluate(self.samples))
            # only a formula written with n can be tried on inputs of another size
            generic = self.variant is not None and formula.uses_n
            there = formula.evaluate(self.variant) if generic and self.variant is not None else None
            return Numbers(main.values, main.half, main.digits, note="decimals" if formula.decimals else "",
                           variant=there)
        if not callable(answer) or isinstance(answer, torch.Tensor):
            raise WrongForm(_("This exercise asks for the gradient as a function of x, not for numbers: "
                              'give lambda x: ... or a formula string such as "x + 1".'))
        main = self._call(answer, self.samples)
        other = self._call(answer, self.variant) if self.variant is not None else None
        return Numbers(main.values, main.half, main.digits, variant=_values(other))

    def _call(self, fn, samples) -> Numbers:
        rows = []
        for x in samples:
            try:
                out = fn(x.clone())
            except Exception as err:
                raise WrongForm(_("Calling your function on a tensor x of shape {shape} raised {error}: "
                                  "{message}").format(shape=shape_text(x.shape), error=type(err).__name__,
                                                      message=message(err))) from None
            if out is None:
                raise WrongForm(_("Your function returned None. The lab calls it with plain values of x, "
                                  "which have no .grad (lambda x: x.grad reads one): write the gradient "
                                  "as a formula in x, such as lambda x: 5 * x**4 for x**5."))
            rows.append(read_numbers(out, N_("The value of your function")).values)
        if len({tuple(r.shape) for r in rows}) > 1:
            raise WrongForm(_("Your function returns different shapes for different inputs."))
        return exact(torch.stack(rows))

    def grade(self, value, target) -> str:
        return self.numbers.grade(value, target)

    def same(self, value, target) -> bool:
        return self.numbers.same(value, target)

    def matches(self, value, target) -> bool:
        return self.numbers.matches(value, target)

    def close_reason(self, value, target) -> str:
        return self.numbers.close_reason(value, target)

    def explain(self, value, expected) -> str | None:
        if tuple(value.shape) != tuple(expected.shape):
            return _("For an input x of shape {shape} your function gives shape {given}; the gradient has one "
                     "entry per element of x (a formula string is applied to each element).").format(
                         shape=shape_text(expected.shape[1:]), given=shape_text(value.shape[1:]))
        return self.numbers.explain(value, expected)


def _values(n: Numbers | None) -> torch.Tensor | None:
    return None if n is None else n.values
