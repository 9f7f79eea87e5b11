// The chrome around the map: the bar (kind and view tabs, layer and head steppers, the colour-scale
// button), the caption and axis names, the colour legend and the status line with the selected weight.
// buildChrome makes the elements once; drawChrome fills them, and lets each view draw what it keeps
// over the map (the lines view's head swatches). The view tabs are the registry's (views.js).

import { mapMax } from "./data.js";
import { el, sizeCanvas, tokenSpan } from "./dom.js";
import { cellInfo, mapOf } from "./state.js";
import { weightSuffix } from "./readouts.js";
import { svgButton } from "./svg.js";
import { eachView, listedViews, viewOf } from "./views.js";

export function buildChrome(ex) {
  const d = ex.doc;
  ex.bar = el(d, "div", "ae-bar");
  ex.kindTabs = el(d, "div", "ae-group ae-kinds");
  ex.viewTabs = el(d, "div", "ae-group ae-views");
  ex.steppers = el(d, "div", "ae-group ae-steppers");
  ex.layerOut = stepper(ex, "layer");
  ex.headOut = stepper(ex, "head");
  ex.scaleBtn = el(d, "button", "ae-btn ae-scale");
  ex.scaleBtn.type = "button";
  ex.scaleBtn.dataset.action = "scale";
  ex.svgBtn = svgButton(ex);  // saves the shown view as SVG (svg.js)
  ex.bar.append(ex.kindTabs, ex.viewTabs, ex.steppers, ex.scaleBtn, ex.svgBtn);
  ex.caption = el(d, "div", "ae-caption");
  ex.caption.setAttribute("aria-live", "polite");
  ex.axes = el(d, "div", "ae-axes");
  ex.legend = el(d, "div", "ae-legend");
  ex.legendBar = el(d, "canvas", "ae-legend-bar");
  ex.legendText = el(d, "span");
  ex.maskNote = el(d, "span", "ae-mask-note", "hatched: masked, the model cannot attend there");
  ex.legend.append(ex.legendBar, ex.legendText, ex.maskNote);
  ex.status = el(d, "div", "ae-status");
  ex.statusSel = el(d, "span", "ae-status-sel");
  ex.statusHelp = el(d, "span", "ae-help");
  ex.status.append(ex.statusSel, ex.statusHelp);
}

// the help under the map: the keys where there is a keyboard and a mouse, a tap on a touch screen (ex.touch),
// where a phone has no arrow keys, no Page Up and nothing to hover
const HELP = {
  keys: "Arrow keys move the cell · [ ] head · Page Up / Page Down layer · Enter or a click explains the weight",
  touch: "Tap a weight to explain it",
};

function stepper(ex, what) {
  const d = ex.doc, group = el(d, "span", "ae-stepper");
  const less = el(d, "button", "ae-btn", "−"), more = el(d, "button", "ae-btn", "+");
  const out = el(d, "span", "ae-step-value");
  less.type = more.type = "button";
  less.dataset.step = more.dataset.step = what;
  less.dataset.delta = "-1";
  more.dataset.delta = "1";
  less.setAttribute("aria-label", `previous ${what}`);
  more.setAttribute("aria-label", `next ${what}`);
  group.append(less, out, more);
  ex.steppers.append(group);
  return out;
}

// a tab per kind (none for a single kind) and per view the run has (views.js: listedViews)
export function buildTabs(ex) {
  const d = ex.doc;
  ex.kindTabs.replaceChildren(...ex.kinds.map((k) => {
    const b = el(d, "button", "ae-tab", k.title);
    b.type = "button";
    b.dataset.kind = k.name;
    return b;
  }));
  ex.kindTabs.hidden = ex.kinds.length < 2;
  ex.viewTabs.replaceChildren(...listedViews(ex).map((v) => {
    const b = el(d, "button", "ae-tab", v.key);
    b.type = "button";
    b.dataset.view = v.key;
    return b;
  }));
}

