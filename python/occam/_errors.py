"""Exceptions raised by occam. Every message is the text the command line prints: model errors
point at ``file:line:column``, data errors at ``file:row:column`` (``<array x>`` for an array)."""


class OccamError(Exception):
    """Base class of every error raised by occam."""


class ModelError(OccamError, ValueError):
    """The model text is wrong (syntax, unknown names, non-conjugate parents): located."""


class DataError(OccamError, ValueError):
    """A data cell, header or shape is wrong: ``file:row:column: message``."""


class DataTypeError(OccamError, TypeError):
    """Data of a type occam cannot use (strings, complex numbers, objects)."""


class DataShapeError(DataError):
    """Data with the wrong number of dimensions or the wrong shape."""


class UsageError(OccamError, ValueError):
    """A bad argument (a setting out of its domain, a plate size, prior weights)."""


class UnknownNameError(OccamError, KeyError):
    """A variable or data name the model does not have."""

    def __str__(self):  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class FileError(OccamError, OSError):
    """A model or data file that cannot be read."""


class RunError(OccamError, RuntimeError):
    """Inference failed (numerical breakdown; a decreasing bound with ``strict=True``)."""


class Interrupted(OccamError):
    """The callback stopped the fit by returning ``False``. ``result`` is the
    :class:`occam.Result` of the state the fit stopped in (``converged`` False, ``stop["reason"]``
    ``"interrupted"``), or None when it stopped before its first sweep ended."""

    result = None


class InternalError(OccamError, RuntimeError):
    """A bug in occam (a Rust panic), reported instead of crashing or raising pyo3's
    ``PanicException``; please report it with the message."""
