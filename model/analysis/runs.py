"""One input through one of our three models, as the typed :class:`RunResult` every page reads.

``classify``, ``generate``, ``next_char`` and ``translate`` (model.core.inference) keep the
model's own tensors; the functions here turn their results into one shape: every attention kind
as a ``(layers, heads, queries, keys)`` array with both axes' tokens, names and masks, the
prediction, what the model could not read, and the token ids (for explaining a weight).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor

from model.analysis.maps import causal_steps, last_query_attention
from model.core.checkpoint import Checkpoint
from model.core.inference import (
    Classification,
    Generation,
    NextChar,
    Translation,
    classify,
    generate,
    model_device,
    next_char,
    translate,
)
from model.core.results import AttentionKind, RunResult, attention_kind, causal, special_keys
from model.core.tokenize import UNK, encode_chars, unwrap


def input_limit(ck: Checkpoint) -> int:
    """How many words (characters for the generator) the model reads."""
    return ck.spec.limit(ck.model.config)


def _kind(ck: Checkpoint, name: str, layers, queries, keys, *, mask, special) -> AttentionKind:
    """One kind of ``ck``'s attention, titled and labelled as its description says."""
    k = ck.spec.kind(name)
    return attention_kind(
        name, layers, queries, keys, mask=mask, special=special, title=k.title, axes=(k.query_axis, k.key_axis)
    )


def classifier_result(ck: Checkpoint, r: Classification) -> RunResult:
    ids = r.inputs["ids"]
    pad = ck.model.config.pad_id
    visible = np.array([i != pad for i in ids])
    kind = _kind(
        ck,
        "encoder",
        r.attention.encoder,
        r.tokens,
        r.tokens,
        mask=np.broadcast_to(visible, (len(ids), len(ids))),
        special=special_keys(r.tokens, r.unknown),
    )
    unknown = set(r.unknown)
    return RunResult(
        task=ck.task,
        kinds={"encoder": kind},
        prediction=r.label,
        probs=dict(zip(r.labels, r.probs)),
        unknown=r.unknown,
        truncated=r.truncated,
        limit=input_limit(ck),
        unit=ck.spec.unit,
        read=len(r.tokens),
        unknown_read=sum(t in unknown for t in r.tokens),
        inputs=r.inputs,
    )


def _generator_result(
    ck: Checkpoint, chars: Sequence[str], prompt: str, maps, unknown, truncated, prediction, probs, notes
):
    """``chars`` is the window the maps cover; ``prompt`` what the model was given to read."""
    vocab = ck.vocabs["chars"]
    shown = [UNK if c not in vocab else c for c in chars]
    kind = _kind(
        ck, "encoder", maps.encoder, shown, shown, mask=causal(len(chars)), special=special_keys(shown, unknown)
    )
    return RunResult(
        task=ck.task,
        kinds={"encoder": kind},
        prediction=prediction,
        probs=probs,
        unknown=list(unknown),
        truncated=truncated,
        limit=input_limit(ck),
        unit=ck.spec.unit,
        read=len(prompt),
        unknown_read=sum(c not in vocab for c in prompt),
        notes=notes,
        inputs={"ids": encode_chars(vocab, "".join(chars))},
    )


def generation_result(ck: Checkpoint, g: Generation) -> RunResult:
    """A sampled continuation; the maps are those of the final context window."""
    notes = {"prompt": g.prompt, "new_text": g.new_text}
    return _generator_result(ck, g.chars, g.prompt, g.attention, g.unknown, g.truncated, g.new_text, {}, notes)


def next_char_result(ck: Checkpoint, n: NextChar) -> RunResult:
    """The next-character distribution after a prompt (no sampling)."""
    best = max(n.probs, key=n.probs.get)
    return _generator_result(ck, n.chars, "".join(n.chars), n.attention, n.unknown, n.truncated, best, n.probs, {})


