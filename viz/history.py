"""Training-history figures: loss and validation curves per snapshot (or epoch), with the one being viewed marked,
and the roles chart: each role's best head score over the snapshots above the loss on repeated text, in two panels."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Sequence

from viz.attention import visible_chars
from viz.common import FONT_SIZE, HEAD_COLORS, TITLE_SIZE, text_px

METRIC_COLORS = HEAD_COLORS
MAX_TICKS = 12  # more epoch numbers than this collide on a narrow axis
WIDTH = 380  # the SVG's own width: about the page's right-hand column at 1400 px, so text reads near FONT_SIZE
PLOT_HEIGHT = 260  # the plotting area's height in the same units
EPOCH_COLOR = "#D55E00"  # the line at the epoch being viewed
DOTTED = {"stroke_dasharray": "2 6", "stroke_linecap": "round"}  # the right axis's lines
SPLITS = {"train": "training", "val": "validation", "dev": "dev", "test": "test"}
RIGHT_AXIS = ("accuracy", "bleu")  # validation scores (higher is better) share the right axis
MEASURES = {
    "loss": "loss",
    "bpc": "bits per character",
    "accuracy": "accuracy",
    "bleu": "BLEU",
    "sacrebleu": "sacreBLEU",
}


def metric_name(raw: str) -> str:
    """A metric's name for people: ``"val_bpc"`` -> ``"validation bits per character"``."""
    split, _, measure = raw.partition("_")
    if split in SPLITS and measure:
        return f"{SPLITS[split]} {MEASURES.get(measure, measure.replace('_', ' '))}"
    return MEASURES.get(raw, raw.replace("_", " "))


def probe_text(tokens: Sequence[str], *, characters: bool) -> str:
    """A probe input on one line: characters joined (line breaks as ⏎), words without <sos>/<eos>."""
    if characters:
        return "".join(tokens).replace("\n", " ⏎ ")
    return " ".join(t for t in tokens if t not in ("<sos>", "<eos>"))


def probe_axes(tokens: Sequence[str], kind: str, n_queries: int, *, characters: bool) -> tuple[list[str], list[str]]:
    """Query and key labels of a probe's ``kind`` of attention. The probe's own tokens are saved; the
    translator's output words are not (they change every epoch), so decoder positions read ``out``."""
    tokens = visible_chars(tokens) if characters else list(tokens)
    outputs = ["<sos>", *["out"] * (n_queries - 1)]
    if kind == "encoder":
        return tokens, tokens
    return (outputs, outputs) if kind == "decoder" else (outputs, tokens)


def history_curves(
    curves: dict[str, list[float]],
    *,
    current_epoch: float | None = None,
    saved_epochs: Sequence[float] = (),
    title: str = "loss and validation per epoch",
    font_size: float = FONT_SIZE,
    unit: str = "epoch",
) -> str:
    """:func:`curves_svg` of ``model.training.history.training_curves``'s series: metrics named for
    people, validation scores on the right axis, and the epoch axis wide enough for ``saved_epochs`` too
    (attention is saved every epoch, the metrics only with a better model)."""
    series = {metric_name(k): v for k, v in curves.items() if k != "epoch"}
    right = [metric_name(k) for k in curves if any(word in k for word in RIGHT_AXIS)]
    seen = [*curves["epoch"], *saved_epochs]
    span = (min(seen), max(seen))
    return curves_svg(
        curves["epoch"],
        series,
        right=right,
        current_epoch=current_epoch,
        epoch_range=span,
        title=title,
        font_size=font_size,
        unit=unit,
    )


def epoch_dtick(n_epochs: int) -> int:
    """A tick step that keeps at most :data:`MAX_TICKS` epoch numbers on the axis."""
    return max(1, math.ceil(n_epochs / MAX_TICKS))


def value_ticks(values: Sequence[float], count: int = 5) -> tuple[tuple[float, float], list[float]]:
    """A y axis for ``values``: its range (5 % beyond each end, so no point sits on the frame) and about
    ``count`` round ticks inside it, in steps of 1, 2, 2.5 or 5 times a power of ten."""
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if hi - lo < 1e-12:  # one value: a range around it
        lo, hi = lo - (abs(lo) * 0.1 or 0.5), hi + (abs(hi) * 0.1 or 0.5)
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    first = math.ceil(lo / step - 1e-9)
    n = math.floor(hi / step + 1e-9) - first + 1
    return (lo, hi), [round((first + i) * step, 12) for i in range(n)]


