"""The explorer's data: one run's attention, every kind, layer and head, packed for the browser.

:func:`explorer_payload` turns a sequence of :class:`~model.core.results.AttentionKind` into a dict:
token labels and axis names as JSON-able values, every weight in one little-endian blob.
:func:`pack_payload` makes that one ``bytes`` value for Streamlit's components v2 (which passes raw
bytes through untouched, no JSON lists); ``js/data.js`` reads it back.

Two encodings, chosen per payload by its size. Up to :data:`EXACT_WEIGHTS` weights (a 12 × 12 model
reads about 90 tokens within it) every weight goes as float32 ("f4"), bit for bit. Past it (a model's
full context: GPT-2's 1,024 tokens are 151 M weights, 604 MB as float32) each weight goes as one byte
("q8"): row ``r`` of a map sends its largest weight ``s_r`` as float32 and every visible cell ``w`` as
``round(255 · w / s_r)``, read back as ``code · s_r / 255``, so no weight is off by more than
``s_r / 510`` (a fifth of a percent of its row's largest) and a row's largest weight is exact. The codes
go sparse (:func:`sparse_codes`: a bit a cell, then the codes that are not 0): at 1,024 tokens most
are 0, and 12 × 12 maps take about 16 MB instead of 77 MB of bytes. The
maps are drawn in 256 colours, so the heatmap is what the float32 copy would draw; the tooltip reads
"≈". Nothing is computed from the copy: a click is explained from the model's own tensors, and the
weight it reports is read from the run (:func:`pages.shared.explorer.checked_cell`).

Tokens reach the browser only as display labels (:func:`display_token`): control, format and other
invisible characters become their code point (``U+202E``), so no bidi control reaches the page; the
script draws them as text (``textContent``, canvas ``fillText``), never as markup.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from model.core.results import AttentionKind
from model.core.triangle import CausalMaps, is_causal
from model.core.triangle import starts as row_starts
from viz.common import HEAD_COLORS, WEIGHT_STOPS, printable
from viz.explorer.state import clamp_state

MAGIC = b"AEX1"  # packed payload: MAGIC, uint32 header length, header JSON, padding to 4, the weights blob
# 12 layers × 12 heads × 1,024² (GPT-2, BERT-base at the full context) with room to spare: 160 MB as q8
MAX_WEIGHTS = 160_000_000
EXACT_WEIGHTS = 1 << 20  # up to this many weights (4 MB of float32) every weight goes exactly
LEVELS = 255  # q8: a weight is a byte, 0..255 of its row's largest


def display_token(token: str) -> str:
    """``token`` as the explorer shows it: as every figure shows it (:func:`viz.common.printable`:
    newline ``⏎``, a bidi override ``⟨U+202E⟩``), and a lone space as ``␣``, the empty string as ``∅``,
    so no token is blank."""
    return {"": "∅", " ": "␣"}.get(token) or printable(token)


def rollout_kind(kinds: Sequence[AttentionKind]) -> AttentionKind:
    """The kind a rollout belongs to: the encoder's self-attention, else the first self-attention."""
    by_name = {k.name: k for k in kinds}
    return by_name.get("encoder") or next((k for k in kinds if not k.cross), kinds[0])


