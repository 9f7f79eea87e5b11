"""Resident memory of one app process with 3 learners on 2 Hugging Face models (issue 52, "Many learners,
one server").

    python -m bench.hub_users [--size small] [--budget-mb 600] [--threads 2]

No download: two models with random weights are saved as safetensors to a temporary folder (fixtures/hub_tiny.py's
small tokenizers): with ``--size small`` a GPT-2 and a BERT of 6 layers at width 512 (about 19 M parameters each),
with ``--size tiny`` the test fixtures' 2-layer ones (to test the script). A fresh Python process that has already
imported torch, transformers and Streamlit and shown the page once with no model (as the app has) then plays three sessions of the
"Any model" page through Streamlit's AppTest, each a session of its own in that one process: the first learner
opens the GPT-2, the second the BERT, the third the GPT-2 again, and the first reruns her page. After each step it
reports the process's resident memory (``VmRSS``), its peak (``VmHWM``), the models the cache keeps, who pins them
and their bytes. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._server import emit, log
from fixtures.server import ROOT

CHILD = r"""
import json, os, sys
import torch, transformers, streamlit  # the app has all three imported before anyone opens a model
torch.set_num_threads(int(sys.argv[3]))
from streamlit.testing.v1 import AppTest
from model.core.memory import give_back_memory
from model.hub.cache import memory_budget
from pages.shared import hub as page_hub

PAGE = os.path.join(os.getcwd(), "pages", "models", "any_model.py")
TEXT = "the cat sat on the mat and the dog sat on the log ."

def memory():
    give_back_memory()
    out = {}
    for line in open("/proc/self/status"):
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[{"VmRSS": "rss_mb", "VmHWM": "peak_rss_mb"}[name]] = round(int(value.split()[0]) / 1024, 1)
    return out

def cache():
    models = page_hub.models()
    names = {sys.argv[1]: "gpt2", sys.argv[2]: "bert"}
    return {
        "kept": [names[k[0]] for k in models.keys()],
        "in_use_by": {names[k[0]]: len(who) for k, who in models.pinned().items()},
        "kept_mb": round(models.used() / 2**20, 1),
    }

def session(folder):
    at = AppTest.from_file(PAGE, default_timeout=600)
    at.query_params["hub_id"], at.query_params["hub_text"] = folder, TEXT
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert at.get("bidi_component"), "the page showed no explorer"
    return at

empty = AppTest.from_file(PAGE, default_timeout=600).run()  # the page once with no model: all it imports
assert not empty.exception
steps = [{"step": "the page open, no model yet", **memory()}]
first = session(sys.argv[1])
steps.append({"step": "learner 1 opens the GPT-2", **memory(), **cache()})
second = session(sys.argv[2])
steps.append({"step": "learner 2 opens the BERT", **memory(), **cache()})
third = session(sys.argv[1])
steps.append({"step": "learner 3 opens the GPT-2 too", **memory(), **cache()})
first.run()
assert sys.argv[1] in " ".join(c.value for c in first.caption).replace("\\", "")
steps.append({"step": "learner 1 reruns her page: still her GPT-2", **memory(), **cache()})
print(json.dumps({"budget_mb": round(memory_budget() / 2**20), "steps": steps}))
"""


def build(root: Path, size: str) -> dict[str, Path]:
    """The two models, saved to ``root``; their parameter counts."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel

    from fixtures.hub_tiny import _save, bert_tokenizer, gpt2_tokenizer, save_bert, save_gpt2

    if size == "tiny":
        return {"gpt2": save_gpt2(root / "gpt2"), "bert": save_bert(root / "bert")}
    torch.manual_seed(0)
    tok = gpt2_tokenizer()
    gpt2 = GPT2Config(vocab_size=len(tok), n_positions=512, n_embd=512, n_layer=6, n_head=8)
    gpt2.bos_token_id = gpt2.eos_token_id = tok.eos_token_id
    btok = bert_tokenizer()
    bert = BertConfig(vocab_size=len(btok), hidden_size=512, num_hidden_layers=6, num_attention_heads=8,
                      intermediate_size=2048, max_position_embeddings=512, pad_token_id=btok.pad_token_id)  # fmt: skip
    return {
        "gpt2": _save(root / "gpt2", GPT2LMHeadModel(gpt2), tok),
        "bert": _save(root / "bert", BertForMaskedLM(bert), btok),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=["small", "tiny"], default="small", help="tiny: the test fixtures' models")
    ap.add_argument("--budget-mb", type=float, default=None, help="$ATTENTION_HUB_MEMORY_MB for the app process")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log(f"building two random models ({args.size}) ...")
        folders = build(Path(tmp), args.size)
        params = {}
        for name, folder in folders.items():
            config = json.loads((folder / "config.json").read_text())
            weights = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
            params[name] = {"model_type": config["model_type"], "weights_mb": round(weights / 2**20, 1)}
        env = {"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
        if args.budget_mb:
            env["ATTENTION_HUB_MEMORY_MB"] = str(args.budget_mb)
        log("three sessions on two models, in one fresh process ...")
        import os

        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(folders["gpt2"]), str(folders["bert"]), str(args.threads)],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode:
            sys.stderr.write(child.stderr[-4000:])
            raise SystemExit(f"the measuring process failed ({child.returncode})")
        measured = json.loads(child.stdout.strip().splitlines()[-1])
    steps = measured["steps"]
    emit(
        {
            "what": "one app process, the Any model page played by 3 sessions (AppTest) on 2 models: RSS after each",
            "size": args.size,
            "models": params,
            "budget_mb": measured["budget_mb"],
            "steps": steps,
            "rss_growth_mb": round(steps[-1]["rss_mb"] - steps[0]["rss_mb"], 1),
            "third_learner_added_mb": round(steps[3]["rss_mb"] - steps[2]["rss_mb"], 1),
        }
    )


if __name__ == "__main__":
    main()