def title_lines(names: Sequence[str], fs: float) -> list[str]:
    """A y axis's title, the names joined by commas, in lines that fit along the plot's height."""
    lines = [names[0]]
    for name in names[1:]:
        joined = f"{lines[-1]}, {name}"
        if text_px([joined], fs) * 0.85 <= PLOT_HEIGHT:
            lines[-1] = joined
        else:
            lines[-1] += ","
            lines.append(name)
    return lines


def tag(name: str, *children: str, text: str | None = None, **attrs: object) -> str:
    """One SVG element: ``children`` (elements already built) or ``text`` inside it. Every attribute
    value and the text are escaped, line breaks included (a blank line would end Markdown's HTML block);
    floats are written to 0.1; ``stroke_width`` is written ``stroke-width`` and ``class_`` ``class``."""

    def escaped(value: object) -> str:
        value = f"{value:.1f}" if isinstance(value, float) else str(value)
        return html.escape(value).replace("\n", "&#10;").replace("\r", "&#13;")

    written = "".join(f' {k.rstrip("_").replace("_", "-")}="{escaped(v)}"' for k, v in attrs.items() if v is not None)
    inside = "".join(children) + (escaped(text) if text is not None else "")
    return f"<{name}{written}>{inside}</{name}>" if inside else f"<{name}{written}/>"


