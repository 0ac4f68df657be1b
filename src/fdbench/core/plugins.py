"""Loading plug-ins (entry points): a broken one is a warning naming it, never the end of a
command that does not use it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["load_entry_points"]

logger = logging.getLogger("fdbench")


def load_entry_points(group: str, register: Callable[[str, Any], None]) -> Iterator[str]:
    """Load every entry point of ``group`` and hand it to ``register(name, object)``; yield
    the names registered.

    An entry point whose import fails (a missing module, a syntax error, an exception at
    import), that is malformed (no ``module:attribute``), or that ``register`` refuses, is
    skipped with one warning naming it, its group and the reason: the other plug-ins and every
    built-in keep working.
    """
    from importlib.metadata import entry_points

    try:
        found = list(entry_points(group=group))
    except Exception as error:
        logger.warning("fdbench: the plug-ins of %r cannot be listed (%s); skipping them",
                       group, _reason(error))  # fmt: skip
        return
    for entry in found:
        try:
            register(entry.name, entry.load())
        except Exception as error:
            logger.warning(
                "fdbench: skipping the plug-in %r (entry point %s of group %r): %s",
                entry.name, entry.value, group, _reason(error),
            )  # fmt: skip
            continue
        yield entry.name


def _reason(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
