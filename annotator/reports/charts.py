"""Charts for the HTML report: matplotlib figures rendered with Agg to PNG data URIs.
(Over 500 lines on purpose: every chart shares one Agg canvas, palette and data-URI writer; a chart
is a small function beside the others.)

Figures are built with `matplotlib.figure.Figure` and an explicit Agg canvas, not
pyplot, so rendering a report never touches a global figure manager or the GUI
backend of the Qt application that may be running in the same process.

Every chart takes plain report-dict pieces and returns a `Chart` (or None when
there is nothing to draw); an undefined estimate is drawn as the word
"undefined", never as a point.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import io
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .formatting import as_dict, to_float

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.typing import RcKeyType
    from numpy.typing import ArrayLike

__all__ = [
    "Chart",
    "PALETTE",
    "figure_to_png",
    "figure_to_chart",
    "png_data_uri",
    "agreement_chart",
    "bradley_terry_chart",
    "drift_chart",
    "drift_charts",
]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
HUMAN_COLOUR = "#33415c"
MUTED = "#8a8f98"
DPI = 144
_STYLE: dict[RcKeyType, Any] = {
    "font.size": 9,
    "axes.edgecolor": "#b8bcc4",
    "axes.labelcolor": "#333333",
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.color": "#555555",
    "ytick.color": "#333333",
    "grid.color": "#e6e8ec",
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "svg.hashsalt": "annotator",
}


@dataclass(frozen=True)
class Chart:
    """A rendered chart: PNG as a data URI plus its natural CSS size in pixels."""

    uri: str
    width: int
    height: int
    alt: str
    omitted: tuple[str, ...] = ()  # groups left out because nothing in them is defined


def figure_to_png(fig: Figure, *, dpi: int = DPI) -> bytes:
    FigureCanvasAgg(fig)  # attach an Agg canvas: no pyplot, no GUI backend
    buf = io.BytesIO()
    # No "Software" text chunk: the same report renders to the same bytes.
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    return buf.getvalue()


def png_data_uri(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode("ascii")


def png_bytes(chart: Chart) -> bytes | None:
    """The PNG of a chart drawn here (the bytes a Section's Chart holds)."""
    head, _, data = chart.uri.partition(",")
    return base64.b64decode(data) if head.endswith(";base64") and data else None


def png_css_width(data: bytes) -> int | None:
    """The CSS width of a PNG drawn here (its pixel width from the header, at DPI): the page
    shows a chart at the size it was drawn for, not at its 1.5x pixels."""
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return None
    return round(int.from_bytes(data[16:20], "big") * 96 / DPI)


def figure_to_chart(fig: Figure, alt: str) -> Chart:
    w, h = fig.get_size_inches()
    uri = png_data_uri(figure_to_png(fig))
    # CSS px are 1/96 inch; the PNG is rendered at 1.5x that for sharp text.
    return Chart(uri=uri, width=round(w * 96), height=round(h * 96), alt=alt)


def _plain(text: Any) -> str:
    """A user string (generator, judge, rater, metric name) as literal chart text: a `$` would
    start matplotlib mathtext (`g$\\notacmd$` crashed the report), so it is escaped."""
    return str(text).replace("$", r"\$")


def _est(value: Any) -> tuple[float | None, float | None, float | None]:
    if isinstance(value, Mapping):
        return (
            to_float(value.get("estimate")),
            to_float(value.get("low")),
            to_float(value.get("high")),
        )
    return to_float(value), None, None


def _n_of(value: Any, fallback: Any = None) -> Any:
    if isinstance(value, Mapping) and value.get("n") is not None:
        return value.get("n")
    return fallback


@dataclass
class _Row:
    label: str
    est: float | None
    low: float | None
    high: float | None
    colour: str
    baseline: float | None = None


WIDTH = 10.4  # inches: fills the report's content column (about 1000 CSS px)


def _forest(
    rows: list[_Row],
    groups: list[tuple[str, int, int]],
    *,
    title: str,
    xlabel: str,
    guides: Sequence[tuple[float, str]] = (),
    xlim: tuple[float, float] | None = None,
) -> Figure:
    """A horizontal interval plot: one line per row, rows grouped under headings."""
    n = len(rows)
    height = 0.75 + 0.27 * n + 0.2 * len(groups) + (0.25 if title else 0)
    fig = Figure(figsize=(WIDTH, height))
    ax = fig.add_subplot(1, 1, 1)
    ys: list[float] = []
    y = 0.0
    labels: list[str] = []
    for gi, (_name, start, stop) in enumerate(groups):
        if gi:
            y += 0.6
        for i in range(start, stop):
            ys.append(y)
            labels.append(rows[i].label)
            y += 1.0
    values = [v for r in rows for v in (r.est, r.low, r.high, r.baseline) if v is not None]
    if xlim is None:
        lo = min([0.0, *values]) if values else 0.0
        hi = max([1.0, *values]) if values else 1.0
        pad = 0.05 * (hi - lo or 1.0)
        xlim = (lo - pad, hi + pad)
    ax.set_xlim(*xlim)
    for x, text in guides:
        if xlim[0] <= x <= xlim[1]:
            ax.axvline(
                x, color="#c9ccd2" if x else "#9aa0a8", lw=0.8, ls="-" if x == 0 else ":", zorder=0
            )
            ax.text(x, -0.9, text, ha="center", va="bottom", fontsize=7, color=MUTED)
    for yy, r in zip(ys, rows, strict=True):
        if r.est is None:
            ax.text(
                xlim[0] + 0.01 * (xlim[1] - xlim[0]),
                yy,
                "undefined",
                va="center",
                ha="left",
                fontsize=8,
                color=MUTED,
                style="italic",
            )
            continue
        if r.low is not None and r.high is not None:
            ax.plot(
                [r.low, r.high], [yy, yy], color=r.colour, lw=2.2, solid_capstyle="butt", alpha=0.55
            )
        ax.plot([r.est], [yy], "o", color=r.colour, ms=5.5, zorder=3)
        if r.baseline is not None:
            ax.plot([r.baseline], [yy], "x", color=MUTED, ms=5, zorder=2)
    ax.set_yticks(ys, labels)
    ax.set_ylim(y - 0.4, -1.0)
    # Group headings to the left of the tick labels, aligned with the first row.
    for name, start, stop in groups:
        if stop > start:
            ax.annotate(
                name,
                xy=(0, ys[start]),
                xycoords=("axes fraction", "data"),
                xytext=(-8, 11),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize=9,
                fontweight="bold",
                color="#222222",
                annotation_clip=False,
            )
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="x")
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, loc="left", pad=14)
    fig.tight_layout()
    return fig