def curves_svg(
    epochs: Sequence[float],
    series: dict[str, Sequence[float]],
    *,
    right: Sequence[str] = (),
    current_epoch: float | None = None,
    epoch_range: tuple[float, float] | None = None,
    title: str = "training curves",
    font_size: float = FONT_SIZE,
    unit: str = "epoch",
) -> str:
    """One line with markers per series over ``epochs``, as the text of an SVG; names in ``right``
    (accuracy, BLEU) are dotted and use a second y axis on the right.

    ``unit`` names the x axis ("epoch", "snapshot"), the current line's label and every tooltip.
    ``current_epoch`` draws a vertical line; ``epoch_range`` widens the x axis (e.g. to every epoch
    with saved attention, when the metrics stop at the best checkpoint). NaN points are gaps. Each point
    has a ``<title>`` (its epoch and value: the browser's tooltip) and ``data-epoch``/``data-value``;
    each series is a ``<g class="series">`` with ``data-name`` and ``data-axis``. Every text is escaped.
    The SVG scales to its container's width; text and axes take the page's font and colour.

    Drawn here rather than by Plotly: as a second Plotly chart it kept the history page's reload at about
    1.55x the floor page's, 1.32x without it (``python -m bench.paired --pages history``).
    """
    if not series:
        raise ValueError("give at least one series of per-epoch values")
    for name, values in series.items():
        if len(values) != len(epochs):
            raise ValueError(f"{name!r} has {len(values)} values for {len(epochs)} epochs")
    fs, title_fs = font_size, font_size * TITLE_SIZE / FONT_SIZE
    points = {n: [(float(e), float(v)) for e, v in zip(epochs, vs, strict=True)] for n, vs in series.items()}
    side_of = {n: "right" if n in right else "left" for n in series}
    y_axes = {}  # side -> (range, ticks)
    for side in ("left", "right"):
        names = [n for n in series if side_of[n] == side]
        if names or side == "left":
            y_axes[side] = value_ticks([v for n in names for _, v in points[n] if math.isfinite(v)])
    titles = {side: title_lines([n for n in series if side_of[n] == side] or ["value"], fs) for side in y_axes}

    def room(side: str) -> float:  # beside the plot: tick labels, then the axis title's lines
        if side not in y_axes:
            return fs
        return text_px([f"{t:g}" for t in y_axes[side][1]], fs) + 10 + fs * (1.6 + 1.2 * (len(titles[side]) - 1))

    left, plot_w = room("left"), WIDTH - room("left") - room("right")
    top = title_fs * 1.8 + fs * 1.6  # the title, then the label of the current epoch's line
    bottom = top + PLOT_HEIGHT
    x_lo, x_hi = epoch_range if epoch_range is not None else (min(epochs), max(epochs))
    x_min, x_max = x_lo - 0.5, x_hi + 0.5
    px = lambda e: left + (e - x_min) / (x_max - x_min) * plot_w

    def py(side: str, v: float) -> float:
        (lo, hi), _ = y_axes[side]
        return bottom - (v - lo) / (hi - lo) * PLOT_HEIGHT

    body = [tag("text", text=title, x=6.0, y=title_fs * 1.4, font_size=f"{title_fs:g}", class_="title")]
    # the grid (left axis), the ticks of all three axes and their titles
    faint = dict(stroke="currentColor", stroke_opacity="0.12")
    for side, (_, ticks) in y_axes.items():
        x, anchor = (left - 6, "end") if side == "left" else (left + plot_w + 6, "start")
        for t in ticks:
            if side == "left":
                body.append(tag("line", x1=left, x2=left + plot_w, y1=py(side, t), y2=py(side, t), **faint))
            body.append(
                tag("text", text=f"{t:g}", x=x, y=py(side, t) + fs * 0.35, text_anchor=anchor, class_=f"tick-{side}")
            )
    dtick = epoch_dtick(max(len(epochs), int(x_hi - x_lo) + 1))
    for i in range(math.ceil(x_lo / dtick), math.floor(x_hi / dtick) + 1):
        x = px(i * dtick)
        body.append(tag("text", text=f"{i * dtick:g}", x=x, y=bottom + fs * 1.3, text_anchor="middle", class_="tick-x"))
    body.append(
        tag("line", x1=left, x2=left + plot_w, y1=bottom, y2=bottom, stroke="currentColor", stroke_opacity="0.5")
    )
    body.append(tag("text", text=unit, x=left + plot_w / 2, y=bottom + fs * 2.8, text_anchor="middle", class_="axis-x"))
    middle = top + PLOT_HEIGHT / 2
    for side, x, angle in (("left", fs * 1.0, -90), ("right", WIDTH - fs * 1.0, 90)):
        if side in y_axes:  # the first line outermost; the next ones toward the plot
            lines = [tag("tspan", text=line, x=0, dy=f"{1.2 * (i > 0)}em") for i, line in enumerate(titles[side])]
            turn = f"translate({x:.1f} {middle:.1f}) rotate({angle})"
            body.append(tag("text", *lines, transform=turn, text_anchor="middle", class_=f"axis-{side}"))
    # the epoch being viewed, under the lines so that their points keep their tooltips
    if current_epoch is not None and x_min <= current_epoch <= x_max:
        x = px(current_epoch)
        line = dict(x1=x, x2=x, y1=top, y2=bottom, stroke=EPOCH_COLOR, stroke_width=3, stroke_dasharray="9 6")
        body.append(tag("line", class_="current-epoch", data_epoch=f"{current_epoch:g}", **line))
        # centred on its line, but ending at it near the right edge (centred there, "epoch 30" was cut to "epoch 3")
        anchor = "end" if x > left + plot_w * 0.85 else "middle"
        label = dict(x=x, y=top - fs * 0.4, text_anchor=anchor, class_="epoch-label")
        body.append(tag("text", text=f"{unit} {current_epoch:g}", **label))
    for i, name in enumerate(series):
        colour = METRIC_COLORS[i % len(METRIC_COLORS)]
        body.append(series_group(name, points[name], colour, side_of[name], px, py, unit=unit))
    legend, height = legend_rows(list(series), side_of, bottom + fs * 3.6, fs)
    svg = dict(xmlns="http://www.w3.org/2000/svg", viewBox=f"0 0 {WIDTH} {height:.0f}", width="100%")
    look = dict(
        font_size=f"{fs:g}", fill="currentColor", role="img", aria_label=title, style=f"max-width:{WIDTH * 1.5:.0f}px"
    )
    return tag("svg", "\n", "\n".join([*body, *legend]), "\n", **svg, **look)


