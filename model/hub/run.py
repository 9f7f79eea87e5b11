"""Run a loaded Hugging Face model on one text and keep every attention map as a ``RunResult``.

Encoders read the text once. Decoders (GPT-2) predict the next token, or generate greedily and keep
the maps of every step, the step's new query row against every key so far. Encoder-decoders (Marian,
BART, T5) translate or generate greedily the same way, or read a given target teacher-forced.
The query axis holds the tokens the model was fed; :class:`Step` says what each generated token
came from, so a page can show "what each new token attended to". A model without its prediction
head (``hub.head == "base"``) predicts and generates nothing: one pass gives its maps, and an
encoder-decoder's decoder then reads the given target, or else the text itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F

from model.core.memory import give_back_memory
from model.core.results import RunResult, attention_kind, causal
from model.core.triangle import compact
from model.hub.errors import HubError
from model.hub.load import HubModel
from model.hub.tokens import prettify_tokens

TOP = 5  # probabilities reported per prediction


@dataclass(frozen=True)
class Step:
    """One greedily generated token."""

    position: int  # the query row (decoder and cross-attention) whose attention produced it
    token: str  # the token, readable
    id: int
    prob: float  # the model's probability for it at that step


@dataclass(frozen=True, eq=False)
class HubRun:
    result: RunResult
    steps: list[Step] = field(default_factory=list)  # empty when nothing was generated


def _pretty(hub: HubModel, ids: list[int]) -> tuple[list[str], list[bool]]:
    tok = hub.tokenizer
    specials = set(tok.all_special_ids)
    # a model's vocabulary is often padded past its tokenizer's (T5: 32128 rows, 32100 tokens)
    raw = [t if t is not None else f"<id {i}>" for i, t in zip(ids, tok.convert_ids_to_tokens(ids))]
    special = [i in specials or t is None for i, t in zip(ids, tok.convert_ids_to_tokens(ids))]
    return prettify_tokens(raw, hub.scheme, special), special


def _unknown(hub: HubModel, text: str, ids: list[int], offsets: list | None) -> list[str]:
    """The input text behind each unknown token (the token itself where offsets are not known)."""
    unk = hub.tokenizer.unk_token_id
    if unk is None:
        return []
    if offsets is None:
        return [hub.tokenizer.unk_token for i in ids if i == unk]
    return [text[s:e] for i, (s, e) in zip(ids, offsets) if i == unk]


def encode(hub: HubModel, text: str, limit: int, *, target: bool = False) -> tuple[list[int], bool, list[str]]:
    """Token ids of ``text`` cut to its first ``limit`` (keeping the closing special tokens), whether it
    was cut, and the words that became unknown tokens."""
    if not text or not text.strip():
        raise HubError("type some text for the model to read")
    tok = hub.tokenizer
    args = {"text_target": text} if target else {"text": text}
    offsets = getattr(tok, "is_fast", False) and not target
    enc = tok(**args, return_offsets_mapping=offsets, verbose=False)  # verbose: no warning past the context
    ids, spans = list(enc["input_ids"]), enc.get("offset_mapping") if offsets else None
    if len(ids) <= limit:
        return ids, False, _unknown(hub, text, ids, spans)
    # only what the model reads counts: the unknown words of the part that is cut off are not reported
    unknown = _unknown(hub, text, ids[:limit], spans[:limit] if spans is not None else None)
    enc = tok(**args, truncation=True, max_length=limit)  # keeps the closing special tokens
    return list(enc["input_ids"]), True, unknown


def _top(hub: HubModel, logits: torch.Tensor) -> dict[str, float]:
    probs = torch.softmax(logits.float(), -1)
    p, i = probs.topk(min(TOP, probs.numel()))
    tokens, _ = _pretty(hub, i.tolist())
    return {t: float(v) for t, v in zip(tokens, p.tolist())}


def _kind(hub: HubModel, name: str, layers, queries, keys, **kwargs):
    """One kind of ``hub``'s attention, titled and labelled as its description says; a decoder's
    self-attention says which query heads share a key/value head and where a sliding window hides keys."""
    k = hub.spec.kind(name)
    if not k.cross and hub.shape == "decoder":
        kwargs |= _layout(hub.model.config)
    if not isinstance(layers, np.ndarray):
        layers = _batch_item(layers)
    maps = layers if isinstance(layers, np.ndarray) else compact(layers, kwargs.get("mask"))
    return attention_kind(name, maps, queries, keys, title=k.title, axes=(k.query_axis, k.key_axis), **kwargs)


def _layout(config) -> dict:
    """What a decoder's config says about its heads and keys: ``kv_heads`` under grouped-query
    attention (``num_key_value_heads`` below ``num_attention_heads``), and a sliding ``window`` with the
    layers it applies to (``layer_types``' "sliding_attention" layers where the config lists them, as
    Gemma 2/3 do; every layer otherwise, as Mistral)."""
    heads, kv = getattr(config, "num_attention_heads", 0), getattr(config, "num_key_value_heads", None)
    out: dict = {"kv_heads": kv if isinstance(kv, int) and 0 < kv < heads else 0}
    window, types = getattr(config, "sliding_window", None), getattr(config, "layer_types", None)
    if isinstance(window, int) and window > 0 and getattr(config, "use_sliding_window", True) is not False:
        layers = range(config.num_hidden_layers)
        out |= {"window": window, "window_layers": [i for i in layers if not types or types[i] == "sliding_attention"]}
    return out


def _batch_item(layers: list) -> list:
    """Per-layer ``(1, heads, queries, keys)`` maps as ``(heads, queries, keys)`` views, in the same list."""
    for i, layer in enumerate(layers):
        layers[i] = layer[0]
    return layers


def _maps(out, field: str = "attentions") -> list:
    """``out.<field>`` as a list the caller owns, taken out of ``out`` so that
    :func:`~model.core.triangle.compact` can free each layer as it goes: at GPT-2's 1,024 tokens the maps
    are 600 MB dense, held once rather than twice, and a decoder's are kept as their causal triangle
    (:class:`~model.core.triangle.CausalMaps`, 300 MB)."""
    layers = list(getattr(out, field))
    setattr(out, field, None)
    if field in getattr(out, "keys", tuple)():
        # transformers' ModelOutput is also a dict, and setting an attribute to None leaves its dict
        # entry (the tuple of every layer) in place: without this the maps are held twice while stacked
        out[field] = None
    return layers


def _stack_steps(steps, keys: int) -> np.ndarray:
    """Per-step, per-layer ``(1, heads, new queries, keys so far)`` maps as one
    ``(layers, heads, queries, keys)`` array, zero where a key did not exist yet."""
    rows = [F.pad(torch.stack([layer[0] for layer in step]), (0, keys - step[0].shape[-1])) for step in steps]
    return torch.cat(rows, dim=2).detach().to("cpu", torch.float32).numpy()


def _result(
    hub: HubModel,
    kinds: dict,
    prediction: str,
    *,
    probs: dict | None = None,
    unknown: list[str],
    truncated: bool,
    read: list[int],
    inputs: dict,
    notes: dict | None = None,
) -> RunResult:
    unk = hub.tokenizer.unk_token_id
    notes = dict(notes or {})
    if truncated:
        notes["truncated"] = f"the input was cut to {hub.max_tokens} tokens, the most this run reads"
    specials = set(hub.tokenizer.all_special_ids) - {unk}
    counted = [i for i in read if i not in specials]
    return RunResult(
        task="hub",
        kinds=kinds,
        prediction=prediction,
        probs=probs or {},
        unknown=unknown,
        truncated=truncated,
        limit=hub.max_tokens,
        unit="tokens",
        read=len(counted),
        unknown_read=sum(i == unk for i in counted),
        notes=notes,
        inputs=inputs,
    )


def _encoder(hub: HubModel, text: str) -> HubRun:
    ids, truncated, unknown = encode(hub, text, hub.max_tokens)
    x = torch.tensor([ids], device=hub.device)
    with torch.no_grad():
        out = hub.model(input_ids=x, attention_mask=torch.ones_like(x), output_attentions=True)
    tokens, special = _pretty(hub, ids)
    kinds = {"encoder": _kind(hub, "encoder", _maps(out), tokens, tokens, special=special)}
    prediction, probs, notes = "", {}, {}
    if hub.spec.output == "classes":
        labels = hub.model.config.id2label
        p = torch.softmax(out.logits[0].float(), -1).tolist()
        probs = {labels.get(i, str(i)): v for i, v in enumerate(p)}
        prediction = max(probs, key=probs.__getitem__)
    elif hub.spec.output == "masked":
        masks = [i for i, t in enumerate(ids) if t == hub.tokenizer.mask_token_id]
        if masks:
            probs = _top(hub, out.logits[0, masks[0]])
            filled = list(ids)
            for i in masks:
                filled[i] = int(out.logits[0, i].argmax())
            prediction = hub.tokenizer.decode(filled, skip_special_tokens=True)
        else:
            notes["prediction"] = f"put {hub.tokenizer.mask_token} in the text to see what the model guesses there"
    return HubRun(
        _result(
            hub,
            kinds,
            prediction,
            probs=probs,
            unknown=unknown,
            truncated=truncated,
            read=ids,
            inputs={"ids": ids},
            notes=notes,
        )
    )


def _greedy(hub: HubModel, x: torch.Tensor, new: int, **extra):
    """Greedy generation with every step's attention. A decoder gets a plain growing cache: the sliding
    cache that sliding-window models (Mistral, Gemma2/3) default to drops old keys, and each step's map
    would then cover fewer keys than the positions it attends from (wrong maps, or steps that do not
    stack). An encoder-decoder keeps transformers' own (self- and cross-attention) cache."""
    from transformers import DynamicCache

    if hub.shape == "decoder":
        extra.setdefault("past_key_values", DynamicCache())
    with torch.no_grad():
        return hub.model.generate(
            x,
            attention_mask=torch.ones_like(x),
            max_new_tokens=new,
            do_sample=False,
            num_beams=1,
            output_attentions=True,
            output_logits=True,
            return_dict_in_generate=True,
            **extra,
        )


