// The attention explorer: every kind, layer and head of one model run, viewed in the browser.
//
// Streamlit (components v2) sends the data once; switching kind, layer, head or view, hovering and
// moving the selection never talk to the server. A click (or Enter) on a cell sends it back as the
// trigger value "cell". The same code runs standalone in an exported HTML page (mountStandalone).
// Tokens are drawn as text only (textContent, canvas fillText), never parsed as markup. The root's
// data-state attribute is the current state as JSON, for tests and benchmarks.
//
// This is the entry module; viz/explorer/assets.py joins it and the modules it imports into the one
// script Streamlit and the exported file take (see script() there for why).

import { decode } from "./data.js";
import { Explorer } from "./explorer.js";

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
export function mountStandalone(host, data) {
  const ex = new Explorer(host);
  ex.setData(decode(data));
  return ex;
}
