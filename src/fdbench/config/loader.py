"""Reading a configuration: YAML with repeated keys refused, finite numbers only, and one-line
errors naming the offending field."""

from __future__ import annotations

import math
import os
from typing import Any

import yaml
from pydantic import ValidationError

from fdbench.config.schema import METHODS_CONTEXT, BenchmarkConfig, MethodLookup, _format_errors


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping with a repeated key.

    PyYAML keeps the last of repeated keys silently (``lr: 0.1`` then ``lr: 1.0`` reads 1.0);
    a configuration that says two things about one setting is refused instead, naming the key
    and both lines.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first on line {first})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def _non_finite(data: Any, where: str = "") -> str | None:
    """The dotted path of the first NaN or infinite number in parsed YAML, if any."""
    if isinstance(data, float) and not math.isfinite(data):
        return where or "<root>"
    items = (
        data.items()
        if isinstance(data, dict)
        else (enumerate(data) if isinstance(data, list) else ())
    )
    for key, value in items:
        found = _non_finite(value, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def validate_config(data: Any, *, methods: MethodLookup, source: str = "config") -> BenchmarkConfig:
    """Validate a mapping (e.g. parsed YAML) into a :class:`BenchmarkConfig`, every method's
    ``kind``, ``params`` and ``grid`` against the training methods ``methods`` hands in
    (``kind`` -> method class; :func:`fdbench.jobs.plan.parse_config` hands in fdbench's).

    Raises ``ValueError`` whose message names ``source`` and, for every problem, the dotted
    path of the offending field and what was expected. NaN and infinite numbers are refused
    anywhere, free-form ``args``/``params``/``options`` included.
    """
    if not isinstance(data, dict):
        raise ValueError(
            f"{source}: expected a mapping at the top level, got {type(data).__name__}"
        )
    bad = _non_finite(data)
    if bad is not None:
        raise ValueError(
            f"{source}: invalid configuration: {bad}: expected a finite number, got NaN or "
            "infinity (no setting of fdbench can work with one)"
        )
    try:
        return BenchmarkConfig.model_validate(data, context={METHODS_CONTEXT: methods})
    except ValidationError as error:
        raise ValueError(f"{source}: invalid configuration: {_format_errors(error)}") from None


def read_yaml(path: str | os.PathLike[str]) -> Any:
    """The parsed content of the YAML configuration file at ``path``.

    Read with :class:`UniqueKeyLoader`: a repeated key is an error naming it and its lines; a
    missing file, a file that is not UTF-8 text or not YAML is a one-line ``ValueError``.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=UniqueKeyLoader)
    except FileNotFoundError:
        raise ValueError(f"config file {path!r} does not exist") from None
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not a UTF-8 text file ({error.reason})") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: not valid YAML: {_yaml_problem(error)}") from None
    return data


def _yaml_problem(error: yaml.YAMLError) -> str:
    """One line: what is wrong and where (PyYAML's message spans several lines)."""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else problem
