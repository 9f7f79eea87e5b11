"""The three models on tiny configs: attention-map properties, causality, head masks, decoding, overfitting."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from fixtures.decoding import beam_without_cache
from model.nets.blocks import AttentionMaps
from model.nets.classifier import Classifier, ClassifierConfig
from model.nets.generator import Generator, GeneratorConfig
from model.nets.translator import Translator, TranslatorConfig

ATOL = 1e-5
PAD, SOS, EOS = 0, 2, 3  # the word vocabularies' special ids (model.core.tokenize.WORD_SPECIALS)

CLS = ClassifierConfig(vocab_size=24, num_classes=2, dim=16, heads=2, layers=2, ff_dim=32, max_len=12, dropout=0.0)
GEN = GeneratorConfig(vocab_size=12, dim=16, heads=2, layers=2, ff_dim=32, block_size=16, dropout=0.0)
TR = TranslatorConfig(
    src_vocab_size=24,
    tgt_vocab_size=20,
    dim=16,
    heads=2,
    enc_layers=2,
    dec_layers=2,
    ff_dim=32,
    max_len=12,
    dropout=0.0,
)
VARIANTS = [{}, {"wide": True}]  # narrow and wide heads
TR_VARIANTS = [{}, {"wide": True}, {"norm_first": False, "tie_embeddings": False}]


def padded(rows: list[list[int]]) -> Tensor:
    """A ``(B, T)`` batch of id lists, padded at the end with PAD."""
    T = max(map(len, rows))
    return torch.tensor([r + [PAD] * (T - len(r)) for r in rows])


def random_rows(B: int, low: int, high: int, vocab: int, lengths: list[int] | None = None) -> list[list[int]]:
    """B rows of ids in [low, vocab), of the given lengths (default: decreasing from ``high``)."""
    lengths = lengths or [max(1, high - 2 * b) for b in range(B)]
    return [torch.randint(low, vocab, (n,)).tolist() for n in lengths]


def check_rows(weights: Tensor, live: Tensor | None = None) -> None:
    """Each query row sums to 1 (rows with no visible key, if ``live`` says so, sum to 0)."""
    expected = torch.ones(weights.shape[:-1]) if live is None else live.expand(weights.shape[:-1]).float()
    torch.testing.assert_close(weights.sum(-1), expected, atol=ATOL, rtol=0)
    assert (weights >= 0).all()


# ------------------------------------------------------------------------------------- classifier


@pytest.mark.parametrize("variant", VARIANTS)
def test_classifier_maps_ignore_padding_keys(variant: dict) -> None:
    model = Classifier(dataclasses.replace(CLS, **variant)).eval()
    ids = padded(random_rows(3, 4, 9, CLS.vocab_size))
    logits, maps = model(ids, return_attention=True)
    assert logits.shape == (3, CLS.num_classes)
    assert isinstance(maps, AttentionMaps) and len(maps.encoder) == CLS.layers and not maps.decoder and not maps.cross
    pad_keys = (ids == PAD)[:, None, None, :]
    for w in maps.encoder:
        assert w.shape == (3, CLS.heads, ids.size(1), ids.size(1))
        check_rows(w)
        assert (w.masked_select(pad_keys.expand_as(w)) == 0).all()


@pytest.mark.parametrize("variant", VARIANTS)
def test_classifier_padding_does_not_change_prediction(variant: dict) -> None:
    model = Classifier(dataclasses.replace(CLS, **variant)).eval()
    rows = random_rows(3, 4, 9, CLS.vocab_size)
    batch, _ = model(padded(rows))
    for b, row in enumerate(rows):
        alone, _ = model(torch.tensor([row]))
        torch.testing.assert_close(batch[b], alone[0], atol=ATOL, rtol=0)


def test_classifier_predict_restores_mode() -> None:
    model = Classifier(CLS).train()
    probs = model.predict(padded(random_rows(2, 4, 6, CLS.vocab_size)))
    assert model.training
    torch.testing.assert_close(probs.sum(-1), torch.ones(2), atol=ATOL, rtol=0)


# -------------------------------------------------------------------------------------- generator


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("T", [1, 5, GEN.block_size])
def test_generator_maps_are_causal(variant: dict, T: int) -> None:
    model = Generator(dataclasses.replace(GEN, **variant)).eval()
    ids = torch.randint(0, GEN.vocab_size, (2, T))
    logits, maps = model(ids, return_attention=True)
    assert logits.shape == (2, T, GEN.vocab_size) and len(maps.encoder) == GEN.layers
    for w in maps.encoder:
        assert w.shape == (2, GEN.heads, T, T)
        check_rows(w)
        assert (w.triu(1) == 0).all()  # exactly zero above the diagonal


@pytest.mark.parametrize("variant", VARIANTS)
def test_generator_position_ignores_later_tokens(variant: dict) -> None:
    model = Generator(dataclasses.replace(GEN, **variant)).eval()
    ids = torch.randint(0, GEN.vocab_size, (2, 10))
    changed = ids.clone()
    changed[:, 6:] = (changed[:, 6:] + 1) % GEN.vocab_size
    a, _ = model(ids)
    b, _ = model(changed)
    torch.testing.assert_close(a[:, :6], b[:, :6], atol=ATOL, rtol=0)
    assert not torch.allclose(a[:, 6:], b[:, 6:], atol=1e-4)


def test_generator_rejects_too_long_input() -> None:
    with pytest.raises(ValueError, match="context"):
        Generator(GEN)(torch.zeros(1, GEN.block_size + 1, dtype=torch.long))


def test_generator_sampling_is_seeded() -> None:
    model = Generator(GEN).train()
    prompt = torch.tensor([[1, 2, 3]])
    # an untrained model with tied embeddings mostly repeats its input; a high temperature flattens that
    a = model.generate(prompt, 20, temperature=20.0, seed=7)
    b = model.generate(prompt, 20, temperature=20.0, seed=7)
    c = model.generate(prompt, 20, temperature=20.0, seed=8)
    assert model.training  # mode restored
    assert a.shape == (1, 23) and torch.equal(a[:, :3], prompt)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_generator_temperature_zero_is_greedy() -> None:
    model = Generator(GEN).eval()
    ids = torch.tensor([[4, 1]])
    expected = ids
    for _ in range(GEN.block_size + 4):  # past the context length: the window slides
        logits, _ = model(expected[:, -GEN.block_size :])
        expected = torch.cat([expected, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(model.generate(ids, GEN.block_size + 4, temperature=0.0, seed=1), expected)
    assert torch.equal(model.generate(ids, GEN.block_size + 4, temperature=0.0, seed=2), expected)
    assert torch.equal(model.generate(ids, GEN.block_size + 4, top_k=1, seed=3), expected)


# ------------------------------------------------------------------------------------- translator


def translator_batch() -> tuple[Tensor, Tensor]:
    src = padded(random_rows(3, 4, 9, TR.src_vocab_size))
    tgt = padded([[SOS, *row, EOS] for row in random_rows(3, 4, 7, TR.tgt_vocab_size)])
    return src, tgt


@pytest.mark.parametrize("variant", TR_VARIANTS)
def test_translator_maps(variant: dict) -> None:
    model = Translator(dataclasses.replace(TR, **variant)).eval()
    src, tgt = translator_batch()
    (B, S), T = src.shape, tgt.size(1)
    logits, maps = model(src, tgt, return_attention=True)
    assert logits.shape == (B, T, TR.tgt_vocab_size)
    assert len(maps.encoder) == TR.enc_layers and len(maps.decoder) == len(maps.cross) == TR.dec_layers
    src_pad = (src == PAD)[:, None, None, :]
    for w in maps.encoder:
        assert w.shape == (B, TR.heads, S, S)
        check_rows(w)
        assert (w.masked_select(src_pad.expand_as(w)) == 0).all()
    for w in maps.cross:
        assert w.shape == (B, TR.heads, T, S)  # queries English, keys German
        check_rows(w)
        assert (w.masked_select(src_pad.expand_as(w)) == 0).all()
    tgt_pad = (tgt == PAD)[:, None, None, :]
    for w in maps.decoder:
        assert w.shape == (B, TR.heads, T, T)
        check_rows(w)
        assert (w.triu(1) == 0).all()
        assert (w.masked_select(tgt_pad.expand_as(w)) == 0).all()


@pytest.mark.parametrize("variant", TR_VARIANTS)
def test_translator_decoder_position_ignores_later_targets(variant: dict) -> None:
    model = Translator(dataclasses.replace(TR, **variant)).eval()
    src, tgt = translator_batch()
    tgt = tgt[:, :6]
    changed = tgt.clone()
    changed[:, 4:] = 5 + (changed[:, 4:] + 1) % 10  # different, non-special tokens
    a, _ = model(src, tgt)
    b, _ = model(src, changed)
    torch.testing.assert_close(a[:, :4], b[:, :4], atol=ATOL, rtol=0)
    assert not torch.allclose(a[:, 4:], b[:, 4:], atol=1e-4)


# ------------------------------------------------------------------------------------- head masks


def head_mask_cases() -> list[tuple[str, nn.Module, tuple, object, object]]:
    """(name, model, inputs, all-ones head mask, head mask with one head off) per model."""
    cls, gen, tr = Classifier(CLS).eval(), Generator(GEN).eval(), Translator(TR).eval()
    ids = padded(random_rows(2, 4, 7, CLS.vocab_size))
    src, tgt = translator_batch()
    off = lambda layers, heads: torch.ones(layers, heads).index_fill_(1, torch.tensor([1]), 0.0)
    tr_ones = {k: torch.ones(n, TR.heads) for k, n in (("encoder", 2), ("decoder", 2), ("cross", 2))}
    return [
        ("classifier", cls, (ids,), torch.ones(CLS.layers, CLS.heads), off(CLS.layers, CLS.heads)),
        ("generator", gen, (torch.randint(0, 12, (2, 7)),), torch.ones(GEN.layers, GEN.heads), off(2, GEN.heads)),
        *(
            (f"translator-{part}", tr, (src, tgt), tr_ones, {**tr_ones, part: off(2, TR.heads)})
            for part in ("encoder", "decoder", "cross")
        ),
    ]


@pytest.mark.parametrize("case", range(5), ids=["classifier", "generator", "tr-encoder", "tr-decoder", "tr-cross"])
@pytest.mark.parametrize("return_attention", [False, True])
def test_head_mask(case: int, return_attention: bool) -> None:
    _, model, inputs, ones, one_off = head_mask_cases()[case]
    with torch.no_grad():
        base, _ = model(*inputs, return_attention=return_attention)
        same, _ = model(*inputs, return_attention=return_attention, head_mask=ones)
        changed, _ = model(*inputs, return_attention=return_attention, head_mask=one_off)
    assert torch.equal(same, base)
    assert not torch.allclose(changed, base, atol=1e-4)


# ------------------------------------------------------------------------------------ overfitting


def overfit(model: nn.Module, loss_fn, steps: int = 100, lr: float = 1e-2) -> tuple[float, float]:
    """Adam on one fixed batch; returns the first and last loss."""
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    first = None
    for _ in range(steps):
        loss = loss_fn(model)
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
    with torch.no_grad():
        return first, loss_fn(model.eval()).item()


def classifier_loss(ids: Tensor, labels: Tensor):
    return lambda m: F.cross_entropy(m(ids)[0], labels)


def generator_loss(ids: Tensor):
    return lambda m: F.cross_entropy(m(ids[:, :-1])[0].flatten(0, 1), ids[:, 1:].flatten())


def translator_loss(src: Tensor, tgt: Tensor):
    def loss(m: Translator) -> Tensor:
        logits, _ = m(src, tgt[:, :-1])
        return F.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten(), ignore_index=PAD)

    return loss


@pytest.mark.parametrize("variant", VARIANTS)
def test_classifier_overfits(variant: dict) -> None:
    ids = padded(random_rows(8, 4, 10, CLS.vocab_size, lengths=[10, 9, 8, 7, 6, 5, 4, 3]))
    labels = torch.tensor([0, 1, 1, 0, 1, 0, 0, 1])
    first, last = overfit(Classifier(dataclasses.replace(CLS, **variant)), classifier_loss(ids, labels))
    assert last < 0.2 * first, (first, last)


@pytest.mark.parametrize("variant", VARIANTS)
def test_generator_overfits(variant: dict) -> None:
    ids = torch.randint(0, GEN.vocab_size, (4, GEN.block_size + 1))
    first, last = overfit(Generator(dataclasses.replace(GEN, **variant)), generator_loss(ids))
    assert last < 0.2 * first, (first, last)


@pytest.mark.parametrize("variant", TR_VARIANTS)
def test_translator_overfits(variant: dict) -> None:
    src, tgt = translator_batch()
    first, last = overfit(Translator(dataclasses.replace(TR, **variant)), translator_loss(src, tgt))
    assert last < 0.2 * first, (first, last)


# ------------------------------------------------------------------------ decoding (trained model)


@pytest.fixture(scope="module")
def trained_translator() -> tuple[Translator, list[Tensor]]:
    """A tiny translator that has memorised four pairs (target = source ids shifted and reversed)."""
    torch.manual_seed(1)
    rows = random_rows(4, 4, 8, TR.src_vocab_size, lengths=[6, 5, 4, 3])
    src = padded(rows)
    tgt = padded([[SOS, *[4 + (i % 15) for i in reversed(r)], EOS] for r in rows])
    model = Translator(TR)
    overfit(model, translator_loss(src, tgt), steps=200)
    return model.eval(), [torch.tensor([r]) for r in rows]


def test_greedy_is_deterministic_and_translates(trained_translator) -> None:
    model, sources = trained_translator
    for src in sources:
        out = model.greedy(src)
        assert torch.equal(out, model.greedy(src))
        expected = [SOS, *[4 + (i % 15) for i in reversed(src[0].tolist())], EOS]
        assert out[0].tolist() == expected


def test_greedy_batch_pads_after_eos(trained_translator) -> None:
    model, sources = trained_translator
    batch = padded([s[0].tolist() for s in sources])
    out = model.greedy(batch)
    for b, src in enumerate(sources):
        alone = model.greedy(src)[0]
        assert torch.equal(out[b, : alone.numel()], alone)
        assert (out[b, alone.numel() :] == PAD).all()


def test_decoding_restores_mode(trained_translator) -> None:
    model, sources = trained_translator
    model.train()
    try:
        model.greedy(sources[0])
        assert model.training
        model.beam(sources[0], beam_size=2)
        assert model.training
    finally:
        model.eval()


def test_beam_of_one_equals_greedy(trained_translator) -> None:
    model, sources = trained_translator
    for src in sources:
        assert torch.equal(model.beam(src, beam_size=1), model.greedy(src))


def test_beam_finds_the_memorised_translation(trained_translator) -> None:
    model, sources = trained_translator
    for src in sources:
        out = model.beam(src, beam_size=3)
        assert out[0, 0] == SOS and out[0, -1] == EOS
        assert torch.equal(out, model.greedy(src))


@pytest.mark.parametrize("variant", TR_VARIANTS)
@pytest.mark.parametrize("beam_size", [1, 2, 4, 6])
@pytest.mark.parametrize("masked", [False, True])
def test_cached_beam_equals_the_beam_without_cache(variant: dict, beam_size: int, masked: bool) -> None:
    """Beam search through the key/value cache (hypotheses re-ranked with index_select) returns the
    same ids as the old algorithm that re-decodes every prefix, sentence by sentence, with heads off."""
    torch.manual_seed(0)
    model = Translator(dataclasses.replace(TR, **variant)).eval()
    off = torch.ones(2, TR.heads).index_fill_(1, torch.tensor([0]), 0.0)
    head_mask = {"encoder": off, "decoder": off.flip(1), "cross": off.flip(0)} if masked else None
    for n in (1, 3, 6, 10, 14):  # 14 is cut to max_len
        src = torch.randint(4, TR.src_vocab_size, (1, n))
        for max_len in (None, 5):
            cached = model.beam(src, beam_size=beam_size, max_len=max_len, head_mask=head_mask)
            reference = beam_without_cache(model, src, beam_size, max_len, head_mask=head_mask)
            assert torch.equal(cached, reference), (n, max_len)


def test_cached_beam_equals_the_beam_without_cache_on_a_tiny_checkpoint(checkpoints) -> None:
    """The same on fixtures/tiny.py's translator (real vocabularies, sentences of the pages' examples)."""
    from fixtures.tiny import GERMAN
    from model.core.checkpoint import load_checkpoint
    from model.core.inference import max_output_len, source_ids

    ck = load_checkpoint(checkpoints / "translator", task="translator", device="cpu")
    for line in GERMAN.strip().splitlines():
        _, ids, _, _ = source_ids(ck, line)
        src = torch.tensor([ids])
        for beam_size in (2, 3, 5):
            expected = beam_without_cache(ck.model, src, beam_size, max_output_len(len(ids)))
            assert torch.equal(ck.model.beam(src, beam_size=beam_size, max_len=max_output_len(len(ids))), expected)


def test_beam_takes_one_sentence(trained_translator) -> None:
    model, _ = trained_translator
    with pytest.raises(ValueError, match="one sentence"):
        model.beam(torch.ones(2, 3, dtype=torch.long))


def test_teacher_forced_attention_equals_step_by_step(trained_translator) -> None:
    """Each output token's attention at its own decoding step equals one teacher-forced pass."""
    model, sources = trained_translator
    src = sources[0]
    out = model.greedy(src)
    with torch.no_grad():
        logits, maps = model(src, out, return_attention=True)
        memory, _ = model.encode(src)
        for i in range(out.size(1)):
            step_logits, dec, cross = model.decode(out[:, : i + 1], memory, src, return_attention=True)
            if i + 1 < out.size(1):
                assert step_logits[0, -1].argmax() == out[0, i + 1]  # this step chose the next token
            torch.testing.assert_close(step_logits[:, -1], logits[:, i], atol=ATOL, rtol=0)
            for layer in range(TR.dec_layers):
                torch.testing.assert_close(
                    dec[layer][:, :, -1], maps.decoder[layer][:, :, i, : i + 1], atol=ATOL, rtol=0
                )
                torch.testing.assert_close(cross[layer][:, :, -1], maps.cross[layer][:, :, i], atol=ATOL, rtol=0)


