"""Wrong-answer messages that several exercises share, written once so that the same mistake is
explained in the same words wherever it is made."""
from __future__ import annotations

MISSING_MEAN = ("This is the gradient of the sum. The mean also divides by n, the number of "
                "elements, and so does its gradient.")
EXTRA_MEAN = "You divided by n, but z is a sum, not a mean: each x_i appears once in it, with no 1/n."
NO_FACTOR = ("The power rule brings the exponent down as a factor, d(x**p)/dx = p * x**(p-1); "
             "that factor is missing.")
Y_VALUE = ("These are the values of y, not a gradient. x.grad holds dz/dx_i: how fast z changes "
           "when x_i moves.")
Z_VALUE = "This is z, the value of the output itself; x.grad holds the derivative of z, one entry per element of x."
X_VALUE = "This is x itself. x.grad holds dz/dx: differentiate z with respect to each x_i."
DOUBLED = ("This is twice the gradient: .grad accumulates. Running backward() a second time (for "
           "example running the cell again) adds the gradient once more; set x.grad = None before.")
N_MINUS_1 = ("You divided by n - 1, as the sample variance does; a mean divides by n, the number of "
             "elements.")
DZ_DY = ("This is dz/dy, the gradient the mean sends on to y (MeanBackward0's output), not dz/dx. The "
         "chain rule goes one node further: multiply it by dy/dx, the local derivative of y = x**p.")
DZ_DY_SUM = ("This is dz/dy, the gradient the sum sends on to y (SumBackward0's output), not dz/dx. The "
             "chain rule goes one node further: multiply it by dy/dx, the local derivative of y = x**p.")
TWO_OVER_N = ("This is dz/dy times the power rule's factor, without its x: the chain rule multiplies "
              "dz/dy = 1/n by dy/dx = 2*x, and the x is missing.")
WRONG_POWER = "You used the rule for x**2, but y = x**3 here: the power rule gives 3 * x**2."


def ambiguous(messages: list[str]) -> str:
    """One message for a wrong answer that fits several mistakes on these inputs only.

    >>> ambiguous(["A.", "B."]).startswith("These numbers fit more than one mistake")
    True
    """
    listed = " Or: ".join(messages)
    return (f"These numbers fit more than one mistake for this x (with other inputs they differ): {listed} "
            "Work it out as a formula in x and n to tell which.")


def for_part(label: str, message: str) -> str:
    """A shared message said about one part of a several-part answer.

    >>> for_part("x.grad", "The power rule ...")
    'For x.grad the power rule ...'
    """
    return f"For {label} " + message[0].lower() + message[1:]