def _styled(fn: Callable[..., Chart | None]) -> Callable[..., Chart | None]:
    """Apply the report style to one chart without touching global rcParams; a chart drawn
    from the same data again is the one drawn before (see `_drawn`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Chart | None:
        key = _data_key(fn.__name__, args, kwargs)
        if key is not None:
            with _drawn_lock:
                if key in _drawn:
                    _drawn.move_to_end(key)
                    return _drawn[key]
        with matplotlib.rc_context(_STYLE):
            chart = fn(*args, **kwargs)
        if key is not None:
            with _drawn_lock:
                _drawn[key] = chart
                while len(_drawn) > _DRAWN_MAX:
                    _drawn.popitem(last=False)
        return chart

    return wrapper


# The charts drawn last, by their data. A chart is a pure function of its arguments (the same
# data draw the same bytes), and the dashboard draws every chart again at each live estimate:
# the drift charts on anchors, which a live answer does not move, were two thirds of the demo's
# view (2.2 of 3.3 s profiled).
_DRAWN_MAX = 64
_drawn: OrderedDict[str, Chart | None] = OrderedDict()
_drawn_lock = threading.Lock()


def _data_key(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The arguments as JSON (None when one is not plain data: such a chart is drawn again)."""

    def refuse(_value: Any) -> Any:
        raise TypeError

    try:
        return json.dumps([name, args, kwargs], sort_keys=True, default=refuse)
    except (TypeError, ValueError):
        return None


