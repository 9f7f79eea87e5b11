// The mean view: the mean of the layer's heads, drawn as a heatmap (heatmap.js's mapView). A cell
// belongs to no one head.

import { mapView } from "./heatmap.js";

export const meanView = mapView({
  key: "mean",
  mapKey: (s) => `m${s.layer}`,
  map: (ex) => ex.kind.mean(ex.state.layer),
  cellHead: () => null,
  where: "mean of the heads",
  names: (ex) => `mean of all ${ex.kind.heads} heads, layer ${ex.state.layer}`,  // no one head: never a head's name
  svgName: (s) => `-layer${s.layer}`,
});
