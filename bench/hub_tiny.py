"""Tiny random Hugging Face models saved as Hub-style folders, for tests that must not touch the network.

Each ``save_*`` builds a 2-layer, 2-head, 16-dimension model from its ``transformers`` config, a
tokenizer trained on a few sentences with the ``tokenizers`` library (wrapped in
``PreTrainedTokenizerFast``) whose subword markers match the real family (``Ġ`` for GPT-2,
``##`` for BERT, ``▁`` for Marian/BART-style sentencepiece), and writes both to ``folder`` with
``save_pretrained`` (safetensors), so :func:`model.hub.load` opens them by path like a download.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
    BertForMaskedLM,
    DistilBertConfig,
    DistilBertForSequenceClassification,
    GPT2Config,
    GPT2LMHeadModel,
    MarianConfig,
    MarianMTModel,
    PreTrainedTokenizerFast,
    T5Config,
    T5ForConditionalGeneration,
)

ENGLISH = [
    "the cat sat on the mat .",
    "a man rides a bike in the park .",
    "two dogs play in the snow .",
    "life is short , eat dessert first .",
    "the movie was wonderful and moving .",
    "the story is boring and far too long .",
]
GERMAN = [
    "ein mann fährt fahrrad im park .",
    "zwei hunde spielen im schnee .",
    "die katze sitzt auf der matte .",
    "das leben ist kurz .",
]
SIZE = dict(layers=2, heads=2, dim=16, ff=32, positions=64)
INIT = 0.3  # weights this large make peaked, distinct attention rows (0.02 gives near-uniform ones)


def _trained(tok: Tokenizer, trainer, lines: list[str]) -> Tokenizer:
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


def gpt2_tokenizer() -> PreTrainedTokenizerFast:
    """Byte-level BPE (``Ġ`` marks a leading space) with ``<|endoftext|>`` as bos/eos/pad."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=360, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok = _trained(tok, trainer, ENGLISH)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   unk_token="<|endoftext|>", model_max_length=SIZE["positions"])


