"""A drift chart's legend fits its figure (on the dashboard's half-width charts the
two-column legend was cut on both sides)."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from annotator.reports.charts import _fitted_legend


def test_the_legend_takes_as_many_columns_as_fit():
    fig = Figure(figsize=(3.4, 3.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    labels = [
        "Layout & hierarchy: score minus the rater's own baseline",
        "UI affordance: score minus the rater's own baseline",
        "upper CUSUM, Layout & hierarchy",
        "lower CUSUM, UI affordance",
    ]
    handles = [ax.plot([0, 1], [i, i], label=lab)[0] for i, lab in enumerate(labels)]
    rows = _fitted_legend(fig, handles, labels, 2)
    (leg,) = fig.legends
    box = leg.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width, (box, fig.bbox.width)
    assert rows == len(labels)  # one column: these labels are too long for two
    wide = Figure(figsize=(12, 3.0), dpi=100)
    FigureCanvasAgg(wide)
    ax = wide.add_subplot()
    handles = [ax.plot([0, 1], [i, i], label=lab)[0] for i, lab in enumerate(labels)]
    assert _fitted_legend(wide, handles, labels, 2) == 2  # room for the two asked for
