"""The data sets of each paper fdbench reproduces, one module per suite, and the one registry of
experiment builders that a configuration's ``data.builder`` names.

A suite module registers its builders with :func:`register_builder`; every module of this
package is imported the first time a builder is looked up (:func:`get_builder`), so a new suite
is one new module here (CONTRIBUTING.md). Builders of other packages register through the
entry-point group ``fdbench.builders`` (:data:`ENTRY_POINT_GROUP`); a configuration may also
name any function as ``"module:callable"``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fdbench.data.types import Experiment

__all__ = ["ENTRY_POINT_GROUP", "builder_names", "get_builder", "register_builder"]


#: Entry-point group through which other packages register experiment builders.
ENTRY_POINT_GROUP = "fdbench.builders"

_BUILDERS: dict[str, Callable[..., list[Experiment]]] = {}
_LOADED = False


def register_builder(
    name: str,
) -> Callable[[Callable[..., list[Experiment]]], Callable[..., list[Experiment]]]:
    """Decorator registering ``function(**args) -> list[Experiment]`` as the experiment builder
    ``name`` that a configuration's ``data.builder`` names (returns the function unchanged).

    The one registry of data builders: the suites of this package (one module per paper's
    data sets) and the builders of other packages, through the entry-point group
    ``fdbench.builders`` (an entry point names a decorated function, or an undecorated one,
    registered under the entry point's name). A name taken by another function is a
    ``ValueError``; registering the same function again is a no-op.
    """
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be a Python identifier, got {name!r}")

    def decorate(function: Callable[..., list[Experiment]]) -> Callable[..., list[Experiment]]:
        if not callable(function):
            raise TypeError(f"register_builder({name!r}) expects a function, got {function!r}")
        if _BUILDERS.get(name, function) is not function:
            raise ValueError(f"a data builder named {name!r} is already registered")
        _BUILDERS[name] = function
        return function

    return decorate


def _load() -> None:
    """Import every module of this package (each registers its builders) and the builders of
    the ``fdbench.builders`` entry points, once per process."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        function = entry.load()
        if function not in _BUILDERS.values():
            register_builder(entry.name)(function)


def builder_names() -> tuple[str, ...]:
    """The names of every registered data builder, sorted."""
    _load()
    return tuple(sorted(_BUILDERS))


def get_builder(name: str) -> Callable[..., list[Experiment]]:
    """The registered data builder ``name``; ``ValueError`` listing the registered names."""
    _load()
    if name not in _BUILDERS:
        import difflib

        close = difflib.get_close_matches(str(name), builder_names(), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"data.builder must be one of {list(builder_names())}, got {name!r}{hint}")
    return _BUILDERS[name]
