"""Training and attention throughput of our translator against ``torch.nn.Transformer``.

    python -m bench.throughput [--threads 1] [--steps 20]

1. Training: tokens per second of one step (forward, label-smoothed cross-entropy, backward, gradient
   clipping, AdamW step) of ``model.nets.translator.Translator`` and of the same model built on
   ``torch.nn.Transformer``: the same embeddings, positions and output layer around it, the same
   widths, GELU, ``norm_first``, final norms, tied weights, dropout, ``batch_first=True`` and the same
   masks (causal plus padding), on the same batches. The shapes are the shipped checkpoint's
   (``checkpoints/translator/config.json``; defaults when there is none); like model/training/recipes.py's
   buckets, a batch fills about ``--batch-tokens`` padded target positions with sentences of
   ``--tgt-len`` - 4 .. ``--tgt-len`` tokens; tokens/s counts the real (non-pad) target tokens. Warm-up steps and
   timed steps alternate between the two models; the median over the timed steps is reported.
2. Attention with every head's weights returned (what the app's views need): our
   ``MultiHeadAttention(need_weights=True)`` against ``torch.nn.MultiheadAttention(need_weights=True,
   average_attn_weights=False)``, same width and heads, eval mode, no grad, key padding mask;
   calls per second per ``--attn-shapes`` entry (batch x length).

Before timing, the torch model gets our weights and must give the same logits (and the attention
modules the same weights); the differences are reported. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, replace
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from bench._server import emit, log, percentile, read_checkpoint_meta
from model.nets.attention import MultiHeadAttention
from model.nets.translator import Translator, TranslatorConfig

# The shipped translator's shapes when no checkpoint exists yet (Multi30k vocabularies with min_freq 2).
DEFAULT_CONFIG = TranslatorConfig(
    src_vocab_size=7800, tgt_vocab_size=5900, dim=256, heads=8, enc_layers=3, dec_layers=3, ff_dim=512
)
DEFAULT_BATCH_TOKENS = 2500
DEFAULT_TRAINING = {"label_smoothing": 0.1, "grad_clip": 1.0, "weight_decay": 0.01, "lr": 5e-4}


class TorchTranslator(nn.Module):
    """Our translator's embeddings and output layer around ``torch.nn.Transformer``."""

    def __init__(self, config: TranslatorConfig) -> None:
        super().__init__()
        c = self.config = config
        if c.wide:
            raise ValueError("torch.nn.Transformer has no wide heads; compare a narrow-head config")
        self.src_emb = nn.Embedding(c.src_vocab_size, c.dim, padding_idx=c.pad_id)
        self.tgt_emb = nn.Embedding(c.tgt_vocab_size, c.dim, padding_idx=c.pad_id)
        self.src_pos = nn.Embedding(c.max_len, c.dim)
        self.tgt_pos = nn.Embedding(c.max_len, c.dim)
        self.drop = nn.Dropout(c.dropout)
        layer = dict(d_model=c.dim, nhead=c.heads, dim_feedforward=c.ff_dim, dropout=c.dropout, activation="gelu")
        layer.update(batch_first=True, norm_first=c.norm_first)
        final_norm = lambda: nn.LayerNorm(c.dim) if c.norm_first else None  # ours has final norms only pre-norm
        encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(**layer), c.enc_layers, norm=final_norm(), enable_nested_tensor=False
        )
        decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**layer), c.dec_layers, norm=final_norm())
        self.transformer = nn.Transformer(
            d_model=c.dim, nhead=c.heads, custom_encoder=encoder, custom_decoder=decoder, batch_first=True
        )
        self.out = nn.Linear(c.dim, c.tgt_vocab_size)
        if c.tie_embeddings:
            self.out.weight = self.tgt_emb.weight

    def embed(self, ids: Tensor, tok: nn.Embedding, pos: nn.Embedding) -> Tensor:
        positions = torch.arange(ids.size(1), device=ids.device)
        return self.drop(tok(ids) * self.config.dim**0.5 + pos(positions))

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        pad, T = self.config.pad_id, tgt.size(1)
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt.device).triu(1)  # True = may not attend
        x = self.transformer(
            self.embed(src, self.src_emb, self.src_pos),
            self.embed(tgt, self.tgt_emb, self.tgt_pos),
            tgt_mask=causal,
            src_key_padding_mask=src == pad,
            tgt_key_padding_mask=tgt == pad,
            memory_key_padding_mask=src == pad,
            tgt_is_causal=True,
        )
        return self.out(x)


