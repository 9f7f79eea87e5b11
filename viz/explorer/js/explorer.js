// One explorer element. This class holds what the modules share (the run, the view state in
// this.state, the canvases, the theme) and the drawing loop: a change records what it makes stale
// (changed), the next animation frame redraws only that (flush). data.js decodes the run, state.js
// keeps the view, url.js the address bar, theme.js the colours, chrome.js and readouts.js the text
// around the map, input.js handles the input; views.js lists the views, each its own module, which
// draws it (heatmap.js, lines.js, grid.js, mean.js, rollout.js) and keeps what only it needs.

import { buildChrome, buildTabs, drawChrome, drawStatus } from "./chrome.js";
import { prepareKind } from "./data.js";
import { el } from "./dom.js";
import { listen } from "./input.js";
import { buildReadouts, drawStrip, drawTip } from "./readouts.js";
import { freshState, moveTo, stateJson } from "./state.js";
import { colourTable, hexColours, readTheme } from "./theme.js";
import { flushUrl, readUrl, scheduleUrl } from "./url.js";
import { ALL, BASE, CHROME, OVER } from "./view.js";
import { VIEWS, eachView, paneNames, viewOf } from "./views.js";

export class Explorer {
  constructor(parent) {
    this.parent = parent;
    this.doc = parent.ownerDocument || document;
    this.win = this.doc.defaultView || window;
    this.path = this.win.location.pathname;  // the page this explorer belongs to: it never writes another's URL
    this.generation = 0;
    this.send = null;
    this.header = null;
    this.state = null;  // the view state (state.js), set by the first setData
    this.cache = new Map();  // colour-mapped images of maps, one pixel per cell
    this.dirty = 0;
    this.raf = 0;
    this.urlTimer = 0;
    this.build();
  }

  build() {
    const d = this.doc, root = (this.root = el(d, "div", "ae-root"));
    root.setAttribute("data-testid", "attention-explorer");
    root.tabIndex = 0;
    root.setAttribute("role", "application");
    root.setAttribute("aria-roledescription", "attention explorer");
    buildChrome(this);
    buildReadouts(this);
    this.stage = el(d, "div", "ae-stage");
    // one pair of canvases (the map, and the hover marks over it) per pane the views draw on, each
    // keeping its size: switching views shows another pane instead of reallocating and repainting one
    // canvas; a pane's view is the one that drew it last
    this.panes = {};
    for (const type of paneNames()) {
      const pane = el(d, "div", "ae-pane"), base = el(d, "canvas", "ae-base"), over = el(d, "canvas", "ae-over");
      pane.dataset.pane = type;
      pane.hidden = true;
      pane.append(base, over);
      this.panes[type] = { pane, base, over, view: VIEWS.find((v) => v.pane === type), drawn: "" };
    }
    this.pane = Object.values(this.panes)[0];
    this.base = this.pane.base;
    this.over = this.pane.over;
    const own = eachView(this, "build");  // what views keep over the map or beside it (view.js)
    this.stage.append(...Object.values(this.panes).map((p) => p.pane), this.tip, ...own.map((o) => o.stage).filter(Boolean));
    root.append(this.bar, this.caption, this.axes, this.strip, ...own.map((o) => o.above).filter(Boolean), this.stage,
      this.legend, this.status);
    this.parent.appendChild(root);
    listen(this);
    this.width = 0;  // the stage's: the views lay themselves out in it (not the root's, which adds its padding)
    this.resize = new this.win.ResizeObserver(() => {
      const w = this.stage.clientWidth;
      if (w && Math.abs(w - this.width) > 1 && this.state) this.changed(ALL);
    });
    this.resize.observe(root);
    this.media = this.win.matchMedia("(prefers-color-scheme: dark)");
    this.onScheme = () => { readTheme(this); this.changed(ALL); };
    this.media.addEventListener("change", this.onScheme);
    // a touch screen (a phone, a tablet: its pointer cannot hover, or is a finger) reads help for a tap,
    // not for keys it does not have (chrome.js, readouts.js)
    this.touchMedia = this.win.matchMedia("(hover: none), (pointer: coarse)");
    this.touch = this.touchMedia.matches;
    this.onTouch = () => { this.touch = this.touchMedia.matches; if (this.state) this.changed(ALL); };
    this.touchMedia.addEventListener("change", this.onTouch);
  }