def series_group(
    name: str,
    points: Sequence[tuple[float, float]],
    colour: str,
    side: str,
    px: Callable[[float], float],
    py: Callable[[str, float], float],
    *,
    unit: str = "epoch",
) -> str:
    """One series as ``<g class="series">``: its line in pieces between the gaps (NaN), then one point
    per finite value with its ``unit`` number (epoch, snapshot) and value as a tooltip."""
    dotted = DOTTED if side == "right" else {}
    pieces, run = [], []
    for e, v in [*points, (math.nan, math.nan)]:
        if math.isfinite(v):
            run.append(f"{px(e):.1f},{py(side, v):.1f}")
            continue
        if len(run) > 1:
            line = dict(fill="none", stroke=colour, stroke_width=3, **dotted)
            pieces.append(tag("polyline", points=" ".join(run), **line))
        run = []
    for e, v in points:
        if math.isfinite(v):
            tip = tag("title", text=f"{unit} {e:g}\n{name}: {v:.4f}")
            pieces.append(tag("circle", tip, cx=px(e), cy=py(side, v), r=4, data_epoch=f"{e:g}", data_value=f"{v:.6g}"))
    return tag("g", *pieces, class_="series", data_name=name, data_axis=side, fill=colour)


def legend_rows(
    names: Sequence[str], side_of: dict[str, str], top: float, fs: float, colours: dict[str, str] | None = None
) -> tuple[list[str], float]:
    """The legend under the epoch axis, in as many rows as :data:`WIDTH` needs, and the SVG's height
    below it: a line and point per series in its colour and dash, and its name ("(right axis)" added)."""
    entries, x, y = [], 6.0, top
    for i, name in enumerate(names):
        label = name + (" (right axis)" if side_of[name] == "right" else "")
        advance = 34 + text_px([label], fs) * 0.85 + 14
        if x > 6 and x + advance > WIDTH:
            x, y = 6.0, y + fs * 1.7
        colour = (colours or {}).get(name, METRIC_COLORS[i % len(METRIC_COLORS)])
        dotted = DOTTED if side_of[name] == "right" else {}
        sample = tag("line", x1=x, x2=x + 26, y1=y, y2=y, stroke=colour, stroke_width=3, **dotted)
        point = tag("circle", cx=x + 13, cy=y, r=4, fill=colour)
        entries.append(tag("g", sample, point, tag("text", text=label, x=x + 34, y=y + fs * 0.35), class_="legend"))
        x += advance
    return entries, y + fs * 1.2


PANEL_HEIGHT = 150  # one panel's plotting height in the SVG's units
MOMENT_COLOR = "#555555"  # the line at the snapshot where a head forms: neither a series' colour nor the current's
PANEL_COLORS = tuple(c for c in METRIC_COLORS if c != "#F0E442")  # yellow is too faint for a lone line on white


