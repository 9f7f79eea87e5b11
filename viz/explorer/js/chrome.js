// The chrome around the map: the bar (kind and view tabs, layer and head steppers, the colour-scale
// button), the caption and axis names, the head swatches of the lines view, the colour legend and the
// status line with the selected weight. buildChrome makes the elements once; drawChrome fills them.

import { mapMax } from "./data.js";
import { el, sizeCanvas, tokenSpan } from "./dom.js";
import { cellInfo, mapOf, shownHeads, VIEWS } from "./state.js";
import { weightText } from "./readouts.js";
import { svgButton } from "./svg.js";

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
  ex.swatches = el(d, "div", "ae-swatches");
  ex.legend = el(d, "div", "ae-legend");
  ex.legendBar = el(d, "canvas", "ae-legend-bar");
  ex.legendText = el(d, "span");
  ex.maskNote = el(d, "span", "ae-mask-note", "hatched: masked, the model cannot attend there");
  ex.legend.append(ex.legendBar, ex.legendText, ex.maskNote);
  ex.status = el(d, "div", "ae-status");
  ex.statusSel = el(d, "span", "ae-status-sel");
  ex.statusHelp = el(d, "span", "ae-help",
    "Arrow keys move the cell · [ ] head · Page Up / Page Down layer · Enter or a click explains the weight");
  ex.status.append(ex.statusSel, ex.statusHelp);
}

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

// a tab per kind (none for a single kind) and per view (rollout only where the run has one)
export function buildTabs(ex) {
  const d = ex.doc;
  ex.kindTabs.replaceChildren(...ex.kinds.map((k) => {
    const b = el(d, "button", "ae-tab", k.title);
    b.type = "button";
    b.dataset.kind = k.name;
    return b;
  }));
  ex.kindTabs.hidden = ex.kinds.length < 2;
  const views = ex.rollout ? VIEWS : VIEWS.slice(0, -1);
  ex.viewTabs.replaceChildren(...views.map((v) => {
    const b = el(d, "button", "ae-tab", v);
    b.type = "button";
    b.dataset.view = v;
    return b;
  }));
}

export function drawChrome(ex) {
  const s = ex.state, k = ex.kind;
  for (const b of ex.kindTabs.children) b.setAttribute("aria-pressed", String(b.dataset.kind === s.kind));
  for (const b of ex.viewTabs.children) {
    b.setAttribute("aria-pressed", String(b.dataset.view === s.view));
    b.disabled = b.dataset.view === "rollout" && !(ex.rollout && ex.rollout.kind === s.kind);
    if (b.disabled) b.title = "rollout is computed for the encoder's self-attention only";
  }
  ex.layerOut.textContent = `layer ${s.layer} / ${k.layers - 1}`;
  ex.headOut.textContent = `head ${s.head} / ${k.heads - 1}`;
  ex.scaleBtn.textContent = s.scale === "max" ? "colour: 0 – map max" : "colour: 0 – 1";
  ex.caption.textContent = `${k.title} · layer ${s.layer} · head ${s.head} · ${s.view}`;
  const lines = s.view === "lines";
  const what = { mean: ` · the mean over the ${k.heads} heads of layer ${s.layer}`, rollout: " · rollout over all layers" }[s.view] || "";
  ex.axes.textContent = (lines ? `left: ${k.query_axis} · right: ${k.key_axis}` : `rows: ${k.query_axis} · columns: ${k.key_axis}`) + what;
  ex.swatches.hidden = !lines;
  if (lines) drawSwatches(ex);
  ex.maskNote.hidden = !k.masked || lines;
  drawLegend(ex);
}

function drawSwatches(ex) {
  const k = ex.kind, shown = new Set(shownHeads(ex)), d = ex.doc;
  if (ex.swatches.dataset.kind !== k.name) {
    ex.swatches.dataset.kind = k.name;
    ex.swatches.replaceChildren(...Array.from({ length: k.heads }, (_, h) => {
      const b = el(d, "button", "ae-swatch");
      b.type = "button";
      b.dataset.head = String(h);
      const dot = el(d, "span", "ae-dot");
      dot.style.background = ex.headColours[h % ex.headColours.length];
      b.append(dot, el(d, "span", "", `head ${h}`));
      return b;
    }));
  }
  for (const b of ex.swatches.children) b.setAttribute("aria-pressed", String(shown.has(Number(b.dataset.head))));
}

function drawLegend(ex) {
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
  if (s.scale === "max" && s.view !== "grid" && s.view !== "lines") top = `${mapMax(mapOf(ex), ex.kind.mask).toFixed(4)} (the largest weight here)`;
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
    tokenSpan(d, "ae-tok", sel.key_token), d.createTextNode(sel.masked ? ": masked" : `: ${weightText(sel)}`));
}
