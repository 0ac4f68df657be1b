"""A restricted unpickler that only rebuilds NumPy arrays and plain Python containers."""

from __future__ import annotations

import io
import pickle
from typing import Any, BinaryIO

_ALLOWED = frozenset(
    {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("_codecs", "encode"),  # how protocol-2 pickles written by Python 3 store bytes
    }
)


class _ArrayUnpickler(pickle.Unpickler):
    """Unpickler whose ``find_class`` refuses every global except NumPy array reconstruction."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"refusing to unpickle global {module}.{name}: only NumPy arrays are allowed"
        )


def load_array_pickle(file: BinaryIO | bytes, *, encoding: str = "ASCII") -> Any:
    """Unpickle ``file`` allowing only NumPy arrays, dicts, lists, tuples, numbers and strings.

    Pickles from Python 2 (such as the CIFAR batches) need ``encoding="bytes"`` or ``"latin1"``.
    Any other global (a class, a function) raises :class:`pickle.UnpicklingError`, so a malicious
    pickle cannot run code.
    """
    if isinstance(file, bytes | bytearray):
        file = io.BytesIO(file)
    return _ArrayUnpickler(file, encoding=encoding).load()