@_styled
def agreement_chart(metrics: Mapping[str, Any]) -> Chart | None:
    """Krippendorff's alpha with its 95% interval per metric: humans among themselves,
    then each judge against the human consensus (x marks the permutation baseline)."""
    rows: list[_Row] = []
    groups: list[tuple[str, int, int]] = []
    omitted: list[str] = []
    judge_names: list[str] = []
    for m in metrics.values():
        for j in (m.get("judges") or {}) if isinstance(m, Mapping) else {}:
            if j not in judge_names:
                judge_names.append(j)
    colours = {j: PALETTE[i % len(PALETTE)] for i, j in enumerate(judge_names)}
    for key, m in metrics.items():
        if not isinstance(m, Mapping):
            continue
        start = len(rows)
        est, low, high = _est(m.get("human_alpha"))
        n = _n_of(m.get("human_alpha"), m.get("n_items"))
        rows.append(_Row(f"humans (n={n if n is not None else '?'})", est, low, high, HUMAN_COLOUR))
        for jname, j in (m.get("judges") or {}).items():
            j = as_dict(j)
            # the judge as one more rater (what the report leads with), not alpha against the
            # consensus, which flatters a judge that is just another human
            est, low, high = _est(j.get("alpha_with_judge_as_rater"))
            n = _n_of(j.get("alpha_with_judge_as_rater"), j.get("n_items"))
            rows.append(
                _Row(
                    f"humans + {_plain(jname)} as a rater (n={n if n is not None else '?'})",
                    est,
                    low,
                    high,
                    colours[jname],
                )
            )
        if all(r.est is None for r in rows[start:]):
            # a metric with nothing defined is a row of "undefined"s: name it under the chart instead
            del rows[start:]
            omitted.append(str(m.get("label") or key))
            continue
        groups.append((_plain(m.get("label") or key), start, len(rows)))
    if not rows:
        return None
    fig = _forest(
        rows,
        groups,
        title="",
        xlabel="alpha   (0 = chance, 1 = perfect; a judge that helps raises it)",
        guides=((0.0, "chance"), (0.667, "0.667"), (0.8, "0.8")),
    )
    chart = figure_to_chart(
        fig, "Krippendorff's alpha per metric, humans and judges, with 95% intervals"
    )
    return dataclasses.replace(chart, omitted=tuple(omitted))


@_styled
def bradley_terry_chart(bt: Mapping[str, Any]) -> Chart | None:
    """Bradley-Terry strength per generator with its interval, strongest first."""
    rows = []
    for gen, value in bt.items():
        est, low, high = _est(value)
        n = _n_of(value)
        label = f"{_plain(gen)} (n={n})" if n is not None else _plain(gen)
        rows.append(_Row(label, est, low, high, PALETTE[0]))
    if not rows:
        return None
    rows.sort(key=lambda r: (r.est is None, -(r.est or 0.0), r.label))
    values = [v for r in rows for v in (r.est, r.low, r.high) if v is not None]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    pad = 0.08 * ((hi - lo) or 1.0)
    fig = _forest(
        rows,
        [("", 0, len(rows))],
        title="",
        xlabel="strength (log-odds scale; differences matter, not the zero point)",
        guides=((0.0, ""),),
        xlim=(lo - pad, hi + pad),
    )
    return figure_to_chart(fig, "Bradley-Terry strength per generator with 95% intervals")


def _seq(values: Any) -> list[float | None]:
    if values is None:
        return []
    if isinstance(values, (int, float)):
        return [to_float(values)]
    return [to_float(v) for v in values]


def _gaps(values: Sequence[float | None]) -> ArrayLike:
    """`values` as given to matplotlib, which draws a None as a gap in the line (its type stubs
    take numbers only)."""
    return cast("ArrayLike", values)


