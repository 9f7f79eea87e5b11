"""Greedy decoding of the shipped translator with and without the key/value cache, and with its attention.

    python -m bench.decoding [--sentences 20] [--words 20] [--repeats 3] [--threads 1]
    python -m bench.decoding --beam 4 [--src DE.gz --ref EN.gz] [--repeats 1]

Without the cache every step runs the whole decoder over the prefix (and projects the encoder
memory again in each layer); with it (``Translator.greedy``, through ``decode_step``) a step computes
only the new position. Both decode the same sentences of ``--words`` German words drawn from the
vocabulary, one sentence at a time as the app does, interleaved so that machine load hits them
alike; the outputs must agree token for token. Prints one JSON object: milliseconds per sentence
(median over sentences of the best of ``--repeats``) and the speed-up.

The app also needs every head's attention over the output. It used to get it from a second,
teacher-forced pass after greedy decoding; ``Translator.greedy(..., maps=...)`` keeps each step's
rows instead. Both are timed too, with the largest difference between their maps.

``--compile`` then wraps the cached decoding step in ``torch.compile(dynamic=True)`` and reports the
first call's time (the compilation) and greedy decoding with the compiled step.


``--beam N`` instead compares beam search of width N as it was (the whole prefix re-decoded at every
step, :func:`fixtures.decoding.beam_without_cache`) with ``Translator.beam`` (one cached step for all
hypotheses), on the German lines of ``--src`` (all of them) or on random sentences as above:
milliseconds per sentence, identical outputs, and with ``--ref`` the BLEU of both.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from bench._server import emit, log
from fixtures.decoding import beam_without_cache
from model.core.checkpoint import default_dir, load_checkpoint
from model.core.inference import max_output_len
from model.core.tokenize import tokenize, wrap
from model.nets.blocks import AttentionMaps
from model.nets.translator import Translator
from model.training.data import read_lines


@torch.no_grad()
def greedy_without_cache(model: Translator, src: torch.Tensor, max_len: int) -> torch.Tensor:
    """The decoding loop before the cache: the full decoder over the prefix at every step."""
    c = model.config
    memory, _ = model.encode(src)
    out = torch.full((1, 1), c.sos_id, dtype=torch.long)
    for _ in range(min(max_len, c.max_len) - 1):
        logits, _, _ = model.decode(out, memory, src, last_only=True)
        nxt = logits[:, -1].argmax(-1)
        out = torch.cat([out, nxt[:, None]], dim=1)
        if nxt.item() == c.eos_id:
            break
    return out


def greedy_with_maps(model: Translator, src: torch.Tensor, max_len: int) -> tuple[torch.Tensor, AttentionMaps]:
    maps = AttentionMaps()
    return model.greedy(src, max_len=max_len, maps=maps), maps


@torch.inference_mode()
def greedy_then_forced(model: Translator, src: torch.Tensor, max_len: int) -> tuple[torch.Tensor, AttentionMaps]:
    """The attention as translate() got it before: greedy, then a teacher-forced pass over the output."""
    out = model.greedy(src, max_len=max_len)
    _, maps = model(src, out[:, :-1], return_attention=True)
    return out, maps


def max_difference(a: AttentionMaps, b: AttentionMaps) -> float:
    return max(
        (x - y).abs().max().item()
        for kind in ("encoder", "decoder", "cross")
        for x, y in zip(getattr(a, kind), getattr(b, kind))
    )


def best_ms(fn, repeats: int) -> tuple[float, torch.Tensor]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return min(times), out


def compiled_greedy(model: Translator, sources: list, repeats: int) -> dict:
    """Greedy decoding with ``decode_step`` compiled (dynamic shapes: the cache grows every step)."""
    model.decode_step = torch.compile(model.decode_step, dynamic=True)
    try:
        t = time.perf_counter()
        model.greedy(sources[0][0], max_len=sources[0][1])
        first_s = time.perf_counter() - t
        times, same = [], 0
        for src, max_len, expected in sources:
            ms, out = best_ms(lambda s=src, n=max_len: model.greedy(s, max_len=n), repeats)
            times.append(ms)
            same += int(torch.equal(out, expected))
    finally:
        del model.decode_step  # back to the class's eager method
    return {
        "compile_first_call_s": round(first_s, 1),
        "ms_compiled_median": round(statistics.median(times), 1),
        "compiled_identical_outputs": f"{same}/{len(sources)}",
    }


def beam_comparison(ck, sources: list[list[int]], beam_size: int, repeats: int, references: list[str] | None) -> dict:
    """Beam search before (no cache) and after (cached), interleaved sentence by sentence."""
    model, tgt_vocab = ck.model, ck.vocabs["tgt"]
    old_ms, new_ms, old_words, new_words, differ = [], [], [], [], []
    for i, ids in enumerate(sources):
        src, n = torch.tensor([ids]), max_output_len(len(ids))
        t_old, a = best_ms(lambda s=src, m=n: beam_without_cache(model, s, beam_size, m), repeats)
        t_new, b = best_ms(lambda s=src, m=n: model.beam(s, beam_size=beam_size, max_len=m), repeats)
        old_ms.append(t_old)
        new_ms.append(t_new)
        old_words.append(tgt_vocab.decode(a[0].tolist()))
        new_words.append(tgt_vocab.decode(b[0].tolist()))
        if not torch.equal(a, b):
            differ.append(i)
        if (i + 1) % 100 == 0 or i + 1 == len(sources):
            log(f"{i + 1}/{len(sources)}: {sum(old_ms) / 1000:.1f} s without cache, {sum(new_ms) / 1000:.1f} s with")
    result = {
        "benchmark": "decoding --beam",
        "beam_size": beam_size,
        "sentences": len(sources),
        "repeats": repeats,
        "identical_outputs": f"{len(sources) - len(differ)}/{len(sources)}",
        "differing_sentences": differ[:20],
        "ms_without_cache_median": round(statistics.median(old_ms), 1),
        "ms_with_cache_median": round(statistics.median(new_ms), 1),
        "s_without_cache_total": round(sum(old_ms) / 1000, 1),
        "s_with_cache_total": round(sum(new_ms) / 1000, 1),
        "speedup_median": round(statistics.median(o / n for o, n in zip(old_ms, new_ms)), 2),
    }
    if references is not None:
        from model.training.evaluate import bleu_scores

        before, after = bleu_scores(old_words, references), bleu_scores(new_words, references)
        result |= {"bleu_without_cache": before, "bleu_with_cache": after}
    return result


def random_sources(vocab, sentences: int, words: int, *, sos: bool = True) -> list[list[int]]:
    """``sentences`` lists of ids: ``words`` German words drawn from the vocabulary, seeded per sentence, read
    as the translator reads its source (``sos``: its config's ``source_sos``)."""
    pool = [w for w in vocab.itos if w.isalpha()][:400]
    rngs = [random.Random(i) for i in range(sentences)]
    return [vocab.encode(wrap([rng.choice(pool) for _ in range(words)], sos=sos)) for rng in rngs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=20)
    ap.add_argument("--words", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint", default=None, help="default: the shipped translator")
    ap.add_argument("--compile", action="store_true", help="also time greedy with a torch.compile'd decoding step")
    ap.add_argument("--beam", type=int, default=0, help="compare beam search of this width with and without the cache")
    ap.add_argument("--src", default=None, help="--beam: German sentences, one a line (.gz read too)")
    ap.add_argument("--ref", default=None, help="--beam: English references of --src, for BLEU")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ck = load_checkpoint(args.checkpoint or default_dir("translator"), task="translator", device="cpu")
    model = ck.model.eval()
    vocab = ck.vocabs["src"]
    if args.beam:
        if args.src:
            room = model.config.max_len - 2  # as translate_batch cuts them
            sos = model.config.source_sos
            beam_sources = [vocab.encode(wrap(tokenize(s, "de")[:room], sos=sos)) for s in read_lines(args.src)]
        else:
            beam_sources = random_sources(vocab, args.sentences, args.words, sos=model.config.source_sos)
        refs = read_lines(args.ref) if args.ref else None
        emit(beam_comparison(ck, beam_sources, args.beam, args.repeats, refs) | {"threads": args.threads})
        return
    sources, cached, plain, lengths, same = [], [], [], [], 0
    two_pass, kept, differences = [], [], []
    for i, ids in enumerate(random_sources(vocab, args.sentences, args.words, sos=model.config.source_sos)):
        src = torch.tensor([ids])
        max_len = max_output_len(len(ids))
        t_plain, a = best_ms(lambda s=src, n=max_len: greedy_without_cache(model, s, n), args.repeats)
        t_cached, b = best_ms(lambda s=src, n=max_len: model.greedy(s, max_len=n), args.repeats)
        plain.append(t_plain)
        cached.append(t_cached)
        lengths.append(b.size(1))
        t_two, (c, forced) = best_ms(lambda s=src, n=max_len: greedy_then_forced(model, s, n), args.repeats)
        t_kept, (d, maps) = best_ms(lambda s=src, n=max_len: greedy_with_maps(model, s, n), args.repeats)
        two_pass.append(t_two)
        kept.append(t_kept)
        same += int(torch.equal(a, b) and torch.equal(c, b) and torch.equal(d, b))  # all four decodings agree
        sources.append((src, max_len, b))
        differences.append(max_difference(forced, maps))
        log(
            f"sentence {i + 1}: {b.size(1)} tokens, {t_plain:.1f} ms without cache, {t_cached:.1f} ms with; "
            f"with attention {t_two:.1f} ms (greedy + teacher-forced pass), {t_kept:.1f} ms (kept)"
        )
    compiled = compiled_greedy(model, sources, args.repeats) if args.compile else {}
    emit(
        {
            "benchmark": "decoding",
            "sentences": args.sentences,
            "source_words": args.words,
            "threads": args.threads,
            "output_tokens_median": statistics.median(lengths),
            "ms_without_cache_median": round(statistics.median(plain), 1),
            "ms_with_cache_median": round(statistics.median(cached), 1),
            "speedup_median": round(statistics.median(p / c for p, c in zip(plain, cached)), 2),
            "identical_outputs": f"{same}/{args.sentences}",
            "ms_greedy_then_teacher_forced_pass_median": round(statistics.median(two_pass), 1),
            "ms_greedy_keeping_attention_median": round(statistics.median(kept), 1),
            "attention_speedup_median": round(statistics.median(p / k for p, k in zip(two_pass, kept)), 2),
            "attention_max_abs_difference": float(f"{max(differences):.2g}"),
            **compiled,
        }
    )


if __name__ == "__main__":
    main()
