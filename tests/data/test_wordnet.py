"""Tests for the WordNet 3.0 ``data.noun`` reader and the WordNet fetch sources."""

from __future__ import annotations

import pytest

from fdbench.data import FetchError, fetch_wordnet
from fdbench.data.sources import fetching as fetch_module
from fdbench.data.sources.wordnet import load_wordnet, normalise_name, parse_data_noun, wnid

#: Lines in data.noun's format (wndb(5WN)): a licence line, then synsets whose pointers include
#: hypernyms (@), an instance hypernym (@i), a hyponym (~), a member holonym (#m) and an
#: adjective pointer that must not count as parents.
SMALL_DATA_NOUN = """\
  1 This software and database is being provided to you, the LICENSEE, by
00001740 03 n 01 entity 0 001 ~ 00000010 n 0000 | that which is perceived
00000010 03 n 02 animal 0 animate_being 0 002 @ 00001740 n 0000 ~ 00000020 n 0000 | a being
00000020 05 n 01 camel 0 003 @ 00000010 n 0000 #m 00000099 n 0000 + 00000077 a 0101 | a camel
00000030 05 n 02 Arabian_camel 0 dromedary 0 001 @ 00000020 n 0000 | one hump
00000040 18 n 01 Bactrian 0 001 @i 00000030 n 0000 | an instance
00000050 05 n 01 pickup-truck 0 001 @ 00001740 n 0000 | a truck
"""


@pytest.fixture(scope="module")
def small():
    return parse_data_noun(SMALL_DATA_NOUN)


def test_parse_reads_lemmas_and_parent_pointers_only(small):
    assert small.lemmas["n00000030"] == ("arabian camel", "dromedary")
    assert small.parents["n00000020"] == ("n00000010",)  # #m and the adjective pointer ignored
    assert small.parents["n00000040"] == ("n00000030",)  # instance hypernym counts
    assert small.parents["n00001740"] == ()
    assert small.name("n00000050") == "pickup truck"


def test_ancestors_descendants_and_subtree(small):
    assert small.ancestors("n00000040") == {
        "n00000040",
        "n00000030",
        "n00000020",
        "n00000010",
        "n00001740",
    }
    assert small.is_descendant("n00000030", "n00000020")
    assert small.is_descendant("n00000020", "n00000020")
    assert not small.is_descendant("n00000020", "n00000030")
    assert not small.is_descendant("n00000050", "n00000010")
    assert small.subtree(["n00000030", "n00000050"]) == {
        "n00000030",
        "n00000020",
        "n00000010",
        "n00001740",
        "n00000050",
    }
    assert small.synsets("Pickup_Truck") == ("n00000050",)
    assert small.synsets("camel") == ("n00000020",)


def test_invalid_input_is_rejected(small):
    with pytest.raises(ValueError, match="look like"):
        small.name("02437136")
    with pytest.raises(ValueError, match="not a noun synset"):
        small.ancestors("n99999999")
    with pytest.raises(ValueError, match="line 1"):
        parse_data_noun("00000010 03 n zz camel 0 000 | bad count")
    with pytest.raises(ValueError, match="no synset"):
        parse_data_noun("  licence only\n")
    with pytest.raises(TypeError):
        parse_data_noun(b"00000010")
    with pytest.raises(FileNotFoundError, match=r"data\.noun"):
        load_wordnet("/nonexistent/data.noun")


def test_wnid_and_normalise_name():
    assert wnid("02437136") == "n02437136" and wnid(10) == "n00000010"
    assert normalise_name("Pickup_truck") == "pickup truck"
    assert normalise_name("  butcher's  shop ") == "butchers shop"
    assert normalise_name("T-shirt") == "t shirt"


def test_fetch_wordnet_reports_every_failed_source(monkeypatch, tmp_path):
    def fail(reporter):
        raise RuntimeError("offline")

    monkeypatch.setattr(fetch_module, "_WORDNET_SOURCES", [("a", fail), ("b", fail)])
    with pytest.raises(FetchError, match=r"\[1\] a: RuntimeError: offline; \[2\] b"):
        fetch_wordnet(data_dir=tmp_path, progress=False)


def test_fetch_wordnet_rejects_a_file_with_another_checksum(monkeypatch, tmp_path):
    def tampered(reporter):
        return {"data.noun": fetch_module._verify("wordnet", "data.noun", b"tampered")}

    monkeypatch.setattr(fetch_module, "_WORDNET_SOURCES", [("tampered", tampered)])
    with pytest.raises(FetchError, match="ChecksumError"):
        fetch_wordnet(data_dir=tmp_path, progress=False)
    assert not (tmp_path / "wordnet" / "data.noun").exists()


def test_real_wordnet_has_the_papers_example_ids(wordnet):
    assert wordnet.name("n02437136") == "camel"
    assert wordnet.name("n02330245") == "mouse"
    assert wordnet.is_descendant("n02437312", "n02437136")  # Arabian camel below camel
    assert len(wordnet.lemmas) == 82115  # WordNet 3.0 noun synsets
