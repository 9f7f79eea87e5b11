"""What a Hugging Face model's attention function receives, recorded through transformers' own
``AttentionInterface``: one probe for every family that calls it (Llama, Qwen2/3, Mistral, Gemma 1–3,
Phi-3, OLMo2, SmolLM3, ...), instead of one re-implementation per family.

Each of those attention modules rotates its query and key, then hands them to the function that
``ALL_ATTENTION_FUNCTIONS`` names for ``config._attn_implementation``: q (rotated, per query head), k
and v (per key/value head, before the grouped-query repeat), the additive mask (causal, sliding window,
padding), the scaling and, where the family has them, ``sliding_window`` and ``softcap``. :func:`trace`
registers :func:`probe_attention` under :data:`PROBE`; the probe keeps those tensors and then calls the
family's own ``eager_attention_forward``, the very function the model's eager path calls, so the weights
of a traced pass are the map's.

The model is shared read-only by every session of the app, so nothing of it is changed: the pass runs on
a *shadow*, a deep copy of the module tree that shares every parameter and buffer (no weight is copied)
and owns a config naming the probe. The probe records into a context variable set only for that call,
so concurrent traces (Streamlit runs each session in its own thread) never see each other's tensors,
and a model whose config names the probe without a trace running just computes eager attention.
"""

from __future__ import annotations

import copy
import itertools
import sys
from contextvars import ContextVar
from dataclasses import dataclass

import torch

PROBE = "attention_explorer_probe"


class NotProbed(RuntimeError):
    """The model's attention does not go through transformers' AttentionInterface as this probe needs."""


@dataclass(frozen=True, eq=False)
class Call:
    """What one layer's attention function received and returned, for the one sequence of the pass."""

    query: torch.Tensor  # (heads, T, s) as attention reads it: projected, normalised where the family does, rotated
    key: torch.Tensor  # (kv_heads, T, s) before the grouped-query repeat
    value: torch.Tensor  # (kv_heads, T, s)
    mask: torch.Tensor | None  # (T, T) additive: 0 where the query may attend, the dtype's minimum where not
    scaling: float
    softcap: float | None  # scores become softcap * tanh(score / softcap) before the mask (Gemma 2)
    sliding_window: int | None  # keys at least this far back are hidden (Mistral, Gemma 2/3 local layers)
    output: torch.Tensor  # (T, heads, s) the family's eager attention output, before the output projection

    @property
    def groups(self) -> int:
        """Query heads per key/value head (1 without grouped-query attention)."""
        return self.query.shape[0] // self.key.shape[0]


@dataclass(frozen=True, eq=False)
class Trace:
    """One traced forward pass: every attention layer's :class:`Call` and the layers' input hidden states."""

    calls: dict[int, Call]  # by layer index
    hidden_states: tuple[torch.Tensor, ...]  # [l] (T, dim): the input of layer l (the model's output_hidden_states)


_calls: ContextVar[tuple[dict, set | None] | None] = ContextVar("attention_probe_calls", default=None)


def probe_attention(module, query, key, value, attention_mask, **kwargs):
    """An attention function for ``ALL_ATTENTION_FUNCTIONS``: the family's own eager attention, with its
    inputs and outputs recorded when a :func:`trace` of this context is running."""
    eager = getattr(sys.modules[type(module).__module__], "eager_attention_forward", None)
    if eager is None:
        raise NotProbed(f"{type(module).__name__} has no eager attention function beside it to reproduce")
    output, weights = eager(module, query, key, value, attention_mask, **kwargs)
    recording = _calls.get()
    if recording is not None:
        calls, layers = recording
        layer = getattr(module, "layer_idx", None)
        if layer is None:
            raise NotProbed(f"{type(module).__name__} does not say which layer it is (no layer_idx)")
        if layers is not None and layer not in layers:
            return output, weights
        mask = None if attention_mask is None else attention_mask[0, 0, :, : key.shape[-2]].detach()
        scaling = kwargs.get("scaling")
        calls[layer] = Call(
            query=query[0].detach(),
            key=key[0].detach(),
            value=value[0].detach(),
            mask=mask,
            scaling=float(module.head_dim**-0.5 if scaling is None else scaling),
            softcap=kwargs.get("softcap"),
            sliding_window=kwargs.get("sliding_window"),
            output=output[0].detach(),
        )
    return output, weights


def _register() -> None:
    from transformers.masking_utils import AttentionMaskInterface, eager_mask
    from transformers.modeling_utils import AttentionInterface

    AttentionInterface.register(PROBE, probe_attention)
    AttentionMaskInterface.register(PROBE, eager_mask)  # the probe reads the same additive masks as eager


def shadow(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``model``'s modules sharing its parameters and buffers, whose config selects the probe."""
    shared = {id(t): t for t in itertools.chain(model.parameters(), model.buffers())}
    twin = copy.deepcopy(model, shared)
    twin.config._attn_implementation = PROBE  # the copy's own config: the model's stays "eager"
    return twin


def trace(model: torch.nn.Module, ids: list[int], layers: set[int] | None = None) -> Trace:
    """One pass of a decoder-only ``model`` over ``ids`` with the attention of ``layers`` (all: None) recorded."""
    _register()
    x = torch.tensor([ids], device=next(model.parameters()).device)
    calls: dict[int, Call] = {}
    token = _calls.set((calls, layers))
    try:
        with torch.no_grad():
            out = shadow(model)(
                input_ids=x, attention_mask=torch.ones_like(x), output_hidden_states=True, use_cache=False
            )
    finally:
        _calls.reset(token)
    if not calls:
        raise NotProbed(f"{type(model).__name__}'s attention does not go through transformers' AttentionInterface")
    return Trace(calls, tuple(h[0] for h in out.hidden_states))
