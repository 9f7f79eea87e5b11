// What the canvases paint with: the theme read from the CSS variables Streamlit sets (light, dark,
// projector), the weights' colour scale (the stops Python sends, viz.common.WEIGHT_STOPS, the same
// as the matrix view's and the Plotly figures'), the colour of masked cells and their hatch, and the
// colour-mapped image of a map, one pixel per cell.

import { el } from "./dom.js";
import { mapMax } from "./data.js";

const HEX = /^#[0-9a-f]{6}$/i;
const MAX_IMAGES = 400;  // colour-mapped maps kept before the cache starts over

// ex.theme (colours, font, type size) from the root's computed style; every cached drawing is dropped
export function readTheme(ex) {
  const cs = ex.win.getComputedStyle(ex.root), v = (n, d) => cs.getPropertyValue(n).trim() || d;
  const probe = ex.base.getContext("2d");
  const rgb = (c) => {  // the canvas normalises any CSS colour to #rrggbb or rgba()
    probe.fillStyle = "#000";
    probe.fillStyle = c;
    const s = probe.fillStyle;
    if (s[0] === "#") return hexRgb(s);
    return s.replace(/[^\d.,]/g, "").split(",").slice(0, 3).map(Number);
  };
  const projector = ex.root.classList.contains("ae-projector");
  const theme = (ex.theme = {
    text: v("--ae-text", "#31333f"), bg: v("--ae-bg", "#ffffff"), bg2: v("--ae-bg2", "#f0f2f6"),
    primary: v("--ae-primary", "#ff4b4b"), font: v("--ae-font", "sans-serif"),
    fs: projector ? 18 : 12, s: projector ? 1.5 : 1,
  });
  theme.primaryRgb = rgb(theme.primary);
  theme.textRgb = rgb(theme.text);
  theme.bgRgb = rgb(theme.bg);
  // masked cells: the second background taken towards the text, a grey that no weight's blue is, in
  // the thumbnails too, where there is no room for the hatch
  theme.maskedRgb = rgb(theme.bg2).map((c, i) => Math.round(0.7 * c + 0.3 * theme.textRgb[i]));
  // a weight not sent (NaN, data.js's weightless): the second background, the same for every such cell
  theme.unknownRgb = rgb(theme.bg2);
  ex.hatch = makeHatch(ex.doc, theme);
  ex.cache.clear();
  for (const p of Object.values(ex.panes)) p.drawn = "";
  ex.labelWidths = new Map();
}

function makeHatch(doc, theme) {
  const c = el(doc, "canvas"), n = 8;
  c.width = c.height = n;
  const ctx = c.getContext("2d");
  ctx.fillStyle = rgba(theme.maskedRgb, 1);
  ctx.fillRect(0, 0, n, n);
  ctx.strokeStyle = rgba(theme.textRgb, 0.45);
  ctx.lineWidth = 1.2;
  ctx.beginPath();
  ctx.moveTo(0, n); ctx.lineTo(n, 0); ctx.moveTo(-n / 2, n / 2); ctx.lineTo(n / 2, -n / 2);
  ctx.moveTo(n / 2, n * 1.5); ctx.lineTo(n * 1.5, n / 2);
  ctx.stroke();
  return c;
}

function hexRgb(h) {
  return [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16));
}

// the #rrggbb colours of a list from the data (anything else is dropped)
export function hexColours(list) {
  return (Array.isArray(list) ? list : []).filter((c) => HEX.test(c));
}

// 256 colours between the stops (#rrggbb, from 0 to the top of the scale), each channel rounded as
// the matrix view rounds it, so a weight gets the same colour in both
export function colourTable(stops) {
  const rgb = hexColours(stops).map(hexRgb);
  if (rgb.length < 2) throw new Error("attention explorer: the data has no colour scale (weight_stops)");
  const out = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (rgb.length - 1), j = Math.min(Math.floor(t), rgb.length - 2), f = t - j;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(rgb[j][c] + f * (rgb[j + 1][c] - rgb[j][c]));
  }
  return out;
}

export function rgba(rgb, a) { return `rgba(${rgb[0]},${rgb[1]},${rgb[2]},${a})`; }

// WCAG's relative luminance of an [r, g, b] colour and the contrast ratio of two
function luminance(rgb) {
  const lin = (c) => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  return 0.2126 * lin(rgb[0]) + 0.7152 * lin(rgb[1]) + 0.0722 * lin(rgb[2]);
}

function contrast(a, b) {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

// `hex` (#rrggbb) as a mark on the theme's background can be seen (WCAG 1.4.11: 3:1 for graphics): itself
// where it already is, else taken towards the text colour, a tenth at a time, until it is (a pale yellow
// head on white becomes an olive one; on a dark background it stays yellow)
export function legible(theme, hex, least = 3) {
  const bg = theme.bgRgb, rgb = hexRgb(hex), text = theme.textRgb;
  for (let step = 0; step <= 10; step++) {
    const mixed = rgb.map((c, i) => Math.round(c + (step / 10) * (text[i] - c)));
    if (step === 10 || contrast(mixed, bg) >= least) return `#${mixed.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
  }
}

export function font(theme, bold) { return `${bold ? "600 " : ""}${theme.fs}px ${theme.font}`; }

// the widest label of each axis of kind `k` at the current font, measured once per kind and theme
export function labelWidths(ex, k) {
  let w = ex.labelWidths.get(k.name);
  if (!w) {
    const ctx = ex.base.getContext("2d");
    ctx.font = font(ex.theme);
    const widest = (labels) => labels.reduce((m, t) => Math.max(m, ctx.measureText(t).width), 0);
    w = { q: widest(k.shortQ), k: widest(k.shortK) };
    ex.labelWidths.set(k.name, w);
  }
  return w;
}

// `text` as it fits in `max` pixels at the context's font: whole, or cut with "…" (the whole label is in
// the token strip, and in the title that hovering it gives: input.js)
export function fitText(ctx, text, max) {
  if (ctx.measureText(text).width <= max) return text;
  const chars = Array.from(text);
  while (chars.length > 1 && ctx.measureText(chars.join("") + "…").width > max) chars.pop();
  return chars.join("") + "…";
}

// one pixel per cell in the weights' colours (0 to 1, or to the map's largest weight); masked cells grey
export function mapImage(ex, k, key, values) {
  const scale = ex.state.scale, id = `${k.name}|${key}|${scale}`;
  let c = ex.cache.get(id);
  if (c) return c;
  c = el(ex.doc, "canvas");
  c.width = k.nk;
  c.height = k.nq;
  const ctx = c.getContext("2d"), img = ctx.createImageData(k.nk, k.nq), px = img.data, lut = ex.colours;
  const inv = 255 / (scale === "max" ? mapMax(values, k.mask) : 1), [r, g, b] = ex.theme.maskedRgb;
  const unknown = ex.theme.unknownRgb;
  for (let i = 0; i < k.size; i++) {
    const o = i * 4;
    if (k.mask[i] && Number.isNaN(values[i])) {
      px[o] = unknown[0]; px[o + 1] = unknown[1]; px[o + 2] = unknown[2];
    } else if (k.mask[i]) {
      const j = Math.min(255, Math.max(0, Math.round(values[i] * inv))) * 3;
      px[o] = lut[j]; px[o + 1] = lut[j + 1]; px[o + 2] = lut[j + 2];
    } else {
      px[o] = r; px[o + 1] = g; px[o + 2] = b;
    }
    px[o + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
  if (ex.cache.size > MAX_IMAGES) ex.cache.clear();
  ex.cache.set(id, c);
  return c;
}
