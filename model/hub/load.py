"""Open a pretrained transformer from the Hugging Face Hub (by id) or a local folder.

:func:`load` reads the config first and refuses, before any weight is downloaded, a model that is
too large (:func:`max_params`), has no attention weights, or needs code of its own
(``trust_remote_code`` is never set). It then fetches only the safetensors weights and the
tokenizer files, reporting progress, and returns a :class:`HubModel` in eval mode with eager
attention, so that ``output_attentions=True`` gives every layer's weights. Weights the checkpoint
lacks are never shown as the model's: transformers fills them with random numbers, so a model
missing its prediction head (a base ``BertModel``, a sentence-embedding model) opens attention-only
(``head == "base"``, :attr:`HubModel.missing` names them) and one missing weights its attention
is computed from is refused. Every failure is a
:class:`~model.hub.errors.HubError` whose message tells the user what to do. Keeping models within a
memory budget, one per learner, is :mod:`model.hub.cache`'s job.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from model.core.specs import ModelSpec, hub_spec
from model.hub.download import Progress, download, reachable
from model.hub.errors import HubError
from model.hub.tokens import token_scheme

MAX_PARAMS_ENV = "ATTENTION_HUB_MAX_PARAMS"
DEFAULT_MAX_PARAMS = 150_000_000
# what a model needs from a repository: never pickled weights (.bin, .pt), never code (.py)
FILES = [
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "model-*-of-*.safetensors",
    "model.safetensors.index.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "*.model",
    "*.spm",
]
VOCABULARY = ["tokenizer.json", "vocab.json", "vocab.txt", "*.model", "*.spm"]
NO_ATTENTION = {"mamba", "mamba2", "falcon_mamba", "rwkv", "xlstm"}  # recurrent: nothing to show
HEAD_NAMES = {
    "masked-lm": "masked-language-model",
    "classifier": "classifier",
    "causal-lm": "next-token",
    "seq2seq": "text-generation",
}
SHOWN_KEYS = 3  # missing tensors a message names


@dataclass(frozen=True, eq=False)
class HubModel:
    """A loaded model with its tokenizer and what the app needs to know about it."""

    source: str  # the id or folder as the user gave it
    folder: Path  # the local files (a Hub cache snapshot or the user's folder)
    model: torch.nn.Module  # a transformers PreTrainedModel in eval mode, eager attention
    tokenizer: object  # a transformers tokenizer
    shape: str  # "encoder", "decoder" or "encoder-decoder"
    head: str  # "masked-lm", "classifier", "causal-lm", "seq2seq" or "base" (no prediction)
    model_type: str  # config.model_type: "gpt2", "bert", "marian", ...
    params: int
    max_tokens: int  # the longest input the model reads
    scheme: str  # how its tokens mark words (model.hub.tokens.SCHEMES)
    missing: tuple[str, ...] = ()  # prediction weights the checkpoint lacks (then head is "base")
    missing_head: str = ""  # the head those belong to ("masked-lm", ...), "" when none is missing

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def spec(self) -> ModelSpec:
        """What this model is, from its config, in the same description as our own models'."""
        return hub_spec(self.source, self.shape, self.head, self.max_tokens, *languages(self.source))

    @property
    def missing_note(self) -> str:
        """Why this model predicts nothing, as a sentence for the user ("" when its head is complete)."""
        if not self.missing:
            return ""
        return (
            f"Its checkpoint lacks the weights of its {HEAD_NAMES[self.missing_head]} head ({_some(self.missing)}), "
            "which transformers would fill with random numbers: no prediction is shown, only the attention."
        )


LANGUAGES = {
    "de": "German",
    "en": "English",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "ro": "Romanian",
    "ru": "Russian",
    "zh": "Chinese",
    "ja": "Japanese",
    "pt": "Portuguese",
    "sv": "Swedish",
    "fi": "Finnish",
    "pl": "Polish",
    "cs": "Czech",
    "tr": "Turkish",
    "ar": "Arabic",
}


def languages(source: str) -> tuple[str, str]:
    """What an encoder-decoder's axes call its input and output: language names where the id says them
    (``opus-mt-de-en``: "German (source)", "English (output)"), else "source" and "output"."""
    match = re.search(r"opus-mt-([a-z]{2,3})-([a-z]{2,3})\b", source)
    if match and match.group(1) in LANGUAGES and match.group(2) in LANGUAGES:
        return f"{LANGUAGES[match.group(1)]} (source)", f"{LANGUAGES[match.group(2)]} (output)"
    return "source", "output"


def max_params() -> int:
    """The parameter cap: ``$ATTENTION_HUB_MAX_PARAMS`` (e.g. ``400000000`` or ``400M``), else 150 M."""
    raw = os.environ.get(MAX_PARAMS_ENV, "").strip().upper().replace("_", "")
    if not raw:
        return DEFAULT_MAX_PARAMS
    scale = {"K": 10**3, "M": 10**6, "B": 10**9}.get(raw[-1], 1)
    try:
        return int(float(raw[:-1] if scale > 1 else raw) * scale)
    except ValueError as err:
        raise HubError(f"{MAX_PARAMS_ENV}={raw!r} is not a number of parameters (e.g. 400M)") from err


