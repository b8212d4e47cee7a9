"""The study lead's dashboard: the report's figures inside the app.

It shows what ``annotator report`` publishes (contract 5.5), computed by the
same code (``services.reporting.build_study_report``) and laid out from the
same rows as the HTML report (``reports.html_report.build_view``), so the app
and the report cannot disagree: agreement per metric (human alpha with its
interval, each judge against the consensus with the shuffled baseline), the
findings, the per-rater table (judgements, anchors, accuracy on anchors, drift
flag), each rater's drift chart (deviation, EWMA, CUSUM up/down with the
threshold h), calibration history and the pairwise summary (Bradley-Terry,
position bias).

This view is for the study lead, NOT for blinded raters: it names generators
and raters. The main window must never embed it in a rater's label or pair
view.

Public API
----------
``DashboardView(study, rater, worker, settings=None, parent=None, *, n_boot=None, seed=0,
autostart=True)`` - a ``QWidget``.
    ``.refresh() -> bool``       recompute on the worker (False if one is already running).
    ``.report() -> dict | None`` the last report dict; ``.is_busy() -> bool``;
    ``.stop()`` / ``.shutdown()`` (results still in flight are dropped).
    F5 / Ctrl+R refresh. ``n_boot`` defaults to the app setting
    ``dashboard_n_boot`` (else 1000).
    Signals: ``reportReady(dict)``, ``failed(str)``, ``progress(str)``.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QImage, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .view_lifecycle import alive

__all__ = ["DashboardView"]

INK = "#1f2430"
SOFT = "#5b6270"
LINE = "#e3e6eb"
FLAG_BG = QColor("#fff6ed")  # the report's calm amber, not an alarm red
FLAG_INK = "#b54708"
OK_INK = "#027a48"
DEFAULT_N_BOOT = 1000
MAX_FINDING_ROWS = 200
MAX_COLUMN = 220
WIDE_TABLE = 1250


class _Relay(QObject):
    """Carries progress messages from the worker thread to the UI thread (queued)."""

    message = Signal(str)


def _chart_image(chart: Any) -> QImage | None:
    """A charts.Chart (PNG data URI) as a QImage; decoded on the worker thread."""
    uri = getattr(chart, "uri", None)
    if not uri or "," not in uri:
        return None
    img = QImage()
    if not img.loadFromData(base64.b64decode(uri.split(",", 1)[1])):
        return None
    return img


def _d(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


# -- widget helpers ------------------------------------------------------------------

def _heading(text: str, sub: str = "") -> QWidget:
    w = QWidget()
    lay = QVBoxLayout(w)
    lay.setContentsMargins(0, 14, 0, 2)
    lay.setSpacing(2)
    h = QLabel(text)
    h.setStyleSheet(f"font-size: 17px; font-weight: 650; color: {INK};")
    lay.addWidget(h)
    if sub:
        s = QLabel(sub)
        s.setWordWrap(True)
        s.setStyleSheet(f"color: {SOFT};")
        lay.addWidget(s)
    return w


def _note(text: str) -> QLabel:
    lab = QLabel(text)
    lab.setWordWrap(True)
    lab.setStyleSheet(f"color: {SOFT};")
    return lab


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, flagged: set[int] | None = None,
           name: str = "") -> QTableWidget:
    """A read-only table sized to show every row (the page scrolls, not the table)."""
    t = QTableWidget(len(rows), len(headers))
    t.setObjectName(name)
    t.setHorizontalHeaderLabels(list(headers))
    t.verticalHeader().setVisible(False)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setAlternatingRowColors(True)
    t.setWordWrap(False)
    t.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    t.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(str(text))
            item.setToolTip(str(text))
            if flagged and r in flagged:
                item.setBackground(QBrush(FLAG_BG))
            t.setItem(r, c, item)
    t.resizeColumnsToContents()
    header = t.horizontalHeader()
    header.setStretchLastSection(True)
    for c in range(len(headers)):
        if header.sectionSize(c) > MAX_COLUMN:
            header.resizeSection(c, MAX_COLUMN)  # the full text is in the tooltip
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.resizeRowsToContents()
    height = header.height() + sum(t.rowHeight(r) for r in range(len(rows))) + 2 * t.frameWidth() + 2
    if header.length() > WIDE_TABLE:  # leave room for its own sideways scroll bar
        height += t.horizontalScrollBar().sizeHint().height()
    t.setFixedHeight(max(height, header.height() + 8))
    t.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    return t


def _image_label(img: QImage | None, alt: str, name: str = "") -> QLabel:
    lab = QLabel()
    lab.setObjectName(name)
    lab.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
    if img is None or img.isNull():
        lab.setText("(no chart: nothing to draw)")
        lab.setStyleSheet(f"color: {SOFT};")
        return lab
    pix = QPixmap.fromImage(img)
    # Charts are rendered at 1.5x CSS size for sharpness; show them at CSS size.
    pix.setDevicePixelRatio(1.5)
    lab.setPixmap(pix)
    lab.setToolTip(alt)
    lab.setAccessibleName(alt)
    return lab


def _tile(value: str, label: str, *, warn: bool = False) -> QFrame:
    f = QFrame()
    f.setObjectName("tile")
    f.setStyleSheet(f"QFrame#tile {{ background: white; border: 1px solid {LINE}; border-radius: 8px; }}")
    lay = QVBoxLayout(f)
    lay.setContentsMargins(12, 8, 12, 8)
    v = QLabel(value)
    v.setStyleSheet(f"font-size: 20px; font-weight: 650; color: {FLAG_INK if warn else INK};")
    t = QLabel(label)
    t.setStyleSheet(f"color: {SOFT};")
    lay.addWidget(v)
    lay.addWidget(t)
    return f


def _est_text(e: Any, *, with_n: bool = True) -> str:
    """html_report.Est -> 'text [low, high] n=..'."""
    if e is None or not getattr(e, "present", False):
        return "—"
    s = str(e)
    if with_n and getattr(e, "n", None) is not None and e.defined:
        s += f"  n={e.n}"
    return s


class DashboardView(QWidget):
    reportReady = Signal(dict)  # noqa: N815 - Qt signal naming
    failed = Signal(str)
    progress = Signal(str)

    def __init__(self, study: Any, rater: str | None, worker: Any, settings: Any = None,
                 parent: QWidget | None = None, *, n_boot: int | None = None, seed: int = 0,
                 autostart: bool = True) -> None:
        super().__init__(parent)
        self.study = study
        self.rater = rater
        self.worker = worker
        self.settings = settings
        self.setObjectName("DashboardView")
        self._n_boot = n_boot if n_boot is not None else self._setting_n_boot()
        self._seed = seed
        self._busy = False
        self._stopped = False
        self._report: dict | None = None
        self._started = 0.0
        self._relay = _Relay(self)
        self._relay.message.connect(self._on_progress)
        self._build()
        for seq in ("F5", "Ctrl+R"):
            sc = QShortcut(QKeySequence(seq), self)
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.setAutoRepeat(False)
            sc.activated.connect(self.refresh)
        if autostart:
            self.refresh()

    def _setting_n_boot(self) -> int:
        getter = getattr(self.settings, "value", None)
        if getter is None:
            return DEFAULT_N_BOOT
        try:
            return int(getter("dashboard_n_boot", DEFAULT_N_BOOT))
        except (TypeError, ValueError):
            return DEFAULT_N_BOOT

    # -- frame ---------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 8)
        bar = QHBoxLayout()
        self.title = QLabel("Study dashboard")
        self.title.setStyleSheet(f"font-size: 20px; font-weight: 650; color: {INK};")
        bar.addWidget(self.title)
        self.busy_label = QLabel()
        self.busy_label.setStyleSheet(f"color: {SOFT};")
        self.busy_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.busy_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)  # indeterminate: the worker reports steps, not fractions
        self.busy_bar.setMaximumWidth(160)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        bar.addWidget(self.busy_label)
        bar.addWidget(self.busy_bar)
        self.refresh_button = QPushButton("Recompute  [F5]")
        self.refresh_button.clicked.connect(self.refresh)
        bar.addWidget(self.refresh_button)
        outer.addLayout(bar)
        self.meta = _note("For the study lead: this page names generators and raters. "
                          "Raters never see it.")
        outer.addWidget(self.meta)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.content = QWidget()
        self.scroll.setWidget(self.content)
        outer.addWidget(self.scroll, 1)

    # -- computing -------------------------------------------------------------------
    def refresh(self) -> bool:
        if self._busy or self._stopped:
            return False
        self._busy = True
        self._started = time.monotonic()
        self.refresh_button.setEnabled(False)
        self.busy_bar.show()
        self._on_progress("queued")
        relay = self._relay

        def say(msg: str) -> None:  # called on the worker thread
            if alive(relay):
                relay.message.emit(msg)

        def done(result: Any) -> None:
            if not self._stopped and alive(self):
                self._on_ready(result)

        def error(exc: BaseException) -> None:
            if not self._stopped and alive(self):
                self._on_failed(exc)

        self.worker.submit(self._compute, self.study, self._n_boot, self._seed, say,
                           on_done=done, on_error=error)
        return True

    @staticmethod
    def _compute(study: Any, n_boot: int, seed: int, say: Callable[[str], None]) -> tuple[dict, dict, dict]:
        """Worker thread: the report, its display rows and the charts decoded to QImage."""
        from ..reports.html_report import build_view
        from ..services.reporting import build_study_report

        report = build_study_report(study, n_boot=n_boot, seed=seed, progress=say)
        say("drawing charts")
        view = build_view(report, with_charts=True)
        charts = view.get("charts") or {}
        images = {
            "agreement": _chart_image(charts.get("agreement")),
            "bradley_terry": _chart_image(charts.get("bradley_terry")),
            "drift": {name: _chart_image(c) for name, c in (charts.get("drift") or {}).items()},
        }
        return report, view, images

    def _on_progress(self, msg: str) -> None:
        if self._busy:
            self.busy_label.setText(f"Computing the report: {msg}...")
            self.progress.emit(msg)

    def _on_ready(self, result: tuple[dict, dict, dict]) -> None:
        report, view, images = result
        self._report = report
        self._busy = False
        self.busy_bar.hide()
        self.refresh_button.setEnabled(True)
        secs = time.monotonic() - self._started
        self.busy_label.setText(f"Computed in {secs:.1f} s with {self._n_boot} bootstrap resamples.")
        self._render(report, view, images)
        self.reportReady.emit(report)

    def _on_failed(self, exc: BaseException) -> None:
        self._busy = False
        self.busy_bar.hide()
        self.refresh_button.setEnabled(True)
        msg = str(exc) or type(exc).__name__
        self.busy_label.setText(f"The report could not be computed: {msg}")
        self.failed.emit(msg)

    # -- layout of one report ------------------------------------------------------
    def _render(self, report: Mapping[str, Any], view: Mapping[str, Any], images: Mapping[str, Any]) -> None:
        content = QWidget()
        lay = QVBoxLayout(content)
        lay.setContentsMargins(4, 0, 12, 24)
        lay.setSpacing(6)
        self.title.setText(f"Study dashboard: {view.get('study')}")
        self.meta.setText(
            f"Rubric {view.get('rubric_id')} (version {view.get('rubric_version_short')})  ·  "
            f"bootstrap resamples: {view.get('n_boot') or self._n_boot}  ·  "
            "for the study lead: this page names generators and raters; raters never see it.")
        self._tiles(lay, report, view)
        self._agreement(lay, view, images.get("agreement"))
        self._findings(lay, view)
        self._raters(lay, report, view, images.get("drift") or {})
        self._calibrations(lay, report)
        self._pairwise(lay, view, images.get("bradley_terry"))
        lay.addStretch(1)
        old = self.scroll.takeWidget()
        self.scroll.setWidget(content)
        self.content = content
        if old is not None:
            old.deleteLater()

    def _tiles(self, lay: QVBoxLayout, report: Mapping[str, Any], view: Mapping[str, Any]) -> None:
        raters = _d(report.get("raters"))
        flagged = [n for n, r in raters.items() if _d(_d(r).get("drift")).get("flagged")]
        n_judgements = sum(int(_d(r).get("n_judgements") or 0) for r in raters.values())
        cells = _d(_d(report.get("pairwise")).get("cells"))
        n_votes = sum(int(_d(t).get("n") or 0) for c in cells.values() for t in _d(c).values())
        row = QHBoxLayout()
        row.setSpacing(10)
        for value, label, warn in (
            (str(len(view.get("metrics") or [])), "metrics", False),
            (f"{n_judgements:,}", "judgements", False),
            (str(len(raters)), "raters", False),
            (str(len(report.get("findings") or [])), "findings", False),
            (str(len(flagged)), "raters with a drift flag", bool(flagged)),
            (f"{n_votes:,}", "pair votes", False),
        ):
            row.addWidget(_tile(value, label, warn=warn))
        row.addStretch(1)
        lay.addLayout(row)

    def _agreement(self, lay: QVBoxLayout, view: Mapping[str, Any], chart: QImage | None) -> None:
        lay.addWidget(_heading(
            "Agreement per metric",
            "Krippendorff's alpha among humans with its bootstrap 95% interval, and each judge against "
            "the human consensus beside the alpha it gets when its scores are shuffled across items."))
        rows: list[list[str]] = []
        for m in view.get("metrics") or []:
            counts = " · ".join(str(m.get(k) if m.get(k) is not None else "—")
                                for k in ("n_items", "n_raters", "n_judgements"))
            base = [m["key"], f"{m['kind']} / {m['level']}", counts, _est_text(m["human_alpha"])]
            if not m["judges"]:
                rows.append([*base, "—", "—", "—", "—"])
            for i, j in enumerate(m["judges"]):
                # A long "undefined because..." note would swamp the column; the tooltip has it.
                perm = f"{j['perm_mean']} (p {j['perm_p']})" if j.get("perm_mean") else \
                    ("undefined: " + j["perm_note"] if j.get("perm_note") else "—")
                cells = base if i == 0 else ["", "", "", ""]
                rows.append([*cells, j["name"], _est_text(j["alpha_vs_consensus"]), perm,
                             _est_text(j["exact_agreement"], with_n=False)])
        lay.addWidget(_table(["metric", "kind / level", "items · raters · answers", "human alpha [95% CI]",
                              "judge", "judge alpha vs consensus [95% CI]", "shuffled baseline",
                              "exact agreement"], rows, name="agreementTable"))
        lay.addWidget(_image_label(chart, "Krippendorff's alpha per metric with 95% intervals", "agreementChart"))

    def _findings(self, lay: QVBoxLayout, view: Mapping[str, Any]) -> None:
        findings = view.get("findings") or []
        lay.addWidget(_heading(
            f"Findings: {len(findings)}",
            "Each disagreement between the humans and the judge (or among the humans), item by item "
            "and metric by metric; none is averaged away."))
        if not findings:
            lay.addWidget(_note("No findings: humans and judges agree wherever both answered."))
            return
        rows = [[str(f.get("title") or ""), str(f.get("metric") or ""), str(f.get("kind") or ""),
                 str(f.get("humans") or ""), str(f.get("judge_value") or ""), str(f.get("generator") or "")]
                for f in findings[:MAX_FINDING_ROWS]]
        lay.addWidget(_table(["item", "metric", "kind", "humans", "judge", "generator"], rows,
                             name="findingsTable"))
        if len(findings) > MAX_FINDING_ROWS:
            lay.addWidget(_note(f"The first {MAX_FINDING_ROWS} of {len(findings)} findings; the HTML "
                                "report lists them all."))

    def _raters(self, lay: QVBoxLayout, report: Mapping[str, Any], view: Mapping[str, Any],
                drift: Mapping[str, QImage | None]) -> None:
        lay.addWidget(_heading(
            "Raters",
            "Judgements, live anchors answered, accuracy on those anchors (gates exact, scales within "
            "one point; 95% interval) and the CUSUM drift flag."))
        raters = _d(report.get("raters"))
        rows, flagged = [], set()
        for i, r in enumerate(view.get("raters") or []):
            acc = _d(_d(raters.get(r["name"])).get("accuracy"))
            acc_text = "; ".join(
                f"{k} {self._share(v)}" for k, v in acc.items() if isinstance(v, Mapping)) or "—"
            if r["flagged"]:
                flagged.add(i)
            rows.append([r["name"], str(r.get("n_judgements") if r.get("n_judgements") is not None else "—"),
                         str(r.get("anchors") if r.get("anchors") is not None else "—"), acc_text,
                         r["drift_text"], r.get("calibrations") or "none"])
        lay.addWidget(_table(["rater", "judgements", "anchors", "accuracy on anchors", "drift",
                              "calibration"], rows, flagged=flagged, name="ratersTable"))
        if not drift:
            lay.addWidget(_note("No drift charts yet: no rater has answered a live anchor."))
            return
        lay.addWidget(_heading(
            "Drift on anchors",
            "Per rater: each anchor answer's deviation from the reference with its EWMA and control "
            "limits (top), and the CUSUM up / down against the threshold h that raises the flag "
            "(bottom). Flagged raters first."))
        grid = QGridLayout()
        grid.setHorizontalSpacing(16)
        widths = [img.width() / 1.5 for img in drift.values() if img is not None and not img.isNull()]
        room = self.scroll.viewport().width() - 40
        # Two charts a row when they fit side by side, else one: the page never scrolls sideways.
        cols = 2 if widths and room >= 2 * max(widths) + 16 else 1
        names = sorted(drift, key=lambda n: (not _d(_d(raters.get(n)).get("drift")).get("flagged"), n))
        for i, name in enumerate(names):
            box = QVBoxLayout()
            d = _d(_d(raters.get(name)).get("drift"))
            cap = QLabel(f"<b>{name}</b>" + (
                f"  <span style='color:{FLAG_INK}'>drift flag: {d.get('metric')}, {d.get('direction')}, "
                f"from anchor answer {d.get('first_flag_at')}</span>" if d.get("flagged") else
                f"  <span style='color:{OK_INK}'>no drift flag</span>"))
            cap.setTextFormat(Qt.TextFormat.RichText)
            box.addWidget(cap)
            box.addWidget(_image_label(drift[name], f"Drift chart for {name}", f"driftChart:{name}"))
            grid.addLayout(box, i // cols, i % cols)
        lay.addLayout(grid)

    @staticmethod
    def _share(v: Mapping[str, Any]) -> str:
        est = v.get("estimate")
        if est is None:
            return "—"
        n = v.get("n")
        lo, hi = v.get("low"), v.get("high")
        ci = f" [{lo:.0%}, {hi:.0%}]" if lo is not None and hi is not None else ""
        return f"{est:.0%}{ci} n={n}"

    def _calibrations(self, lay: QVBoxLayout, report: Mapping[str, Any]) -> None:
        lay.addWidget(_heading(
            "Calibration history",
            "Every calibration session: the share of anchors met per metric against its rule, and the verdict."))
        raters = _d(report.get("raters"))
        keys: list[str] = []
        recs: list[tuple[str, Mapping[str, Any]]] = []
        for name in sorted(raters, key=str):
            for c in _d(raters[name]).get("calibrations") or []:
                if isinstance(c, Mapping):
                    recs.append((str(name), c))
                    for k in _d(c.get("metrics")):
                        if k not in keys:
                            keys.append(k)
        if not recs:
            lay.addWidget(_note("No calibration session has been run yet."))
            return
        rows, flagged = [], set()
        for i, (name, c) in enumerate(recs):
            metrics = _d(c.get("metrics"))
            cells = []
            for k in keys:
                m = _d(metrics.get(k))
                share = m.get("share")
                cells.append("—" if share is None else
                             f"{share:.0%} of {m.get('n')} (need {m.get('threshold', 0):.0%})"
                             + ("" if m.get("passed") else " ✗"))
            ok = bool(c.get("qualified"))
            if not ok:
                flagged.add(i)
            rows.append([name, str(c.get("created_at") or ""), "qualified" if ok else "not yet", *cells])
        lay.addWidget(_table(["rater", "when", "verdict", *keys], rows, flagged=flagged,
                             name="calibrationTable"))

    def _pairwise(self, lay: QVBoxLayout, view: Mapping[str, Any], chart: QImage | None) -> None:
        p = view.get("pairwise")
        lay.addWidget(_heading(
            "Pairwise preferences",
            "Bradley-Terry strength per generator (95% interval) from the A/B votes, and whether "
            "raters favour a side."))
        if not p:
            lay.addWidget(_note("No pair votes yet."))
            return
        bt = p.get("bradley_terry") or []
        if bt:
            lay.addWidget(_table(["generator", "strength [95% CI]"],
                                 [[r["name"], _est_text(r["est"])] for r in bt], name="btTable"))
            lay.addWidget(_image_label(chart, "Bradley-Terry strength per generator", "btChart"))
        elif p.get("bradley_terry_note"):
            lay.addWidget(_note(str(p["bradley_terry_note"])))
        pb = p.get("position_bias") or {}
        if pb.get("present"):
            rows = [[pb["name"], pb["left"], pb["right"], pb["n"], pb["p"]]]
            rows += [[r["name"], r["left"], r["right"], r["n"], r["p"]] for r in p.get("by_rater") or []]
            flagged = {i + 1 for i, r in enumerate(p.get("by_rater") or []) if r.get("flagged")}
            lay.addWidget(_note("Position bias: how often the output shown on the left or the right won "
                                "(binomial test against 50 / 50)."))
            lay.addWidget(_table(["who", "left won", "right won", "n", "p"], rows, flagged=flagged,
                                 name="positionTable"))
        ra = p.get("rater_alpha")
        if ra is not None and ra.present:
            lay.addWidget(_note(f"Agreement among raters on the votes (alpha): {_est_text(ra)}"))
        judges = p.get("judges") or []
        if judges:
            lay.addWidget(_table(["judge", "n", "agreement with majority", "kappa vs majority"],
                                 [[j["name"], str(j.get("n") or "—"), _est_text(j["agreement"]),
                                   _est_text(j["kappa"])] for j in judges], name="pairJudgesTable"))

    # -- queries and lifecycle -----------------------------------------------------
    def report(self) -> dict | None:
        return self._report

    def is_busy(self) -> bool:
        return self._busy

    def stop(self) -> None:
        self._stopped = True

    def shutdown(self) -> None:
        """What the main window calls before dropping the view (same as stop())."""
        self.stop()

    def closeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self.stop()
        super().closeEvent(event)
