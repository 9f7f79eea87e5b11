// The shown view saved as SVG, for slides and papers, as the screen draws it — the same layout
// (ex.layout, which the view's draw() returned), the same labels (the shortened ones, each full token
// in a <title> when cut), the same colour for every weight (the colour table theme.js builds from
// viz.common.WEIGHT_STOPS) and the same caption, axis names and colour legend (the chrome's own text).
// This module writes the document around the view; the view draws itself (its svg(), in its own
// module, from what it draws on the screen), with svgdoc.js's means.
//
// The document is built with createElementNS and textContent and written by XMLSerializer: a token
// such as "<script>" or "&" becomes &lt;script&gt; / &amp;, never markup, and the file parses as XML.
// A map with more cells than MAX_SVG_CELLS goes in as an image (the pixels the screen drew for it)
// instead of one <rect> per cell, which would make a file viewers choke on; the labels, legend and
// text stay vector. PDF: print the SVG from a browser, or `rsvg-convert -f
// pdf` / Inkscape turn it into a PDF: no PDF library is bundled (its text would need embedded fonts).

import { el } from "./dom.js";
import { defineHatch, defineScale, textWidth } from "./svgdoc.js";
import { SVG_NS, svgAttrs, svgNode, svgText, xmlText } from "./svgnodes.js";
import { rgba } from "./theme.js";

// The "SVG" button of the bar: saves the shown view as <title>-<kind>-<view>….svg.
export function svgButton(ex) {
  const b = el(ex.doc, "button", "ae-btn ae-svg", "SVG");
  b.type = "button";
  b.title = "Save this view as an SVG file (vector: for slides and papers)";
  b.setAttribute("aria-label", "Download this view as SVG");
  b.addEventListener("click", () => saveSvg(ex));
  return b;
}

export function saveSvg(ex) {
  if (!ex.state) return;
  const text = explorerSvg(ex), url = ex.win.URL.createObjectURL(new ex.win.Blob([text], { type: "image/svg+xml" }));
  const a = el(ex.doc, "a");
  a.href = url;
  a.download = svgName(ex);
  a.hidden = true;
  ex.root.append(a);
  a.click();
  a.remove();
  ex.win.setTimeout(() => ex.win.URL.revokeObjectURL(url), 30000);
}

function svgName(ex) {
  const s = ex.state, slug = (t) => String(t).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  const where = ex.view.svgName(s);
  return `${(slug(ex.header.title || "").slice(0, 60) || "attention")}-${slug(s.kind)}-${s.view}${where}.svg`;
}

// The shown view as one standalone SVG document (text).
export function explorerSvg(ex) {
  if (ex.raf) { ex.win.cancelAnimationFrame(ex.raf); ex.flush(); }  // what a pending frame would draw
  const d = ex.doc, th = ex.theme, s = ex.state, v = ex.view, lay = ex.layout, fs = th.fs, pad = Math.round(fs);
  const svg = d.createElementNS(SVG_NS, "svg"), defs = svgNode(d, "defs"), body = svgNode(d, "g");
  const measure = textWidth(ex);
  defineHatch(d, defs, th);
  defineScale(d, defs, ex.header.weight_stops);
  // the caption and the axis names, as above the map on the screen
  const caption = ex.caption.textContent, axes = ex.axes.textContent;
  body.append(svgText(d, caption, pad, pad + fs * 0.6, { weight: 600, size: fs * 1.1 }));
  body.append(svgText(d, axes, pad, pad + fs * 2.1, { opacity: 0.8 }));
  let y = Math.ceil(pad + fs * 3);
  if (v.svgAbove) y = v.svgAbove(ex, body, pad, y);  // what the view shows over the map (the lines' heads)
  const view = svgNode(d, "g", { transform: `translate(${pad},${y})`, "data-view": s.view });
  v.svg(ex, view, lay);
  body.append(view);
  y += lay.H + Math.round(fs * 0.5);
  // the colour legend: the scale as a gradient, and the chrome's words for its ends
  const barW = 8 * fs, barH = Math.round(fs * 0.8), legend = svgNode(d, "g", { transform: `translate(${pad},${y})`, "data-legend": "" });
  legend.append(svgNode(d, "rect", { width: barW, height: barH, fill: "url(#ae-scale)", stroke: rgba(th.textRgb, 0.3) }));
  const top = ex.legendText.textContent;
  legend.append(svgText(d, top, barW + fs * 0.6, barH / 2));
  let right = barW + fs * 0.6 + measure(top);
  if (!ex.maskNote.hidden) {
    const x = right + fs;
    legend.append(svgNode(d, "rect", { x, y: 0, width: barH, height: barH, fill: "url(#ae-hatch)", stroke: rgba(th.textRgb, 0.3) }));
    legend.append(svgText(d, ex.maskNote.textContent, x + barH + fs * 0.4, barH / 2));
    right = x + barH + fs * 0.4 + measure(ex.maskNote.textContent);
  }
  body.append(legend);
  y += barH + pad;
  const W = Math.ceil(Math.max(lay.W, measure(caption, true) * 1.1, measure(axes), right) + 2 * pad), H = Math.ceil(y);
  svgAttrs(svg, {
    xmlns: SVG_NS, width: W, height: H, viewBox: `0 0 ${W} ${H}`, "font-family": th.font, "font-size": fs,
    fill: th.text, "data-kind": s.kind, "data-view": s.view, "data-layer": s.layer, "data-head": s.head,
  });
  const title = svgNode(d, "title");
  title.textContent = xmlText(ex.header.title ? `${ex.header.title} · ${caption}` : caption);
  svg.append(title, defs, svgNode(d, "rect", { width: W, height: H, fill: th.bg }), body);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new ex.win.XMLSerializer().serializeToString(svg)}\n`;
}

