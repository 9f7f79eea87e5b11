// The rollout view: attention rollout over all layers (sent by Python, float32, for one kind: the
// encoder's self-attention), drawn as a heatmap (heatmap.js's mapView). Its tab is there only where
// the run has a rollout, disabled for the other kinds, which see the mean of the heads instead. A cell
// belongs to no head and no layer: no layer's sliding window hides it, only the kind's mask.

import { mapView } from "./heatmap.js";
import { meanView } from "./mean.js";

export const rolloutView = mapView({
  key: "rollout",
  listed: (ex) => !!ex.rollout,
  available: (ex, kind) => !!ex.rollout && ex.rollout.kind === kind,
  unavailable: "rollout is computed for the encoder's self-attention only",
  instead: meanView,
  mapKey: () => "r",
  map: (ex) => ex.rollout.values,
  cellHead: () => null,
  cellLayer: () => null,
  approx: () => false,
  where: "rollout",
  names: () => "rollout over all layers",
  svgName: () => "",
});
