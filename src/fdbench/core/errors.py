"""Which exceptions are the user's to fix, and the one line the ``fdbench`` command prints."""

from __future__ import annotations

__all__ = ["DataError", "UserError", "is_user_error", "one_line"]


class UserError(ValueError):
    """Something the user gave (an argument, a file, a setting) cannot work; the message says
    what and how to fix it. A ``ValueError``, so callers that catch those catch it too."""


class DataError(RuntimeError):
    """The data a command needs cannot be obtained or read back intact (every source of a
    dataset failed, a cached file was altered): the user's network or cache to fix. The data
    fetcher's ``FetchError`` and ``CorruptedCacheError`` are ones."""


def is_user_error(error: BaseException) -> bool:
    """True for errors in the user's inputs or environment, printed as one line by the command.

    - ``ValueError`` and ``TypeError`` (with ``UserError``): fdbench validates every input and
      raises these, naming the argument, file or setting (and wraps the readers' own);
    - every ``OSError``: missing files, permission denied, a read-only file system, a full
      disk, a path that is a directory or whose parent is a file, a network failure;
    - :class:`DataError`: the data fetcher's ``FetchError`` and ``CorruptedCacheError``.

    Anything else (``IndexError``, ``KeyError``, ``AttributeError``, ``RuntimeError``,
    ``AssertionError``, ...) is a bug in fdbench or in a library and keeps its traceback.
    """
    if isinstance(error, ValueError | TypeError | OSError):
        return True
    return isinstance(error, DataError)


def one_line(error: BaseException) -> str:
    """The message of ``error`` on one line.

    An ``OSError`` reads ``<reason>: <path>`` (``Read-only file system: 'runs/x/results.csv'``,
    with the second path of a rename); any other error its first line, or its class name when
    it has no message.
    """
    if isinstance(error, OSError) and error.strerror:
        reason = error.strerror
        where = [repr(str(f)) for f in (error.filename, error.filename2) if f is not None]
        text = f"{reason}: {' -> '.join(where)}" if where else reason
    else:
        text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
