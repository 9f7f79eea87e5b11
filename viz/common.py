"""What every figure family shares: unique axis labels, input checks, a readable layout and the one
heatmap that every single-matrix figure is drawn with."""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

FONT_SIZE = 14  # readable from the back of a room on a projector
TITLE_SIZE = 16
# One colour scale for attention weights on every page: the Plotly figures (COLORSCALE), the explorer
# and the matrix view (these stops, sent in their payloads) paint a weight alike. ColorBrewer's Blues,
# Plotly's "Blues", the figures' scale already: white at 0, so a weight the model hardly gives reads as
# nothing (viridis starts at a dark purple, which reads as something), and no weight is grey, so masked
# cells (grey and hatched in the explorer, blank in the figures and tables) stay apart.
WEIGHT_STOPS = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
# the same stops as Plotly writes its "Blues", so a figure's JSON is what it was with the name
COLORSCALE = [
    [i / (len(WEIGHT_STOPS) - 1), "rgb({},{},{})".format(*(int(c[j : j + 2], 16) for j in (1, 3, 5)))]
    for i, c in enumerate(WEIGHT_STOPS)
]
DIVERGING = "RdBu_r"  # signed values: blue below zero, red above, white at zero
MAX_LABEL = 24  # longer labels are cut on the axes (the index prefix keeps them unique); hover shows them whole
HOVER_LINE = 60  # a long label is broken into lines of this many characters on hover
NAMED_CHARS = {"\n": "⏎", "\t": "⇥", "\r": "↵"}
INVISIBLE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}  # control, format (e.g. U+202E), unassigned, separators
HEAD_COLORS = (  # one colour per head (colour-blind safe, Okabe-Ito then extras)
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
    "#999999",
    "#7F3C8D",
    "#11A579",
    "#3969AC",
    "#F2B701",
    "#E73F74",
    "#80BA5A",
    "#E68310",
    "#008695",
)


def _lean_template() -> go.layout.Template:
    """plotly_white cut down to what 2-D charts use. plotly deep-copies the template into every new
    figure; the full one (3-D scenes, maps, defaults for every trace type) cost ~80 ms a figure."""
    white = pio.templates["plotly_white"]
    keep = (
        "autotypenumbers",
        "colorway",
        "font",
        "hovermode",
        "hoverlabel",
        "paper_bgcolor",
        "plot_bgcolor",
        "coloraxis",
        "xaxis",
        "yaxis",
        "shapedefaults",
        "annotationdefaults",
        "title",
    )
    layout = {k: v for k, v in white.layout.to_plotly_json().items() if k in keep}
    data = {k: v for k, v in white.data.to_plotly_json().items() if k in ("heatmap", "bar", "scatter")}
    return go.layout.Template(layout=layout, data=data)


pio.templates["attention"] = _lean_template()
pio.templates.default = "attention"  # every figure of this process starts from the lean template


def head_name(layer: int, head: int, kind: str | None = None) -> str:
    """The one name of a head on every page, figure and table: ``"L3 H2"`` (layer 3, head 2, both counted
    from 0), with the kind in front where a model has more than one (``"cross L1 H0"``). The explorer's
    script writes the same (viz/explorer/js/chrome.js: headName)."""
    name = f"L{int(layer)} H{int(head)}"
    return f"{kind} {name}" if kind else name


def to_numpy(x) -> np.ndarray:
    """A float numpy array from a tensor (any device, with or without grad) or array-like."""
    if hasattr(x, "detach"):
        x = x.detach().to("cpu").float().numpy()
    return np.asarray(x, dtype=float)


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """``"i:token"`` labels, so that repeated tokens never merge on an axis."""
    return [f"{i}:{t}" for i, t in enumerate(tokens)]


def escape(text: str) -> str:
    """Caller text (titles, labels) as plotly shows it literally: plotly reads ``<b>``, ``<a href>``
    and friends as markup, and shows the entities ``&lt;``, ``&amp;`` as the plain characters."""
    return html.escape(str(text), quote=False)


def printable(text: str) -> str:
    """``text`` with control and invisible characters shown: newline, tab and carriage return as
    ``⏎ ⇥ ↵``, the others (U+202E turning text right to left, zero-width spaces, odd spaces) as
    their code point, ``⟨U+202E⟩``. A label or message then shows what the input really holds."""

    def show(ch: str) -> str:
        if ch in NAMED_CHARS:
            return NAMED_CHARS[ch]
        category = unicodedata.category(ch)
        if category in INVISIBLE or (category == "Zs" and ch != " "):
            return f"⟨U+{ord(ch):04X}⟩"
        return ch

    return "".join(map(show, str(text)))


