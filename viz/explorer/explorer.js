// The attention explorer: every kind, layer and head of one model run, viewed in the browser.
//
// Streamlit (components v2) sends the data once; switching kind, layer, head or view, hovering and
// moving the selection never talk to the server. A click (or Enter) on a cell sends it back as the
// trigger value "cell". The same file runs standalone in an exported HTML page (mountStandalone).
// Tokens are drawn as text only (textContent, canvas fillText), never parsed as markup. The root's
// data-state attribute is the current state as JSON, for tests and benchmarks.

const VIRIDIS = ["#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c",
  "#22a884", "#44bf70", "#7ad151", "#bddf26", "#fde725"];
const HEAD_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999"];  // Okabe–Ito
const VIEWS = ["heatmap", "lines", "grid", "mean", "rollout"];
const URL_FIELDS = ["kind", "layer", "head", "view"];
const MAX_LABEL = 14;  // characters of a token on an axis; the tooltip shows all of it
const BASE = 1, OVER = 2, CHROME = 4, ALL = 7;
const FOLLOW_MS = 300;  // how long the arrow keys rest before the explanation follows the selection
const LUT = (() => {  // 256 viridis colours, interpolated between the 11 published stops
  const stops = VIRIDIS.map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
  const out = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (stops.length - 1), j = Math.min(Math.floor(t), stops.length - 2), f = t - j;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = stops[j][c] + f * (stops[j + 1][c] - stops[j][c]);
  }
  return out;
})();
const instances = new WeakMap();  // parent element -> Explorer: reruns reuse it, so the view survives

export default function (component) {
  const { parentElement, data, setTriggerValue } = component;
  let ex = instances.get(parentElement);
  if (!ex) {
    ex = new Explorer(parentElement);
    instances.set(parentElement, ex);
  }
  ex.send = (cell) => setTriggerValue("cell", cell);
  const generation = ++ex.generation;
  ex.setData(decode(data));
  return () => {  // Streamlit calls the latest cleanup when the element goes away
    if (ex.generation === generation) {
      ex.destroy();
      instances.delete(parentElement);
    }
  };
}

// The exported HTML file calls this with the inlined JSON (weights as base64).
function mountStandalone(host, data) {
  const ex = new Explorer(host);
  ex.setData(decode(data));
  return ex;
}

// ------------------------------------------------------------------------------------------ data

function decode(data) {
  let header, bytes;
  if (data instanceof ArrayBuffer) data = new Uint8Array(data);
  if (data instanceof Uint8Array) {  // AEX1, uint32 header length, header JSON, float32 weights
    if (String.fromCharCode(data[0], data[1], data[2], data[3]) !== "AEX1") throw new Error("attention explorer: unknown data");
    const n = (data[4] | (data[5] << 8) | (data[6] << 16) | (data[7] << 24)) >>> 0;
    header = JSON.parse(new TextDecoder().decode(data.subarray(8, 8 + n)));
    bytes = data.slice(8 + n);  // a copy, so the floats start on a 4-byte boundary
  } else if (data && typeof data.weights_b64 === "string") {
    header = data;
    const bin = atob(data.weights_b64);
    bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  } else {
    throw new Error("attention explorer: no data");
  }
  // little-endian float32, which is every platform a browser runs on
  return { header, weights: new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2) };
}

function prepareKind(meta, weights) {
  const nq = meta.queries.length, nk = meta.keys.length, size = nq * nk, maps = meta.layers * meta.heads;
  const mask = new Uint8Array(size);
  let masked = 0;
  for (let i = 0; i < size; i++) {
    mask[i] = meta.mask.charCodeAt(i) === 49;
    masked += !mask[i];
  }
  const w = meta.packed ? unpack(weights, meta.offset, maps, mask)
    : weights.subarray(meta.offset, meta.offset + maps * size);
  const sameTokens = !meta.cross && nq === nk && meta.queries.every((t, i) => t === meta.keys[i]);
  return {
    ...meta, nq, nk, size, w, mask, masked, sameTokens, means: new Map(),
    shortQ: meta.queries.map(shorten), shortK: meta.keys.map(shorten),
    head(l, h) { const o = (l * this.heads + h) * size; return w.subarray(o, o + size); },
  };
}

// A packed kind sends each head's unmasked cells only, row by row; the masked cells are 0.
function unpack(weights, offset, maps, mask) {
  const size = mask.length, out = new Float32Array(maps * size);
  for (let m = 0, src = offset; m < maps; m++) {
    const base = m * size;
    for (let i = 0; i < size; i++) if (mask[i]) out[base + i] = weights[src++];
  }
  return out;
}

function shorten(label) {
  const chars = Array.from(label);
  return chars.length > MAX_LABEL ? chars.slice(0, MAX_LABEL - 1).join("") + "…" : label;
}

function clampInt(raw, n) {
  const v = parseInt(raw, 10);
  return Number.isFinite(v) ? Math.min(Math.max(v, 0), n - 1) : 0;
}

function mapMax(values, mask) {
  let m = 0;
  for (let i = 0; i < values.length; i++) if (mask[i] && values[i] > m) m = values[i];
  return m || 1;
}

// ------------------------------------------------------------------------------------------ DOM

function el(doc, tag, cls, text) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function tokenSpan(doc, cls, label) {
  const s = el(doc, "span", cls, label);
  s.dir = "auto";  // with unicode-bidi: isolate in the CSS, no token can reorder its neighbours
  return s;
}

