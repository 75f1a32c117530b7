"""The errors pullback raises.

Every message says what went wrong, where (the user's file:line), and how to
fix it, so that the user never has to read pullback's own frames.
"""


class TransformError(Exception):
    """The transformer met a construct it cannot differentiate correctly.

    Attributes:
        filename: the user's source file, or None when unknown.
        lineno: the line in that file, or None when unknown.
        construct: a short name for what was refused ("for loop", "numpy.fft.fft").
    """

    def __init__(self, message, filename=None, lineno=None, construct=None):
        self.filename = filename
        self.lineno = lineno
        self.construct = construct
        self.message = message
        where = f"{filename}:{lineno}: " if filename and lineno else ""
        super().__init__(where + message)


class NaNError(FloatingPointError):
    """Generated code assigned a value holding a NaN (`pullback.config(check_nans=True)`).

    Attributes:
        variable: the generated variable it was assigned to (`dx` for the
            cotangent of your `x`; `a, b` for a tuple assignment).
        filename: your source file, or None when unknown.
        lineno: the line of your code the assignment comes from, or None.
        line: the text of that line.
    """

    def __init__(self, message, variable, filename=None, lineno=None, line=""):
        self.variable = variable
        self.filename = filename
        self.lineno = lineno
        self.line = line
        super().__init__(message)


def unsupported(construct, node, origin, why=""):
    """A TransformError for an unsupported `construct` at `node` of `origin`."""
    reason = f": {why}" if why else ""
    return TransformError(
        f"{construct} is not supported{reason}",
        origin.filename,
        getattr(node, "lineno", None),
        construct,
    )