def shown_token(token: str) -> str:
    """One token as every label and message names it: :func:`printable`, and a token of spaces only
    drawn with ``␣`` (a lone space as the explorer shows it), the empty one as ``∅``: no token is blank,
    and none breaks a line."""
    token = str(token)
    if not token:
        return "∅"
    if not token.strip(" "):
        return "␣" * len(token)
    return printable(token)


def number_text(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` places, and never ``-0.00``: a tiny negative shows as ``0.00``."""
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and not float(text) else text


def plot_labels(labels: Sequence[str], *, numbered: bool = True, limit: int | None = MAX_LABEL) -> list[str]:
    """The one label helper: ``"i:token"`` when ``numbered`` (so repeated tokens never merge),
    invisible characters shown (:func:`shown_token`: a lone space ``␣``), cut to ``limit`` characters with an ellipsis
    (``limit=None``: whole, for hover text), and escaped for plotly."""
    shown = [shown_token(t) for t in labels]
    raw = unique_labels(shown) if numbered else shown
    if limit is not None:
        raw = [t if len(t) <= limit else t[: limit - 1] + "…" for t in raw]
    return [escape(label) for label in raw]


def hover_labels(labels: Sequence[str], *, numbered: bool = True) -> list[str]:
    """Whole labels for hover text (see :func:`plot_labels`), long ones broken into lines."""
    shown = [shown_token(t) for t in labels]
    whole = unique_labels(shown) if numbered else shown
    return ["<br>".join(escape(t[i : i + HOVER_LINE]) for i in range(0, max(len(t), 1), HOVER_LINE)) for t in whole]


def full_label_hover(
    rows: list[str], cols: list[str], full_rows: list[str] | None, full_cols: list[str] | None, template: str
) -> tuple[list | None, str]:
    """Where an axis label was cut, hover shows it whole: per-cell ``customdata`` of the whole row and
    column labels and ``template`` reading them instead of ``%{y}``/``%{x}``. Nothing when no label was cut."""
    full_rows, full_cols = full_rows or rows, full_cols or cols
    if full_rows == rows and full_cols == cols:
        return None, template
    data = [[[r, c] for c in full_cols] for r in full_rows]
    return data, template.replace("%{y}", "%{customdata[0]}").replace("%{x}", "%{customdata[1]}")


def check_matrix(
    weights, rows: Sequence[str] | None = None, cols: Sequence[str] | None = None, *, name: str = "weights"
) -> np.ndarray:
    """A 2-D array whose shape matches the token lists; a ValueError says what to fix."""
    w = to_numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"{name} must be 2-D (queries, keys); got shape {w.shape}. Select one layer and head first.")
    if rows is not None and len(rows) != w.shape[0]:
        raise ValueError(f"{name} has {w.shape[0]} query rows but {len(rows)} query tokens were given")
    if cols is not None and len(cols) != w.shape[1]:
        raise ValueError(f"{name} has {w.shape[1]} key columns but {len(cols)} key tokens were given")
    return w


def check_stack(weights, *, ndim: int = 4, name: str = "attention") -> np.ndarray:
    """An array of ``ndim`` dimensions, e.g. (layers, heads, queries, keys)."""
    w = to_numpy(weights)
    if w.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got shape {w.shape}")
    return w


def house_layout(*, title: str | None = None, height: int | None = None, width: int | None = None) -> dict:
    """The house layout as a plain dict: large fonts, tight margins, optional fixed size."""
    layout = dict(font=dict(size=FONT_SIZE), margin=dict(l=10, r=10, t=60 if title else 20, b=10))
    if title:
        layout["title"] = dict(text=title, font=dict(size=TITLE_SIZE))
    return layout | {k: v for k, v in (("height", height), ("width", width)) if v is not None}


def make_figure(data: Sequence[dict], layout: dict) -> go.Figure:
    """One figure from plain dicts, validated once. Building with ``go.Heatmap(...)``, then
    ``update_layout`` and ``update_xaxes`` parses and validates every property path on every call:
    ~22 ms for a 20 × 20 heatmap, against ~3 ms this way (on every rerun of every page)."""
    clean = lambda d: {k: v for k, v in d.items() if v is not None}
    return go.Figure(dict(data=[clean(t) for t in data], layout=clean(layout)))


def margins(*, l: float, t: float, b: float = 10, r: float = 10) -> dict:
    """A layout margin in whole pixels, set from the labels instead of measured in the browser (with
    the axes' ``automargin`` off): plotly's ``automargin`` measures every tick label and redraws,
    which doubled the drawing time of a heatmap."""
    return dict(l=round(l), t=round(t), b=round(b), r=round(r))


def text_px(labels: Sequence[str], size: float) -> float:
    """A generous estimate of the widest label's width in pixels (0.62 em a character)."""
    return 0.62 * size * max((len(str(label)) for label in labels), default=1)


def for_projector(fig: go.Figure, scale: float = 1.4) -> go.Figure:
    """A copy of ``fig`` with every font (layout, title, axes, legend, colour bars, annotations,
    cell text) ``scale`` times larger and the height grown to match; ``fig`` itself is untouched,
    so cached figures stay as they are. Category axes show every label: with larger fonts plotly
    would otherwise drop every other token."""
    out = go.Figure(fig)

    def grow(font, default: int) -> dict:
        return dict(size=round((font.size if font and font.size else default) * scale))

    out.update_layout(font=grow(out.layout.font, FONT_SIZE))
    if out.layout.title and out.layout.title.text:
        out.update_layout(title_font=grow(out.layout.title.font, TITLE_SIZE))
    out.update_layout(legend_font=grow(out.layout.legend.font, FONT_SIZE))
    out.for_each_xaxis(
        lambda a: a.update(tickfont=grow(a.tickfont, FONT_SIZE), title_font=grow(a.title.font, FONT_SIZE))
    )
    out.for_each_yaxis(
        lambda a: a.update(tickfont=grow(a.tickfont, FONT_SIZE), title_font=grow(a.title.font, FONT_SIZE))
    )
    out.for_each_annotation(lambda a: a.update(font=grow(a.font, FONT_SIZE)))
    for trace in out.data:
        if "textfont" in trace and trace.textfont.size:
            trace.textfont.size = round(trace.textfont.size * scale)
        if "colorbar" in trace:
            trace.colorbar.tickfont = grow(trace.colorbar.tickfont, FONT_SIZE)
    if out.layout.height:
        out.update_layout(height=round(out.layout.height * min(scale, 1.25)))
    margin = out.layout.margin
    out.update_layout(margin={side: round(getattr(margin, side) * scale) for side in "ltb" if getattr(margin, side)})
    _every_label(out)
    return out


MAX_PROJECTOR_HEIGHT = 1400  # a heatmap may grow this tall to show every row's label


def _every_label(fig: go.Figure) -> None:
    """Show every category label of a single heatmap's axes, growing its height until the rows fit:
    with large fonts plotly would otherwise drop every other token. Heatmaps too long for that (a
    128-character prompt) keep plotly's thinned labels rather than overlapping ones."""
    if len(fig.data) != 1 or fig.data[0].type != "heatmap" or not fig.layout.height:
        return
    trace, layout = fig.data[0], fig.layout
    rows, cols = len(trace.y if trace.y is not None else ()), len(trace.x if trace.x is not None else ())
    font = layout.yaxis.tickfont.size if layout.yaxis.tickfont and layout.yaxis.tickfont.size else FONT_SIZE
    frame = (layout.margin.t or 0) + (layout.margin.b or 0)
    needed = round(rows * font * 1.3 + frame)
    every = dict(tickmode="linear", tick0=0, dtick=1)
    if layout.yaxis.type == "category" and rows and needed <= MAX_PROJECTOR_HEIGHT:
        fig.update_layout(height=max(layout.height, needed))
        fig.update_yaxes(**every)
    if layout.xaxis.type == "category" and 0 < cols <= 40:  # angled when many: each takes about one font height
        fig.update_xaxes(**every)


def z_values(m: np.ndarray) -> list:
    """Plain lists for a figure spec, rounded to 4 decimals; -inf (masked) becomes None, a blank cell."""
    rows = np.asarray(m, dtype=float).tolist()  # Python floats: ten times faster to round than numpy scalars
    return [[round(v, 4) + 0.0 if math.isfinite(v) else None for v in row] for row in rows]  # + 0.0: no -0.0


def cell_text(values: np.ndarray, decimals: int | None) -> np.ndarray | None:
    """The values as cell text with ``decimals`` places (NaN blank); None (hover only) when ``decimals`` is."""
    if decimals is None:
        return None
    if not values.size:
        return values.astype(str)
    return np.vectorize(lambda v: "" if np.isnan(v) else number_text(v, decimals))(values)


def axis_titles(query_name: str, key_name: str) -> tuple[str, str]:
    """The y and x axis titles of a (queries, keys) heatmap: ``"query (row)"``, ``"key (column)"``."""
    return f"{query_name} (row)", f"{key_name} (column)"


def hover_template(query_name: str, key_name: str, value: str = "weight", extra: str = "") -> str:
    return f"{extra}{query_name}: %{{y}}<br>{key_name}: %{{x}}<br>{value}: %{{z:.4f}}<extra></extra>"


def heatmap_height(n_rows: int, *, base: int = 160, row_px: int = 28, min_px: int = 380, max_px: int = 1000) -> int:
    """A heatmap's height in pixels: ``row_px`` a row on top of ``base``, within [min_px, max_px]."""
    return int(min(max(min_px, base + row_px * n_rows), max_px))


def title_px(title: str | None) -> float:
    """Room for a figure title of up to two lines (long titles wrap in narrow columns)."""
    return 2.4 * TITLE_SIZE + 16 if title else 10


def grid_domains(n: int, spacing: float) -> list[tuple[float, float]]:
    """``n`` equal spans of [0, 1] with ``spacing`` between them, as plotly's make_subplots lays them out."""
    size = (1 - spacing * (n - 1)) / n
    return [(round(i * (size + spacing), 6), min(1.0, round(i * (size + spacing) + size, 6))) for i in range(n)]


def top_axis_layout(layout: dict, rows: Sequence[str], cols: Sequence[str]) -> dict:
    """``layout`` (with its title, x axis and y axis) given room above the plot for the title and,
    under it, the column ticks and axis title; margins are set from the labels (see :func:`margins`).
    Returns ``layout``."""
    title = layout.get("title")
    layout["title"] = (title or {}) | dict(y=1, yref="container", yanchor="top", pad=dict(t=12))
    angle = abs(layout.get("xaxis", {}).get("tickangle") or 0)
    x_labels = text_px(cols, FONT_SIZE) * math.sin(math.radians(angle)) + FONT_SIZE if angle else 1.6 * FONT_SIZE
    for axis in ("xaxis", "yaxis"):
        layout[axis] = layout.get(axis, {}) | dict(automargin=False)
    top = title_px(title.get("text") if title else None) + x_labels + 2.5 * FONT_SIZE
    layout["margin"] = margins(l=text_px(rows, FONT_SIZE) + 2.5 * FONT_SIZE + 10, t=top)
    return layout


def heatmap(
    m: np.ndarray,
    rows: list[str],
    cols: list[str],
    *,
    title: str,
    row_title: str,
    col_title: str,
    value: str = "weight",
    colorscale: str | list = COLORSCALE,
    zmid: float | None = None,
    zmin: float | None = None,
    zmax: float | None = None,
    decimals: int | None = None,
    text: np.ndarray | None = None,
    hover: str | None = None,
    colorbar_title: bool = True,
    gap: int = 1,
    tickangle: int | None = None,
    height: int | None = None,
    shapes: list[dict] | None = None,
    full_rows: list[str] | None = None,
    full_cols: list[str] | None = None,
) -> go.Figure:
    """The one heatmap every single-matrix figure is: rows top to bottom, columns along the top,
    both axes titled, values printed in the cells with ``decimals`` places (or ``text``), the
    margins set from the (already escaped, see :func:`plot_labels`) labels.

    Without ``zmid``/``zmin``/``zmax`` the colour runs from 0 to the largest finite value.
    ``tickangle`` defaults to -60 when the column labels would overlap level. ``full_rows`` and
    ``full_cols`` (:func:`hover_labels`) are shown on hover where a label was cut.
    """
    finite = m[np.isfinite(m)]
    if zmid is None and zmin is None:
        zmin = 0.0
    if zmid is None and zmax is None:
        zmax = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
    text = cell_text(m, decimals) if text is None else text
    hover = hover or f"{row_title}: %{{y}}<br>{col_title}: %{{x}}<br>{value}: %{{z:.4f}}<extra></extra>"
    customdata, hover = full_label_hover(rows, cols, full_rows, full_cols, hover)
    trace = dict(
        type="heatmap",
        z=z_values(m),
        x=cols,
        y=rows,
        colorscale=colorscale,
        zmid=zmid,
        zmin=zmin,
        zmax=zmax,
        text=text,
        texttemplate="%{text}" if text is not None else None,
        textfont=dict(size=max(12, FONT_SIZE - 2)),
        hovertemplate=hover,
        customdata=customdata,
        hoverongaps=False,
        colorbar=dict(thickness=14, title=dict(text=value) if colorbar_title else None),
        xgap=gap,
        ygap=gap,
    )
    if tickangle is None:  # level labels would overlap
        tickangle = -60 if len(cols) > 10 or text_px(cols, FONT_SIZE) * len(cols) > 700 else 0
    layout = house_layout(title=title, height=height or heatmap_height(len(rows)))
    layout.update(
        xaxis=dict(title=dict(text=col_title), type="category", side="top", tickangle=tickangle),
        yaxis=dict(title=dict(text=row_title), type="category", autorange="reversed"),
        shapes=shapes,
    )
    return make_figure([trace], top_axis_layout(layout, rows, cols))