def copy_attention(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.to_q.weight, ours.to_k.weight, ours.to_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.to_q.bias, ours.to_k.bias, ours.to_v.bias]))
        theirs.out_proj.weight.copy_(ours.unify.weight)
        theirs.out_proj.bias.copy_(ours.unify.bias)


def copy_weights(ours: Translator, theirs: TorchTranslator) -> None:
    """Give ``theirs`` the parameters of ``ours``, so both compute the same function."""
    copy = lambda dst, src: dst.load_state_dict(src.state_dict())
    for name in ("src_emb", "tgt_emb", "src_pos", "tgt_pos", "out"):
        copy(getattr(theirs, name), getattr(ours, name))
    enc, dec = theirs.transformer.encoder, theirs.transformer.decoder
    for mine, layer in zip(ours.encoder, enc.layers):
        copy_attention(mine.attn, layer.self_attn)
        copy(layer.linear1, mine.ff[0])
        copy(layer.linear2, mine.ff[3])
        copy(layer.norm1, mine.norm1)
        copy(layer.norm2, mine.norm2)
    for mine, layer in zip(ours.decoder, dec.layers):
        copy_attention(mine.self_attn, layer.self_attn)
        copy_attention(mine.cross_attn, layer.multihead_attn)
        copy(layer.linear1, mine.ff[0])
        copy(layer.linear2, mine.ff[3])
        for i in (1, 2, 3):
            copy(getattr(layer, f"norm{i}"), getattr(mine, f"norm{i}"))
    if ours.config.norm_first:
        copy(enc.norm, ours.enc_norm)
        copy(dec.norm, ours.dec_norm)


