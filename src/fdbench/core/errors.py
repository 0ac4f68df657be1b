"""Which exceptions are the user's to fix, and the one line the ``fdbench`` command prints."""

from __future__ import annotations

from fdbench.core.names import printable

__all__ = [
    "DataError",
    "UserError",
    "WorkerLost",
    "is_user_error",
    "missing_extra",
    "one_line",
]


class UserError(ValueError):
    """Something the user gave (an argument, a file, a setting) cannot work; the message says
    what and how to fix it. A ``ValueError``, so callers that catch those catch it too."""


class DataError(RuntimeError):
    """The data a command needs cannot be obtained or read back intact (every source of a
    dataset failed, a cached file was altered): the user's network or cache to fix. The data
    fetcher's ``FetchError`` and ``CorruptedCacheError`` are ones."""


class WorkerLost(RuntimeError):
    """A job ended every worker process it was given (dask's ``KilledWorker``): the machine ran
    out of memory, or native code crashed. The message names the job and how to see the
    crash in the command's own process."""


#: The optional dependencies of fdbench and the extra that installs each (pyproject.toml).
EXTRAS = {
    "torch": ("PyTorch", "train"),
    "torchvision": ("torchvision", "train"),
    "lightning": ("Lightning", "train"),
    "sklearn": ("scikit-learn", "data"),
    "skimage": ("scikit-image", "data"),
    "timm": ("timm", "zoo"),
    "torchmetrics": ("torchmetrics", "integrations"),
}


def missing_extra(error: BaseException) -> str | None:
    """For a ``ModuleNotFoundError`` of an optional dependency (:data:`EXTRAS`), the one line
    that names the extra to install; ``None`` for any other error."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    found = EXTRAS.get(error.name.partition(".")[0])
    if found is None:
        return None
    package, extra = found
    return (
        f"this command needs {package} (module {error.name!r}), which is not installed: "
        f"install fdbench's '{extra}' extra: pip install 'fdbench[{extra}]'"
    )


def is_user_error(error: BaseException) -> bool:
    """True for errors in the user's inputs or environment, printed as one line by the command.

    - ``ValueError`` and ``TypeError`` (with ``UserError``): fdbench validates every input and
      raises these, naming the argument, file or setting (and wraps the readers' own);
    - every ``OSError``: missing files, permission denied, a read-only file system, a full
      disk, a path that is a directory or whose parent is a file, a network failure;
    - :class:`DataError`: the data fetcher's ``FetchError`` and ``CorruptedCacheError``;
    - :class:`WorkerLost`: a job that ended its workers (memory, or a crash in native code);
    - a missing optional dependency (:func:`missing_extra`): the extra to install.

    Anything else (``IndexError``, ``KeyError``, ``AttributeError``, ``RuntimeError``,
    ``AssertionError``, ...) is a bug in fdbench or in a library and keeps its traceback.
    """
    if isinstance(error, ValueError | TypeError | OSError) or missing_extra(error):
        return True
    return isinstance(error, DataError | WorkerLost)


def one_line(error: BaseException) -> str:
    """The message of ``error`` on one line.

    An ``OSError`` reads ``<reason>: <path>`` (``Read-only file system: 'runs/x/results.csv'``,
    with the second path of a rename); any other error its first line, or its class name when
    it has no message; control characters (a name's escape sequences) are escaped
    (:func:`fdbench.core.names.printable`).
    """
    extra = missing_extra(error)
    if extra is not None:
        return extra
    if isinstance(error, OSError) and error.strerror:
        reason = error.strerror
        where = [repr(str(f)) for f in (error.filename, error.filename2) if f is not None]
        text = f"{reason}: {' -> '.join(where)}" if where else reason
    else:
        text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return printable(lines[0]) if lines else type(error).__name__
