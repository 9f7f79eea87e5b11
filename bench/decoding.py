"""Greedy decoding of the shipped translator with and without the key/value cache, and with its attention.

    python -m bench.decoding [--sentences 20] [--words 20] [--repeats 3] [--threads 1]

Without the cache every step runs the whole decoder over the prefix (and projects the encoder
memory again in each layer); with it (``Translator.greedy``, through ``decode_step``) a step computes
only the new position. Both decode the same sentences of ``--words`` German words drawn from the
vocabulary, one sentence at a time as the app does, interleaved so that machine load hits them
alike; the outputs must agree token for token. Prints one JSON object: milliseconds per sentence
(median over sentences of the best of ``--repeats``) and the speed-up.

The app also needs every head's attention over the output. It used to get it from a second,
teacher-forced pass after greedy decoding; ``Translator.greedy_with_attention`` keeps each step's
rows instead. Both are timed too, with the largest difference between their maps.

``--compile`` then wraps the cached decoding step in ``torch.compile(dynamic=True)`` and reports the
first call's time (the compilation) and greedy decoding with the compiled step.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import torch

from bench._server import emit, log
from model.analysis.inference import max_output_len
from model.nets.blocks import AttentionMaps
from model.nets.translator import Translator
from model.training.checkpoint import default_dir, load_checkpoint


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


@torch.inference_mode()
def greedy_then_forced(model: Translator, src: torch.Tensor, max_len: int) -> tuple[torch.Tensor, AttentionMaps]:
    """The attention as translate() got it before: greedy, then a teacher-forced pass over the output."""
    out = model.greedy(src, max_len=max_len)
    _, maps = model(src, out[:, :-1], return_attention=True)
    return out, maps


def max_difference(a: AttentionMaps, b: AttentionMaps) -> float:
    return max((x - y).abs().max().item() for kind in ("encoder", "decoder", "cross") for x, y in zip(getattr(a, kind), getattr(b, kind)))


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sentences", type=int, default=20)
    ap.add_argument("--words", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint", default=None, help="default: the shipped translator")
    ap.add_argument("--compile", action="store_true", help="also time greedy with a torch.compile'd decoding step")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ck = load_checkpoint(args.checkpoint or default_dir("translator"), task="translator", device="cpu")
    model = ck.model.eval()
    vocab = ck.vocabs["src"]
    words = [w for w in vocab.itos if w.isalpha()][:400]
    sources, cached, plain, lengths, same = [], [], [], [], 0
    two_pass, kept, differences = [], [], []
    for i in range(args.sentences):
        rng = random.Random(i)
        ids = vocab.encode([rng.choice(words) for _ in range(args.words)], add_sos_eos=True)
        src = torch.tensor([ids])
        max_len = max_output_len(len(ids))
        t_plain, a = best_ms(lambda s=src, n=max_len: greedy_without_cache(model, s, n), args.repeats)
        t_cached, b = best_ms(lambda s=src, n=max_len: model.greedy(s, max_len=n), args.repeats)
        plain.append(t_plain)
        cached.append(t_cached)
        lengths.append(b.size(1))
        t_two, (c, forced) = best_ms(lambda s=src, n=max_len: greedy_then_forced(model, s, n), args.repeats)
        t_kept, (d, maps) = best_ms(lambda s=src, n=max_len: model.greedy_with_attention(s, max_len=n), args.repeats)
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
    emit({
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
    })  # fmt: skip


if __name__ == "__main__":
    main()
