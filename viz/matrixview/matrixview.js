// The matrix view: one matrix as a table of coloured cells with its numbers printed.
//
// Streamlit (components v2) sends a small JSON payload (viz/matrixview/payload.py); this script
// builds a <table> from it. Labels and titles are written with textContent only, never parsed as
// markup. Hovering a cell highlights its row and column and writes "row → column: value" under the
// title; the root's data-state attribute holds the payload's digest and the hovered cell, for tests
// and benchmarks. Hovering never talks to the server. A table wider than its room scrolls sideways under
// a "scroll →" caption, a fade on the edge (markScroll).
//
// This is the entry module: cells.js (a cell's colour, ink and number) and svg.js (the SVG file) are
// joined into it as one script by viz/matrixview/assets.py.

import { along, fmt, hexRgb, ink } from "./cells.js";
import { matrixSvg, slug } from "./svg.js";

const views = new WeakMap();  // parent element -> its view: a rerun with new data reuses the element

export default function (component) {
  const { parentElement, data } = component;
  let view = views.get(parentElement);
  if (!view) {
    view = new MatrixView(parentElement);
    views.set(parentElement, view);
  }
  const generation = ++view.generation;
  view.setData(typeof data === "string" ? JSON.parse(data) : data);
  return () => {
    if (view.generation === generation) {
      view.resize.disconnect();
      view.root.remove();
      views.delete(parentElement);
    }
  };
}

function el(doc, tag, cls, text) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

class MatrixView {
  constructor(parent) {
    this.generation = 0;
    this.doc = parent.ownerDocument;
    const d = this.doc;
    this.root = el(d, "div", "mv-root");
    this.root.setAttribute("data-testid", "matrix-view");
    this.head = el(d, "div", "mv-heading");
    this.note = el(d, "div", "mv-note");
    this.tabs = el(d, "div", "mv-tabs");
    this.tabs.setAttribute("role", "tablist");
    this.panel = 0;
    const top = el(d, "div", "mv-top");
    this.title = el(d, "div", "mv-title");
    this.readout = el(d, "div", "mv-readout");
    this.readout.setAttribute("aria-live", "polite");
    this.svgButton = el(d, "button", "mv-svg", "SVG");
    this.svgButton.type = "button";
    this.svgButton.title = "Save this matrix as an SVG file (vector: for slides and papers)";
    this.svgButton.setAttribute("aria-label", "Download this matrix as SVG");
    this.svgButton.addEventListener("click", () => this.saveSvg());
    top.append(this.title, this.readout, this.svgButton);
    this.legend = el(d, "div", "mv-legend");
    this.scroll = el(d, "div", "mv-scroll");
    // a region the keyboard reaches (Tab, then the arrow keys scroll it), named by the matrix it holds
    // (show): a table wider or taller than its box is otherwise out of a keyboard user's reach
    this.scroll.tabIndex = 0;
    this.scroll.setAttribute("role", "region");
    // a table wider than its room (a phone's 390 px) scrolls sideways: a caption over it and a fade at the
    // edge where columns are hidden say so (markScroll)
    this.hint = el(d, "div", "mv-hint");
    this.hint.hidden = true;
    this.frame = el(d, "div", "mv-frame");
    this.frame.append(this.scroll);
    this.root.append(this.head, this.note, this.tabs, top, this.legend, this.hint, this.frame);
    parent.append(this.root);
    this.hover = null;
    this.scroll.addEventListener("mouseover", (e) => this.onHover(e.target.closest("td")));
    this.scroll.addEventListener("mouseleave", () => this.onHover(null));
    this.scroll.addEventListener("scroll", () => this.markScroll(), { passive: true });
    this.table = null;
    this.resize = new d.defaultView.ResizeObserver(() => this.markScroll());
    this.resize.observe(this.scroll);
  }