def make_batch(config: TranslatorConfig, batch_tokens: int, src_len: int, tgt_len: int, seed: int = 0):
    """Random sentence pairs, ``<sos> ... <eos>`` then padding, lengths within 4 of the given ones,
    ``batch_tokens // tgt_len`` of them (about ``batch_tokens`` padded target positions, as
    model/training/recipes.py counts a batch). Returns ``(src, tgt)``, ``(B, S)`` and ``(B, T)``."""
    g = torch.Generator().manual_seed(seed)
    n = max(1, batch_tokens // tgt_len)

    def side(length: int, vocab: int) -> Tensor:
        lengths = torch.randint(max(3, length - 4), length + 1, (n,), generator=g)
        ids = torch.randint(4, vocab, (n, length), generator=g)
        ids[:, 0] = config.sos_id
        for i, k in enumerate(lengths.tolist()):
            ids[i, k - 1] = config.eos_id
            ids[i, k:] = config.pad_id
        return ids

    return side(src_len, config.src_vocab_size), side(tgt_len, config.tgt_vocab_size)


def optimizer(model: nn.Module, training: dict[str, Any]) -> torch.optim.Optimizer:
    """AdamW as model/train.py sets it up: weight decay on matrices only."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": training["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=training["lr"], betas=(0.9, 0.98))


def logits_of(model: nn.Module, src: Tensor, tgt: Tensor) -> Tensor:
    out = model(src, tgt)
    return out[0] if isinstance(out, tuple) else out  # ours returns (logits, maps)


def train_step(model: nn.Module, opt: torch.optim.Optimizer, src: Tensor, tgt: Tensor, training: dict) -> int:
    """One training step as model/training/recipes.py and model/train.py take it; returns the target tokens."""
    logits = logits_of(model, src, tgt[:, :-1])
    target = tgt[:, 1:]
    loss = F.cross_entropy(
        logits.flatten(0, 1), target.flatten(), ignore_index=0, label_smoothing=training["label_smoothing"]
    )
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), training["grad_clip"])
    opt.step()
    return int((target != 0).sum())


def interleaved(fns: dict[str, Any], warmup: int, steps: int) -> dict[str, list[float]]:
    """Run each function ``warmup`` times, then ``steps`` timed times, alternating between them
    (and flipping the order every round, so neither always goes first). Returns seconds per call."""
    names = list(fns)
    for i in range(warmup):
        for name in names if i % 2 == 0 else names[::-1]:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(steps):
        for name in names if i % 2 == 0 else names[::-1]:
            t0 = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def build_pair(config: TranslatorConfig, seed: int = 0) -> tuple[Translator, TorchTranslator]:
    """Our translator and the torch one, same shapes and (copied) weights."""
    torch.manual_seed(seed)
    ours = Translator(config)
    theirs = TorchTranslator(config)
    copy_weights(ours, theirs)
    return ours, theirs


def check_same(ours: Translator, theirs: TorchTranslator, src: Tensor, tgt: Tensor) -> float:
    """Largest absolute difference of the two models' logits (eval mode, so without dropout)."""
    ours.eval(), theirs.eval()
    with torch.no_grad():
        diff = (logits_of(ours, src, tgt) - logits_of(theirs, src, tgt)).abs().max().item()
    ours.train(), theirs.train()
    return diff


def attention_pair(dim: int, heads: int, seed: int = 0) -> tuple[MultiHeadAttention, nn.MultiheadAttention]:
    torch.manual_seed(seed)
    ours = MultiHeadAttention(dim, heads).eval()
    theirs = nn.MultiheadAttention(dim, heads, batch_first=True).eval()
    copy_attention(ours, theirs)
    return ours, theirs


def attention_inputs(batch: int, length: int, dim: int, seed: int = 0) -> tuple[Tensor, Tensor]:
    """``x`` ``(B, T, dim)`` and a key padding mask ``(B, T)``, True = padding (torch's convention)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, length, dim, generator=g)
    lengths = torch.randint(max(1, length - 4), length + 1, (batch,), generator=g)
    lengths[0] = length
    pad = torch.arange(length)[None, :] >= lengths[:, None]
    return x, pad


def run_attention(ours, theirs, x: Tensor, pad: Tensor) -> tuple[Tensor, Tensor]:
    """Both modules' per-head weights ``(B, heads, T, T)`` on the same input."""
    with torch.no_grad():
        _, w_ours = ours(x, mask=~pad[:, None, None, :], need_weights=True)
        _, w_theirs = theirs(x, x, x, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
    return w_ours, w_theirs


def training_bench(config: TranslatorConfig, training: dict, args: argparse.Namespace) -> dict[str, Any]:
    ours, theirs = build_pair(config, args.seed)
    src, tgt = make_batch(config, args.batch_tokens, args.src_len, args.tgt_len, args.seed)
    check = make_batch(config, 8 * args.tgt_len, args.src_len, args.tgt_len, args.seed + 1)
    diff = check_same(ours, theirs, *check)
    opts = {"ours": optimizer(ours, training), "torch": optimizer(theirs, training)}
    models = {"ours": ours.train(), "torch": theirs.train()}
    tokens = int((tgt[:, 1:] != config.pad_id).sum())
    fns = {name: (lambda m=m, o=opts[name]: train_step(m, o, src, tgt, training)) for name, m in models.items()}
    log(
        f"training: {src.shape[0]} sentences, {tokens} target tokens per step; {args.warmup} warm-up + {args.steps} timed steps each"
    )
    times = interleaved(fns, args.warmup, args.steps)
    tps = {name: [tokens / t for t in ts] for name, ts in times.items()}
    med = {name: percentile(v, 50) for name, v in tps.items()}
    return {
        "batch": {"sentences": src.shape[0], "src_len": src.shape[1], "tgt_len": tgt.shape[1], "target_tokens": tokens},
        "params": {name: sum(p.numel() for p in m.parameters()) for name, m in models.items()},
        "logits_max_abs_diff_same_weights": diff,
        "tokens_per_s_median": {name: round(v, 1) for name, v in med.items()},
        "tokens_per_s_p5": {name: round(percentile(v, 5), 1) for name, v in tps.items()},
        "step_ms_median": {name: round(1000 * percentile(ts, 50), 2) for name, ts in times.items()},
        "ratio_ours_over_torch": round(med["ours"] / med["torch"], 3),
    }


def attention_bench(config: TranslatorConfig, shape: tuple[int, int], args: argparse.Namespace) -> dict[str, Any]:
    batch, length = shape
    ours, theirs = attention_pair(config.dim, config.heads, args.seed)
    x, pad = attention_inputs(batch, length, config.dim, args.seed)
    w_ours, w_theirs = run_attention(ours, theirs, x, pad)
    k, mask = args.attn_calls, ~pad[:, None, None, :]

    @torch.no_grad()
    def ours_block() -> None:
        for _ in range(k):
            ours(x, mask=mask, need_weights=True)

    @torch.no_grad()
    def torch_block() -> None:
        for _ in range(k):
            theirs(x, x, x, key_padding_mask=pad, need_weights=True, average_attn_weights=False)

    fns = {"ours": ours_block, "torch": torch_block}
    times = interleaved(fns, max(1, args.warmup), args.attn_samples)
    cps = {name: [k / t for t in ts] for name, ts in times.items()}
    med = {name: percentile(v, 50) for name, v in cps.items()}
    return {
        "batch": batch,
        "length": length,
        "weights_shape": list(w_ours.shape),
        "weights_max_abs_diff": (w_ours - w_theirs).abs().max().item(),
        "calls_per_s_median": {name: round(v, 1) for name, v in med.items()},
        "ratio_ours_over_torch": round(med["ours"] / med["torch"], 3),
    }


def shipped(args: argparse.Namespace) -> tuple[TranslatorConfig, dict[str, Any], str]:
    """The config and training settings to measure: the checkpoint's, else the defaults; flags override."""
    meta = read_checkpoint_meta("translator", args.checkpoints)
    if meta is not None:
        config, source = TranslatorConfig(**meta["config"]), "checkpoints/translator/config.json"
        training = {**DEFAULT_TRAINING, **{k: v for k, v in meta.get("training", {}).items() if k in DEFAULT_TRAINING}}
        batch_tokens = meta.get("training", {}).get("batch_size", DEFAULT_BATCH_TOKENS)
    else:
        config, source, training, batch_tokens = (
            DEFAULT_CONFIG,
            "defaults (no checkpoint)",
            dict(DEFAULT_TRAINING),
            DEFAULT_BATCH_TOKENS,
        )
    overrides = {
        "dim": args.dim,
        "heads": args.heads,
        "enc_layers": args.enc_layers,
        "dec_layers": args.dec_layers,
        "ff_dim": args.ff_dim,
        "src_vocab_size": args.src_vocab,
        "tgt_vocab_size": args.tgt_vocab,
    }
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if overrides:
        config, source = replace(config, **overrides), source + " with overrides " + str(overrides)
    if args.batch_tokens is None:
        args.batch_tokens = batch_tokens
    return config, training, source


def parse_shapes(text: str) -> list[tuple[int, int]]:
    """``"1x20,166x15"`` -> ``[(1, 20), (166, 15)]``."""
    shapes = []
    for part in text.split(","):
        b, _, t = part.strip().partition("x")
        if not (b.isdigit() and t.isdigit()):
            raise argparse.ArgumentTypeError(f"{part!r} is not BATCHxLENGTH, e.g. 1x20")
        shapes.append((int(b), int(t)))
    return shapes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--steps", type=int, default=20, help="timed training steps per model")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps per model first")
    ap.add_argument(
        "--batch-tokens",
        type=int,
        default=None,
        help="target tokens per batch (default: the checkpoint's batch_size, else 2500)",
    )
    ap.add_argument("--src-len", type=int, default=15)
    ap.add_argument("--tgt-len", type=int, default=15)
    ap.add_argument("--attn-shapes", type=parse_shapes, default=parse_shapes("1x20,166x15"), help="BATCHxLENGTH,...")
    ap.add_argument("--attn-samples", type=int, default=30, help="timed samples per attention module")
    ap.add_argument("--attn-calls", type=int, default=20, help="calls per attention sample")
    ap.add_argument("--checkpoints", default=None, help="checkpoint root (default: ./checkpoints)")
    ap.add_argument("--seed", type=int, default=0)
    for flag in ("dim", "heads", "enc-layers", "dec-layers", "ff-dim", "src-vocab", "tgt-vocab"):
        ap.add_argument(f"--{flag}", type=int, default=None, help="override the shipped shape")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    config, training, source = shipped(args)
    log(f"torch {torch.__version__}, {torch.get_num_threads()} threads; config from {source}")
    train = training_bench(config, training, args)
    log(f"training tokens/s: {train['tokens_per_s_median']}")
    attention = []
    for shape in args.attn_shapes:
        attention.append(attention_bench(config, shape, args))
        log(f"attention {shape}: calls/s {attention[-1]['calls_per_s_median']}")
    emit(
        {
            "benchmark": "throughput",
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "config_source": source,
            "config": asdict(config),
            "training_settings": training,
            "training": train,
            "attention_with_weights": attention,
        }
    )


if __name__ == "__main__":
    main()