@_styled
def drift_chart(
    rater: str,
    series: Mapping[str, Any],
    flag_at: Any = None,
    *,
    width: float = WIDTH,
    labels: Mapping[str, Any] | None = None,
) -> Chart | None:
    """One rater's anchor answers over time: deviation from the reference (with its
    EWMA and control limit) above, the two-sided CUSUM against its threshold h below.
    `labels`: metric key -> the rubric's label, so the legend names metrics as the reader
    knows them and says what each line is ("running average"), not "instruction_following EWMA"."""
    usable = {
        m: s for m, s in series.items() if isinstance(s, Mapping) and s.get("deviation") is not None
    }
    if not usable:
        return None
    fig = Figure(figsize=(width, 4.4 if width >= WIDTH else 4.0))
    ax1 = fig.add_subplot(2, 1, 1)
    ax2 = fig.add_subplot(2, 1, 2, sharex=ax1)
    hs: set[float] = set()
    for i, (metric, s) in enumerate(usable.items()):
        c = PALETTE[i % len(PALETTE)]
        dev = _seq(s.get("deviation"))
        seq = _seq(s.get("seq")) or list(range(len(dev)))
        if len(seq) != len(dev):
            seq = list(range(len(dev)))
        metric = _plain((labels or {}).get(metric) or metric)
        score = _seq(s.get("score"))
        if len(score) == len(dev):  # the calibrated chart's scores: the rater's own normal scores
            dev = score
        ax1.plot(
            _gaps(seq),
            _gaps(dev),
            "o",
            color=c,
            ms=3,
            alpha=0.6,
            label=f"{metric}: each anchor answer",
        )
        ewma = _seq(s.get("ewma"))
        if len(ewma) == len(seq):
            ax1.plot(
                _gaps(seq),
                _gaps(ewma),
                "-",
                color=c,
                lw=1.4,
                label=f"{metric}: running average (EWMA)",
            )
        limit = s.get("ewma_limit")
        lim = _seq(limit)
        if len(lim) == 1:
            lim = lim * len(seq)
        if len(lim) == len(seq) and any(v is not None for v in lim):
            ax1.plot(_gaps(seq), _gaps(lim), "--", color=c, lw=0.8, alpha=0.7)
            ax1.plot(
                _gaps(seq),
                _gaps([-v if v is not None else None for v in lim]),
                "--",
                color=c,
                lw=0.8,
                alpha=0.7,
            )
        up, down = _seq(s.get("cusum_up")), _seq(s.get("cusum_down"))
        if len(up) == len(seq):
            ax2.plot(
                _gaps(seq),
                _gaps(up),
                "-",
                color=c,
                lw=1.4,
                label=f"{metric}: drift upwards (CUSUM)",
            )
        if len(down) == len(seq):
            ax2.plot(
                _gaps(seq),
                _gaps(down),
                "--",
                color=c,
                lw=1.4,
                label=f"{metric}: drift downwards (CUSUM)",
            )
        h = to_float(s.get("h"))
        if h is not None:
            hs.add(h)
            if any(v is not None and v < 0 for v in down):
                hs.add(-h)
    ax1.axhline(0, color="#9aa0a8", lw=0.8)
    flag = to_float(flag_at)
    if flag is not None:
        for ax in (ax1, ax2):
            ax.axvline(flag, color="#D55E00", lw=1.0, ls="--", alpha=0.8)
        ax1.annotate(
            "flagged",
            xy=(flag, 1),
            xycoords=("data", "axes fraction"),
            xytext=(3, -2),
            textcoords="offset points",
            va="top",
            fontsize=7.5,
            color="#D55E00",
        )
    for h in sorted(hs):
        ax2.axhline(h, color="#D55E00", lw=1.0, ls=":")
        ax2.annotate(
            f"h = {h:g}",
            xy=(0, h),
            xycoords=("axes fraction", "data"),
            xytext=(3, 2),
            textcoords="offset points",
            va="bottom",
            fontsize=7.5,
            color="#D55E00",
            annotation_clip=False,
        )
    ax1.set_ylabel("score vs own baseline")
    ax2.set_ylabel("CUSUM")
    ax2.set_xlabel("anchor answers in order (live work)")
    handles: list[Artist] = []
    legend: list[str] = []
    for ax in (ax1, ax2):
        ax.grid(axis="y")
        found, lab = ax.get_legend_handles_labels()
        handles += found
        legend += lab
    ax1.tick_params(labelbottom=False)
    # one legend under both panels, so half-width charts keep their plotting area
    ncols = 4 if width >= WIDTH else 2
    rows = _fitted_legend(fig, handles, legend, ncols)
    legend_inches = 0.1 + 0.17 * rows
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + legend_inches)  # the legend below, the panels keep their height
    fig.tight_layout(rect=(0, legend_inches / (h + legend_inches), 1, 1))
    # the alt text names the lines as the legend does (a screen reader gets the same words)
    words = "; ".join(str(x).replace(r"\$", "$") for x in legend)
    return figure_to_chart(fig, f"Drift chart for rater {rater}: {words}")