def _steps(hub: HubModel, logits, new_ids: list[int], first_row: int) -> list[Step]:
    tokens, _ = _pretty(hub, new_ids)
    return [
        Step(first_row + s, tokens[s], i, float(torch.softmax(logits[s][0].float(), -1)[i]))
        for s, i in enumerate(new_ids)
    ]


def _decoder(hub: HubModel, text: str, new: int) -> HubRun:
    new = max(0, min(new, hub.max_tokens - 1)) if hub.spec.output else 0  # no head: nothing to generate with
    # a long text keeps its start, as a reader does: the model reads the beginning and what it writes follows
    ids, truncated, unknown = encode(hub, text, hub.max_tokens - max(new, 1) + (new == 0))
    x = torch.tensor([ids], device=hub.device)
    if new == 0:
        with torch.no_grad():
            out = hub.model(input_ids=x, attention_mask=torch.ones_like(x), output_attentions=True, **_last_logits(hub))
        fed, maps, steps = ids, _maps(out), []
        probs = _top(hub, out.logits[0, -1]) if hub.spec.output else {}
        prediction = next(iter(probs), "")
    else:
        pad = hub.tokenizer.pad_token_id
        out = _greedy(hub, x, new, pad_token_id=hub.model.config.eos_token_id if pad is None else pad)
        generated = out.sequences[0, len(ids) :].tolist()
        fed = ids + generated[:-1]  # the last token is produced, never read
        maps = _stack_steps(out.attentions, len(fed))
        steps = _steps(hub, out.logits, generated, len(ids) - 1)
        prediction, probs = hub.tokenizer.decode(generated, skip_special_tokens=True), {}
    tokens, special = _pretty(hub, fed)
    kinds = {"decoder": _kind(hub, "decoder", maps, tokens, tokens, mask=causal(len(fed)), special=special)}
    notes = {"prompt": hub.tokenizer.decode(ids)}
    return HubRun(
        _result(
            hub,
            kinds,
            prediction,
            probs=probs,
            unknown=unknown,
            truncated=truncated,
            read=ids,
            inputs={"ids": fed},
            notes=notes,
        ),
        steps,
    )


