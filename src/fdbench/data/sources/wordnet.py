"""A reader of the WordNet 3.0 noun database (``data.noun``) and queries on its hypernym tree."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fdbench.core.provenance import record_read

#: Pointer symbols of ``data.noun`` that lead from a synset to its parent: hypernym and instance
#: hypernym (WordNet's ``wndb(5WN)`` manual page, "Pointers").
PARENT_POINTERS = ("@", "@i")
_WNID = re.compile(r"^n\d{8}$")


def wnid(offset: int | str) -> str:
    """ImageNet-style WordNet id of a noun synset: ``n`` and its 8-digit ``data.noun`` offset."""
    return f"n{int(offset):08d}"


def normalise_name(name: str) -> str:
    """A class or lemma name for comparison: lower case, ``_``/``-``/runs of spaces → one space,
    surrounding spaces and apostrophes dropped (WordNet writes ``pickup_truck``, datasets write
    ``pickup truck`` or ``pickup-truck``)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str; got {type(name).__name__}")
    return " ".join(re.sub(r"[_\-]", " ", name.lower()).replace("'", "").split())


@dataclass(frozen=True, eq=False)
class WordNet:
    """The noun synsets of WordNet: ``lemmas[wnid]`` its words (normalised with
    :func:`normalise_name`, in file order) and ``parents[wnid]`` its hypernyms and instance
    hypernyms (wnids)."""

    lemmas: dict[str, tuple[str, ...]]
    parents: dict[str, tuple[str, ...]]
    _by_lemma: dict[str, tuple[str, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        index: dict[str, list[str]] = {}
        for key, words in self.lemmas.items():
            for word in words:
                index.setdefault(word, []).append(key)
        object.__setattr__(self, "_by_lemma", {k: tuple(v) for k, v in index.items()})

    def _check(self, key: str) -> str:
        if not isinstance(key, str) or not _WNID.match(key):
            raise ValueError(f"wnid must look like 'n02437136'; got {key!r}")
        if key not in self.lemmas:
            raise ValueError(f"wnid {key} is not a noun synset of this WordNet database")
        return key

    def name(self, key: str) -> str:
        """The first lemma of synset ``key`` (its usual name)."""
        return self.lemmas[self._check(key)][0]

    def ancestors(self, key: str) -> frozenset[str]:
        """Every synset reachable from ``key`` through parent pointers, ``key`` included."""
        seen: set[str] = set()
        stack = [self._check(key)]
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(self.parents.get(node, ()))
        return frozenset(seen)

    def is_descendant(self, key: str, of: str) -> bool:
        """Whether ``key`` is ``of`` or lies below it in the hypernym tree."""
        return self._check(of) in self.ancestors(key)

    def synsets(self, word: str) -> tuple[str, ...]:
        """The synsets having ``word`` (normalised) as a lemma, in file order."""
        return self._by_lemma.get(normalise_name(word), ())

    def subtree(self, keys: Iterable[str]) -> frozenset[str]:
        """The subtree spanned by ``keys``: the synsets and all their ancestors up to the root."""
        out: set[str] = set()
        for key in keys:
            out |= self.ancestors(key)
        return frozenset(out)


def parse_data_noun(text: str) -> WordNet:
    """Parse the text of WordNet 3.0's ``data.noun``.

    Format (``wndb(5WN)``): licence lines start with two spaces; every other line is
    ``offset lex_filenum ss_type w_cnt word lex_id […] p_cnt [ptr_symbol offset pos source/target]…
    | gloss`` with ``w_cnt`` two hexadecimal digits and ``p_cnt`` three decimal digits. Parent
    pointers are :data:`PARENT_POINTERS` to noun synsets.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; got {type(text).__name__}")
    lemmas: dict[str, tuple[str, ...]] = {}
    parents: dict[str, tuple[str, ...]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("  "):
            continue
        fields = line.split(" | ", 1)[0].split()
        try:
            key = wnid(fields[0])
            n_words = int(fields[3], 16)
            words = tuple(normalise_name(fields[4 + 2 * i]) for i in range(n_words))
            at = 4 + 2 * n_words
            n_pointers = int(fields[at])
            pointers = [fields[at + 1 + 4 * i : at + 5 + 4 * i] for i in range(n_pointers)]
        except (IndexError, ValueError) as exc:
            raise ValueError(f"data.noun line {number} is not a WordNet synset line") from exc
        if any(len(p) != 4 for p in pointers) or not words:
            raise ValueError(f"data.noun line {number} is not a WordNet synset line")
        lemmas[key] = words
        parents[key] = tuple(
            wnid(o) for s, o, pos, _ in pointers if s in PARENT_POINTERS and pos == "n"
        )
    if not lemmas:
        raise ValueError("data.noun holds no synset lines")
    return WordNet(lemmas, parents)


def load_wordnet(
    path: str | os.PathLike | None = None,
    *,
    data_dir: str | os.PathLike | None = None,
    progress: bool = False,
) -> WordNet:
    """The WordNet 3.0 noun database from the ``data.noun`` file at ``path``; without ``path``
    the one :func:`fdbench.data.sources.fetching.fetch_wordnet` caches (fetching it on first
    use)."""
    if path is None:
        from fdbench.data.sources.fetching import fetch_wordnet

        path = fetch_wordnet(data_dir=data_dir, progress=progress) / "data.noun"
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"missing file {path} (WordNet 3.0 data.noun)")
    record_read(path)
    return parse_data_noun(path.read_text(encoding="utf-8", errors="replace"))