def _fitted_legend(fig: Any, handles: list[Artist], labels: list[str], ncols: int) -> int:
    """A legend under the panels in as many columns as fit the figure's width (a centred legend
    wider than its figure is cut on both sides); the rows it takes."""
    canvas = fig.canvas if hasattr(fig.canvas, "get_renderer") else FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()
    while True:
        leg = fig.legend(
            handles, labels, loc="lower center", ncols=ncols, fontsize=7.5, frameon=False
        )
        if ncols == 1 or leg.get_window_extent(renderer).width <= 0.98 * fig.bbox.width:
            return -(-len(labels) // ncols)
        leg.remove()
        ncols -= 1


def drift_charts(report: Mapping[str, Any]) -> dict[str, Chart]:
    """{rater: their drift chart on anchors} for every rater with an anchor series; a flagged
    rater's at full width, the others' at half (metrics named by the report's labels)."""
    sections = report.get("metrics")
    labels: dict[str, Any] = {}
    if isinstance(sections, Mapping):
        labels = {k: m.get("label") for k, m in sections.items() if isinstance(m, Mapping)}
    out: dict[str, Chart] = {}
    for name, r in as_dict(report.get("raters")).items():
        series = r.get("series") if isinstance(r, Mapping) else None
        if isinstance(series, Mapping) and series:
            drift = r.get("drift") if isinstance(r.get("drift"), Mapping) else {}
            flag_at = drift.get("first_flag_at") if drift.get("flagged") else None
            chart = drift_chart(
                str(name),
                series,
                flag_at,
                width=WIDTH if flag_at is not None else WIDTH / 2,
                labels=labels,
            )
            if chart is not None:
                out[str(name)] = chart
    return out


@_styled
def reliability_chart(judge: str, metrics: Mapping[str, Any]) -> Chart | None:
    """Reliability diagram of one judge: per metric, accuracy against mean confidence per bin
    (marker area by the bin's items), and the diagonal of perfect calibration."""
    series = []
    for metric, m in metrics.items():
        bins = m.get("bins") if isinstance(m, Mapping) else None
        if bins:
            series.append((str(metric), bins))
    if not series:
        return None
    fig = Figure(figsize=(WIDTH / 2, WIDTH / 2 * 0.8))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, 1], color="#999999", linewidth=1, linestyle="--", label="calibrated")
    for i, (metric, bins) in enumerate(series):
        xs = [to_float(b.get("confidence")) for b in bins]
        ys = [to_float(b.get("accuracy")) for b in bins]
        sizes = [12 + 4 * (to_float(b.get("n")) or 0) for b in bins]
        colour = PALETTE[i % len(PALETTE)]
        ax.plot(_gaps(xs), _gaps(ys), color=colour, linewidth=1, alpha=0.7)
        ax.scatter(_gaps(xs), _gaps(ys), s=sizes, color=colour, label=_plain(metric), zorder=3)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("judge's confidence (bin mean)")
    ax.set_ylabel("share equal to the human consensus")
    ax.legend(fontsize=7, loc="lower right", frameon=False)
    fig.tight_layout()
    return figure_to_chart(fig, f"Reliability diagram of judge {judge}")


def reliability_charts(section: Any) -> dict[str, Chart]:
    """{judge: reliability chart} for the report's judge_calibration section."""
    out: dict[str, Chart] = {}
    if not isinstance(section, Mapping):
        return out
    for judge, entry in section.items():
        metrics = entry.get("metrics") if isinstance(entry, Mapping) else None
        if isinstance(metrics, Mapping):
            chart = reliability_chart(str(judge), metrics)
            if chart is not None:
                out[str(judge)] = chart
    return out
