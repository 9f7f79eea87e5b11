"""Tokenisers and vocabularies: spaCy blank German/English, characters, never a KeyError."""

from __future__ import annotations

import pytest

from model.core.tokenize import (
    CHAR_SPECIALS,
    EOS,
    PAD,
    SOS,
    UNK,
    WORD_SPECIALS,
    Vocab,
    char_vocab,
    decode_chars,
    encode_chars,
    tokenize,
)


@pytest.mark.parametrize(
    "text,lang,expected",
    [
        ("Ein Mann läuft über die Straße.", "de", ["ein", "mann", "läuft", "über", "die", "straße", "."]),
        ("Zwei JUNGE Männer, draußen!", "de", ["zwei", "junge", "männer", ",", "draußen", "!"]),
        (
            "Two  young, White males are outside!\n",
            "en",
            ["two", "young", ",", "white", "males", "are", "outside", "!"],
        ),
        ("Don't stop", "en", ["do", "n't", "stop"]),  # spaCy's English exceptions, not a plain split
        ("", "en", []),
        ("   \n\t", "de", []),
    ],
)
def test_tokenize_lowercases_and_drops_whitespace(text: str, lang: str, expected: list[str]) -> None:
    assert tokenize(text, lang) == expected


def test_specials_have_fixed_ids() -> None:
    vocab = Vocab.build([["a"]])
    assert [vocab.id(s) for s in (PAD, UNK, SOS, EOS)] == [0, 1, 2, 3]
    assert vocab.itos[: len(WORD_SPECIALS)] == list(WORD_SPECIALS)


def test_build_orders_by_frequency_and_applies_min_freq() -> None:
    sequences = [["the", "cat", "sat"], ["the", "dog", "sat"], ["the", "cat", "ran"]]
    vocab = Vocab.build(sequences, min_freq=2)
    # "the" x3, then "cat"/"sat" x2 (ties alphabetical); "dog" and "ran" appear once
    assert vocab.itos == [*WORD_SPECIALS, "the", "cat", "sat"]
    assert "dog" not in vocab and "cat" in vocab
    assert len(vocab) == 7
    assert Vocab.build(sequences).itos[len(WORD_SPECIALS) :] == ["the", "cat", "sat", "dog", "ran"]
    assert Vocab.build(sequences, max_size=6).itos == [*WORD_SPECIALS, "the", "cat"]


def test_build_does_not_duplicate_specials_seen_in_text() -> None:
    vocab = Vocab.build([["<unk>", "a", "<eos>"]])
    assert vocab.itos == [*WORD_SPECIALS, "a"]


def test_unknown_tokens_map_to_unk_never_keyerror() -> None:
    vocab = Vocab.build([["ein", "mann"]])
    assert vocab.encode(["ein", "frau", "mann", "?"]) == [vocab.id("ein"), 1, vocab.id("mann"), 1]
    assert vocab.id("never seen") == vocab.id(UNK)
    assert vocab.unknown(["ein", "frau", "?"]) == ["frau", "?"]


def test_encode_adds_sos_and_eos() -> None:
    vocab = Vocab.build([["a", "b"]])
    assert vocab.encode(["b", "a"], add_sos_eos=True) == [2, vocab.id("b"), vocab.id("a"), 3]


def test_vocab_without_unk_says_what_is_wrong() -> None:
    vocab = Vocab(["a", "b"])
    with pytest.raises(ValueError, match="not in the vocabulary"):
        vocab.id("c")


def test_duplicate_entries_are_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        Vocab(["a", "b", "a"])


def test_decode_strips_specials_and_stops_at_eos() -> None:
    vocab = Vocab.build([["a", "man", "runs"]])
    ids = [vocab.id(t) for t in (SOS, "a", PAD, "man", "runs", EOS, "a", "a")]
    assert vocab.decode(ids) == ["a", "man", "runs"]
    assert vocab.decode(ids, strip_specials=False) == [SOS, "a", PAD, "man", "runs", EOS, "a", "a"]
    assert vocab.decode([vocab.id("a"), 999, -1]) == ["a", UNK, UNK]  # out of range never raises


def test_round_trip_through_json_list() -> None:
    vocab = Vocab.build([tokenize("Ein Hund rennt durch den Schnee.", "de")])
    again = Vocab(vocab.to_list())
    assert again.itos == vocab.itos and again.stoi == vocab.stoi


def test_char_vocab() -> None:
    text = "To be, or not to be"
    vocab = char_vocab(text)
    assert vocab.itos[0] == UNK and vocab.itos[: len(CHAR_SPECIALS)] == list(CHAR_SPECIALS)
    assert vocab.itos[1:] == sorted(set(text))
    ids = encode_chars(vocab, "be or not")
    assert decode_chars(vocab, ids) == "be or not"
    # unseen characters become <unk> and come back as the replacement character
    assert encode_chars(vocab, "bez") == [vocab.id("b"), vocab.id("e"), vocab.unk_id]
    assert decode_chars(vocab, encode_chars(vocab, "bez")) == "be\ufffd"