def bert_tokenizer() -> PreTrainedTokenizerFast:
    """WordPiece (``##`` marks a continuation) with ``[CLS] … [SEP]`` around each input."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    tok = _trained(tok, trainers.WordPieceTrainer(vocab_size=100, special_tokens=specials), ENGLISH)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=SIZE["positions"])


def sentencepiece_tokenizer(eos: str = "</s>", bos: str | None = None) -> PreTrainedTokenizerFast:
    """BPE over a ``▁``-marked (Metaspace) split, like Marian's and T5's sentencepiece models, ending
    each input with ``eos`` (and starting it with ``bos`` where given, as BART does)."""
    specials = ["<pad>", "<unk>", "</s>", "<s>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok = _trained(tok, trainers.BpeTrainer(vocab_size=260, special_tokens=specials), ENGLISH + GERMAN)
    single = f"{bos} $A {eos}" if bos else f"$A {eos}"
    pairs = [(eos, tok.token_to_id(eos))] + ([(bos, tok.token_to_id(bos))] if bos else [])
    tok.post_processor = processors.TemplateProcessing(single=single, special_tokens=pairs)
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token=eos,
                                   bos_token=bos, model_max_length=SIZE["positions"])


def marian_tokenizer(folder: Path):
    """Marian's own tokenizer (sentencepiece ``source.spm``/``target.spm`` and ``vocab.json``, as the
    opus-mt models ship it), from a unigram model trained on the sentences; written into ``folder``."""
    import io

    import sentencepiece as spm
    from transformers import MarianTokenizer

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter((ENGLISH + GERMAN) * 5), model_writer=proto,
                                   vocab_size=80, model_type="unigram", eos_id=0, unk_id=1, pad_id=-1, bos_id=-1,
                                   hard_vocab_limit=False, minloglevel=2)
    for name in ("source.spm", "target.spm"):
        (folder / name).write_bytes(proto.getvalue())
    sp = spm.SentencePieceProcessor(model_proto=proto.getvalue())
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    vocab["<pad>"] = len(vocab)  # opus-mt's pad (and decoder start) is the last id
    (folder / "vocab.json").write_text(json.dumps(vocab))
    return MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"),
                           model_max_length=SIZE["positions"])


def _save(folder: Path, model: torch.nn.Module, tokenizer: PreTrainedTokenizerFast) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def save_gpt2(folder: Path, seed: int = 0, **overrides) -> Path:
    """A GPT-2 language model (decoder-only, causal)."""
    tok = gpt2_tokenizer()
    eos = tok.eos_token_id
    cfg = GPT2Config(vocab_size=len(tok), n_positions=SIZE["positions"], n_embd=SIZE["dim"], n_layer=SIZE["layers"],
                     n_head=SIZE["heads"], initializer_range=INIT, bos_token_id=eos, eos_token_id=eos, **overrides)
    torch.manual_seed(seed)
    return _save(folder, GPT2LMHeadModel(cfg), tok)


def save_bert(folder: Path, seed: int = 0) -> Path:
    """A BERT masked language model (encoder-only)."""
    tok = bert_tokenizer()
    cfg = BertConfig(vocab_size=len(tok), hidden_size=SIZE["dim"], num_hidden_layers=SIZE["layers"],
                     num_attention_heads=SIZE["heads"], intermediate_size=SIZE["ff"],
                     max_position_embeddings=SIZE["positions"], initializer_range=INIT, pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    return _save(folder, BertForMaskedLM(cfg), tok)


def save_distilbert(folder: Path, seed: int = 0) -> Path:
    """A DistilBERT sentence classifier with two labels (encoder-only)."""
    tok = bert_tokenizer()
    cfg = DistilBertConfig(vocab_size=len(tok), dim=SIZE["dim"], n_layers=SIZE["layers"], n_heads=SIZE["heads"],
                           hidden_dim=SIZE["ff"], max_position_embeddings=SIZE["positions"], initializer_range=INIT,
                           pad_token_id=tok.pad_token_id, id2label={0: "NEGATIVE", 1: "POSITIVE"},
                           label2id={"NEGATIVE": 0, "POSITIVE": 1})
    torch.manual_seed(seed)
    return _save(folder, DistilBertForSequenceClassification(cfg), tok)


def _seq2seq_config(cls, tok: PreTrainedTokenizerFast, **extra):
    return cls(vocab_size=len(tok), d_model=SIZE["dim"], encoder_layers=SIZE["layers"],
               decoder_layers=SIZE["layers"], encoder_attention_heads=SIZE["heads"],
               decoder_attention_heads=SIZE["heads"], encoder_ffn_dim=SIZE["ff"], decoder_ffn_dim=SIZE["ff"],
               max_position_embeddings=SIZE["positions"], init_std=INIT, pad_token_id=tok.pad_token_id,
               eos_token_id=tok.eos_token_id, forced_eos_token_id=tok.eos_token_id, **extra)


def save_marian(folder: Path, seed: int = 0, *, spm: bool = False) -> Path:
    """A Marian translation model (encoder-decoder; starts decoding from ``<pad>``, as opus-mt does),
    with a fast ``▁`` tokenizer, or with Marian's own sentencepiece tokenizer when ``spm``."""
    tok = marian_tokenizer(folder) if spm else sentencepiece_tokenizer()
    cfg = _seq2seq_config(MarianConfig, tok, decoder_start_token_id=tok.pad_token_id,
                          decoder_vocab_size=len(tok))
    torch.manual_seed(seed)
    return _save(folder, MarianMTModel(cfg), tok)


def save_bart(folder: Path, seed: int = 0) -> Path:
    """A BART generation model (encoder-decoder; ``<s> … </s>`` inputs, decoding starts from ``</s>``)."""
    tok = sentencepiece_tokenizer(bos="<s>")
    cfg = _seq2seq_config(BartConfig, tok, bos_token_id=tok.bos_token_id, decoder_start_token_id=tok.eos_token_id)
    torch.manual_seed(seed)
    return _save(folder, BartForConditionalGeneration(cfg), tok)


