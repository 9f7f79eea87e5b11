// The mean view: the mean of the layer's heads, drawn as a heatmap (heatmap.js's mapView). A cell
// belongs to no one head.

import { mapView } from "./heatmap.js";

export const meanView = mapView({
  key: "mean",
  mapKey: (s) => `m${s.layer}`,
  map: (ex) => ex.kind.mean(ex.state.layer),
  cellHead: () => null,
  where: "mean of the heads",
  describe: (ex) => ` · the mean over the ${ex.kind.heads} heads of layer ${ex.state.layer}`,
  svgName: (s) => `-layer${s.layer}`,
});
