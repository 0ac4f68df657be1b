"""Names a user gives (runs, studies, CSFs, members) are data: checked before they become a
path, escaped before they reach a terminal."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "check_distinct_files",
    "check_path_name",
    "did_you_mean",
    "printable",
    "terminal_console",
]

#: The longest name that becomes one path component (bytes of UTF-8; most file systems: 255).
MAX_NAME_BYTES = 200


def _control(ch: str) -> bool:
    return unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp"}


def printable(text: object) -> str:
    """``text`` with every control or format character (escape sequences, carriage returns,
    bidirectional overrides) written as its Python escape (``\\x1b``, ``\\u202e``), so a name
    printed to a terminal shows what it holds and cannot move the cursor or recolour the
    screen."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if _control(ch) else ch for ch in str(text)
    )


def did_you_mean(name: object, names: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` with ``x`` the name of ``names`` closest to ``name``
    (:func:`difflib.get_close_matches`, similarity >= 0.6), or ``""`` where none is close."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(n) for n in names], n=1, cutoff=0.6)
    return f"; did you mean {printable(repr(close[0]))}?" if close else ""


def check_path_name(name: object, what: str) -> str:
    """``name`` if it can be one path component as it is; ``ValueError`` naming ``what``
    otherwise: not text, empty, ``.`` or ``..`` (or only dots), a path separator, a control
    character, leading or trailing spaces, or longer than :data:`MAX_NAME_BYTES`."""
    if not isinstance(name, str):
        raise TypeError(f"{what} must be text, got {type(name).__name__}")
    problem = None
    if not name or set(name) == {"."}:
        problem = "is empty or only dots ('.' and '..' name folders that exist)"
    elif "/" in name or "\\" in name:
        problem = "holds a path separator"
    elif any(_control(ch) for ch in name):
        problem = "holds a control character"
    elif name != name.strip():
        problem = "begins or ends with a space"
    elif len(name.encode("utf-8")) > MAX_NAME_BYTES:
        problem = f"is longer than {MAX_NAME_BYTES} bytes"
    if problem is not None:
        raise ValueError(
            f"{what} {printable(repr(name))} {problem}; it becomes a file or folder name"
        )
    return name


def check_distinct_files(names: Iterable[Any], stem: Callable[[Any], str], what: str) -> None:
    """``ValueError`` naming ``what`` and both names if two distinct ``names`` become the same
    file name under ``stem`` (or names that differ only in case, which one file on a
    case-insensitive file system would hold): one would overwrite the other."""
    seen: dict[str, object] = {}
    for name in dict.fromkeys(names):
        key = stem(name).casefold()
        if key in seen:
            raise ValueError(
                f"{what} {printable(repr(seen[key]))} and {printable(repr(name))} would be "
                f"written to the same file ({stem(name)!r}); rename one of them"
            )
        seen[key] = name


def terminal_console(**options: Any) -> Any:
    """A ``rich.console.Console`` that prints every text through :func:`printable`: a study,
    CSF or member name with escape sequences shows them as ``\\x1b[...`` instead of obeying
    them. ``options`` go to ``Console``."""
    from rich.console import Console

    class _Console(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(printable(text), **kwargs)

    return _Console(**options)