def _model_class(config) -> tuple[str, str, type]:
    """(shape, head, Auto class) for a config, or a HubError when the page cannot show it."""
    import transformers as tf
    from transformers.models.auto import modeling_auto as auto

    kind, arch = config.model_type, (getattr(config, "architectures", None) or [""])[0]
    if kind in NO_ATTENTION:
        raise HubError(f"{kind} models have no attention weights to show (they are recurrent); pick a transformer")
    if getattr(config, "is_encoder_decoder", False):
        if kind in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
            return "encoder-decoder", "seq2seq", tf.AutoModelForSeq2SeqLM
        raise HubError(f"{kind} is an encoder-decoder model but not a text-to-text one; pick e.g. Marian, BART or T5")
    causal = kind in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    if causal and (arch.endswith(("ForCausalLM", "LMHeadModel")) or kind not in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES):
        return "decoder", "causal-lm", tf.AutoModelForCausalLM
    if arch.endswith("ForSequenceClassification") and kind in auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES:
        return "encoder", "classifier", tf.AutoModelForSequenceClassification
    if kind in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "encoder", "masked-lm", tf.AutoModelForMaskedLM
    if kind in auto.MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES:
        return "encoder", "base", tf.AutoModel
    raise HubError(
        f"{kind} ({arch or 'no architecture named'}) is not a text transformer this page can open; "
        "pick an encoder (BERT), a decoder (GPT-2) or an encoder-decoder (Marian, BART, T5)"
    )


def estimate_params(config, cls: type | None = None) -> int:
    """Parameter count of the model ``config`` describes, built on the meta device: no memory, no download."""
    cls = cls or _model_class(config)[2]
    try:
        with torch.device("meta"):
            model = cls.from_config(config)
    except Exception as err:  # a config transformers cannot build is unsupported, whatever the reason
        raise HubError(f"cannot build a {config.model_type} model from its config: {err}") from err
    return sum(p.numel() for p in model.parameters())


def _some(keys) -> str:
    keys = sorted(keys)
    more = len(keys) - SHOWN_KEYS
    return ", ".join(keys[:SHOWN_KEYS]) + (f" and {more} more" if more > 0 else "")


def _backbone(model, config) -> set[str]:
    """The names (as ``model`` has them) of the weights its attention is computed from: those of its
    base model, without the prediction head."""
    base = model.base_model
    if base is not model:  # BertForMaskedLM.bert, GPT2LMHeadModel.transformer, MarianMTModel.model
        return {f"{model.base_model_prefix}.{name}" for name in base.state_dict()}
    from transformers import AutoModel

    # T5 keeps its encoder and decoder on the full model itself: its base class says which weights are its own
    try:
        with torch.device("meta"):
            return set(AutoModel.from_config(config).state_dict())
    except ValueError:  # no base class known: every weight counts, so any missing one refuses the model
        return set(model.state_dict())


def _split_missing(model, config, missing: set[str]) -> tuple[str, ...]:
    """The prediction-head weights among ``missing`` (what transformers initialised at random), or a
    HubError when weights the attention is computed from are missing too."""
    if not missing:
        return ()
    body = {key for key in missing if key in _backbone(model, config)}
    if body:
        raise HubError(
            f"its checkpoint lacks {len(body)} of the weights its attention is computed from "
            f"({_some(body)}); transformers would fill them with random numbers, so no map would be the "
            "model's. Open a complete checkpoint"
        )
    return tuple(sorted(missing))


def _local(source: str) -> Path | None:
    """The folder ``source`` names, None for a Hub id; a HubError for a path that is no usable folder."""
    path = Path(source).expanduser()
    looks_local = source.startswith(("/", ".", "~")) or os.sep in source.strip("/").replace("/", "", 1)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise HubError(f"{path} has no config.json; open the folder that save_pretrained wrote")
        return path
    if path.exists() or looks_local:
        raise HubError(f"{source} is not a folder" if path.exists() else f"there is no folder {source}")
    return None


def _read_config(folder: Path):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(folder, trust_remote_code=False)
    except (ValueError, KeyError, OSError) as err:
        text = str(err)
        if "trust_remote_code" in text or "custom code" in text:
            raise HubError(
                "this model needs its own Python code (trust_remote_code), which this app never "
                "runs; pick a model that transformers supports directly"
            ) from err
        raise HubError(f"its config.json does not describe a model transformers knows: {text.splitlines()[0]}") from err


def _check_weights(folder: Path, source: str) -> None:
    if not any(folder.glob("model*.safetensors")):
        raise HubError(
            f"{source} has no safetensors weights (model.safetensors); this app never loads pickled "
            ".bin files. Pick a model with safetensors, or convert it and open the folder"
        )