def panels_svg(
    snapshots: Sequence[float],
    panels: Sequence[tuple[str, dict[str, Sequence[float]]]],
    *,
    current: float | None = None,
    moment: float | None = None,
    moment_label: str = "a head forms",
    snapshot_range: tuple[float, float] | None = None,
    title: str = "training snapshots",
    font_size: float = FONT_SIZE,
    unit: str = "snapshot",
) -> str:
    """Panels stacked over one shared x axis of ``unit`` numbers, as the text of an SVG: each
    ``(name, series)`` in ``panels`` has its own y axis, named above it (e.g. the roles' best scores,
    0 to 1, above the loss on repeated text in nats), so that neither squeezes the other, as two y axes
    on one plot did.

    Each series is a ``<g class="series">`` with ``data-name`` and ``data-panel`` (its panel's name),
    one point per finite value with ``data-epoch``/``data-value`` and a tooltip; NaN is a gap. ``current``
    draws the dashed line of the snapshot being viewed (``line.current-epoch``), ``moment`` a solid line
    labelled ``moment_label`` (``line.moment``), both through every panel and labelled above the first.
    Every text is escaped.
    """
    panels = [(name, series) for name, series in panels if series]
    if not panels:
        raise ValueError("give at least one panel with one series of per-snapshot values")
    for _, series in panels:
        for name, values in series.items():
            if len(values) != len(snapshots):
                raise ValueError(f"{name!r} has {len(values)} values for {len(snapshots)} snapshots")
    fs, title_fs = font_size, font_size * TITLE_SIZE / FONT_SIZE
    axes = [value_ticks([float(v) for vs in s.values() for v in vs if math.isfinite(float(v))]) for _, s in panels]
    left = max(text_px([f"{t:g}" for t in ticks], fs) for _, ticks in axes) + 10
    plot_w = WIDTH - left - fs
    x_lo, x_hi = snapshot_range if snapshot_range is not None else (min(snapshots), max(snapshots))
    x_min, x_max = x_lo - 0.5, x_hi + 0.5
    px = lambda e: left + (e - x_min) / (x_max - x_min) * plot_w
    labels_y = title_fs * 1.8 + fs * 1.2  # the moment's label, then the current snapshot's in the row below
    marks = [
        ("moment", moment, moment_label, labels_y, dict(stroke=MOMENT_COLOR, stroke_width=2.5)),
        ("current-epoch", current, f"{unit} {current:g}" if current is not None else "", labels_y + fs * 1.3,
         dict(stroke=EPOCH_COLOR, stroke_width=3, stroke_dasharray="9 6")),
    ]  # fmt: skip
    marks = [m for m in marks if m[1] is not None and x_min <= m[1] <= x_max]
    body = [tag("text", text=title, x=6.0, y=title_fs * 1.4, font_size=f"{title_fs:g}", class_="title")]
    for cls, at, label, row, _ in marks:
        x = px(at)  # centred on its line, ending at it near the right edge and starting at it near the left one
        anchor = "end" if x > left + plot_w * 0.7 else "start" if x < left + plot_w * 0.3 else "middle"
        body.append(tag("text", text=label, x=x, y=row, text_anchor=anchor, class_=f"{cls}-label", font_weight="bold"))
    y, colour_of = labels_y + fs * 1.3 + fs * 0.6, {}
    for (name, series), ((lo, hi), ticks) in zip(panels, axes, strict=True):
        y += fs * 1.6  # the panel's name above it
        body.append(tag("text", text=name, x=6.0, y=y - fs * 0.6, class_="panel-title", font_weight="bold"))
        top = y
        py = lambda _side, v, top=top, lo=lo, hi=hi: top + PANEL_HEIGHT - (v - lo) / (hi - lo) * PANEL_HEIGHT
        faint = dict(stroke="currentColor", stroke_opacity="0.12")
        for t in ticks:
            body.append(tag("line", x1=left, x2=left + plot_w, y1=py("", t), y2=py("", t), **faint))
            label = dict(x=left - 6, y=py("", t) + fs * 0.35, text_anchor="end", class_="tick-y")
            body.append(tag("text", text=f"{t:g}", **label))
        edge = dict(stroke="currentColor", stroke_opacity="0.5")
        body.append(tag("line", x1=left, x2=left + plot_w, y1=top + PANEL_HEIGHT, y2=top + PANEL_HEIGHT, **edge))
        for cls, at, _, _, look in marks:  # under the series, so that their points keep their tooltips
            x = px(at)
            mark = tag("line", x1=x, x2=x, y1=top, y2=top + PANEL_HEIGHT, class_=cls, data_epoch=f"{at:g}", **look)
            body.append(mark)
        for series_name, values in series.items():
            colour = colour_of.setdefault(series_name, PANEL_COLORS[len(colour_of) % len(PANEL_COLORS)])
            points = [(float(e), float(v)) for e, v in zip(snapshots, values, strict=True)]
            group = series_group(series_name, points, colour, "left", px, py, unit=unit)
            body.append(group.replace('<g class="series"', f'<g class="series" data-panel="{html.escape(name)}"', 1))
        y = top + PANEL_HEIGHT + fs * 1.2  # room under the panel before the next one's name
    bottom = y - fs * 1.2
    dtick = epoch_dtick(max(len(snapshots), int(x_hi - x_lo) + 1))
    for i in range(math.ceil(x_lo / dtick), math.floor(x_hi / dtick) + 1):
        x = px(i * dtick)
        body.append(tag("text", text=f"{i * dtick:g}", x=x, y=bottom + fs * 1.3, text_anchor="middle", class_="tick-x"))
    body.append(tag("text", text=unit, x=left + plot_w / 2, y=bottom + fs * 2.8, text_anchor="middle", class_="axis-x"))
    names = list(colour_of)
    legend, height = legend_rows(names, dict.fromkeys(names, "left"), bottom + fs * 3.6, fs, colours=colour_of)
    svg = dict(xmlns="http://www.w3.org/2000/svg", viewBox=f"0 0 {WIDTH} {height:.0f}", width="100%")
    look = dict(
        font_size=f"{fs:g}", fill="currentColor", role="img", aria_label=title, style=f"max-width:{WIDTH * 1.5:.0f}px"
    )
    return tag("svg", "\n", "\n".join([*body, *legend]), "\n", **svg, **look)
