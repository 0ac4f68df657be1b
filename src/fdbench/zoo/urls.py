"""Zoo members behind fsspec URLs (``s3://``, ``gs://``, ``memory://``, ``file://``, ...):
the file system of a URL, listing a zoo folder, opening a member and its cache stamp."""

from __future__ import annotations

import re
from typing import IO, Any

__all__ = ["is_url", "list_files", "open_url", "url_filesystem", "url_stamp"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")


def is_url(location: str) -> bool:
    """Whether ``location`` is a URL (``<protocol>://...``) rather than a file system path."""
    return bool(_SCHEME.match(location))


def url_filesystem(url: str) -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path inside it.

    ``ValueError`` in one line when fsspec is not installed, when the protocol is unknown or
    when the package of the protocol (``s3fs`` for ``s3://``, ...) is not installed.
    """
    try:
        import fsspec
    except ImportError:
        raise ValueError(
            f"zoo location {url!r} is a URL; reading URLs needs fsspec (pip install fsspec)"
        ) from None
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as err:
        protocol = url.split("://", 1)[0]
        raise ValueError(f"zoo location {url!r}: protocol {protocol!r}: {err}") from None
    except ValueError as err:
        raise ValueError(f"zoo location {url!r}: {err}") from None


def list_files(url: str) -> dict[str, str]:
    """The files directly inside the folder ``url``, by name, as URLs; ``NotADirectoryError``
    when it is not a folder."""
    fs, path = url_filesystem(url)
    if not fs.isdir(path):
        raise NotADirectoryError(f"zoo folder {url} does not exist or is not a directory")
    found = {}
    for info in fs.ls(path, detail=True):
        if info["type"] == "file":
            name = info["name"].rstrip("/").rsplit("/", 1)[-1]
            found[name] = fs.unstrip_protocol(info["name"])
    return found


def open_url(url: str) -> IO[bytes]:
    """``url`` opened for reading bytes (seekable: zip archives are read from it)."""
    fs, path = url_filesystem(url)
    return fs.open(path, "rb")


def url_stamp(url: str) -> str:
    """What identifies the content of the file at ``url`` for the cache: its name, its size
    and the file system's checksum (fsspec's ``checksum``: the ETag or CRC where the store keeps
    one, otherwise a digest of the file's details, modification time included)."""
    fs, path = url_filesystem(url)
    return f"{path.rstrip('/').rsplit('/', 1)[-1]}:{fs.size(path)}:{fs.checksum(path)}"
