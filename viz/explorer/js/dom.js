// DOM helpers. Text goes in through textContent only, so no token is ever parsed as markup.

export function el(doc, tag, cls, text) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function tokenSpan(doc, cls, label) {
  const s = el(doc, "span", cls, label);
  s.dir = "auto";  // with unicode-bidi: isolate in the CSS, no token can reorder its neighbours
  return s;
}

// A canvas of w × h CSS pixels backed by the screen's pixels, cleared, its context scaled to CSS pixels.
export function sizeCanvas(canvas, w, h) {
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