def translator_result(ck: Checkpoint, t: Translation) -> RunResult:
    src_visible = np.array([i != ck.model.config.pad_id for i in t.inputs["src"]])
    S, T = len(t.src_tokens), len(t.tgt_out)
    src_special = special_keys(t.src_tokens, t.unknown)
    maps = t.attention
    kinds = {
        "encoder": _kind(
            ck,
            "encoder",
            maps.encoder,
            t.src_tokens,
            t.src_tokens,
            mask=np.broadcast_to(src_visible, (S, S)),
            special=src_special,
        ),
        "decoder": _kind(
            ck, "decoder", maps.decoder, t.tgt_out, t.tgt_in, mask=causal(T), special=special_keys(t.tgt_in)
        ),
        "cross": _kind(
            ck,
            "cross",
            maps.cross,
            t.tgt_out,
            t.src_tokens,
            mask=np.broadcast_to(src_visible, (T, S)),
            special=src_special,
        ),
    }
    words = unwrap(t.src_tokens)
    unknown = set(t.unknown)
    return RunResult(
        task=ck.task,
        kinds=kinds,
        prediction=t.text,
        unknown=t.unknown,
        truncated=t.truncated,
        limit=input_limit(ck),
        unit=ck.spec.unit,
        read=len(words),
        unknown_read=sum(w in unknown for w in words),
        notes={}
        if t.reference is None
        else {"reference": t.reference, "reference_unknown": "\n".join(t.reference_unknown)},
        inputs=t.inputs,
    )


def run(ck: Checkpoint, text: str, *, head_mask: Tensor | dict[str, Tensor] | None = None) -> RunResult:
    """The prediction and attention of ``ck`` on ``text``: the classifier's label, the generator's next
    character (no sampling) or the translator's greedy translation. ``ValueError`` on empty input."""
    infer, result = _RUNS[ck.spec.output]
    return result(ck, infer(ck, text, head_mask=head_mask))


# what one run is for each kind of prediction: the inference, then its RunResult
_RUNS = {
    "classes": (classify, classifier_result),
    "next": (next_char, next_char_result),
    "text": (translate, translator_result),
}


def generation_run(ck: Checkpoint, prompt: str, **sampling) -> RunResult:
    """``prompt`` continued by sampling (``length``, ``temperature``, ``top_k``, ``seed``)."""
    return generation_result(ck, generate(ck, prompt, **sampling))


def translation_run(ck: Checkpoint, text: str, *, beam_size: int = 1, reference: str | None = None) -> RunResult:
    """A translation by greedy or beam search, or the teacher-forced view of ``reference``."""
    return translator_result(ck, translate(ck, text, beam_size=beam_size, reference=reference))


def causal_step_maps(ck: Checkpoint, text: str, layer: int, head: int) -> dict[str, np.ndarray]:
    """The four causal-mask steps of one generator head over ``text``: ``scores``, ``mask``, ``masked``
    and ``softmax``, each ``(T, T)``."""
    ids = torch.tensor([encode_chars(ck.vocabs["chars"], text)], device=model_device(ck))
    s = causal_steps(ck.model, ids, layer, head)
    parts = {"scores": s.scores[0], "mask": s.mask, "masked": s.masked[0], "softmax": s.weights[0]}
    return {k: v.cpu().numpy() for k, v in parts.items()}


def last_query_weights(ck: Checkpoint, context: str) -> np.ndarray:
    """What the generator's last character of ``context`` attended to, ``(layers, heads, keys)``."""
    ids = torch.tensor([encode_chars(ck.vocabs["chars"], context)], device=model_device(ck))
    return torch.stack([r[0] for r in last_query_attention(ck.model, ids)]).cpu().numpy()


def chars_read(ck: Checkpoint, chars: Sequence[str]) -> list[str]:
    """``chars`` as the generator read them: a character outside its vocabulary is ``<unk>``."""
    vocab = ck.vocabs["chars"]
    return [c if c in vocab else UNK for c in chars]


def with_weights(result: RunResult, weights: dict[str, np.ndarray | Sequence[Tensor]]) -> RunResult:
    """``result`` with each kind's weights replaced (the same tokens, masks and names)."""
    from dataclasses import replace

    kinds = {}
    for name, kind in result.kinds.items():
        w = weights.get(name, kind.weights)
        if not isinstance(w, np.ndarray):
            w = torch.stack([x[0] for x in w]).float().numpy()
        if w.shape != kind.weights.shape:
            raise ValueError(f"{name} weights of shape {w.shape} do not fit {kind.weights.shape}")
        kinds[name] = replace(kind, weights=np.ascontiguousarray(w, dtype=np.float32))
    return replace(result, kinds=kinds)