def explorer_payload(
    kinds: Sequence[AttentionKind],
    *,
    state: Mapping[str, Any] | None = None,
    rollout: np.ndarray | None = None,
    title: str = "",
    exact: bool | None = None,
    reuse: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The explorer's data for ``kinds`` (in display order): a JSON-able header and, under
    ``"weights"``, every kind's ``(layers, heads, queries, keys)`` weights, then the rollout, as one
    little-endian ``bytes`` blob; each kind says its ``encoding`` and where its weights start: an
    "f4" kind at ``offset`` (in floats), a "q8" kind's row scales at ``scales`` (in floats), the bits of
    its codes at ``bits`` and its non-zero codes at ``nonzero`` (in bytes, after every float; ``starts``
    says where each map's begin among them). A kind with masked cells is ``packed``: each head
    sends only its unmasked cells, row by row (the masked ones are 0 by definition); :func:`kind_weights`
    and the browser put them back in place. ``exact`` forces float32 (True) or q8 (False); by default
    a payload of up to :data:`EXACT_WEIGHTS` weights is exact. The rollout is always float32.

    ``state`` (kind, layer, head, view) is the initial view, clamped to what exists. ``rollout`` is a
    ``(queries, keys)`` array for the encoder's self-attention. ``reuse`` is an earlier payload of the
    very same ``kinds`` and ``rollout`` (the caller vouches for it): its encoded weights are taken as
    they are and only the title and the state are new (a rerun of a page at 1,024 tokens then costs no
    second encoding). Raises ValueError on empty input or shapes that do not match."""
    kinds = list(kinds)
    if not kinds:
        raise ValueError("the explorer needs at least one kind of attention (an AttentionKind)")
    if len({k.name for k in kinds}) != len(kinds):
        raise ValueError(f"kind names must be unique, got {[k.name for k in kinds]}")
    total = sum(int(np.size(k.weights)) for k in kinds)
    if total > MAX_WEIGHTS:
        raise ValueError(
            f"{total:,} attention weights are too many for the explorer (at most {MAX_WEIGHTS:,}, a 12-layer, "
            "12-head model at 1,024 tokens): use a shorter input or fewer layers"
        )
    for k in kinds:
        if k.weights.ndim != 4 or 0 in k.weights.shape:
            raise ValueError(
                f"{k.name}: weights must be (layers, heads, queries, keys) with none empty, got {k.weights.shape}"
            )
    owner = rollout_kind(kinds) if rollout is not None else None
    if rollout is not None and np.shape(rollout) != owner.weights.shape[-2:]:
        raise ValueError(
            f"rollout has shape {np.shape(rollout)}, but {owner.name} has {owner.weights.shape[-2:]} (queries, keys)"
        )
    if reuse is not None:
        roll = reuse["rollout"] and reuse["rollout"]["kind"]
        return {**reuse, "title": str(title), "state": clamp_state(kinds, state, roll)}
    exact = total <= EXACT_WEIGHTS if exact is None else exact
    floats: list[np.ndarray] = []  # float32 parts first (every float aligned), then the q8 codes
    codes: list[np.ndarray] = []
    n_floats = n_codes = 0
    meta = []
    for k in kinds:
        mask = np.broadcast_to(np.asarray(k.mask, dtype=bool), k.weights.shape[-2:])
        packed = not mask.all()
        entry = {**_kind_meta(k, n_floats), "packed": packed, "encoding": "f4" if exact else "q8"}
        if exact and isinstance(k.weights, CausalMaps) and is_causal(mask):
            w = k.weights.packed  # the visible cells, row by row: what a causal map sends already
            floats.append(w.ravel())
            n_floats += w.size
        elif exact:
            w = np.ascontiguousarray(k.weights, dtype="<f4")
            if packed:  # only the cells the model may attend to: a causal map sends half its floats
                w = np.ascontiguousarray(w[:, :, mask])
            floats.append(w.ravel())
            n_floats += w.size
        else:
            scales, q = quantise(k.weights, mask)
            bits, nonzero, starts = sparse_codes(q)
            floats.append(scales.ravel())
            codes += [bits, nonzero]
            entry |= {"scales": n_floats, "bits": n_codes, "nonzero": n_codes + bits.size, "starts": starts}
            n_floats += scales.size
            n_codes += bits.size + nonzero.size
        meta.append(entry)
    rollout_meta = None
    if rollout is not None:
        floats.append(np.ascontiguousarray(rollout, dtype="<f4").ravel())
        rollout_meta = {"kind": owner.name, "offset": n_floats}
        n_floats += floats[-1].size
    for entry in meta:  # the codes follow the floats: their byte offsets count from the blob's start
        if entry["encoding"] == "q8":
            entry["bits"] += 4 * n_floats
            entry["nonzero"] += 4 * n_floats
    pad = [np.zeros(-n_codes % 4, np.uint8)]  # the blob stays a whole number of floats
    weights = b"".join(a.tobytes() for a in floats + codes + pad)
    header = {
        "format": 1,
        "title": str(title),
        "kinds": meta,
        "rollout": rollout_meta,
        "state": clamp_state(kinds, state, rollout_meta and rollout_meta["kind"]),
        "head_colors": list(HEAD_COLORS),  # the lines view's colours, the same as the figures'
        "weight_stops": list(WEIGHT_STOPS),  # the maps' colour scale, the same as the figures' and the tables'
    }
    digest = hashlib.sha1(json.dumps(header["kinds"], sort_keys=True).encode() + weights).hexdigest()[:16]
    return {**header, "digest": digest, "weights": weights}


def quantise(weights: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The q8 encoding of ``(layers, heads, queries, keys)`` weights: each row's largest weight
    ``s`` (float32, ``(layers, heads, queries)``) and, for the cells ``mask`` shows, row by row,
    ``round(255 · w / s)`` as uint8 (``(layers, heads, visible cells)``). :func:`dequantise` reads it
    back within ``s / 510`` of each weight. Worked one layer at a time, so a 1,024-token run never
    holds a second float copy of every layer."""
    L, H, Tq, _ = weights.shape
    mask = np.asarray(mask, dtype=bool)
    if isinstance(weights, CausalMaps) and is_causal(mask):
        return _quantise_triangle(weights)
    spans = _row_spans(mask)
    scales = np.empty((L, H, Tq), dtype="<f4")
    codes = np.empty((L, H, int(mask.sum())), dtype=np.uint8)
    for layer in range(L):
        w = np.asarray(weights[layer], dtype=np.float32)  # (heads, queries, keys)
        s = scales[layer] = w.max(-1)  # masked cells are 0, so a row's largest is its largest visible weight
        inv = np.divide(np.float32(LEVELS), s, out=np.zeros_like(s), where=s > 0)
        if spans is None:  # visible keys in several runs a row: the whole layer, then its visible cells
            q = (w * inv[..., None] + 0.5).astype(np.uint8)  # + 0.5, then truncating: the nearest code
            codes[layer] = q.reshape(H, -1)[:, mask.ravel()]
            continue
        # one run of visible keys a row (causal, a window, padding at the end): row by row, only the run
        # (half the work of a causal map, and each row's floats stay in the cache)
        out, at = codes[layer], 0
        for i, (a, b) in enumerate(spans):
            row = w[:, i, a:b] * inv[:, i, None]
            row += 0.5
            out[:, at : at + b - a] = row  # truncated to uint8 on assignment: the nearest code
            at += b - a
    return scales, codes


def _quantise_triangle(weights: CausalMaps) -> tuple[np.ndarray, np.ndarray]:
    """:func:`quantise` of causal maps held as their triangle, whose cells are already the visible ones in
    the codes' order: the same arithmetic on the packed rows, with no dense layer built."""
    L, H, n, _ = weights.shape
    at = row_starts(n).tolist()
    scales = np.empty((L, H, n), dtype="<f4")
    codes = np.empty(weights.packed.shape, dtype=np.uint8)
    for layer in range(L):
        p, out = weights.packed[layer], codes[layer]  # (heads, visible cells)
        s = scales[layer] = np.maximum.reduceat(p, at[:-1], axis=-1)
        inv = np.divide(np.float32(LEVELS), s, out=np.zeros_like(s), where=s > 0)
        for i in range(n):
            row = p[:, at[i] : at[i + 1]] * inv[:, i, None]
            row += 0.5
            out[:, at[i] : at[i + 1]] = row  # truncated to uint8 on assignment: the nearest code
    return scales, codes


def _row_spans(mask: np.ndarray) -> list[tuple[int, int]] | None:
    """Each row's visible keys as one ``(start, end)`` run, or None when some row has more than one."""
    spans = []
    for row in mask:
        on = np.flatnonzero(row)
        if on.size and on[-1] - on[0] + 1 != on.size:
            return None
        spans.append((int(on[0]), int(on[-1]) + 1) if on.size else (0, 0))
    return spans


def sparse_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """q8 codes ``(layers, heads, cells)`` as sent: one bit a cell (little-endian bit order, map after map:
    map ``m``'s cells start at bit ``m · cells``), set where the code is not 0, then the codes that are not
    0, and where each map's start among them (``layers · heads + 1`` numbers). A long run's weights are
    mostly far below their row's largest (at 1,024 tokens nine in ten codes are 0), so this sends about a
    fifth of a byte a weight; :func:`dense_codes` is its inverse."""
    flat = codes.reshape(-1, codes.shape[-1])
    on = flat != 0
    starts = np.concatenate([[0], np.cumsum(on.sum(1))]).tolist()
    return np.packbits(on.ravel(), bitorder="little"), flat[on], starts


def dense_codes(bits: np.ndarray, nonzero: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The codes :func:`sparse_codes` sent, as a ``shape`` uint8 array."""
    n = int(np.prod(shape))
    on = np.unpackbits(bits, count=n, bitorder="little").astype(bool)
    out = np.zeros(n, dtype=np.uint8)
    out[on] = nonzero
    return out.reshape(shape)


def dequantise(scales: np.ndarray, codes: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The ``(layers, heads, queries, keys)`` float32 weights that :func:`quantise` encoded: each code
    times its row's largest weight over 255, masked cells 0."""
    L, H, Tq = scales.shape
    rows = np.repeat(np.arange(Tq), np.asarray(mask, bool).sum(1))  # the row of each visible cell
    out = np.zeros((L, H, *mask.shape), dtype="<f4")
    out[:, :, mask] = codes.reshape(L, H, -1) * (scales[:, :, rows] / np.float32(LEVELS))
    return out


def _kind_meta(k: AttentionKind, offset: int) -> dict[str, Any]:
    L, H, Tq, Tk = k.weights.shape
    mask = np.asarray(k.mask, dtype=bool)
    return {
        "name": k.name,
        "title": k.title,
        "query_axis": k.query_axis,
        "key_axis": k.key_axis,
        "queries": [display_token(t) for t in k.queries],
        "keys": [display_token(t) for t in k.keys],
        "special": [bool(s) for s in k.special],
        "cross": bool(k.cross),
        "layers": L,
        "heads": H,
        "offset": offset,
        # one character per cell, row by row: "1" where the model may attend, "0" where it may not
        "mask": np.where(mask.ravel(), ord("1"), ord("0")).astype(np.uint8).tobytes().decode("ascii"),
        # grouped-query attention: query head h shares key/value head h // (heads // kv_heads) (0: none)
        "kv_heads": int(k.kv_heads),
        # a sliding window: in these layers query i cannot see key j when i - j >= size (the weights there are
        # 0, as transformers masks them; the views hatch them as masked)
        "window": {"size": int(k.window), "layers": list(k.window_layers)} if k.window else None,
    }


def pack_payload(payload: Mapping[str, Any], **extra: Any) -> bytes:
    """``payload`` as one ``bytes`` value for the component: ``AEX1``, the header's length (uint32,
    little-endian), the header JSON (with ``extra``, e.g. ``projector``), zero padding to a multiple
    of 4, then the weights blob (float32, then the q8 codes)."""
    header = {k: v for k, v in payload.items() if k != "weights"} | extra
    raw = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    pad = (-(len(MAGIC) + 4 + len(raw))) % 4
    return MAGIC + struct.pack("<I", len(raw) + pad) + raw + b" " * pad + payload["weights"]


def unpack_payload(blob: bytes) -> dict[str, Any]:
    """The inverse of :func:`pack_payload` (what the browser does), for tests and tools."""
    if blob[:4] != MAGIC:
        raise ValueError("not an attention explorer payload (it does not start with AEX1)")
    (n,) = struct.unpack("<I", blob[4:8])
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    return {**header, "weights": blob[8 + n :]}


def weights_array(payload: Mapping[str, Any]) -> np.ndarray:
    """The blob of ``payload`` as one flat float32 array (views into it by each f4 kind's offset and the
    rollout's; a q8 kind's codes are bytes, read by :func:`kind_weights`)."""
    return np.frombuffer(payload["weights"], dtype="<f4")


def kind_weights(payload: Mapping[str, Any], meta: Mapping[str, Any]) -> np.ndarray:
    """One kind's ``(layers, heads, queries, keys)`` weights from ``payload`` (``meta`` is its header
    entry), with the masked cells of a packed kind back in place as 0; a q8 kind dequantised
    (:func:`dequantise`)."""
    L, H, Tq, Tk = meta["layers"], meta["heads"], len(meta["queries"]), len(meta["keys"])
    mask = np.frombuffer(meta["mask"].encode("ascii"), dtype=np.uint8).reshape(Tq, Tk) == ord("1")
    n = int(mask.sum()) if meta.get("packed") else Tq * Tk
    if meta.get("encoding") == "q8":
        scales = weights_array(payload)[meta["scales"] : meta["scales"] + L * H * Tq].reshape(L, H, Tq)
        blob = payload["weights"]
        bits = np.frombuffer(blob, dtype=np.uint8, count=(L * H * n + 7) // 8, offset=meta["bits"])
        nonzero = np.frombuffer(blob, dtype=np.uint8, count=meta["starts"][-1], offset=meta["nonzero"])
        return dequantise(scales, dense_codes(bits, nonzero, (L, H, n)), mask)
    flat = weights_array(payload)[meta["offset"] : meta["offset"] + L * H * n]
    if not meta.get("packed"):
        return flat.reshape(L, H, Tq, Tk)
    out = np.zeros((L, H, Tq, Tk), dtype="<f4")
    out[:, :, mask] = flat.reshape(L, H, n)
    return out