  // Whether the table runs past its box's right edge: the caption reads "scroll →" ("← scroll" once at
  // the right end) and the fade marks the edge while columns lie beyond it. Both are hidden where it fits.
  markScroll() {
    const s = this.scroll, over = s.scrollWidth - s.clientWidth > 1;
    const more = over && s.scrollLeft + s.clientWidth < s.scrollWidth - 1;
    this.frame.classList.toggle("mv-more", more);
    this.hint.hidden = !over;
    this.hint.textContent = !over ? "" : more ? "scroll →" : "← scroll";
  }

  // data: one matrix, or {panels: [matrix, ...]} shown one at a time under tabs
  setData(data) {
    this.root.classList.toggle("mv-projector", Boolean(data.projector));
    if (this.data && this.data.digest === data.digest) return;  // a rerun with the same matrices: nothing to draw
    this.data = data;
    this.panels = data.panels || [data];
    this.drawHeading(data);
    this.drawTabs();
    this.show(Math.min(this.panel, this.panels.length - 1));
  }

  drawHeading(data) {
    const d = this.doc, parts = [];
    if (data.heading) parts.push(el(d, "strong", "", data.heading));
    if (data.code) parts.push(d.createTextNode(" — "), el(d, "code", "", data.code));
    this.head.replaceChildren(...parts);
    this.note.textContent = data.note || "";
    this.root.classList.toggle("mv-boxed", Boolean(data.heading));
  }

  drawTabs() {
    const d = this.doc;
    this.tabs.replaceChildren();
    if (this.panels.length < 2) return;
    this.panels.forEach((p, i) => {
      const tab = el(d, "button", "mv-tab", p.label);
      tab.type = "button";
      tab.setAttribute("role", "tab");
      tab.addEventListener("click", () => this.show(i));
      this.tabs.append(tab);
    });
  }

  show(i) {
    this.panel = i;
    [...this.tabs.children].forEach((tab, j) => tab.setAttribute("aria-selected", String(j === i)));
    const p = (this.p = this.panels[i]);
    this.hover = null;
    this.title.textContent = p.title;
    this.scroll.setAttribute("aria-label", p.title || "matrix");
    this.drawLegend();
    this.drawTable();
    this.onHover(null);
  }

  cellColour(i, j) {
    const p = this.p, c = p.colour, v = p.values[i * p.shape[1] + j];
    if (c.mode === "head") {
      const h = c.heads[i * p.shape[1] + j];
      return hexRgb(h < 0 ? c.none : c.palette[h]);
    }
    if (v === null) return null;  // no value: a blank cell
    const [lo, hi] = c.ranges.length > 1 ? c.ranges[i] : c.ranges[0];
    return along(this.stops, hi > lo ? (v - lo) / (hi - lo) : 0);
  }

  drawTable() {
    const d = this.doc, p = this.p, [n, m] = p.shape;
    this.stops = p.colour.stops ? p.colour.stops.map(hexRgb) : null;
    const table = el(d, "table", "mv-table");
    const axes = [p.row_title && `rows: ${p.row_title}`, p.col_title && `columns: ${p.col_title}`];
    const caption = el(d, "caption", "mv-axes", axes.filter(Boolean).join(" · "));
    const head = el(d, "thead"), top = el(d, "tr");
    top.append(el(d, "th", "mv-corner", ""));
    this.colHeads = p.cols.map((label, j) => {
      const th = el(d, "th", "mv-col", label);
      th.scope = "col";
      th.title = label;
      top.append(th);
      return th;
    });
    head.append(top);
    const body = el(d, "tbody");
    this.rowHeads = [];
    const marked = new Set((p.marks || []).map(([i, j]) => i * m + j));
    for (let i = 0; i < n; i++) {
      const tr = el(d, "tr"), th = el(d, "th", "mv-row", p.rows[i]);
      th.scope = "row";
      th.title = p.rows[i];
      tr.append(th);
      this.rowHeads.push(th);
      for (let j = 0; j < m; j++) {
        const v = p.values[i * m + j];
        const td = el(d, "td", v === null ? "mv-cell mv-blank" : "mv-cell", v === null ? "" : fmt(v, p.decimals));
        td.dataset.i = i;
        td.dataset.j = j;
        if (marked.has(i * m + j)) td.classList.add("mv-marked");
        const rgb = p.colour.mode === "none" ? null : this.cellColour(i, j);
        if (rgb) {
          td.style.background = `rgb(${rgb.join(",")})`;
          td.style.color = ink(rgb);
        }
        tr.append(td);
      }
      body.append(tr);
    }
    table.append(caption, head, body);
    this.scroll.replaceChildren(table);
    this.scroll.scrollLeft = 0;  // another tab or new data starts at the first column
    if (this.table) this.resize.unobserve(this.table);
    this.resize.observe((this.table = table));  // its width may change after (a late font), its box's not
    this.markScroll();
  }

