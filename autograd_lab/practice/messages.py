"""Wrong-answer messages that several exercises share, written once so that the same mistake is
explained in the same words wherever it is made. They are marked with ``N_()``: an exercise's check
translates a diagnosis when it shows it (``_(message)``), so a topic may pass them as they are."""
from __future__ import annotations

from ..i18n import N_, _

MISSING_MEAN = N_("This is the gradient of the sum. The mean also divides by n, the number of "
                  "elements, and so does its gradient.")
EXTRA_MEAN = N_("You divided by n, but z is a sum, not a mean: each x_i appears once in it, with no 1/n.")
NO_FACTOR = N_("The power rule brings the exponent down as a factor, d(x**p)/dx = p * x**(p-1); "
               "that factor is missing.")
Y_VALUE = N_("These are the values of y, not a gradient. x.grad holds dz/dx_i: how fast z changes "
             "when x_i moves.")
Z_VALUE = N_("This is z, the value of the output itself; x.grad holds the derivative of z, one entry per element "
             "of x.")
X_VALUE = N_("This is x itself. x.grad holds dz/dx: differentiate z with respect to each x_i.")
DOUBLED = N_("This is twice the gradient: .grad accumulates. Running backward() a second time (for "
             "example running the cell again) adds the gradient once more; set x.grad = None before.")
N_MINUS_1 = N_("You divided by n - 1, as the sample variance does; a mean divides by n, the number of "
               "elements.")
DZ_DY = N_("This is dz/dy, the gradient the mean sends on to y (MeanBackward0's output), not dz/dx. The "
           "chain rule goes one node further: multiply it by dy/dx, the local derivative of y = x**p.")
DZ_DY_SUM = N_("This is dz/dy, the gradient the sum sends on to y (SumBackward0's output), not dz/dx. The "
               "chain rule goes one node further: multiply it by dy/dx, the local derivative of y = x**p.")
TWO_OVER_N = N_("This is dz/dy times the power rule's factor, without its x: the chain rule multiplies "
                "dz/dy = 1/n by dy/dx = 2*x, and the x is missing.")
WRONG_POWER = N_("You used the rule for x**2, but y = x**3 here: the power rule gives 3 * x**2.")


def ambiguous(messages: list[str]) -> str:
    """One message for a wrong answer that fits several mistakes on these inputs only (each message
    translated, the shared ones included).

    >>> ambiguous(["A.", "B."]).startswith("These numbers fit more than one mistake")
    True
    """
    listed = _(messages[0])
    for message in messages[1:]:
        # Translators: one more possible mistake added to the list ("A. Or: B.")
        listed = _("{listed} Or: {message}").format(listed=listed, message=_(message))
    return _("These numbers fit more than one mistake for this x (with other inputs they differ): {listed} "
             "Work it out as a formula in x and n to tell which.").format(listed=listed)


def for_part(label: str, message: str) -> str:
    """A shared message said about one part of a several-part answer (the message translated).

    >>> for_part("x.grad", "The power rule ...")
    'For x.grad the power rule ...'
    """
    text = _(message)
    # Translators: {message} is a whole sentence about the part {label}; in English its first letter is lowered
    return _("For {label} {message}").format(label=label, message=text[:1].lower() + text[1:])
