"""What crosses between an engine host and its client besides plain types.

The host (`host.py`) answers each request with plain types only; numpy arrays
travel as ``{"descr", "shape", "data"}`` (:func:`pack_array`) and the client
(`client.py`) rebuilds them (:func:`unpack_array`). A large numeric array that is
mostly zeros (the histograms: 2,560 buckets a stream, four kinds, a few octaves
used) travels as its non-zero entries, ``{"descr", "shape", "index", "values"}``:
at 10,000 streams that is a few MB instead of 800 MB, and the client's zeros are
pages the kernel never hands out until written. `TERMINATED_NOTE` is the line
the host writes to its log when SIGTERM ends it, so the client tells that end from
a crash. Both sides import this module; it never loads the native extension.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TERMINATED_NOTE", "pack_array", "unpack_array"]

# What the host writes to its log when SIGTERM ends it (the client tells it from a crash).
TERMINATED_NOTE = "netload engine host: ended by SIGTERM; its DPDK runtime files are removed"


SPARSE_MIN_ITEMS = 4096  # smaller arrays always travel whole
SPARSE_MAX_SHARE = 0.25  # sparse when at most this share of entries is non-zero


def pack_array(arr: np.ndarray) -> dict[str, Any]:
    descr: Any = arr.dtype.str if arr.dtype.names is None else [list(d) for d in arr.dtype.descr]
    if arr.dtype.names is None and arr.dtype.kind in "iuf" and arr.size >= SPARSE_MIN_ITEMS:
        index = np.flatnonzero(arr)
        if index.size <= SPARSE_MAX_SHARE * arr.size:
            # (index, value) costs 16 bytes an entry against 8 for a dense one
            return {"descr": descr, "shape": list(arr.shape),
                    "index": index.astype("<u8").tobytes(),
                    "values": np.ascontiguousarray(arr).reshape(-1)[index].tobytes()}
    return {"descr": descr, "shape": list(arr.shape), "data": arr.tobytes()}


def unpack_array(packed: dict[str, Any]) -> np.ndarray:
    descr = packed["descr"]
    dtype = np.dtype(descr if isinstance(descr, str) else [tuple(d) for d in descr])
    if "index" in packed:
        arr = np.zeros(packed["shape"], dtype=dtype)
        index = np.frombuffer(packed["index"], dtype="<u8").astype(np.intp)
        arr.reshape(-1)[index] = np.frombuffer(packed["values"], dtype=dtype)
        return arr
    return np.frombuffer(packed["data"], dtype=dtype).reshape(packed["shape"]).copy()