@pytest.mark.parametrize("variant", TR_VARIANTS)
@pytest.mark.parametrize("masked", [False, True])
def test_cached_decode_step_equals_the_full_decoder(variant: dict, masked: bool) -> None:
    """decode_step with its key/value cache gives the last position's logits of a full decode, step
    after step, for every row of a batch with sources of different lengths, with and without heads off."""
    torch.manual_seed(0)
    model = Translator(dataclasses.replace(TR, **variant)).eval()
    src, tgt = translator_batch()
    tgt = torch.randint(4, TR.tgt_vocab_size, (src.size(0), 8))  # no padding in the target
    off = torch.ones(2, TR.heads).index_fill_(1, torch.tensor([0]), 0.0)
    head_mask = {"decoder": off, "cross": off.flip(1)} if masked else None
    hm = head_mask or {}
    with torch.no_grad():
        memory, _ = model.encode(src)
        cache = model.new_cache()
        for t in range(1, tgt.size(1) + 1):
            step = model.decode_step(tgt[:, :t], memory, src, cache, head_mask=head_mask)
            full, _, _ = model.decode(
                tgt[:, :t], memory, src, self_head_mask=hm.get("decoder"), cross_head_mask=hm.get("cross")
            )
            torch.testing.assert_close(step, full[:, -1], atol=ATOL, rtol=0)


