"""The one YAML loader of every command: plain data only, bounded in size, no repeated keys.

Every YAML file fdbench reads (benchmark and zoo configs, FD-Shifts' Hydra configs) goes
through :func:`load_yaml`, which refuses, each with one ``ValueError`` naming the file:

- a file larger than ``max_bytes`` (checked from its size before anything is read);
- a mapping with a repeated key (PyYAML keeps the last silently: ``lr: 0.1`` then ``lr: 1.0``
  would read 1.0);
- a document whose aliases expand to more than ``max_nodes`` nodes (a "billion laughs" alias
  bomb: nine levels of nine aliases are 9^9 nodes when walked, from a file of a few hundred
  bytes) or that refers to itself through an alias;
- a document nested too deeply for the parser;
- ``!!python/...`` tags and every other tag PyYAML's safe loader does not know: a config is
  data, never code.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

__all__ = [
    "MAX_NODES",
    "MAX_YAML_BYTES",
    "UniqueKeyLoader",
    "load_yaml",
    "parse_yaml",
]

#: The largest YAML file read (16 MiB): a config is a few kilobytes.
MAX_YAML_BYTES = 16 * 2**20
#: The most nodes a document may hold once its aliases are expanded.
MAX_NODES = 1_000_000
_PYTHON_TAG = "tag:yaml.org,2002:python/"
_MERGE_TAG = "tag:yaml.org,2002:merge"


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping with a repeated key, naming the key and the
    lines of both."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
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


def _problem(error: yaml.YAMLError) -> str:
    """One line: what is wrong and where (PyYAML's message spans several lines)."""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None)
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else problem


def _check_nodes(root: yaml.Node, source: str, max_nodes: int) -> None:
    """Refuse ``!!python`` tags, self-references and more than ``max_nodes`` expanded nodes.

    The composed document is a graph in which every alias points at its anchor's node; the
    number of nodes a walk of the loaded data visits is counted per node once (memoised, in
    post-order without recursion), so an alias bomb is measured without being expanded.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > max_nodes:
                raise ValueError(
                    f"{source}: its aliases expand to more than {max_nodes:,} values (an alias "
                    "bomb?); refusing to load it"
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise ValueError(f"{source}: an alias refers to the node that contains it")
        if node.tag.startswith(_PYTHON_TAG):
            line = node.start_mark.line + 1
            raise ValueError(
                f"{source}: tag !!{node.tag.removeprefix('tag:yaml.org,2002:')} on line {line} "
                "is refused: a config is data, not Python objects"
            )
        on_path.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def parse_yaml(text: str, *, source: str = "YAML", max_nodes: int = MAX_NODES) -> Any:
    """The plain data of the YAML document ``text`` (see the module's rules); ``ValueError``
    naming ``source`` for anything refused."""
    loader = UniqueKeyLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        _check_nodes(root, source, max_nodes)
        return loader.construct_document(root)
    except yaml.YAMLError as error:
        raise ValueError(f"{source}: not valid YAML: {_problem(error)}") from None
    except RecursionError:
        raise ValueError(f"{source}: nested too deeply; refusing to load it") from None
    finally:
        loader.dispose()


def load_yaml(
    path: str | os.PathLike[str],
    *,
    what: str = "config file",
    max_bytes: int = MAX_YAML_BYTES,
    max_nodes: int = MAX_NODES,
) -> Any:
    """Read the YAML file at ``path`` (a ``what``) as plain data (see the module's rules).

    The size is compared with ``max_bytes`` before the file is read. Every refusal, a missing
    file and a file that is not UTF-8 text are one ``ValueError`` naming the file.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise ValueError(
                    f"{path}: {what} of {size:,} bytes is larger than the {max_bytes:,} "
                    "bytes a YAML file may have; refusing to read it"
                )
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise ValueError(f"{what} {path!r} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"{what} {path!r} is a folder, expected a YAML file") from None
    if len(data) > max_bytes:
        raise ValueError(f"{path}: {what} is larger than {max_bytes:,} bytes; refusing to read it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not a UTF-8 text file ({error.reason})") from None
    return parse_yaml(text, source=path, max_nodes=max_nodes)
