"""The one exception type for bad input to the lab."""


class LabInputError(ValueError):
    """Bad input to an autograd_lab function. The message says what is wrong and what to type
    instead; nothing was changed. Magics turn it into a short IPython UsageError."""