def _load_tokenizer(folder: Path, kind: str):
    from transformers import AutoTokenizer

    # without vocabulary files transformers builds an empty tokenizer that reads every word as unknown
    if not any(any(folder.glob(pattern)) for pattern in VOCABULARY):
        raise HubError(
            "the folder has no tokenizer files (tokenizer.json, vocab.txt, vocab.json or a "
            "sentencepiece .model/.spm); save the tokenizer beside the model"
        )
    try:
        tok = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
    except Exception as err:  # missing files, a missing package (sentencepiece), a broken vocabulary
        raise HubError(
            f"its tokenizer could not load ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}); "
            f"a {kind} tokenizer may need the sentencepiece package"
        ) from err
    return tok


def _max_tokens(config, tokenizer) -> int:
    limits = [
        getattr(config, key)
        for key in ("max_position_embeddings", "n_positions", "n_ctx")
        if isinstance(getattr(config, key, None), int)
    ]
    if 0 < getattr(tokenizer, "model_max_length", 0) < 1_000_000:
        limits.append(tokenizer.model_max_length)
    return min(limits) if limits else 512  # relative positions (T5): any length works, 512 is what it saw


def load(
    source: str,
    *,
    progress: Progress | None = None,
    device: str | torch.device = "cpu",
    limit: int | None = None,
    fits: Callable[[int], None] | None = None,
) -> HubModel:
    """Open ``source`` (a Hub id like ``gpt2`` or a folder) on ``device``; ``limit`` overrides
    :func:`max_params`. ``progress(fraction, text)`` hears about each stage and the download; ``fits(params)``
    may refuse the model (by raising) once its size is known, before any weight is downloaded (a memory budget,
    :mod:`model.hub.cache`)."""
    import transformers

    transformers.utils.logging.disable_progress_bar()  # ours report through ``progress``, not a terminal
    report = progress or (lambda fraction, text: None)
    source = (source or "").strip()
    if not source:
        raise HubError("type a model id (like gpt2, bert-base-uncased or Helsinki-NLP/opus-mt-de-en) or a folder")
    report(0.0, f"reading the config of {source}")
    folder = _local(source)
    hub = folder is None
    online = hub and reachable(source)
    folder = folder or download(source, online, ["config.json"], None, (0.0, 0.0))
    config = _read_config(folder)
    shape, head, cls = _model_class(config)
    params, cap = estimate_params(config, cls), limit or max_params()
    if params > cap:
        raise HubError(
            f"{source} has {params / 1e6:.0f} M parameters, more than the {cap / 1e6:.0f} M this app "
            f"opens (set {MAX_PARAMS_ENV} to raise the limit where there is memory for it)"
        )
    if fits:
        fits(params)
    if hub:
        folder = download(source, online, FILES, report, (0.05, 0.9))
    _check_weights(folder, source)
    report(0.9, "loading the tokenizer")
    tokenizer = _load_tokenizer(folder, config.model_type)
    report(0.92, f"loading {params:,} parameters")
    try:
        model, info = cls.from_pretrained(
            folder,
            attn_implementation="eager",
            use_safetensors=True,
            trust_remote_code=False,
            dtype=torch.float32,
            output_loading_info=True,
        )
    except Exception as err:  # a truncated file, shapes that do not match the config, no eager attention
        raise HubError(
            f"its weights could not load ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})"
        ) from err
    # transformers has already tied shared weights (BERT's decoder to its word embeddings): not missing
    missing = _split_missing(model, config, set(info["missing_keys"]))
    model = model.eval().to(device)
    scheme = token_scheme(list(tokenizer.get_vocab()))
    loaded = HubModel(
        source,
        folder,
        model,
        tokenizer,
        shape,
        "base" if missing else head,
        config.model_type,
        params,
        _max_tokens(config, tokenizer),
        scheme,
        missing,
        head if missing else "",
    )
    _probe(loaded)
    report(1.0, "ready")
    return loaded


def _probe(hub: HubModel) -> None:
    """Refuse a model whose forward pass returns no attention weights (the page would be empty)."""
    ids = torch.tensor(
        [[hub.tokenizer.convert_tokens_to_ids(hub.tokenizer.tokenize("a") or ["a"])[0]]], device=hub.device
    )
    extra = {"decoder_input_ids": ids} if hub.shape == "encoder-decoder" else {}
    try:
        with torch.no_grad():
            out = hub.model(input_ids=ids, output_attentions=True, **extra)
    except Exception as err:
        raise HubError(f"a test run of the model failed ({type(err).__name__}: {err})") from err
    maps = out.encoder_attentions if hub.shape == "encoder-decoder" else out.attentions
    if not maps or maps[0] is None:
        raise HubError(f"{hub.model_type} returns no attention weights; pick another model")
