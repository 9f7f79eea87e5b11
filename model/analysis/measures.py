"""Every head measure, described once: its name, what people call it, its formula, the help a page shows, its
range, the kinds of attention it applies to, the role a head scoring high on it plays, and where it comes from.

The head finder (:mod:`model.analysis.heads`, computed in :mod:`model.analysis.head_tensors`) and head
profiles (:mod:`model.analysis.profiles`) read their metric names, help texts, ranges and role tables from
:data:`MEASURES`; so do the training snapshots' roles (:mod:`model.analysis.snapshots`) and the figures' axes
(:mod:`viz.heads`, :mod:`viz.profiles`). A new measure is one record here plus its computation.

Kinds of attention: ``"bidirectional"`` self-attention (an encoder), ``"causal"`` self-attention (a decoder)
and ``"cross"``-attention (queries of one sequence, keys of another).
"""

from __future__ import annotations

from dataclasses import dataclass

BIDIRECTIONAL, CAUSAL, CROSS = "bidirectional", "causal", "cross"
SELF_KINDS = frozenset({BIDIRECTIONAL, CAUSAL})
ALL_KINDS = frozenset({BIDIRECTIONAL, CAUSAL, CROSS})


@dataclass(frozen=True)
class Measure:
    """One head measure: a number per head, a mean over the query rows it applies to."""

    name: str  # the key in every table, JSON report and URL ("previous")
    label: str  # what people call it ("previous token")
    formula: str  # its definition on one ``(queries, keys)`` map ``a`` of softmax rows
    help: str  # the one line a page shows beside it
    range: tuple[float, float | None]  # (lowest, highest) it can take; None: no fixed top (it grows with the keys)
    kinds: frozenset[str]  # the kinds of attention it is defined for (elsewhere it is NaN, never 0)
    role: str | None = None  # the role a head that scores high plays, named for people; None: no role
    paper: str = ""  # where the measure comes from
    finder: str | None = None  # the head finder's group: "row" (every query row), "probe" (repeated random
    # tokens) or "cross" (a cross-attention line's strongest keys); None: the finder does not score it
    profile: int | None = None  # its column in head profiles (0 first); None: head profiles do not show it
    history: bool = False  # scored at every training snapshot (the Training history's roles)

    def applies(self, *, cross: bool, causal: bool) -> bool:
        """Whether this measure is defined for a kind of attention."""
        return (CROSS if cross else CAUSAL if causal else BIDIRECTIONAL) in self.kinds


MEASURES: tuple[Measure, ...] = (
    Measure(
        "previous",
        "previous token",
        "mean a[i, i-1] over rows i >= 1",
        "mean weight on the token just before the query",
        (0.0, 1.0),
        SELF_KINDS,
        role="previous-token",
        paper="Elhage et al. 2021, A Mathematical Framework for Transformer Circuits",
        finder="row",
        profile=1,
        history=True,
    ),
    Measure(
        "first",
        "first token (sink)",
        "mean a[i, 0] (the finder: over rows i >= 1 of self-attention, every row of cross-attention)",
        "mean weight on the first token (the sink)",
        (0.0, 1.0),
        ALL_KINDS,
        role="first-token (sink)",
        paper="Xiao et al. 2024, Efficient Streaming Language Models with Attention Sinks",
        finder="row",
        profile=3,
        history=True,
    ),
    Measure(
        "self",
        "own token",
        "mean a[i, i]",
        "mean weight on the query's own token (the diagonal)",
        (0.0, 1.0),
        SELF_KINDS,
        role="self",
        finder="row",
        profile=2,
    ),
    Measure(
        "entropy",
        "entropy",
        "mean -sum_j a_ij log2 a_ij (0 log 0 = 0)",
        "bits, mean over queries: 0 = each query looks at one key, log2(keys) = spread evenly",
        (0.0, None),
        ALL_KINDS,
        finder="row",
        profile=0,
    ),
    Measure(
        "distance",
        "attention distance",
        "mean sum_j a_ij |i - j|",
        "mean distance, in positions, between a query and what it looks at",
        (0.0, None),
        SELF_KINDS,
        paper="Vig & Belinkov 2019, Analyzing the Structure of Attention in a Transformer Language Model",
        finder="row",
    ),
    Measure(
        "induction",
        "induction",
        "on [prefix] + r + r (n random tokens twice): mean a[i, i-n+1] over the second copy's rows",
        "repeated random tokens: weight on the token after this one's earlier copy",
        (0.0, 1.0),
        frozenset({CAUSAL}),
        role="induction",
        paper="Olsson et al. 2022, In-context Learning and Induction Heads",
        finder="probe",
        history=True,
    ),
    Measure(
        "duplicate",
        "duplicate token",
        "on [prefix] + r + r (n random tokens twice): mean a[i, i-n] over the second copy's rows",
        "repeated random tokens: weight on this token's earlier copy",
        (0.0, 1.0),
        frozenset({CAUSAL}),
        role="duplicate-token",
        paper="Olsson et al. 2022, In-context Learning and Induction Heads",
        finder="probe",
        history=True,
    ),
    Measure(
        "monotonic",
        "monotonic alignment",
        "Spearman correlation of query position i and strongest key argmax_j a_ij (0 when it never moves)",
        "Spearman correlation of query position and strongest-key position (1 = in order)",
        (-1.0, 1.0),
        frozenset({CROSS}),
        role="monotonic alignment",
        finder="cross",
        profile=5,
    ),
    Measure(
        "forward",
        "forward steps",
        "share of consecutive queries (i, i+1) whose strongest key does not move backward",
        "share of steps where the strongest key does not move backward",
        (0.0, 1.0),
        frozenset({CROSS}),
        finder="cross",
        profile=6,
    ),
    Measure(
        "special",
        "special tokens",
        "mean sum of a[i, j] over special keys j (<sos>, <eos>, <pad>, <unk>, words read as <unk>)",
        "mean weight on <sos>, <eos>, <pad>, <unk> and words read as <unk>",
        (0.0, 1.0),
        ALL_KINDS,
        profile=4,
    ),
)
BY_NAME = {m.name: m for m in MEASURES}
HELP = {m.name: m.help for m in MEASURES}  # name -> the help a page shows
ROLE_NAMES = {m.name: m.role for m in MEASURES if m.role}  # name -> the role's name on the pages


def measure(name: str) -> Measure:
    """The record of ``name``, with or without ``_nosink``; a KeyError names the measures there are."""
    try:
        return BY_NAME[name.removesuffix("_nosink")]
    except KeyError:
        raise KeyError(f"no head measure {name!r}; there are {', '.join(BY_NAME)}") from None


def finder_names(group: str | None = None) -> tuple[str, ...]:
    """The head finder's measures (of one ``group`` when given), in the finder's order."""
    return tuple(m.name for m in MEASURES if m.finder and (group is None or m.finder == group))


def profile_names(*, cross: bool) -> tuple[str, ...]:
    """Head profiles' columns for self-attention (defined on a bidirectional map) or cross-attention."""
    kind = CROSS if cross else BIDIRECTIONAL
    shown = [m for m in MEASURES if m.profile is not None and kind in m.kinds]
    return tuple(m.name for m in sorted(shown, key=lambda m: m.profile))
