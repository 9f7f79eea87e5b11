"""Did attention matter? For one query token, what each key contributed, by five measures side by side:
the record every model family fills, the measures, and the one function that assembles them.

For the query position I of one kind of attention, every layer l, head h and key j (the same row the
explorer shows):

- ``attention``: a[l,h,I,j], the map's own weight.
- ``norm`` (Kobayashi et al. 2020, "Attention is Not Only a Weight"): ‖a[l,h,I,j] · f_lh(x_j)‖ with
  f_lh(x) = (x W_V^lh + b_V^lh) W_O^lh, x being the layer's attention input after its pre-norm where it
  has one; W_O^lh is head h's slice of the output projection (its bias, shared by every key, left out).
  ``norm_layer`` = ‖Σ_h a[l,h,I,j] · f_lh(x_j)‖, the heads summed before the norm.
- ``value_zeroing`` (Mohebbi et al. 2023, "Quantifying Context Mixing in Transformers"): the cosine
  distance between layer l's output at I (the block's output: transformers' ``hidden_states[l + 1]``)
  as computed and with token j's value vector zeroed in every head of layer l, normalised to sum 1 over j.
- ``rollout`` (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers"): row I of
  Π_{l' ≤ l} (0.5 · mean_h A_l' + 0.5 · Id) for every l (:func:`model.analysis.maps.attention_rollout`);
  the last layer's row is the whole product. Self-attention only.
- ``grad_attention``: a ⊙ ∂s/∂a, s being the score the page shows; absent where the model predicts nothing.

A family differs only in how it obtains the tensors: our models through
:class:`~model.nets.attention.Probe` traces of their own forward pass (:mod:`model.analysis.attribute`),
a Hugging Face model through transformers' ``AttentionInterface`` (:mod:`model.hub.attribute`). Each
fills one :class:`Sources` — the pass's weights, each layer's f_lh(x_j), a re-run per layer for value
zeroing, the score, the tokens — and :func:`assemble` builds every method from it into one
:class:`Attribution`, the record the panel, the figures and the command line read.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from model.analysis.maps import attention_rollout
from model.analysis.ranks import ranks, spearman  # noqa: F401 (model.analysis.attribute re-exports both)

METHODS = ("attention", "norm", "norm_layer", "value_zeroing", "rollout", "grad_attention")
# the per-layer measures the disagreement sentence compares with attention, as it names them
CONTRIBUTIONS = {"norm_layer": "norm-based", "value_zeroing": "value-zeroing", "grad_attention": "gradient × attention"}


@dataclass(frozen=True, eq=False)
class Attribution:
    """One query row's contributions by every method; arrays are float64, shaped as :data:`METHODS` say:
    ``attention``, ``norm``, ``grad_attention`` ``(L, H, K)``; ``norm_layer``, ``value_zeroing``,
    ``rollout`` ``(L, K)``."""

    model: str
    kind: str
    query: int
    query_tokens: list[str]
    key_tokens: list[str]
    visible: np.ndarray  # (K,) bool: the keys the query may attend to
    methods: dict[str, np.ndarray]
    absent: dict[str, str] = field(default_factory=dict)  # method -> why it is not shown
    score: str = ""  # what grad_attention differentiates, in words
    notes: list[str] = field(default_factory=list)  # about the query position (padding, nothing visible)
    # encoder-decoders: (L, output words) the share of each word's cross-attention sublayer output that came
    # from the source rather than from the words already written (:func:`source_share`); None otherwise
    source_share: np.ndarray | None = None

    @property
    def query_token(self) -> str:
        return self.query_tokens[self.query]

    def layer_rows(self, method: str) -> np.ndarray:
        """``(L, K)`` one row per layer: per-head measures averaged over heads (attention, grad) or
        summed in absolute value (norm), layer measures as they are."""
        m = self.methods[method]
        if m.ndim == 2:
            return m
        return np.abs(m).sum(1) if method == "norm" else m.mean(1)

    def shares_at(self, layer: int) -> dict[str, np.ndarray]:
        """Each method's row at ``layer`` as shares of the row (absolute values summing to 1), by name,
        in :data:`METHODS` order: what the panel draws side by side. Rollout's row is the product up to
        ``layer``; ``norm`` (per head) is left out beside ``norm_layer``."""
        return {
            m: _shares(self.layer_rows(m)[layer : layer + 1])[0] for m in METHODS if m in self.methods and m != "norm"
        }

    @property
    def layers(self) -> int:
        return len(self.methods["attention"])

    @property
    def agreement(self) -> dict[str, float]:
        """Spearman's rank correlation (ties ranked by their mean) between each method's row and the
        head-averaged attention row of the same layer, over the visible keys, averaged over layers;
        NaN where a layer's row is constant."""
        att, v = self.layer_rows("attention"), self.visible
        out = {}
        for name in self.methods:
            if name == "attention":
                continue
            rows = self.layer_rows(name)
            out[name] = float(np.nanmean([spearman(att[l, v], rows[l, v]) for l in range(len(rows))]))
        return out

    @property
    def disagreement(self) -> str:
        """Where attention and a contribution differ most, in one sentence: the layer, key and method with
        the largest gap between their shares of the row (each normalised to sum 1 over the keys)."""
        att = _shares(self.layer_rows("attention"))
        best = None
        for name, label in CONTRIBUTIONS.items():
            if name not in self.methods:
                continue
            gap = np.abs(att - _shares(self.layer_rows(name)))
            gap[:, ~self.visible] = -1
            layer, key = np.unravel_index(int(gap.argmax()), gap.shape)
            if best is None or gap[layer, key] > best[0]:
                best = (gap[layer, key], name, label, int(layer), int(key))
        if best is None or best[0] <= 0:
            return "Attention and the contributions agree on every key."
        _, name, label, layer, key = best
        c = _shares(self.layer_rows(name))[layer, key]
        return (
            f"In layer {layer}, {self.key_tokens[key]!r} (key {key}) takes {att[layer, key]:.0%} of the "
            f"attention and {c:.0%} of the {label} contribution."
        )

    def to_json(self) -> dict:
        """The command line's shape: tokens, query and every method as nested lists (null when absent)."""
        return {
            "model": self.model,
            "kind": self.kind,
            "tokens": self.key_tokens,
            "query_tokens": self.query_tokens,
            "query": self.query,
            "methods": {m: self.methods[m].tolist() if m in self.methods else None for m in METHODS},
            "absent": self.absent,
            "score": self.score,
            "agreement": {k: (None if v != v else round(v, 4)) for k, v in self.agreement.items()},
            "agreement_measure": "Spearman rank correlation with attention, visible keys, mean over layers",
            "disagreement": self.disagreement,
            "notes": self.notes,
            "source_share": None if self.source_share is None else self.source_share.tolist(),
        }


