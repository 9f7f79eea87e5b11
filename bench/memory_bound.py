"""Is one greedy decoding step of the translator bound by memory? The products of one step, timed hot
and in a decoding step's order.

    python -m bench.memory_bound [--repeats 200] [--checkpoint checkpoints/translator]

A decoding step multiplies one position (a 1 × dim row) by every weight matrix of the decoder that
the step uses (per layer: the packed q/k/v of self-attention, its output, cross-attention's query and
output, the two feed-forward layers; keys and values of the encoder memory are cached) and by the
tied output layer, vocabulary × dim. Random weights of the checkpoint's shapes (its config.json),
one torch thread, as the app runs. Prints one JSON object, microseconds, median over ``--repeats``:

- ``hot_us``: each product repeated on its own, so its weight stays in the caches; their sum is what a
  step's products would cost if every weight were in cache.
- ``step_us``: the same products one after another, as a step runs them, so each weight has been
  pushed out by the others by the time it is used again; ``memory_factor`` = step / hot sum.
- ``output_layer_us``: the output layer alone, hot and inside the step order, and hot in float16 and
  bfloat16 (half the bytes; whether this CPU multiplies them faster).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from bench._server import emit, median_time
from model.training.checkpoint import default_dir


def step_weights(config: dict) -> dict[str, torch.Tensor]:
    """Random weights of the shapes one cached decoding step multiplies by, in the step's order."""
    d, ff, gen = config["dim"], config["ff_dim"], torch.Generator().manual_seed(0)
    shapes = {}
    for i in range(config["dec_layers"]):
        shapes |= {
            f"layer{i}.self_qkv": (3 * d, d), f"layer{i}.self_out": (d, d), f"layer{i}.cross_q": (d, d),
            f"layer{i}.cross_out": (d, d), f"layer{i}.ff1": (ff, d), f"layer{i}.ff2": (d, ff),
        }  # fmt: skip
    shapes["output"] = (config["tgt_vocab_size"], d)
    return {name: torch.randn(shape, generator=gen) / shape[1] ** 0.5 for name, shape in shapes.items()}


def median_us(fn, repeats: int) -> float:
    return median_time(fn, repeats, unit=1e6, warmup=max(3, repeats // 10), digits=1)


@torch.inference_mode()
def measure(config: dict, repeats: int) -> dict:
    weights = step_weights(config)
    rows = {w.shape[1]: torch.randn(1, w.shape[1]) for w in weights.values()}  # a 1 × in row per input width
    product = lambda w: F.linear(rows[w.shape[1]], w)
    hot = {name: median_us(lambda w=w: product(w), repeats) for name, w in weights.items()}
    out_w = weights["output"]
    in_step = []

    def step() -> None:
        for name, w in weights.items():
            if name == "output":
                t = time.perf_counter()
                product(w)
                in_step.append((time.perf_counter() - t) * 1e6)
            else:
                product(w)

    step_us = median_us(step, repeats)
    half = {}
    for dtype in (torch.float16, torch.bfloat16):
        w, x = out_w.to(dtype), rows[out_w.shape[1]].to(dtype)
        half[str(dtype).removeprefix("torch.")] = median_us(lambda w=w, x=x: F.linear(x, w), repeats)
    hot_sum = round(sum(hot.values()), 1)
    return {
        "working_set_mb": round(sum(w.numel() * w.element_size() for w in weights.values()) / 2**20, 1),
        "products_per_step": len(weights),
        "hot_us": hot,
        "hot_sum_us": hot_sum,
        "step_us": step_us,
        "memory_factor": round(step_us / hot_sum, 2),
        "output_layer_us": {
            "hot": hot["output"],
            "in_step": round(statistics.median(in_step[-repeats:]), 1),
            **{f"hot_{k}": v for k, v in half.items()},
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--checkpoint", default=str(default_dir("translator")), help="a translator checkpoint folder")
    args = ap.parse_args()
    torch.set_num_threads(1)
    config = json.loads((Path(args.checkpoint) / "config.json").read_text())["config"]
    emit({"benchmark": "memory_bound", "repeats": args.repeats, "threads": 1, "config": config} | measure(config, args.repeats))


if __name__ == "__main__":
    main()
