"""Turning user data into what the extension takes: a dict of float64 arrays with one or two
dimensions, NaN marking a missing value (masked arrays: masked cells become NaN). A C-contiguous
float64 array without a mask is passed through as it is (no copy here; the extension copies it
once into the data set). A path (``"faithful.csv"``, or ``"faithful.csv:eruptions,waiting@..200"``
choosing columns and rows as ``occam fit --data`` does) is passed as text: the extension reads it
as the command line does, so messages name the file's own lines and columns."""

import numbers
import os

import numpy as np

from ._errors import DataShapeError, DataTypeError


def as_table(name, value):
    """One data value → a float64 array of 1 or 2 dimensions (or a data file path, as text),
    with a clear error otherwise."""
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(value)
        base = as_table(name, np.ma.getdata(value))
        if mask.any():
            base = np.array(base, dtype=np.float64, copy=True)
            base[mask.reshape(base.shape)] = np.nan
        return base
    if isinstance(value, numbers.Number) and not isinstance(value, (bool, np.bool_)):
        if isinstance(value, complex):
            raise DataTypeError(f"data `{name}`: complex numbers are not supported")
        return np.array([[float(value)]])
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    kind = arr.dtype.kind
    if kind == "c":
        raise DataTypeError(f"data `{name}`: complex numbers are not supported (dtype {arr.dtype})")
    if kind not in "biuf":
        raise DataTypeError(
            f"data `{name}`: expected numbers, got an array of dtype {arr.dtype}"
        )
    if arr.ndim > 2:
        raise DataShapeError(
            f"data `{name}`: arrays must have 1 or 2 dimensions; this one has shape {arr.shape}"
        )
    if arr.dtype != np.float64:
        arr = arr.astype(np.float64)
    if not arr.flags.aligned:
        # A buffer unpickled from a network message (Dask) may start at any byte: the extension
        # reads a C-contiguous array in place, which needs 8-byte alignment.
        arr = arr.copy()
    return arr


def as_data(data):
    """A mapping of names to arrays → the extension's dict."""
    if data is None:
        return None
    if not hasattr(data, "items"):
        raise DataTypeError(
            f"data must be a mapping of names to arrays, e.g. data={{'x': X}}; got {type(data).__name__}"
        )
    out = {}
    for k, v in data.items():
        if not isinstance(k, str):
            raise DataTypeError(f"data names must be strings, got {k!r}")
        out[k] = as_table(k, v)
    return out