export function drawChrome(ex) {
  const s = ex.state, k = ex.kind, v = ex.view;
  for (const b of ex.kindTabs.children) b.setAttribute("aria-pressed", String(b.dataset.kind === s.kind));
  for (const b of ex.viewTabs.children) {
    b.setAttribute("aria-pressed", String(b.dataset.view === s.view));
    const tab = viewOf(b.dataset.view);
    b.disabled = !tab.available(ex, s.kind);
    if (b.disabled) b.title = tab.unavailable;
  }
  stepperText(ex.layerOut, "layer", s.layer, k.layers);
  stepperText(ex.headOut, "head", s.head, k.heads);
  // compact (header.compact: a classroom question): the map, its tabs and legend, no tools around them
  for (const e of [ex.viewTabs, ex.scaleBtn, ex.svgBtn, ex.statusHelp]) e.style.display = ex.header.compact ? "none" : "";
  ex.statusHelp.textContent = ex.touch ? HELP.touch : HELP.keys;
  ex.scaleBtn.textContent = s.scale === "max" ? "colour: 0 – map max" : "colour: 0 – 1";
  // what is shown, as the view names it (view.js: names); one map: its title names it
  ex.caption.textContent = `${k.title} · ${k.layers * k.heads > 1 ? v.names(ex) : s.view}`;
  ex.axes.textContent = v.axes(k);
  eachView(ex, "chrome");
  ex.maskNote.hidden = !k.masked || !v.showsMask;
  drawLegend(ex);
}

// "L0 (L0–L1)", "H2 (H0–H5)": the part of the head's one name (view.js: headName, "L0 H2") that the stepper
// moves, then the names there are. Beside a bare count an index misreads ("layer 1 of 2" reads as the first
// of two), so the range is given as names, counted from 0 as the names are. A kind of one layer or one head
// has no stepper at all.
function stepperText(out, what, at, count) {
  const p = what === "layer" ? "L" : "H";
  out.textContent = `${p}${at} (${p}0–${p}${count - 1})`;
  out.title = `${what} ${at}: ${count} ${what}s, numbered 0 to ${count - 1}`;
  out.parentElement.style.display = count < 2 ? "none" : "";
}

// data.js leaves rows with one key to attend to (a causal map's first) out of the colour scale's top
function k1Note(k) {
  return k.trivialRows ? ", not counting rows with one key, which hold 1 and show darkest" : "";
}

function drawLegend(ex) {
  ex.legendBar.hidden = ex.kind.weightless;
  if (ex.kind.weightless) {  // a kind sent without its weights (data.js): no scale, no number
    ex.legendText.textContent = "weights not shown: every cell looks the same";
    return;
  }
  const { fs } = ex.theme, w = 8 * fs, h = Math.round(fs * 0.8), lut = ex.colours;
  if (ex.legendBar.dataset.fs !== String(fs)) {  // the colour bar depends on the type size only
    ex.legendBar.dataset.fs = String(fs);
    const ctx = sizeCanvas(ex.legendBar, w, h);
    for (let x = 0; x < w; x++) {
      const j = Math.round((x / (w - 1)) * 255) * 3;
      ctx.fillStyle = `rgb(${lut[j]},${lut[j + 1]},${lut[j + 2]})`;
      ctx.fillRect(x, 0, 1, h);
    }
  }
  const s = ex.state;
  let top = "1";
  if (s.scale === "max" && ex.view.oneMap) top = `${mapMax(mapOf(ex), ex.kind.mask).toFixed(4)} (the largest weight here${k1Note(ex.kind)})`;
  else if (s.scale === "max") top = "the largest weight of each map";
  ex.legendText.textContent = `0 → ${top}`;
}

export function drawStatus(ex) {
  const s = ex.state, sel = cellInfo(ex, s.sel);
  ex.statusSel.replaceChildren();
  if (s.note) { ex.statusSel.textContent = s.note; return; }
  if (!sel) return;
  const d = ex.doc;
  ex.statusSel.append(d.createTextNode("selected: "), tokenSpan(d, "ae-tok", sel.query_token), d.createTextNode(" → "),
    tokenSpan(d, "ae-tok", sel.key_token), d.createTextNode(weightSuffix(sel)));
}
