"""A matrix as the browser draws it without Plotly: a table of coloured cells with the numbers printed.

The hand-worked and reshape pages show many small matrices at once (embeddings, weights, scores,
every reshape step). As Plotly charts each costs ~80 ms of the browser's time to draw and the
page's reload pays for the charting library; as a table (``matrixview.js``, a Streamlit components
v2 element, plain JavaScript, no build step) it costs a few milliseconds, prints every value, and
stays selectable text that a screen reader reads as a table.

``payload.py`` builds what the table draws, ``assets.py`` reads the script and style;
``pages/shared/matrixview.py`` puts it on a page. Nothing here imports streamlit. The names below are
re-exported so callers import them from ``viz.matrixview``.
"""

from viz.matrixview.assets import asset
from viz.matrixview.payload import BLUES, MAX_CELLS, RDBU_R, matrix_panels, matrix_payload

__all__ = ["BLUES", "MAX_CELLS", "RDBU_R", "asset", "matrix_panels", "matrix_payload"]