def _last_logits(hub: HubModel) -> dict:
    """Ask for the last position's logits only where the model can (transformers' ``logits_to_keep``):
    the next token needs no more, and at 1,024 tokens GPT-2's 1,024 × 50,257 logits are 200 MB and a
    third of the forward pass."""
    import inspect

    return {"logits_to_keep": 1} if "logits_to_keep" in inspect.signature(hub.model.forward).parameters else {}


def _start_id(hub: HubModel) -> int:
    config = hub.model.config
    start = getattr(hub.model.generation_config, "decoder_start_token_id", None)
    start = config.decoder_start_token_id if start is None else start
    if start is None:
        raise HubError("the model's config names no decoder_start_token_id, so it cannot generate")
    return int(start)


def _seq2seq(hub: HubModel, text: str, new: int, target: str | None) -> HubRun:
    src, truncated, unknown = encode(hub, text, hub.max_tokens)
    x = torch.tensor([src], device=hub.device)
    notes, steps, probs = {}, [], {}
    writes = bool(hub.spec.output)
    if target is None and not writes:
        target = text  # it cannot write, so its decoder reads the text: its decoder and cross maps need queries
        notes["prediction"] = (
            "its prediction weights are missing, so it writes nothing; its decoder reads the "
            "text itself, teacher-forced, to show its decoder and cross-attention"
        )
    elif target is not None:
        notes["reference"] = target
    if target is not None:
        labels, cut, _ = encode(hub, target, hub.max_tokens, target=True)
        fed = [_start_id(hub), *labels[:-1]]  # teacher forcing: the decoder reads the target shifted right
        y = torch.tensor([fed], device=hub.device)
        with torch.no_grad():
            out = hub.model(input_ids=x, attention_mask=torch.ones_like(x), decoder_input_ids=y, output_attentions=True)
        enc, dec, cross = (_maps(out, f"{kind}_attentions") for kind in ("encoder", "decoder", "cross"))
        prediction = hub.tokenizer.decode(labels, skip_special_tokens=True) if writes else ""
        if cut:
            notes["target"] = f"the target was cut to {hub.max_tokens} tokens"
    else:
        new = max(1, min(new or 2 * len(src) + 10, hub.max_tokens - 1))
        out = _greedy(hub, x, new)
        sequence = out.sequences[0].tolist()
        fed = sequence[:-1]
        enc = _maps(out, "encoder_attentions")
        dec = _stack_steps(out.decoder_attentions, len(fed))
        cross = _stack_steps(out.cross_attentions, len(src))
        steps = _steps(hub, out.logits, sequence[1:], 0)
        prediction = hub.tokenizer.decode(sequence, skip_special_tokens=True)
    src_tokens, src_special = _pretty(hub, src)
    out_tokens, out_special = _pretty(hub, fed)
    kinds = {
        "encoder": _kind(hub, "encoder", enc, src_tokens, src_tokens, special=src_special),
        "decoder": _kind(hub, "decoder", dec, out_tokens, out_tokens, mask=causal(len(fed)), special=out_special),
        "cross": _kind(hub, "cross", cross, out_tokens, src_tokens, special=src_special),
    }
    return HubRun(
        _result(
            hub,
            kinds,
            prediction,
            probs=probs,
            unknown=unknown,
            truncated=truncated,
            read=src,
            inputs={"src": src, "tgt": fed},
            notes=notes,
        ),
        steps,
    )


def run(
    hub: HubModel, text: str, *, generate: int = 0, target: str | None = None, max_tokens: int | None = None
) -> HubRun:
    """Run ``hub`` on ``text``.

    ``generate``: decoders generate that many tokens greedily (0: predict only the next one);
    encoder-decoders generate up to that many (0: up to twice the input plus ten) unless a
    ``target`` is given, which the decoder then reads teacher-forced. Encoders ignore both.
    ``max_tokens`` caps the input (and a decoder's whole sequence) below the model's own maximum (the
    maps grow with its square: GPT-2's 1,024 tokens take 300 MB, held as their causal triangle). A text longer than the
    model reads keeps its start (``truncated`` and a note say so).
    """
    if max_tokens is not None and max_tokens < hub.max_tokens:
        hub = replace(hub, max_tokens=max(2, max_tokens))  # the same model, read with a shorter limit
    if hub.shape == "encoder":
        out = _encoder(hub, text)
    elif hub.shape == "decoder":
        out = _decoder(hub, text, generate)
    else:
        out = _seq2seq(hub, text, generate, target)
    give_back_memory()  # the forward pass's scores and softmax copies: some 300 MB at 1,024 tokens
    return out