def _shares(rows: np.ndarray) -> np.ndarray:
    """Each row's absolute values divided by their sum (zero rows stay zero)."""
    a = np.abs(rows)
    total = a.sum(-1, keepdims=True)
    return np.divide(a, total, out=np.zeros_like(a), where=total > 0)


NO_ROLLOUT = "rollout multiplies self-attention layers; cross-attention maps one sequence onto another"


@dataclass(frozen=True, eq=False)
class Sources:
    """What one family's pass gave for query ``query`` of ``kind`` attention: all :func:`assemble` needs."""

    model: str  # "classifier", "generator", "translator", or the Hugging Face id or folder
    kind: str  # "encoder", "decoder" or "cross"
    query: int
    query_tokens: list[str]
    key_tokens: list[str]
    visible: np.ndarray  # (K,) bool: the keys the query may attend to
    weights: Sequence[Tensor]  # per layer (1, H, Tq, K): the tensors the outputs were computed from (with grad)
    transformed: Sequence[Tensor]  # per layer (H, K, dim): f_lh(x_j), each head's transformed value
    zeroed: Callable[[int], Tensor]  # layer -> (K + 1, dim) its output at I as computed, then without key j's value
    score: Tensor | None  # what gradient × attention differentiates (None: nothing, ``score_text`` says why)
    score_text: str
    cross: bool = False  # cross-attention: no rollout
    # where given, a re-run that fails leaves value zeroing absent with this reason (and the error's);
    # None: the error is raised
    zeroing_failure: str | None = None
    notes: list[str] = field(default_factory=list)  # the family's own about the query position (padding)
    # encoder-decoders: () -> (L, output words) the source's share (see Attribution); a string says why it
    # is not computed (a note); None: the model has no source
    source_share: Callable[[], Tensor] | str | None = None


def norms(weights: Tensor, transformed: Tensor) -> tuple[Tensor, Tensor]:
    """Kobayashi et al.'s norms from one layer's query row ``weights`` ``(H, K)`` and ``transformed``
    ``(H, K, dim)`` = f_lh(x_j): per head ‖a · f‖ ``(H, K)`` and for the layer ‖Σ_h a · f‖ ``(K,)``."""
    weighted = weights[..., None] * transformed
    return weighted.norm(dim=-1), weighted.sum(0).norm(dim=-1)


