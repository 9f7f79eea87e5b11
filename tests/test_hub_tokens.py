"""Readable Hugging Face tokens (subword markers as bertviz shows them) and the view without special
tokens, each row renormalised."""

from __future__ import annotations

import numpy as np
import pytest

from fixtures.hub_tiny import bert_tokenizer, gpt2_tokenizer, sentencepiece_tokenizer
from model.core.results import RunResult, attention_kind, causal
from model.hub.tokens import hide_kind, hide_specials, prettify_token, prettify_tokens, token_scheme


@pytest.mark.parametrize(
    "token, scheme, shown",
    [
        ("Ġthe", "bytelevel", " the"),
        ("the", "bytelevel", "the"),
        ("Ċ", "bytelevel", "\\n"),
        ("Ġ", "bytelevel", "␣"),
        ("ĠĠĠ", "bytelevel", "␣␣␣"),
        ("Ã©", "bytelevel", "é"),
        ("âĢĻ", "bytelevel", "’"),
        ("▁Haus", "metaspace", " Haus"),
        ("haus", "metaspace", "haus"),
        ("▁", "metaspace", "␣"),
        ("##ing", "wordpiece", "ing"),
        ("play", "wordpiece", " play"),
        ("##", "wordpiece", " ##"),
        ("cat</w>", "endofword", "cat"),
        ("ca", "endofword", "ca"),
        ("a\tb", "plain", "a\\tb"),
    ],
)
def test_prettify_token(token, scheme, shown):
    assert prettify_token(token, scheme).rstrip() == shown.rstrip()


def test_prettify_keeps_special_tokens_and_never_leaves_a_blank():
    tokens = ["[CLS]", "the", "##re", "[SEP]"]
    assert prettify_tokens(tokens, "wordpiece", [True, False, False, True]) == ["[CLS]", " the", "re", "[SEP]"]
    assert all(t.strip() for t in prettify_tokens(["Ġ", "Ċ", "ĠĠ"], "bytelevel"))


@pytest.mark.parametrize(
    "make, scheme",
    [(gpt2_tokenizer, "bytelevel"), (bert_tokenizer, "wordpiece"), (sentencepiece_tokenizer, "metaspace")],
)
def test_token_scheme_is_read_from_the_vocabulary(make, scheme):
    assert token_scheme(list(make().get_vocab())) == scheme
    assert token_scheme(["a", "b", "[CLS]"]) == "plain"


def softmax_rows(shape, seed=0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=shape)
    e = np.exp(x)
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def test_hide_kind_drops_specials_and_renormalises_rows():
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    special = [True, False, False, False, True]
    w = softmax_rows((2, 3, 5, 5))
    kind = attention_kind("encoder", w, tokens, tokens, special=special)
    hidden, rows, cols = hide_kind(kind)
    assert rows == cols == [1, 2, 3]
    assert hidden.queries == hidden.keys == ["a", "b", "c"] and hidden.special == [False] * 3
    np.testing.assert_allclose(hidden.weights.sum(-1), 1.0, atol=1e-6)
    kept = w[:, :, 1:4, 1:4]
    np.testing.assert_allclose(hidden.weights, kept / kept.sum(-1, keepdims=True), atol=1e-6)
    assert kind.weights.shape == (2, 3, 5, 5)  # the original is untouched


def test_hide_kind_keeps_causal_zeros_and_rows_with_nothing_left():
    tokens = ["<s>", "a", "b"]
    w = softmax_rows((1, 1, 3, 3)) * causal(3)
    w /= w.sum(-1, keepdims=True)
    kind = attention_kind("decoder", w, tokens, tokens, mask=causal(3), special=[True, False, False])
    hidden, rows, _ = hide_kind(kind, query_special=[False, False, False])
    assert rows == [0, 1, 2]
    assert hidden.weights[0, 0, 0].tolist() == [0.0, 0.0]  # "<s>" could only see itself
    assert hidden.weights[0, 0, 1].tolist() == [1.0, 0.0] and hidden.mask.tolist() == [
        [False, False],
        [True, False],
        [True, True],
    ]
    with pytest.raises(ValueError, match="every token is a special token"):
        hide_kind(attention_kind("encoder", w, tokens, tokens, special=[True] * 3))


def test_hide_specials_uses_the_decoder_flags_for_cross_rows():
    src, out = ["a", "b", "</s>"], ["<pad>", "x", "y"]
    kinds = {
        "encoder": attention_kind("encoder", softmax_rows((1, 2, 3, 3)), src, src, special=[False, False, True]),
        "decoder": attention_kind("decoder", softmax_rows((1, 2, 3, 3)), out, out, special=[True, False, False]),
        "cross": attention_kind("cross", softmax_rows((1, 2, 3, 3)), out, src, special=[False, False, True]),
    }
    result, kept = hide_specials(RunResult(task="hub", kinds=kinds, prediction="x y"))
    assert kept == {"encoder": ([0, 1], [0, 1]), "decoder": ([1, 2], [1, 2]), "cross": ([1, 2], [0, 1])}
    assert result.kinds["cross"].queries == ["x", "y"] and result.kinds["cross"].keys == ["a", "b"]
    for kind in result.kinds.values():
        np.testing.assert_allclose(kind.weights.sum(-1), 1.0, atol=1e-6)
