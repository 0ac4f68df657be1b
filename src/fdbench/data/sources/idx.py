"""Reader for the IDX format of MNIST and Fashion-MNIST (LeCun et al., 1998)."""

from __future__ import annotations

import numpy as np

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def parse_idx(data: bytes, *, name: str = "idx file") -> np.ndarray:
    """Parse IDX bytes: two zero bytes, a type code, the number of dimensions, big-endian int32
    sizes, then the values in C order. Returns the array (uint8 for image and label files)."""
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_DTYPES:
        raise ValueError(f"{name} is not an IDX file (bad magic number)")
    ndim = data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(f"{name} is truncated (header)")
    shape = tuple(int(v) for v in np.frombuffer(data, dtype=">i4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[data[2]])
    count = int(np.prod(shape, dtype=np.int64))
    if len(data) != header + count * dtype.itemsize:
        raise ValueError(
            f"{name} has {len(data) - header} data bytes; shape {shape} needs "
            f"{count * dtype.itemsize}"
        )
    return np.frombuffer(data, dtype=dtype, count=count, offset=header).reshape(shape)