function sizeCanvas(canvas, w, h) {
  const dpr = window.devicePixelRatio || 1;
  const W = Math.round(w * dpr), H = Math.round(h * dpr);
  if (canvas.width !== W || canvas.height !== H) {
    canvas.width = W;
    canvas.height = H;
    canvas.style.width = `${w}px`;
    canvas.style.height = `${h}px`;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

class Explorer {
  constructor(parent) {
    this.parent = parent;
    this.doc = parent.ownerDocument || document;
    this.win = this.doc.defaultView || window;
    this.path = this.win.location.pathname;  // the page this explorer belongs to: it never writes another's URL
    this.generation = 0;
    this.send = null;
    this.header = null;
    this.st = null;
    this.cache = new Map();  // colour-mapped images of maps, one pixel per cell
    this.dirty = 0;
    this.raf = 0;
    this.urlTimer = 0;
    this.build();
  }

  build() {
    const d = this.doc;
    const root = (this.root = el(d, "div", "ae-root"));
    root.setAttribute("data-testid", "attention-explorer");
    root.tabIndex = 0;
    root.setAttribute("role", "application");
    root.setAttribute("aria-roledescription", "attention explorer");
    this.bar = el(d, "div", "ae-bar");
    this.kindTabs = el(d, "div", "ae-group ae-kinds");
    this.viewTabs = el(d, "div", "ae-group ae-views");
    this.steppers = el(d, "div", "ae-group ae-steppers");
    this.layerOut = this.stepper("layer");
    this.headOut = this.stepper("head");
    this.scaleBtn = el(d, "button", "ae-btn ae-scale");
    this.scaleBtn.type = "button";
    this.scaleBtn.dataset.action = "scale";
    this.bar.append(this.kindTabs, this.viewTabs, this.steppers, this.scaleBtn);
    this.caption = el(d, "div", "ae-caption");
    this.caption.setAttribute("aria-live", "polite");
    this.axes = el(d, "div", "ae-axes");
    this.strip = el(d, "div", "ae-strip");
    this.swatches = el(d, "div", "ae-swatches");
    this.stage = el(d, "div", "ae-stage");
    // one pair of canvases (the map, and the hover marks over it) per kind of view, each keeping its
    // size: switching views shows another pane instead of reallocating and repainting one canvas
    this.panes = {};
    for (const type of ["heat", "lines", "grid"]) {
      const pane = el(d, "div", "ae-pane"), base = el(d, "canvas", "ae-base"), over = el(d, "canvas", "ae-over");
      pane.dataset.pane = type;
      pane.hidden = true;
      pane.append(base, over);
      this.panes[type] = { pane, base, over, drawn: "" };
    }
    this.pane = this.panes.heat;
    this.base = this.pane.base;
    this.over = this.pane.over;
    this.tip = el(d, "div", "ae-tip");
    this.tipMain = el(d, "div", "ae-tip-main");
    this.tipSub = el(d, "div", "ae-tip-sub");
    this.tip.append(this.tipMain, this.tipSub);
    this.peek = el(d, "div", "ae-peek");
    this.peekCanvas = el(d, "canvas");
    this.peekCaption = el(d, "div", "ae-peek-caption");
    this.peek.append(this.peekCanvas, this.peekCaption);
    this.stage.append(...Object.values(this.panes).map((p) => p.pane), this.tip, this.peek);
    this.legend = el(d, "div", "ae-legend");
    this.legendBar = el(d, "canvas", "ae-legend-bar");
    this.legendText = el(d, "span");
    this.maskNote = el(d, "span", "ae-mask-note", "hatched: masked, the model cannot attend there");
    this.legend.append(this.legendBar, this.legendText, this.maskNote);
    this.status = el(d, "div", "ae-status");
    this.statusSel = el(d, "span", "ae-status-sel");
    this.statusHelp = el(d, "span", "ae-help",
      "Arrow keys move the cell · [ ] head · Page Up / Page Down layer · Enter or a click explains the weight");
    this.status.append(this.statusSel, this.statusHelp);
    root.append(this.bar, this.caption, this.axes, this.strip, this.swatches, this.stage, this.legend, this.status);
    this.parent.appendChild(root);

    root.addEventListener("keydown", (e) => this.onKey(e));
    root.addEventListener("mousedown", (e) => { if (!e.target.closest("button")) root.focus({ preventScroll: true }); });
    this.bar.addEventListener("click", (e) => this.onBar(e));
    this.swatches.addEventListener("click", (e) => this.onSwatch(e));
    this.stage.addEventListener("mousemove", (e) => this.onMove(e));
    this.stage.addEventListener("mouseleave", () => this.onLeave());
    this.stage.addEventListener("click", (e) => this.onClick(e));
    this.strip.addEventListener("mouseover", (e) => this.onStrip(e));
    this.strip.addEventListener("mouseleave", () => this.setToken(null));
    this.width = 0;
    this.resize = new this.win.ResizeObserver(() => {
      const w = this.root.clientWidth;
      if (w && Math.abs(w - this.width) > 1 && this.st) this.changed(ALL);
    });
    this.resize.observe(root);
    this.media = this.win.matchMedia("(prefers-color-scheme: dark)");
    this.onScheme = () => { this.readTheme(); this.changed(ALL); };
    this.media.addEventListener("change", this.onScheme);
  }

  stepper(what) {
    const d = this.doc, group = el(d, "span", "ae-stepper");
    const less = el(d, "button", "ae-btn", "−"), more = el(d, "button", "ae-btn", "+");
    const out = el(d, "span", "ae-step-value");
    less.type = more.type = "button";
    less.dataset.step = more.dataset.step = what;
    less.dataset.delta = "-1";
    more.dataset.delta = "1";
    less.setAttribute("aria-label", `previous ${what}`);
    more.setAttribute("aria-label", `next ${what}`);
    group.append(less, out, more);
    this.steppers.append(group);
    return out;
  }

  destroy() {
    if (this.raf) this.win.cancelAnimationFrame(this.raf);
    if (this.urlTimer) { this.win.clearTimeout(this.urlTimer); this.writeUrl(); }
    this.resize.disconnect();
    this.media.removeEventListener("change", this.onScheme);
    this.root.remove();
  }

  // ---------------------------------------------------------------------------------- state

  setData({ header, weights }) {
    const same = this.header && this.header.digest === header.digest;
    this.header = header;
    this.prefix = typeof header.url_prefix === "string" && header.url_prefix ? header.url_prefix : null;
    this.standalone = !!header.standalone;
    const colours = (header.head_colors || []).filter((c) => /^#[0-9a-f]{6}$/i.test(c));
    this.headColours = colours.length ? colours : HEAD_COLOURS;
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
      const prev = this.st;
      // a new input keeps the view where it still exists; a first mount starts from the URL
      const wanted = prev ? { kind: prev.kind, layer: prev.layer, head: prev.head, view: prev.view }
        : { ...header.state, ...this.readUrl() };
      this.st = {
        ...this.clamp(wanted), hover: null, sel: null, token: null, peek: null, clicked: null,
        scale: prev ? prev.scale : "max", shown: new Map(), note: "",
      };
      this.stripKey = "";
      this.strip.dataset.kind = this.swatches.dataset.kind = "";  // new tokens: rebuild both
      this.buildTabs();
    }
    this.readTheme();
    this.changed(ALL, true);
  }

  clamp(s) {
    const kind = this.byName.has(s.kind) ? s.kind : this.kinds[0].name, k = this.byName.get(kind);
    let view = VIEWS.includes(s.view) ? s.view : "heatmap";
    if (view === "rollout" && !(this.rollout && this.rollout.kind === kind)) view = this.rollout ? "mean" : "heatmap";
    return { kind, view, layer: clampInt(s.layer, k.layers), head: clampInt(s.head, k.heads) };
  }

  get kind() { return this.byName.get(this.st.kind); }

  shownHeads() {
    const k = this.kind;
    let set = this.st.shown.get(k.name);
    if (!set) this.st.shown.set(k.name, (set = new Set([this.st.head])));
    return [...set].filter((h) => h < k.heads).sort((a, b) => a - b);
  }

  // the map a cell is read from: one head, the mean of the layer's heads, or the rollout
  matrix(head) {
    const { view, layer } = this.st, k = this.kind;
    if (view === "mean") return this.mean(k, layer);
    if (view === "rollout") return this.rollout.values;
    return k.head(layer, head ?? this.st.head);
  }

  mean(k, layer) {
    let m = k.means.get(layer);
    if (!m) {
      m = new Float32Array(k.size);
      for (let h = 0; h < k.heads; h++) {
        const w = k.head(layer, h);
        for (let i = 0; i < k.size; i++) m[i] += w[i];
      }
      for (let i = 0; i < k.size; i++) m[i] /= k.heads;
      k.means.set(layer, m);
    }
    return m;
  }

  cellInfo(c) {
    if (!c) return null;
    const k = this.kind, i = c.q * k.nk + c.k, { view } = this.st;
    const head = view === "mean" || view === "rollout" ? null : (c.head ?? this.st.head);
    return {
      query: c.q, key: c.k, query_token: k.queries[c.q], key_token: k.keys[c.k],
      weight: this.matrix(c.head)[i], masked: !k.mask[i], head,
    };
  }

  writeState() {
    const s = this.st, t = s.token, k = this.kind;
    this.root.dataset.state = JSON.stringify({
      view: s.view, kind: s.kind, layer: s.layer, head: s.head, scale: s.scale,
      hovered: this.cellInfo(s.hover), selected: this.cellInfo(s.sel),
      token: t ? { side: t.side === "q" ? "query" : "key", index: t.i, text: (t.side === "q" ? k.queries : k.keys)[t.i] } : null,
      peek: s.peek, heads_shown: s.view === "lines" ? this.shownHeads() : [s.head],
      clicked: s.clicked, digest: this.header.digest,
    });
  }

  changed(flags, url = false) {
    this.writeState();
    this.dirty |= flags;
    if (!this.raf) this.raf = this.win.requestAnimationFrame(() => this.flush());
    if (url) this.scheduleUrl();
  }

  // switching kind, layer, head or view: everything is redrawn, the URL follows
  go(change) {
    const s = this.st, next = this.clamp({ ...s, ...change });
    if (next.kind !== s.kind) { s.sel = null; s.token = null; }
    const oldHead = s.head;
    Object.assign(s, next, { hover: null, peek: null });
    const shown = s.shown.get(s.kind);
    if (shown && shown.size === 1 && shown.has(oldHead)) s.shown.set(s.kind, new Set([s.head]));
    if (s.sel) s.sel.head = undefined;
    this.changed(ALL, true);
  }

  // ------------------------------------------------------------------------------------ URL

  readUrl() {
    if (!this.prefix) return {};
    const params = new URLSearchParams(this.win.location.search), out = {};
    for (const f of URL_FIELDS) {
      const v = params.get(this.prefix + f);
      if (v !== null) out[f] = v;
    }
    return out;
  }

  scheduleUrl() {
    if (!this.prefix) return;
    if (this.urlTimer) this.win.clearTimeout(this.urlTimer);
    this.urlTimer = this.win.setTimeout(() => this.writeUrl(), 120);  // a held key writes once
  }

  writeUrl() {
    this.urlTimer = 0;
    if (!this.prefix || !this.st || !this.root.isConnected) return;
    const loc = this.win.location, params = new URLSearchParams(loc.search);
    if (loc.pathname !== this.path) return;  // the user has moved to another page meanwhile
    for (const f of URL_FIELDS) params.set(this.prefix + f, String(this.st[f]));
    const search = `?${params.toString()}`;
    if (search === loc.search) return;
    try {  // replaceState changes the address bar only: no navigation, no message to the server
      this.win.history.replaceState(this.win.history.state, "", `${loc.pathname}${search}${loc.hash}`);
    } catch (err) { /* a file:// page may refuse; the view works without it */ }
  }

  // ---------------------------------------------------------------------------------- theme

  readTheme() {
    const cs = this.win.getComputedStyle(this.root), v = (n, d) => cs.getPropertyValue(n).trim() || d;
    const probe = this.base.getContext("2d");
    const rgb = (c) => {  // the canvas normalises any CSS colour to #rrggbb or rgba()
      probe.fillStyle = "#000";
      probe.fillStyle = c;
      const s = probe.fillStyle;
      if (s[0] === "#") return [1, 3, 5].map((i) => parseInt(s.slice(i, i + 2), 16));
      return s.replace(/[^\d.,]/g, "").split(",").slice(0, 3).map(Number);
    };
    const projector = this.root.classList.contains("ae-projector");
    this.theme = {
      text: v("--ae-text", "#31333f"), bg: v("--ae-bg", "#ffffff"), bg2: v("--ae-bg2", "#f0f2f6"),
      primary: v("--ae-primary", "#ff4b4b"), font: v("--ae-font", "sans-serif"),
      fs: projector ? 18 : 12, s: projector ? 1.5 : 1,
    };
    this.theme.primaryRgb = rgb(this.theme.primary);
    this.theme.textRgb = rgb(this.theme.text);
    this.theme.bg2Rgb = rgb(this.theme.bg2);
    this.hatch = this.makeHatch();
    this.cache.clear();  // masked cells take the theme's colour
    for (const p of Object.values(this.panes)) p.drawn = "";
    this.labelWidths = new Map();
  }

  makeHatch() {
    const c = el(this.doc, "canvas"), n = 8;
    c.width = c.height = n;
    const ctx = c.getContext("2d");
    ctx.fillStyle = this.theme.bg2;
    ctx.fillRect(0, 0, n, n);
    ctx.strokeStyle = this.rgba(this.theme.textRgb, 0.45);
    ctx.lineWidth = 1.2;
    ctx.beginPath();
    ctx.moveTo(0, n); ctx.lineTo(n, 0); ctx.moveTo(-n / 2, n / 2); ctx.lineTo(n / 2, -n / 2);
    ctx.moveTo(n / 2, n * 1.5); ctx.lineTo(n * 1.5, n / 2);
    ctx.stroke();
    return c;
  }

  rgba(rgb, a) { return `rgba(${rgb[0]},${rgb[1]},${rgb[2]},${a})`; }

  font(bold) { return `${bold ? "600 " : ""}${this.theme.fs}px ${this.theme.font}`; }

  // the widest label of each axis at the current font, measured once per kind and theme
  widths(k) {
    let w = this.labelWidths.get(k.name);
    if (!w) {
      const ctx = this.base.getContext("2d");
      ctx.font = this.font();
      const widest = (labels) => labels.reduce((m, t) => Math.max(m, ctx.measureText(t).width), 0);
      w = { q: widest(k.shortQ), k: widest(k.shortK) };
      this.labelWidths.set(k.name, w);
    }
    return w;
  }

  // one pixel per cell, viridis; masked cells in the theme's second background (hatched on top)
  image(k, key, values) {
    const id = `${k.name}|${key}|${this.st.scale}`;
    let c = this.cache.get(id);
    if (c) return c;
    c = el(this.doc, "canvas");
    c.width = k.nk;
    c.height = k.nq;
    const ctx = c.getContext("2d"), img = ctx.createImageData(k.nk, k.nq), px = img.data;
    const inv = 255 / (this.st.scale === "max" ? mapMax(values, k.mask) : 1), [r, g, b] = this.theme.bg2Rgb;
    for (let i = 0; i < k.size; i++) {
      const o = i * 4;
      if (k.mask[i]) {
        const j = Math.min(255, Math.max(0, Math.round(values[i] * inv))) * 3;
        px[o] = LUT[j]; px[o + 1] = LUT[j + 1]; px[o + 2] = LUT[j + 2];
      } else {
        px[o] = r; px[o + 1] = g; px[o + 2] = b;
      }
      px[o + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
    if (this.cache.size > 400) this.cache.clear();
    this.cache.set(id, c);
    return c;
  }

  // ---------------------------------------------------------------------------------- chrome

  buildTabs() {
    const d = this.doc;
    this.kindTabs.replaceChildren(...this.kinds.map((k) => {
      const b = el(d, "button", "ae-tab", k.title);
      b.type = "button";
      b.dataset.kind = k.name;
      return b;
    }));
    this.kindTabs.hidden = this.kinds.length < 2;
    const views = this.rollout ? VIEWS : VIEWS.slice(0, -1);
    this.viewTabs.replaceChildren(...views.map((v) => {
      const b = el(d, "button", "ae-tab", v);
      b.type = "button";
      b.dataset.view = v;
      return b;
    }));
  }

  drawChrome() {
    const s = this.st, k = this.kind;
    for (const b of this.kindTabs.children) b.setAttribute("aria-pressed", String(b.dataset.kind === s.kind));
    for (const b of this.viewTabs.children) {
      b.setAttribute("aria-pressed", String(b.dataset.view === s.view));
      b.disabled = b.dataset.view === "rollout" && !(this.rollout && this.rollout.kind === s.kind);
      if (b.disabled) b.title = "rollout is computed for the encoder's self-attention only";
    }
    this.layerOut.textContent = `layer ${s.layer} / ${k.layers - 1}`;
    this.headOut.textContent = `head ${s.head} / ${k.heads - 1}`;
    this.scaleBtn.textContent = s.scale === "max" ? "colour: 0 – map max" : "colour: 0 – 1";
    this.caption.textContent = `${k.title} · layer ${s.layer} · head ${s.head} · ${s.view}`;
    const lines = s.view === "lines";
    const what = { mean: ` · the mean over the ${k.heads} heads of layer ${s.layer}`, rollout: " · rollout over all layers" }[s.view] || "";
    this.axes.textContent = (lines ? `left: ${k.query_axis} · right: ${k.key_axis}` : `rows: ${k.query_axis} · columns: ${k.key_axis}`) + what;
    this.swatches.hidden = !lines;
    if (lines) this.drawSwatches();
    this.maskNote.hidden = !k.masked || lines;
    this.drawLegend();
  }

  drawSwatches() {
    const k = this.kind, shown = new Set(this.shownHeads()), d = this.doc;
    if (this.swatches.dataset.kind !== k.name) {
      this.swatches.dataset.kind = k.name;
      this.swatches.replaceChildren(...Array.from({ length: k.heads }, (_, h) => {
        const b = el(d, "button", "ae-swatch");
        b.type = "button";
        b.dataset.head = String(h);
        const dot = el(d, "span", "ae-dot");
        dot.style.background = this.headColours[h % this.headColours.length];
        b.append(dot, el(d, "span", "", `head ${h}`));
        return b;
      }));
    }
    for (const b of this.swatches.children) b.setAttribute("aria-pressed", String(shown.has(Number(b.dataset.head))));
  }

  drawLegend() {
    const { fs } = this.theme, w = 8 * fs, h = Math.round(fs * 0.8);
    if (this.legendBar.dataset.fs !== String(fs)) {  // the colour bar depends on the type size only
      this.legendBar.dataset.fs = String(fs);
      const ctx = sizeCanvas(this.legendBar, w, h);
      for (let x = 0; x < w; x++) {
        const j = Math.round((x / (w - 1)) * 255) * 3;
        ctx.fillStyle = `rgb(${LUT[j]},${LUT[j + 1]},${LUT[j + 2]})`;
        ctx.fillRect(x, 0, 1, h);
      }
    }
    const s = this.st;
    let top = "1";
    if (s.scale === "max" && s.view !== "grid" && s.view !== "lines") top = `${mapMax(this.matrix(), this.kind.mask).toFixed(4)} (the largest weight here)`;
    else if (s.scale === "max") top = "the largest weight of each map";
    this.legendText.textContent = `0 → ${top}`;
  }

  drawStrip() {
    const s = this.st, k = this.kind, d = this.doc, t = s.token;
    const q = s.hover ? s.hover.q : t && t.side === "q" ? t.i : s.sel ? s.sel.q : null;
    const head = s.hover && s.hover.head !== undefined ? s.hover.head : undefined;
    const key = `${k.name}|${s.view}|${s.layer}|${s.head}|${head}|${q}|${t ? t.side + t.i : ""}|${s.hover ? s.hover.k : ""}|${this.theme.primary}`;
    if (key === this.stripKey) return;
    this.stripKey = key;
    if (this.strip.dataset.kind !== k.name || !this.stripLabel) {
      this.strip.dataset.kind = k.name;
      this.stripLabel = el(d, "span", "ae-strip-label");
      this.strip.replaceChildren(this.stripLabel, ...k.keys.map((label, i) => {
        const span = tokenSpan(d, k.special[i] ? "ae-tok ae-special" : "ae-tok", label);
        span.dataset.i = String(i);
        return span;
      }));
    }
    const spans = this.strip.children;
    const row = q === null ? null : this.matrix(head).subarray(q * k.nk, (q + 1) * k.nk);
    let m = 0;
    if (row) for (let j = 0; j < k.nk; j++) if (k.mask[q * k.nk + j] && row[j] > m) m = row[j];
    for (let j = 0; j < k.nk; j++) {
      const span = spans[j + 1], visible = row && k.mask[q * k.nk + j];
      span.style.backgroundColor = visible ? this.rgba(this.theme.primaryRgb, ((0.85 * row[j]) / (m || 1)).toFixed(3)) : "";
      span.classList.toggle("ae-masked", !!row && !visible);
      span.classList.toggle("ae-on", (t && t.side === "k" && t.i === j) || (!!s.hover && s.hover.k === j) ||
        (!!t && t.side === "q" && k.sameTokens && t.i === j));
    }
    this.stripLabel.textContent = q === null ? `${k.key_axis}: hover a cell or a token to see what its query attends to`
      : `${k.query_axis}: `;
    if (q !== null) {
      const who = tokenSpan(d, "ae-tok ae-query", k.queries[q]);
      this.stripLabel.append(who, d.createTextNode(" attends to"));
    }
  }

  drawTip() {
    const s = this.st, info = s.hover && this.cellInfo(s.hover);
    const p = s.peek, lay = this.layout;
    this.peek.hidden = !p || !lay || lay.type !== "grid";
    if (!this.peek.hidden) this.drawPeek(p);
    if (!info) { this.tip.hidden = true; return; }
    this.tip.hidden = false;
    this.tipMain.replaceChildren();
    const d = this.doc;
    this.tipMain.append(tokenSpan(d, "ae-tok", info.query_token), d.createTextNode(" → "),
      tokenSpan(d, "ae-tok", info.key_token), d.createTextNode(info.masked ? ": masked" : `: ${info.weight.toFixed(4)}`));
    const where = info.head === null ? (s.view === "mean" ? "mean of the heads" : "rollout") : `head ${info.head}`;
    this.tipSub.textContent = `query ${info.query} · key ${info.key} · ${where}${info.masked ? " · masked: the model cannot attend here" : ""}`;
    const [x, y] = this.tipAt || [0, 0];
    const W = this.stage.clientWidth;
    this.tip.style.transform = `translate(${Math.min(x + 14, Math.max(0, W - this.tip.offsetWidth - 4))}px, ${y + 16}px)`;
  }

  drawPeek(p) {
    const k = this.kind, size = Math.round(200 * this.theme.s);
    const ctx = sizeCanvas(this.peekCanvas, size, size);
    ctx.imageSmoothingEnabled = k.nk > size;
    ctx.drawImage(this.image(k, `h${p.layer}.${p.head}`, k.head(p.layer, p.head)), 0, 0, size, size);
    this.peekCaption.textContent = `layer ${p.layer} · head ${p.head} · click to open`;
    const lay = this.layout, x = lay.x0 + (p.head + 1) * (lay.thumb + lay.gap), y = lay.y0 + p.layer * (lay.thumb + lay.gap);
    const W = this.stage.clientWidth, left = x + size + 12 < W ? x + 4 : Math.max(0, x - lay.thumb - size - 16);
    this.peek.style.transform = `translate(${left}px, ${y}px)`;
  }

  // ---------------------------------------------------------------------------------- views

  flush() {
    this.raf = 0;
    const f = this.dirty;
    this.dirty = 0;
    this.width = this.root.clientWidth;
    if (f & CHROME) this.drawChrome();
    if (f & BASE) this.drawView();
    if (f & (BASE | OVER)) this.drawOverlay();
    this.drawStrip();
    this.drawTip();
    if (f & CHROME) this.drawStatus();
  }

  // the current view's pane, drawn again only when what it shows has changed
  drawView() {
    const s = this.st, v = s.view, type = v === "lines" ? "lines" : v === "grid" ? "grid" : "heat";
    const t = s.token, what = [s.kind, this.width, s.scale, v === "grid" ? "" : s.layer,
      type === "heat" ? `${v}${s.head}` : "", type === "lines" ? `${this.shownHeads()}|${t ? t.side + t.i : ""}` : ""].join("|");
    const pane = this.panes[type];
    if (pane !== this.pane) {
      this.pane.pane.hidden = true;
      pane.pane.hidden = false;
      this.pane = pane;
      this.base = pane.base;
      this.over = pane.over;
    } else if (pane.pane.hidden) pane.pane.hidden = false;
    if (pane.drawn !== what || !pane.layout) {
      if (type === "lines") this.drawLines();
      else if (type === "grid") this.drawGrid();
      else this.drawHeatmap();
      pane.drawn = what;
      pane.layout = this.layout;
    }
    this.layout = pane.layout;
    this.root.dataset.layout = JSON.stringify(this.layout);  // where the cells are, for tests and benchmarks
  }

  drawStatus() {
    const s = this.st, sel = this.cellInfo(s.sel);
    this.statusSel.replaceChildren();
    if (s.note) { this.statusSel.textContent = s.note; return; }
    if (!sel) return;
    const d = this.doc;
    this.statusSel.append(d.createTextNode("selected: "), tokenSpan(d, "ae-tok", sel.query_token), d.createTextNode(" → "),
      tokenSpan(d, "ae-tok", sel.key_token), d.createTextNode(sel.masked ? ": masked" : `: ${sel.weight.toFixed(4)}`));
  }

  drawHeatmap() {
    const k = this.kind, s = this.st, { fs } = this.theme, sc = this.theme.s, lw = this.widths(k);
    const key = s.view === "mean" ? `m${s.layer}` : s.view === "rollout" ? "r" : `h${s.layer}.${s.head}`;
    const img = this.image(k, key, this.matrix());
    const x0 = Math.ceil(Math.min(lw.q + 10, 200 * sc)), y0 = Math.ceil(Math.min(lw.k + 10, 200 * sc));
    const avail = Math.max(60, this.width - x0 - 12);
    const c = Math.max(3, Math.min(Math.floor(36 * sc), Math.floor(avail / k.nk), Math.floor((720 * sc) / k.nq)));
    const W = x0 + k.nk * c + 12, H = y0 + k.nq * c + 12;
    const ctx = sizeCanvas(this.base, W, H);
    sizeCanvas(this.over, W, H);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(img, x0, y0, k.nk * c, k.nq * c);
    if (k.masked) {
      const path = new Path2D();
      for (let q = 0; q < k.nq; q++) {  // one rectangle per run of masked cells in a row
        for (let j = 0; j < k.nk; j++) {
          if (k.mask[q * k.nk + j]) continue;
          let e = j;
          while (e + 1 < k.nk && !k.mask[q * k.nk + e + 1]) e++;
          path.rect(x0 + j * c, y0 + q * c, (e - j + 1) * c, c);
          j = e;
        }
      }
      ctx.fillStyle = ctx.createPattern(this.hatch, "repeat");
      ctx.fill(path);
    }
    const stride = c < fs + 2 ? Math.ceil((fs + 2) / c) : 1;
    this.layout = { type: "heat", x0, y0, c, W, H, stride };
    ctx.font = this.font();
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (let q = 0; q < k.nq; q += stride) {
      ctx.fillStyle = this.theme.text;
      ctx.fillText(k.shortQ[q], x0 - 5, y0 + q * c + c / 2);
    }
    ctx.save();
    ctx.rotate(-Math.PI / 2);  // key labels read upwards; x' = -y, y' = x
    ctx.textAlign = "left";
    for (let j = 0; j < k.nk; j += stride) {
      ctx.fillStyle = k.special[j] ? this.rgba(this.theme.textRgb, 0.55) : this.theme.text;
      ctx.fillText(k.shortK[j], -(y0 - 5), x0 + j * c + c / 2);
    }
    ctx.restore();
  }

  linesLayout() {
    const k = this.kind, { fs, s: sc } = this.theme, lw = this.widths(k), n = Math.max(k.nq, k.nk);
    const rowH = Math.max(4, Math.min(fs * 1.7, (760 * sc) / n));
    const colW = Math.ceil(Math.min(Math.max(lw.q, lw.k) + 14, 200 * sc));
    const gap = Math.max(160, Math.min(420 * sc, this.width - 2 * colW - 8));
    const top = Math.ceil(fs * 2);
    return { type: "lines", colW, gap, left: colW, right: colW + gap, top, rowH, W: 2 * colW + gap, H: top + n * rowH + 8,
      stride: rowH < fs + 1 ? Math.ceil((fs + 1) / rowH) : 1 };
  }

  // every line of the shown heads that is worth drawing, filtered to one token when one is focused
  lineSet() {
    const k = this.kind, s = this.st, t = s.token, out = [];
    for (const h of this.shownHeads()) {
      const w = k.head(s.layer, h), inv = 1 / (s.scale === "max" ? mapMax(w, k.mask) : 1);
      const q0 = t && t.side === "q" ? t.i : 0, q1 = t && t.side === "q" ? t.i + 1 : k.nq;
      for (let q = q0; q < q1; q++) {
        for (let j = 0; j < k.nk; j++) {
          if (t && t.side === "k" && j !== t.i) continue;
          const i = q * k.nk + j, a = w[i] * inv;
          if (k.mask[i] && a >= 0.02) out.push(h, q, j, a);
        }
      }
    }
    return out;
  }

  drawLines() {
    const k = this.kind, lay = (this.layout = this.linesLayout()), { fs } = this.theme;
    const ctx = sizeCanvas(this.base, lay.W, lay.H);
    sizeCanvas(this.over, lay.W, lay.H);
    const y = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
    ctx.font = this.font(true);
    ctx.fillStyle = this.theme.text;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    ctx.fillText(k.query_axis, lay.left - 6, fs * 0.8);
    ctx.textAlign = "left";
    ctx.fillText(k.key_axis, lay.right + 6, fs * 0.8);
    ctx.font = this.font();
    ctx.textAlign = "right";
    for (let q = 0; q < k.nq; q += lay.stride) ctx.fillText(k.shortQ[q], lay.left - 6, y(q));
    ctx.textAlign = "left";
    for (let j = 0; j < k.nk; j += lay.stride) {
      ctx.fillStyle = k.special[j] ? this.rgba(this.theme.textRgb, 0.55) : this.theme.text;
      ctx.fillText(k.shortK[j], lay.right + 6, y(j));
    }
    const lines = (this.lines = this.lineSet()), buckets = new Map();
    for (let i = 0; i < lines.length; i += 4) {  // one path per head and opacity step: few strokes
      const id = lines[i] * 16 + Math.min(15, Math.floor(lines[i + 3] * 16));
      let p = buckets.get(id);
      if (!p) buckets.set(id, (p = new Path2D()));
      p.moveTo(lay.left + 2, y(lines[i + 1]));
      p.lineTo(lay.right - 2, y(lines[i + 2]));
    }
    ctx.lineWidth = 1 / (this.win.devicePixelRatio || 1);  // at most one device pixel: Skia draws these as fast hairlines
    for (const [id, p] of buckets) {
      ctx.globalAlpha = ((id % 16) + 1) / 16;
      ctx.strokeStyle = this.headColours[Math.floor(id / 16) % this.headColours.length];
      ctx.stroke(p);
    }
    ctx.globalAlpha = 1;
  }

  drawGrid() {
    const k = this.kind, { fs, s: sc } = this.theme, ctx0 = this.base.getContext("2d");
    ctx0.font = this.font();
    const x0 = Math.ceil(ctx0.measureText(`layer ${k.layers - 1}`).width + 12), y0 = Math.ceil(fs + 10), gap = 6;
    const thumb = Math.max(28, Math.min(Math.floor(150 * sc), Math.floor((this.width - x0 - 8) / k.heads) - gap));
    const W = x0 + k.heads * (thumb + gap), H = y0 + k.layers * (thumb + gap);
    const ctx = sizeCanvas(this.base, W, H);
    sizeCanvas(this.over, W, H);
    this.layout = { type: "grid", x0, y0, thumb, gap, W, H };
    ctx.font = this.font();
    ctx.fillStyle = this.theme.text;
    ctx.textBaseline = "middle";
    ctx.textAlign = "center";
    for (let h = 0; h < k.heads; h++) ctx.fillText(`head ${h}`, x0 + h * (thumb + gap) + thumb / 2, y0 / 2);
    ctx.textAlign = "right";
    for (let l = 0; l < k.layers; l++) {
      ctx.fillStyle = this.theme.text;
      ctx.fillText(`layer ${l}`, x0 - 6, y0 + l * (thumb + gap) + thumb / 2);
      for (let h = 0; h < k.heads; h++) {
        ctx.imageSmoothingEnabled = k.nk > thumb;
        ctx.drawImage(this.image(k, `h${l}.${h}`, k.head(l, h)), x0 + h * (thumb + gap), y0 + l * (thumb + gap), thumb, thumb);
      }
    }
  }

  drawOverlay() {
    const lay = this.layout, ctx = this.over.getContext("2d"), dpr = this.win.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, lay.W, lay.H);
    if (lay.type === "heat") this.overlayHeat(ctx, lay);
    else if (lay.type === "lines") this.overlayLines(ctx, lay);
    else this.overlayGrid(ctx, lay);
  }

  // the rows and columns to mark: the hovered cell's and the focused token's, on both axes of self-attention
  marked() {
    const s = this.st, k = this.kind, rows = new Set(), cols = new Set(), t = s.token;
    if (s.hover) { rows.add(s.hover.q); cols.add(s.hover.k); }
    if (t) {
      (t.side === "q" ? rows : cols).add(t.i);
      if (k.sameTokens) (t.side === "q" ? cols : rows).add(t.i);
    }
    return { rows, cols };
  }

  overlayHeat(ctx, lay) {
    const k = this.kind, s = this.st, { x0, y0, c } = lay, tint = this.rgba(this.theme.primaryRgb, 0.3);
    const { rows, cols } = this.marked();
    ctx.lineWidth = 1;
    ctx.strokeStyle = this.rgba(this.theme.textRgb, 0.85);
    for (const q of rows) {
      ctx.fillStyle = tint;
      ctx.fillRect(0, y0 + q * c, x0 - 2, c);
      ctx.strokeRect(x0 + 0.5, y0 + q * c + 0.5, k.nk * c - 1, c - 1);
    }
    for (const j of cols) {
      ctx.fillStyle = tint;
      ctx.fillRect(x0 + j * c, 0, c, y0 - 2);
      ctx.strokeRect(x0 + j * c + 0.5, y0 + 0.5, c - 1, k.nq * c - 1);
    }
    const box = (cell, colour, width, dash) => {
      ctx.setLineDash(dash);
      ctx.lineWidth = width;
      ctx.strokeStyle = colour;
      ctx.strokeRect(x0 + cell.k * c - 0.5, y0 + cell.q * c - 0.5, c + 1, c + 1);
      ctx.setLineDash([]);
    };
    if (s.sel) { box(s.sel, this.theme.bg, 4, []); box(s.sel, this.theme.primary, 2, [4, 2]); }
    if (s.hover) { box(s.hover, this.theme.bg, 3, []); box(s.hover, this.theme.text, 1.5, []); }
  }

  overlayLines(ctx, lay) {
    const k = this.kind, s = this.st, { fs } = this.theme, y = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
    const tint = this.rgba(this.theme.primaryRgb, 0.3), { rows, cols } = this.marked();
    const h = Math.max(lay.rowH, fs + 2);
    if (s.sel) { rows.add(s.sel.q); cols.add(s.sel.k); }
    ctx.fillStyle = tint;
    for (const q of rows) ctx.fillRect(0, y(q) - h / 2, lay.left - 2, h);
    for (const j of cols) ctx.fillRect(lay.right + 2, y(j) - h / 2, lay.colW - 2, h);
    ctx.font = this.font(true);
    ctx.textBaseline = "middle";
    ctx.fillStyle = this.theme.text;
    ctx.textAlign = "right";
    for (const q of rows) ctx.fillText(k.shortQ[q], lay.left - 6, y(q));  // marked labels legible at any stride
    ctx.textAlign = "left";
    for (const j of cols) ctx.fillText(k.shortK[j], lay.right + 6, y(j));
    const line = (cell, colour, width) => {
      ctx.beginPath();
      ctx.moveTo(lay.left + 2, y(cell.q));
      ctx.lineTo(lay.right - 2, y(cell.k));
      ctx.lineWidth = width;
      ctx.strokeStyle = colour;
      ctx.stroke();
    };
    const headOf = (cell) => this.headColours[(cell.head ?? s.head) % this.headColours.length];
    if (s.sel) { line(s.sel, this.theme.bg, 5 * this.theme.s); line(s.sel, headOf(s.sel), 2.5 * this.theme.s); }
    if (s.hover) { line(s.hover, this.theme.text, 4 * this.theme.s); line(s.hover, headOf(s.hover), 2.5 * this.theme.s); }
  }

  overlayGrid(ctx, lay) {
    const s = this.st, at = (l, h) => [lay.x0 + h * (lay.thumb + lay.gap) - 2, lay.y0 + l * (lay.thumb + lay.gap) - 2];
    ctx.lineWidth = 2.5;
    ctx.strokeStyle = this.theme.primary;
    ctx.strokeRect(...at(s.layer, s.head), lay.thumb + 4, lay.thumb + 4);
    if (s.peek) {
      ctx.strokeStyle = this.theme.text;
      ctx.setLineDash([3, 2]);
      ctx.strokeRect(...at(s.peek.layer, s.peek.head), lay.thumb + 4, lay.thumb + 4);
      ctx.setLineDash([]);
    }
  }

  // ---------------------------------------------------------------------------------- input

  // what is under the mouse: {cell}, {token}, {peek} or nothing
  hit(e) {
    const r = this.base.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top, lay = this.layout, k = this.kind;
    if (!lay || x < 0 || y < 0 || x > lay.W || y > lay.H) return {};
    if (lay.type === "heat") {
      const q = Math.floor((y - lay.y0) / lay.c), j = Math.floor((x - lay.x0) / lay.c);
      const inQ = q >= 0 && q < k.nq, inK = j >= 0 && j < k.nk;
      if (inQ && inK) return { cell: { q, k: j } };
      if (inQ && x < lay.x0) return { token: { side: "q", i: q } };
      if (inK && y < lay.y0) return { token: { side: "k", i: j } };
      return {};
    }
    if (lay.type === "grid") {
      const step = lay.thumb + lay.gap, h = Math.floor((x - lay.x0) / step), l = Math.floor((y - lay.y0) / step);
      const inside = (x - lay.x0) % step < lay.thumb && (y - lay.y0) % step < lay.thumb;
      return h >= 0 && h < k.heads && l >= 0 && l < k.layers && inside ? { peek: { layer: l, head: h } } : {};
    }
    const row = Math.floor((y - lay.top) / lay.rowH);
    if (x < lay.left) return row >= 0 && row < k.nq ? { token: { side: "q", i: row } } : {};
    if (x > lay.right) return row >= 0 && row < k.nk ? { token: { side: "k", i: row } } : {};
    return { cell: this.nearestLine(x, y, lay), keepToken: true };
  }

  nearestLine(x, y, lay) {
    const L = this.lines || [], t = (x - lay.left) / (lay.right - lay.left), span = lay.right - lay.left;
    const yAt = (i) => lay.top + i * lay.rowH + lay.rowH / 2;
    let best = null, bestD = 6 * this.theme.s;
    for (let i = 0; i < L.length; i += 4) {
      const y0 = yAt(L[i + 1]), y1 = yAt(L[i + 2]), dy = y1 - y0;
      const d = Math.abs(y - (y0 + t * dy)) / Math.sqrt(1 + (dy / span) ** 2);
      if (d < bestD || (best && d === bestD && L[i + 3] > best.a)) {
        bestD = d;
        best = { head: L[i], q: L[i + 1], k: L[i + 2], a: L[i + 3] };
      }
    }
    return best && { q: best.q, k: best.k, head: best.head };
  }

  sameCell(a, b) { return a === b || (!!a && !!b && a.q === b.q && a.k === b.k && a.head === b.head); }

  onMove(e) {
    const s = this.st, h = this.hit(e);
    const r = this.stage.getBoundingClientRect();
    this.tipAt = [e.clientX - r.left + this.stage.scrollLeft, e.clientY - r.top];
    if (this.st.view === "grid") {
      const p = h.peek || null;
      if (JSON.stringify(p) !== JSON.stringify(s.peek)) { s.peek = p; this.changed(OVER); }
      return;
    }
    const cell = h.cell || null, token = h.token || (h.keepToken ? s.token : null);
    const tokenChanged = JSON.stringify(token) !== JSON.stringify(s.token);
    if (!tokenChanged && this.sameCell(cell, s.hover)) {
      if (cell) this.drawTip();  // the tooltip follows the mouse
      return;
    }
    s.hover = cell;
    s.token = token;
    this.changed(tokenChanged && s.view === "lines" ? BASE | OVER : OVER);
  }

  onLeave() {
    const s = this.st;
    if (!s.hover && !s.token && !s.peek) return;
    const lines = s.view === "lines" && s.token;
    s.hover = s.token = s.peek = null;
    this.changed(lines ? BASE | OVER : OVER);
  }

  setToken(token) {
    const s = this.st;
    if (JSON.stringify(token) === JSON.stringify(s.token)) return;
    s.token = token;
    this.changed(s.view === "lines" ? BASE | OVER : OVER);
  }

  onStrip(e) {
    const span = e.target.closest && e.target.closest(".ae-tok[data-i]");
    if (span) this.setToken({ side: "k", i: Number(span.dataset.i) });
  }

  onClick(e) {
    const h = this.hit(e), s = this.st;
    if (s.view === "grid") {
      if (h.peek) this.go({ layer: h.peek.layer, head: h.peek.head, view: "heatmap" });
      return;
    }
    if (!h.cell) return;
    s.sel = { ...h.cell };
    this.explain();
  }

  // a click or Enter: the selected cell goes to Python (the app explains it from the model's tensors)
  explain() {
    const s = this.st, info = this.cellInfo(s.sel);
    if (!info) return;
    const cell = {
      kind: s.kind, layer: s.view === "rollout" ? null : s.layer, head: info.head,
      query: info.query, key: info.key, weight: info.weight,
    };
    s.clicked = cell;
    s.note = this.standalone ? "Explaining a weight needs the app: this file has the weights, not the model." : "";
    if (this.urlTimer) { this.win.clearTimeout(this.urlTimer); this.writeUrl(); }  // before the rerun reads it
    this.changed(ALL);
    if (!this.standalone && this.send) this.send(cell);
  }

  onBar(e) {
    const b = e.target.closest("button");
    if (!b || b.disabled) return;
    const s = this.st, k = this.kind;
    if (b.dataset.kind) this.go({ kind: b.dataset.kind });
    else if (b.dataset.view) this.go({ view: b.dataset.view });
    else if (b.dataset.step) {
      const what = b.dataset.step, n = what === "layer" ? k.layers : k.heads;
      this.go({ [what]: Math.min(n - 1, Math.max(0, s[what] + Number(b.dataset.delta))) });
    } else if (b.dataset.action === "scale") {
      s.scale = s.scale === "max" ? "abs" : "max";
      this.changed(ALL);
    }
  }

  onSwatch(e) {
    const b = e.target.closest("button[data-head]");
    if (!b) return;
    const k = this.kind, h = Number(b.dataset.head), set = new Set(this.shownHeads());
    if (set.has(h) && set.size > 1) set.delete(h);
    else set.add(h);
    this.st.shown.set(k.name, set);
    this.st.hover = null;
    this.changed(ALL);
  }

  onKey(e) {
    if (e.altKey || e.ctrlKey || e.metaKey || !this.st) return;
    if ((e.key === "Enter" || e.key === " ") && e.target.closest && e.target.closest("button")) return;  // a focused button's own
    const s = this.st, k = this.kind, within = (v, n) => Math.min(n - 1, Math.max(0, v));
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key in moves) {
      const [dq, dk] = moves[e.key];
      if (s.view === "grid") this.go({ layer: within(s.layer + dq, k.layers), head: within(s.head + dk, k.heads) });
      else {  // the first arrow selects the hovered cell (or the first), the next ones move it
        const from = s.sel || s.hover || { q: 0, k: 0 }, step = s.sel ? 1 : 0;
        s.sel = { q: within(from.q + step * dq, k.nq), k: within(from.k + step * dk, k.nk) };
        s.note = "";
        this.changed(OVER | CHROME);
        // once a weight is being explained, the panel follows the selection (one message when the keys
        // rest, not one per press); before any click, moving sends nothing
        if (s.clicked && !this.standalone) {
          this.win.clearTimeout(this.followTimer);
          this.followTimer = this.win.setTimeout(() => this.explain(), FOLLOW_MS);
        }
      }
    } else if (e.key === "[" || e.key === "]") {
      this.go({ head: within(s.head + (e.key === "]" ? 1 : -1), k.heads) });
    } else if (e.key === "PageUp" || e.key === "PageDown") {
      this.go({ layer: within(s.layer + (e.key === "PageDown" ? 1 : -1), k.layers) });
    } else if (e.key === "Enter") {
      if (s.view === "grid") this.go({ view: "heatmap" });
      else this.explain();
    } else if (e.key === "Escape") {
      s.sel = null;
      s.note = "";
      this.changed(OVER | CHROME);
    } else return;
    e.preventDefault();
    e.stopPropagation();  // the app's own shortcuts stay out of it
  }
}