def test_greedy_follows_its_own_teacher_forced_argmax(trained_translator) -> None:
    """Each token greedy (cached) chose is the argmax of a teacher-forced pass over its prefix."""
    model, sources = trained_translator
    for src in sources:
        out = model.greedy(src)
        with torch.no_grad():
            logits, _ = model(src, out[:, :-1])
        assert torch.equal(logits.argmax(-1), out[:, 1:])


@pytest.mark.parametrize("variant", TR_VARIANTS)
@pytest.mark.parametrize("masked", [False, True])
def test_greedy_keeps_the_teacher_forced_maps(variant: dict, masked: bool) -> None:
    """The maps kept from the decoding steps equal one teacher-forced pass over the output, layer by layer
    (encoder, decoder self- with its causal zeros, cross), and the ids equal plain greedy's."""
    torch.manual_seed(0)
    model = Translator(dataclasses.replace(TR, **variant)).eval()
    off = torch.ones(2, TR.heads).index_fill_(1, torch.tensor([1]), 0.0)
    head_mask = {"encoder": off.flip(1), "decoder": off, "cross": off.flip(0)} if masked else None
    src = torch.randint(4, TR.src_vocab_size, (1, 7))
    maps = AttentionMaps()
    out = model.greedy(src, max_len=9, head_mask=head_mask, maps=maps)
    assert torch.equal(out, model.greedy(src, max_len=9, head_mask=head_mask))
    with torch.no_grad():
        _, forced = model(src, out[:, :-1], return_attention=True, head_mask=head_mask)
    T = out.size(1) - 1
    for kind in ("encoder", "decoder", "cross"):
        kept, want = getattr(maps, kind), getattr(forced, kind)
        assert len(kept) == len(want) == 2
        for k, w in zip(kept, want):
            assert k.shape == w.shape and (kind == "encoder" or k.size(2) == T)
            torch.testing.assert_close(k, w, atol=ATOL, rtol=0)
