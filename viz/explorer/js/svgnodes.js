// The SVG nodes every exported picture is made of: elements, their attributes, a line of text and a
// label cut for display with the whole text in a <title>. Text goes in through textContent only, and
// characters XML 1.0 does not allow become U+FFFD, so the file always parses. No imports: the matrix
// view's SVG (viz/matrixview/svg.js) is made of the same nodes.

export const SVG_NS = "http://www.w3.org/2000/svg";
const XML_BAD = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;  // not allowed in XML 1.0

// a token label: its shown text, and the whole token in a <title> when the label cuts it
export function svgToken(d, shown, full, x, y) {
  const t = svgText(d, shown, x, y);
  if (full !== shown) {
    const title = svgNode(d, "title");
    title.textContent = xmlText(full);
    t.append(title);
  }
  return t;
}

export function svgText(d, text, x, y, o = {}) {
  const t = svgNode(d, "text", { x: r2(x), y: r2(y), "dominant-baseline": "central" });
  if (o.anchor) t.setAttribute("text-anchor", o.anchor);
  if (o.weight) t.setAttribute("font-weight", o.weight);
  if (o.size) t.setAttribute("font-size", r2(o.size));
  if (o.opacity) t.setAttribute("fill-opacity", o.opacity);
  t.setAttributeNS("http://www.w3.org/XML/1998/namespace", "xml:space", "preserve");  // spaces as typed
  t.textContent = xmlText(text);  // text, never markup: the serializer escapes < & >
  return t;
}

export function svgNode(d, tag, a) {
  const e = d.createElementNS(SVG_NS, tag);
  if (a) svgAttrs(e, a);
  return e;
}

export function svgAttrs(e, a) {
  for (const [n, v] of Object.entries(a)) if (n !== "xmlns") e.setAttribute(n, String(v));
}

export function xmlText(text) { return String(text).replace(XML_BAD, "\uFFFD"); }

export function r2(v) { return Math.round(v * 100) / 100; }
