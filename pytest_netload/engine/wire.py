"""What crosses between an engine host and its client besides plain types.

The host (`host.py`) answers each request with plain types only; numpy arrays
travel as ``{"descr", "shape", "data"}`` (:func:`pack_array`) and the client
(`client.py`) rebuilds them (:func:`unpack_array`). `TERMINATED_NOTE` is the line
the host writes to its log when SIGTERM ends it, so the client tells that end from
a crash. Both sides import this module; it never loads the native extension.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["TERMINATED_NOTE", "pack_array", "unpack_array"]

# What the host writes to its log when SIGTERM ends it (the client tells it from a crash).
TERMINATED_NOTE = "netload engine host: ended by SIGTERM; its DPDK runtime files are removed"


def pack_array(arr: np.ndarray) -> dict[str, Any]:
    descr: Any = arr.dtype.str if arr.dtype.names is None else [list(d) for d in arr.dtype.descr]
    return {"descr": descr, "shape": list(arr.shape), "data": arr.tobytes()}


def unpack_array(packed: dict[str, Any]) -> np.ndarray:
    descr = packed["descr"]
    dtype = np.dtype(descr if isinstance(descr, str) else [tuple(d) for d in descr])
    return np.frombuffer(packed["data"], dtype=dtype).reshape(packed["shape"]).copy()