def value_zeroing(outputs: Tensor, unread: Tensor) -> Tensor:
    """``outputs`` ``(K + 1, dim)``: row 0 layer l's output at I as computed, row 1 + j with key j's value
    zeroed. Cosine distances to row 0, normalised to sum 1 (all zero stays zero). Keys flagged ``unread``
    (weight 0 in every head) are exactly 0: the batched re-run's rounding would otherwise give them ~1e-7."""
    d = 1 - torch.cosine_similarity(outputs[1:].double(), outputs[:1].double(), dim=-1)
    d = d.clamp(min=0).masked_fill(unread, 0.0)
    total = d.sum()
    return d / total if total > 0 else d


def rollout_rows(layers: list[Tensor], query: int) -> Tensor:
    """Row ``query`` of the rollout up to each layer: ``(L, K)``; layers are ``(H, T, T)``."""
    return torch.stack([attention_rollout(layers[: l + 1])[query] for l in range(len(layers))])


def alti(parts: Tensor, output: Tensor) -> Tensor:
    """ALTI's contributions (Ferrando et al. 2022, "Measuring the Mixing of Contextual Information in the
    Transformer", eq. 7–8; used for source and target in ALTI+, Ferrando et al. 2022, "Towards Opening the
    Black Box of Neural Machine Translation"): for ``output`` y ``(..., dim)`` made of ``parts`` T_k
    ``(..., n, dim)``, c_k = max(0, ‖y‖₁ − ‖y − T_k‖₁), normalised to sum 1 over k."""
    c = (output.abs().sum(-1, keepdim=True) - (output[..., None, :] - parts).abs().sum(-1)).clamp(min=0)
    total = c.sum(-1, keepdim=True)
    return torch.where(total > 0, c / total.clamp(min=torch.finfo(c.dtype).tiny), 0.0)


def shadow(module: nn.Module) -> nn.Module:
    """A copy of ``module``'s tree sharing every parameter and buffer: hooks and replaced methods on it
    never touch the model every session shares."""
    shared = {id(t): t for t in itertools.chain(module.parameters(), module.buffers())}
    return copy.deepcopy(module, shared)


def assemble(s: Sources) -> Attribution:
    """Every method of :data:`METHODS` for ``s``'s query row, for any family: attention, the norms, value
    zeroing, rollout and gradient × attention, in that order (the gradient last: it frees the pass's graph),
    each absent with its reason where ``s`` cannot give it."""
    I = s.query
    rows = [w[0, :, I].detach() for w in s.weights]  # (H, K) per layer
    methods: dict[str, Tensor] = {"attention": torch.stack([w[0, :, I] for w in s.weights])}
    absent: dict[str, str] = {}
    norm, norm_layer = zip(*(norms(a, f) for a, f in zip(rows, s.transformed)))
    methods.update(norm=torch.stack(norm), norm_layer=torch.stack(norm_layer))
    try:
        zeroed = [value_zeroing(s.zeroed(l), (a == 0).all(0)).to(a.dtype) for l, a in enumerate(rows)]
        methods["value_zeroing"] = torch.stack(zeroed)
    except Exception as why:  # a family whose layer cannot be called alone: said, the rest shown
        if s.zeroing_failure is None:
            raise
        absent["value_zeroing"] = f"{s.zeroing_failure} ({why})"
    if s.cross:
        absent["rollout"] = NO_ROLLOUT
    else:
        methods["rollout"] = rollout_rows([w[0].detach() for w in s.weights], I)
    if s.score is None:
        absent["grad_attention"] = s.score_text
    else:
        grads = torch.autograd.grad(s.score, list(s.weights), allow_unused=True)
        methods["grad_attention"] = torch.stack(
            [w[0, :, I] * (0 if g is None else g[0, :, I]) for w, g in zip(s.weights, grads)]
        )
    notes = list(s.notes)
    if not s.visible.any():
        notes.append(f"position {I} may attend to no key: every contribution is zero")
    shares = None
    if isinstance(s.source_share, str):
        notes.append(s.source_share)
    elif s.source_share is not None:
        shares = s.source_share().to("cpu", torch.float64).numpy()
    return Attribution(
        model=s.model,
        kind=s.kind,
        query=I,
        query_tokens=list(s.query_tokens),
        key_tokens=list(s.key_tokens),
        visible=s.visible,
        methods={k: v.detach().to("cpu", torch.float64).numpy() for k, v in methods.items()},
        absent=absent,
        score=s.score_text if s.score is not None else "",
        notes=notes,
        source_share=shares,
    )