def save_t5(folder: Path, seed: int = 0) -> Path:
    """A T5 model (encoder-decoder with a relative-position bias: weights only, no step-by-step view)."""
    tok = sentencepiece_tokenizer()
    cfg = T5Config(vocab_size=len(tok), d_model=SIZE["dim"], d_kv=SIZE["dim"] // SIZE["heads"], d_ff=SIZE["ff"],
                   num_layers=SIZE["layers"], num_heads=SIZE["heads"], relative_attention_num_buckets=8,
                   pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                   decoder_start_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    return _save(folder, T5ForConditionalGeneration(cfg), tok)


def edit_config(folder: Path, **changes) -> Path:
    """Rewrite keys of ``folder/config.json`` (for bad-input tests); ``None`` deletes a key."""
    path = Path(folder) / "config.json"
    cfg = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    path.write_text(json.dumps(cfg, indent=2))
    return Path(folder)


BUILDERS = {"gpt2": save_gpt2, "bert": save_bert, "distilbert": save_distilbert, "marian": save_marian,
            "bart": save_bart, "t5": save_t5, "marian-spm": lambda folder: save_marian(folder, spm=True)}


def save_all(root: Path) -> dict[str, Path]:
    """Every tiny model under ``root/<name>``."""
    return {name: build(Path(root) / name) for name, build in BUILDERS.items()}


class FakeHub:
    """A stand-in for the Hugging Face Hub on a loopback port, serving folders as repositories.

    It answers the requests that model.hub's download makes (repository info, file tree, file
    download), with the Hub's error headers for a missing or private repository
    (401/404 ``RepoNotFound``) and a gated one (403 ``GatedRepo``). ``fetched`` lists the files
    downloaded. Use as a context manager; ``url`` goes into ``HF_ENDPOINT``.
    """

    def __init__(self, repos: dict[str, Path], *, gated: tuple[str, ...] = (), private: tuple[str, ...] = ()):
        self.repos, self.gated, self.private = {k: Path(v) for k, v in repos.items()}, set(gated), set(private)
        self.fetched: list[str] = []

    def __enter__(self) -> FakeHub:
        import threading
        from http.server import ThreadingHTTPServer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _files(self, repo: str) -> dict[str, Path]:
        root = self.repos[repo]
        return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}

    def _handler(self):
        import hashlib
        from http.server import BaseHTTPRequestHandler
        from urllib.parse import unquote, urlparse

        hub, sha = self, "0123456789abcdef0123456789abcdef01234567"

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, code: int, body: bytes = b"", headers: dict | None = None) -> None:
                self.send_response(code)
                for key, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, data) -> None:
                self._send(200, json.dumps(data).encode(), {"Content-Type": "application/json"})

            def _refuse(self, repo: str) -> bool:
                if repo in hub.gated:
                    self._send(403, b"gated", {"X-Error-Code": "GatedRepo", "X-Error-Message": "gated"})
                elif repo in hub.private or repo not in hub.repos:
                    code = 401 if repo in hub.private else 404
                    self._send(code, b"not found", {"X-Error-Code": "RepoNotFound", "X-Error-Message": "not found"})
                else:
                    return False
                return True

            def do_GET(self) -> None:
                path = unquote(urlparse(self.path).path)
                if path.startswith("/api/models/"):
                    rest = path[len("/api/models/"):]
                    tree = "/tree/" in rest
                    repo = rest.partition("/tree/" if tree else "/revision/")[0]
                    if self._refuse(repo):
                        return
                    files = hub._files(repo)
                    if not tree:  # model_info, of the main branch or of a revision
                        return self._json({"id": repo, "sha": sha, "siblings": [{"rfilename": f} for f in files]})
                    return self._json([{"type": "file", "path": f, "size": p.stat().st_size,
                                        "oid": hashlib.sha1(p.read_bytes()).hexdigest()} for f, p in files.items()])
                repo, _, rest = path.lstrip("/").partition("/resolve/")
                if self._refuse(repo):
                    return
                name = rest.partition("/")[2]
                files = hub._files(repo)
                if name not in files:
                    return self._send(404, b"no entry", {"X-Error-Code": "EntryNotFound"})
                body = files[name].read_bytes()
                if self.command == "GET":
                    hub.fetched.append(name)
                self._send(200, body, {"X-Repo-Commit": sha, "ETag": f'"{hashlib.sha1(body).hexdigest()}"'})

            do_HEAD = do_GET

        return Handler
