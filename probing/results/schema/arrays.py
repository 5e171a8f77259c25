"""Numeric arrays in a result: int64, float64 or float32, compressed and base64-encoded in JSON, and the bounds a
declared shape must keep before a byte is inflated.

>>> encode_array(np.arange(4, dtype=np.int64).reshape(2, 2))["shape"]
[2, 2]
"""

from __future__ import annotations

import base64
import math
import zlib

import numpy as np

ARRAY_ENCODING = "base64(zlib(little-endian C-order array))"
PLANES_ENCODING = "base64(zlib(byte planes of the little-endian C-order array))"
LAYOUTS = ("bytes", "byte-planes")
"""How an array's bytes are ordered before zlib: as numpy lays them out (files without ``layout``), or in byte
planes (what :func:`encode_array` writes)."""

MAX_ARRAY_AXES = 8
MAX_ARRAY_NUMBERS = 1 << 31
"""An encoded array's bounds, checked on its declared shape before a byte is inflated."""


_LAYOUT = {"int64": "<i8", "float64": "<f8", "float32": "<f4"}
"""Each stored dtype's little-endian layout."""


def encode_array(array: np.ndarray, layout: str = "byte-planes") -> dict:
    """An int64, float64 or float32 array as JSON: its bytes in byte planes, then zlib at level 6 (``layout=
    "bytes"``: as numpy lays them out, as files before byte planes held them; for comparisons and tests).

    Counts and replicate sums are small numbers in 8 bytes: in byte planes (every number's lowest byte,
    then every second byte, ...; HDF5 and Blosc call it the shuffle filter) the high planes are long runs of
    zeros, so zlib finds them at once: over the committed results, two thirds of the size and 4 times as fast
    as zlib over the bytes as numpy lays them out (benchmarks/RESULTS.md, "Result arrays").
    Integers are stored as int64, float32 arrays as float32 (trained float32 weights, exactly, in half the
    bytes), other floats as float64.

    >>> encoded = encode_array(np.array([[1, 2], [3, 258]]))
    >>> encoded["layout"], decode_array(encoded).tolist()
    ('byte-planes', [[1, 2], [3, 258]])
    >>> decode_array(encode_array(np.array([0.1], dtype=np.float32))).dtype.name
    'float32'
    """
    array = np.asarray(array)  # (ascontiguousarray would turn a 0-d array into shape [1])
    dtype = ("float32" if array.dtype == np.float32 else "float64") if array.dtype.kind == "f" else "int64"
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    numbers = np.ascontiguousarray(array.astype(_LAYOUT[dtype])).reshape(-1)  # [number]
    if layout == "bytes":
        return {"shape": list(array.shape), "dtype": dtype,
                "data": base64.b64encode(zlib.compress(numbers.tobytes(), 6)).decode("ascii")}
    planes = numbers.view(np.uint8).reshape(numbers.size, numbers.itemsize).T  # [byte, number]
    return {"shape": list(array.shape), "dtype": dtype, "layout": layout,
            "data": base64.b64encode(zlib.compress(np.ascontiguousarray(planes).tobytes(), 6)).decode("ascii")}


def decode_array(encoded: dict) -> np.ndarray:
    """The inverse of :func:`encode_array` (files without ``dtype`` hold int64, as probing 0.1 wrote; files
    without ``layout`` hold the bytes as numpy lays them out, as results of schema versions 1 to 3 before byte
    planes did)."""
    name = encoded.get("dtype", "int64")
    if name not in _LAYOUT:
        raise ValueError(f"unknown dtype {name!r} (known: {', '.join(_LAYOUT)})")
    layout = encoded.get("layout", "bytes")
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    dtype = np.dtype(_LAYOUT[name])
    size = math.prod(encoded["shape"])  # Python integers: a shape of 2**70 cannot overflow
    if size > MAX_ARRAY_NUMBERS:
        raise ValueError(f"its shape {encoded['shape']} needs {size} numbers, more than any result holds")
    # Inflate no further than the shape needs: 3 MB of zeros must not become 3 GiB before the size check.
    inflater = zlib.decompressobj()
    raw = inflater.decompress(base64.b64decode(encoded["data"], validate=True), size * dtype.itemsize + 1)
    if len(raw) != size * dtype.itemsize or inflater.unconsumed_tail:
        found = "more" if len(raw) > size * dtype.itemsize or inflater.unconsumed_tail else len(raw) // dtype.itemsize
        raise ValueError(f"holds {found} numbers, its shape {encoded['shape']} needs {size}")
    if layout == "byte-planes":
        planes = np.frombuffer(raw, dtype=np.uint8).reshape(dtype.itemsize, size)  # [byte, number]
        raw = np.ascontiguousarray(planes.T).tobytes()
    return np.frombuffer(raw, dtype=dtype).reshape(encoded["shape"])
