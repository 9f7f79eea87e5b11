"""``python -m model attribute SOURCE TEXT --query N``: contributions beside attention for one query token."""

from __future__ import annotations

import argparse
import json
import sys


def add(sub, tasks: list[str]) -> None:
    at = sub.add_parser("attribute", help="contributions beside attention for one query token; print JSON")
    at.add_argument("source", help="classifier, generator, translator, a Hub id or a local folder")
    at.add_argument("text", help="the input text")
    at.add_argument("--query", type=int, required=True, help="the query position (0-based)")
    at.add_argument("--kind", default=None, help="encoder, decoder or cross (default: the model's first kind)")
    at.add_argument("--max-tokens", type=int, default=128, help="Hub models: read at most this many tokens")
    at.add_argument("--max-params", type=int, default=None, help="Hub models: parameter cap (default 150M)")
    at.add_argument("--json", action="store_true", help="print the JSON object instead of a summary")
    at.add_argument("--device", default="auto", help="auto (CUDA, then MPS, then CPU), cpu, cuda, mps")
    at.set_defaults(func=run)


def run(args: argparse.Namespace) -> None:
    """Every contribution method for one query row (model.analysis.attribute); JSON, or a short summary."""
    from model.core.checkpoint import CheckpointError, default_dir, load_checkpoint
    from model.core.devices import choose
    from model.core.specs import SPECS
    from model.hub import HubError

    try:
        device = choose(args.device)
        if args.source in SPECS:
            from model.analysis.attribute import attribute
            from model.analysis.runs import run

            ck = load_checkpoint(default_dir(args.source), task=args.source, device=device)
            result = run(ck, args.text)
            kind = args.kind or ck.spec.kind_names[0]
            ck.spec.kind(kind)  # a kind the model lacks: the message lists its kinds
            a = attribute(ck, result.inputs, kind, args.query, view=result.kinds[kind])
        else:
            from model.hub.attribute import attribute
            from model.hub.load import load
            from model.hub.run import run

            hub = load(args.source, device=device, limit=args.max_params)
            result = run(hub, args.text, max_tokens=args.max_tokens).result
            a = attribute(hub, result, args.kind or next(iter(result.kinds)), args.query)
    except (CheckpointError, HubError, ValueError) as err:
        sys.exit(f"error: {err}")
    if args.json:
        print(json.dumps(a.to_json(), ensure_ascii=False))
        return
    print(f"{a.kind} attention, query {a.query} ({a.query_token!r}) of {a.model}")
    for name, rho in a.agreement.items():
        print(f"  {name:15s} Spearman ρ with attention {rho:+.2f}")
    for name, why in a.absent.items():
        print(f"  {name:15s} absent: {why}")
    print(a.disagreement)