  destroy() {
    if (this.raf) this.win.cancelAnimationFrame(this.raf);
    flushUrl(this);
    this.resize.disconnect();
    this.media.removeEventListener("change", this.onScheme);
    this.touchMedia.removeEventListener("change", this.onTouch);
    this.root.remove();
  }

  setData({ header, weights }) {
    const same = this.header && this.header.digest === header.digest;
    this.header = header;
    this.prefix = typeof header.url_prefix === "string" && header.url_prefix ? header.url_prefix : null;
    this.standalone = !!header.standalone;
    this.headColours = hexColours(header.head_colors);
    if (!this.headColours.length) throw new Error("attention explorer: the data has no head colours (head_colors)");
    this.colours = colourTable(header.weight_stops);
    this.root.classList.toggle("ae-projector", !!header.projector);
    this.root.classList.toggle("ae-standalone", this.standalone);
    this.root.setAttribute("aria-label", header.title ? `Attention explorer: ${header.title}` : "Attention explorer");
    if (!same) {
      this.kinds = header.kinds.map((m) => prepareKind(m, weights));
      this.byName = new Map(this.kinds.map((k) => [k.name, k]));
      const r = header.rollout, owner = r && this.byName.get(r.kind);
      this.rollout = owner ? { kind: r.kind, values: weights.subarray(r.offset, r.offset + owner.size) } : null;
      this.cache.clear();
      for (const p of Object.values(this.panes)) p.drawn = "";
      const prev = this.state;
      // a new input keeps the view where it still exists; a first mount starts from the URL
      const wanted = prev ? { kind: prev.kind, layer: prev.layer, head: prev.head, view: prev.view }
        : { ...header.state, ...readUrl(this.win, this.prefix) };
      this.state = freshState(this, wanted, prev);
      this.stripKey = "";
      this.strip.dataset.kind = "";  // new tokens: rebuild the strip (and the views theirs: freshState)
      buildTabs(this);
    }
    readTheme(this);
    this.changed(ALL, true);
  }

  get kind() { return this.byName.get(this.state.kind); }

  get view() { return viewOf(this.state.view); }  // the shown view (views.js)

  // the state changed: the root's data-state says so at once, the next frame redraws what `flags` name
  changed(flags, url = false) {
    this.root.dataset.state = stateJson(this);
    this.dirty |= flags;
    if (!this.raf) this.raf = this.win.requestAnimationFrame(() => this.flush());
    if (url) scheduleUrl(this);
  }

  // switching kind, layer, head or view: everything is redrawn, the URL follows
  go(change) {
    moveTo(this, change);
    this.changed(ALL, true);
  }

  flush() {
    this.raf = 0;
    const f = this.dirty;
    this.dirty = 0;
    this.width = this.stage.clientWidth;
    if (f & CHROME) drawChrome(this);
    if (f & BASE) this.drawView();
    if (f & (BASE | OVER)) this.drawOverlay();
    drawStrip(this);
    drawTip(this);
    eachView(this, "readout");
    if (f & CHROME) drawStatus(this);
  }

  // the current view's pane, drawn again only when what it shows has changed
  drawView() {
    const s = this.state, v = this.view, what = [s.kind, this.width, s.scale, v.key, v.depends(this)].join("|");
    const pane = this.panes[v.pane];
    if (pane !== this.pane) {
      this.pane.pane.hidden = true;
      pane.pane.hidden = false;
      this.pane = pane;
      this.base = pane.base;
      this.over = pane.over;
    } else if (pane.pane.hidden) pane.pane.hidden = false;
    if (pane.drawn !== what || !pane.layout) {
      pane.layout = v.draw(this);
      pane.view = v;
      pane.drawn = what;
    }
    this.layout = pane.layout;
    this.root.dataset.layout = JSON.stringify(this.layout);  // where the cells are, for tests and benchmarks
  }

  drawOverlay() {
    const lay = this.layout, ctx = this.over.getContext("2d"), dpr = this.win.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, lay.W, lay.H);
    this.pane.view.overlay(this, ctx, lay);
  }
}