  drawLegend() {
    const d = this.doc, p = this.p, c = p.colour;
    this.legend.replaceChildren();
    const key = (swatch, name) => {
      const item = el(d, "span", "mv-key");
      item.append(swatch, el(d, "span", "", name));
      this.legend.append(item);
    };
    if (c.mode === "head") {
      const used = new Set(c.heads);
      const items = [...c.palette.map((colour, h) => [colour, `head ${h}`, h]), [c.none, "no single head", -1]];
      for (const [colour, name, h] of items) {
        if (!used.has(h)) continue;
        const swatch = el(d, "span", "mv-swatch");
        swatch.style.background = colour;
        key(swatch, name);
      }
    }
    if (p.marks && p.marks.length && p.mark_label) key(el(d, "span", "mv-swatch mv-marked"), p.mark_label);
  }

  onHover(td) {
    const p = this.p;
    if (!p) return;
    const at = td && td.dataset.i !== undefined ? [Number(td.dataset.i), Number(td.dataset.j)] : null;
    if (this.hover) {
      this.rowHeads[this.hover[0]].classList.remove("mv-on");
      this.colHeads[this.hover[1]].classList.remove("mv-on");
    }
    this.hover = at;
    const state = { digest: this.data.digest, panel: p.label || null, title: p.title, shape: p.shape, hover: null };
    if (at) {
      const [i, j] = at, value = p.values[i * p.shape[1] + j];
      this.rowHeads[i].classList.add("mv-on");
      this.colHeads[j].classList.add("mv-on");
      const head = p.colour.mode === "head" ? p.colour.heads[i * p.shape[1] + j] : null;
      const which = head === null ? "" : head < 0 ? " (no single head)" : ` (head ${head})`;
      this.readout.textContent = `${p.rows[i]} → ${p.cols[j]}: ${value === null ? "no value" : fmt(value, 4)}${which}`;
      const marked = (p.marks || []).some(([r, c]) => r === i && c === j);
      if (marked && p.mark_label) this.readout.textContent += ` (${p.mark_label})`;
      state.hover = { row: i, col: j, row_label: p.rows[i], col_label: p.cols[j], value, marked };
    } else {
      this.readout.textContent = p.colour.mode === "none" ? "" : "hover a cell for its value to 4 decimals";
    }
    this.root.dataset.state = JSON.stringify(state);
  }

  // The shown matrix as an SVG file: a download named after its title.
  saveSvg() {
    if (!this.p) return;
    const win = this.doc.defaultView, text = matrixSvg(this);
    const url = win.URL.createObjectURL(new win.Blob([text], { type: "image/svg+xml" }));
    const a = el(this.doc, "a");
    a.href = url;
    a.download = `${slug(this.p.title).slice(0, 60) || "matrix"}.svg`;
    a.hidden = true;
    this.root.append(a);
    a.click();
    a.remove();
    win.setTimeout(() => win.URL.revokeObjectURL(url), 30000);
  }
}
