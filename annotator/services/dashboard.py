"""The study lead's dashboard as a view-model: sections of plain tables, notes and chart PNGs.

The figures are the report's (contract 5.5), assembled by the same function as
``annotator report`` (``reporting.study_report``), kept in the same disk cache
(``report_cache``: either one reads what the other computed) and laid out from
the same rows as the HTML report (``reports.html_report.build_view``), so app and
report cannot disagree; the UI only lays out strings and decodes PNG bytes, and
never imports ``reports``.

Work is split the way Orange splits a widget's long task:

1. ``read_inputs(study, n_boot=, seed=) -> DashboardInputs`` on the database
   worker: the data version (``store.changes``), and, unless the cache already
   holds a report for that version, the study's frames and calibration records.
   Quick; its ``tiles`` are shown at once (a partial result).
2. ``compute(inputs, state) -> DashboardModel`` anywhere else (the compute
   worker): a pure function of its inputs that reports progress and stops at
   its next step once ``state.cancel()`` was called (raises ``Cancelled``).

``CACHE`` keeps the last model per study (keyed by folder, n_boot and seed,
valid while the data version is unchanged): reopening the dashboard on
unchanged data shows it at once. Why a second cache beside the report cache: it
holds the laid-out model (sections, drawn chart PNGs: seconds of matplotlib), not
the report, which the disk cache keeps; it never holds a figure the disk cache
does not. After a restart on changed data,
``read_earlier`` gives the report the study kept on disk the last time, so the
view shows those figures at once, marked with when they were computed
(``DashboardModel.earlier_at``), while it computes the current ones.
"""

from __future__ import annotations

import base64
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.task import Cancelled, TaskState  # noqa: F401 - the dashboard view names them here
from ..domain.figures import MISSING, as_dict
from ..domain.rubric import Rubric
from ..stats.rater_medians import median_agreement, median_competence
from ..store.changes import data_version

if TYPE_CHECKING:  # pandas and the statistics load when a report is computed, not at start-up
    from ..stats.frames import StudyFrames
    from .study import Study

MAX_FINDING_ROWS = 200


# -- the view-model ---------------------------------------------------------------------
@dataclass(frozen=True)
class Table:
    name: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    flagged: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Chart:
    name: str
    png: bytes
    alt: str
    caption: str = ""
    flagged: bool = False


@dataclass(frozen=True)
class Note:
    text: str


Block = Table | Chart | Note


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    subtitle: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Tile:
    value: str
    label: str
    warn: bool = False


@dataclass(frozen=True)
class DashboardModel:
    title: str
    meta: str
    tiles: tuple[Tile, ...]
    sections: tuple[Section, ...]
    report: Mapping[str, Any]
    data_version: str
    n_boot: int
    seconds: float = 0.0
    # set on the figures of an earlier state of the study, shown while the current ones compute
    earlier_at: datetime | None = None
    # set on a live estimate (dashboard_live.py): when the exact figures whose intervals it
    # carries were computed; None on a full computation
    exact_at: datetime | None = None

    def charts(self) -> list[Chart]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Chart)]


@dataclass(frozen=True)
class DashboardInputs:
    folder: Path
    name: str
    rubric: Rubric
    data_version: str
    n_boot: int
    seed: int
    frames: StudyFrames | None = None  # noqa: F821 - typing only
    calibrations: tuple[dict[str, Any], ...] = ()
    cached: DashboardModel | None = None
    kept: dict[str, Any] | None = None  # the report kept on disk for this very data and code
    earlier_at: datetime | None = None  # `kept` is of an earlier state of the data, kept then
    tiles: tuple[Tile, ...] = ()
    team: Section | None = (
        None  # per rater: assigned, done, anchors, last activity; read every time
    )


def study_key(study: Study) -> Path:
    """What the cache is keyed by: the folder, the package file, or the server location (no password)."""
    return Path(study.folder) if study.folder is not None else Path(str(study.where))


# -- the cache ----------------------------------------------------------------------------
@dataclass
class ModelCache:
    """The last model per (study folder, n_boot, seed); valid while its data version holds. At
    most `size` are kept (the least recently used go): a model holds its report and chart PNGs,
    and a lead who opens study after study must not keep every one."""

    size: int = 3
    _models: OrderedDict[tuple[str, int, int], DashboardModel] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, folder: Path, version: str, n_boot: int, seed: int) -> DashboardModel | None:
        with self._lock:
            m = self._models.get((str(folder), n_boot, seed))
            if m is not None:
                self._models.move_to_end((str(folder), n_boot, seed))
        return m if m is not None and m.data_version == version else None

    def put(self, folder: Path, seed: int, model: DashboardModel) -> None:
        with self._lock:
            key = (str(folder), model.n_boot, seed)
            self._models[key] = model
            self._models.move_to_end(key)
            while len(self._models) > self.size:
                self._models.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


CACHE = ModelCache()


# -- step 1: the database worker --------------------------------------------------------------
def read_inputs(study: Study, *, n_boot: int, seed: int, use_cache: bool = True) -> DashboardInputs:
    """What `compute` needs, read in one go (or the cached model when the data is unchanged)."""
    version = data_version(study.db)
    key = study_key(study)
    base = _base(study, version, n_boot, seed)
    hit = CACHE.get(key, version, n_boot, seed) if use_cache else None
    if hit is not None:
        return DashboardInputs(**base, cached=hit, tiles=hit.tiles)
    from .report_cache import stored_report

    # after a restart, or after `annotator report`: the figures of unchanged data, without
    # reading the answers or computing
    kept = stored_report(study, n_boot=n_boot, seed=seed) if use_cache else None
    if kept is not None:
        return DashboardInputs(**base, kept=kept)
    from .calibration import verified_calibrations
    from .reporting import study_frames

    frames = study_frames(study)
    recs = tuple(verified_calibrations(study))
    return DashboardInputs(**base, frames=frames, calibrations=recs, tiles=_count_tiles(frames))


def read_earlier(study: Study, *, n_boot: int, seed: int) -> DashboardInputs | None:
    """The last report kept for the study (by this code, these resamples and seed) when the data
    has changed since: what the dashboard shows, marked as earlier, while it computes the current
    figures. None when there is none, or when it is current (`read_inputs` serves that one)."""
    from .report_cache import earlier_report

    earlier = earlier_report(study, n_boot=n_boot, seed=seed)
    if earlier is None or earlier.data_version == data_version(study.db):
        return None
    base = _base(study, earlier.data_version, n_boot, seed)
    return DashboardInputs(**base, kept=earlier.report, earlier_at=earlier.kept_at)


def _base(study: Study, version: str, n_boot: int, seed: int) -> dict[str, Any]:
    """What every DashboardInputs of `study` holds: where and what it is, the figures' data
    version and resamples, and the team (quick counts, read fresh every time)."""
    return dict(
        folder=study_key(study),
        name=study.name,
        rubric=study.rubric,
        data_version=version,
        n_boot=n_boot,
        seed=seed,
        team=team_section(study),
    )


def team_section(study: Study) -> Section:
    """The lead's view of the team (store.assignments): per rater assigned, done, anchors, pair
    votes and last activity, and a warning per over- or under-assigned rater. Quick (counts), so
    it is read fresh even when the figures come from the cache."""
    from ..store import assignments

    rows = assignments.progress(study.db)
    warnings = assignments.balance_warnings(rows)
    table_rows, flagged = [], set()
    for i, r in enumerate(rows):
        who = r.rater + (" (operator)" if r.is_operator else "")
        if any(w.startswith(f"{r.rater} has ") for w in warnings):
            flagged.add(i)
        table_rows.append(
            (
                who,
                "all" if r.assigned is None else str(r.assigned),
                str(r.done),
                str(r.anchors),
                f"{r.pairs_done} / {'—' if r.pairs_assigned is None else r.pairs_assigned}",
                r.last_activity.isoformat(sep=" ", timespec="minutes") if r.last_activity else "—",
            )
        )
    blocks: list[Block] = [Note(f"⚠ {w}") for w in warnings]
    if table_rows:
        blocks.append(
            Table(
                "teamTable",
                (
                    "rater",
                    "assigned",
                    "done",
                    "anchors",
                    "pair votes done / assigned",
                    "last activity",
                ),
                tuple(table_rows),
                frozenset(flagged),
            )
        )
    else:
        blocks.append(Note("No raters yet."))
    return Section(
        "team",
        "Team",
        "Work dealt to each rater and how far each has got (merged packages "
        "included). Operators' answers are stored but never counted.",
        tuple(blocks),
    )


def with_team(model: DashboardModel, team: Section | None) -> DashboardModel:
    """The model with the fresh team section first (the cached figures keep theirs out)."""
    if team is None:
        return model
    rest = tuple(s for s in model.sections if s.key != "team")
    return replace(model, sections=(team, *rest))


def _count_tiles(frames: StudyFrames) -> tuple[Tile, ...]:
    j = frames.judgements
    n_answers = len(j[["item_id", "rater"]].drop_duplicates()) if len(j) else 0
    return (
        Tile(f"{n_answers:,}", "answers to live items (latest per rater)"),
        Tile(str(j["rater"].nunique() if len(j) else 0), "raters"),
        Tile(f"{len(frames.pair_votes):,}", "pair votes"),
    )


# -- step 2: the compute worker ----------------------------------------------------------------
def compute(inputs: DashboardInputs, state: TaskState | None = None) -> DashboardModel:
    """The dashboard's model from its inputs; pure (no database), cancellable between steps."""
    if inputs.cached is not None:
        return with_team(inputs.cached, inputs.team)
    from ..reports.html_report import build_view

    state = state or TaskState()
    started = time.monotonic()
    if inputs.kept is not None:
        state.step(
            0.05,
            "figures unchanged since the last report: read from the study's cache"
            if inputs.earlier_at is None
            else "the figures of the last computation, while the current ones compute",
        )
        report = inputs.kept
    else:
        report = _computed_report(inputs, state)
    state.step(0.75, "drawing charts")
    view = build_view(report, with_charts=True, generated_at="-")
    state.step(0.95, "laying out")
    model = _model(inputs, report, view, time.monotonic() - started)
    if model.earlier_at is None:  # earlier figures are never served as current
        CACHE.put(inputs.folder, inputs.seed, model)
    state.step(1.0, "done")
    return with_team(model, inputs.team)


def _computed_report(inputs: DashboardInputs, state: TaskState) -> dict[str, Any]:
    from .report_cache import keep_report
    from .reporting import study_report

    assert inputs.frames is not None
    report = study_report(
        inputs.frames,
        inputs.calibrations,
        n_boot=inputs.n_boot,
        seed=inputs.seed,
        progress=lambda msg: state.step(0.05, msg),
    )
    # kept on disk too: the next opening reads it, and the review queue puts the systematic
    # findings of this report first
    keep_report(
        inputs.folder,
        n_boot=inputs.n_boot,
        seed=inputs.seed,
        data_version=inputs.data_version,
        report=report,
    )
    return report


def _png(chart: Any) -> bytes | None:
    uri = getattr(chart, "uri", None)
    if not uri or "," not in uri:
        return None
    return base64.b64decode(uri.split(",", 1)[1])


def _est(e: Any, *, with_n: bool = True) -> str:
    """An Est of the report view -> 'text [low, high]  n=..'."""
    if e is None or not getattr(e, "present", False):
        return MISSING
    s = str(e)
    if with_n and getattr(e, "n", None) is not None and e.defined:
        s += f"  n={e.n}"
    return s


def _or_dash(v: Any) -> str:
    return MISSING if v is None else str(v)


def _share(v: Mapping[str, Any]) -> str:
    est = v.get("estimate")
    if est is None:
        return MISSING
    lo, hi = v.get("low"), v.get("high")
    ci = f" [{lo:.0%}, {hi:.0%}]" if lo is not None and hi is not None else ""
    return f"{est:.0%}{ci} n={v.get('n')}"


def metric_label(rubric: Rubric, key: str) -> str:
    """A report key as the lead reads it: the rubric's label, the report's rule (key_label)."""
    return rubric.key_label(key)


def _model(
    inputs: DashboardInputs, report: Mapping[str, Any], view: Mapping[str, Any], seconds: float
) -> DashboardModel:
    rubric = inputs.rubric
    raters = as_dict(report.get("raters"))
    flagged = [n for n, r in raters.items() if as_dict(as_dict(r).get("drift")).get("flagged")]
    cells = as_dict(as_dict(report.get("pairwise")).get("cells"))
    n_votes = sum(
        int(as_dict(t).get("n") or 0) for c in cells.values() for t in as_dict(c).values()
    )
    tiles = (
        Tile(str(len(view.get("metrics") or [])), "metrics"),
        Tile(
            f"{sum(int(as_dict(r).get('n_judgements') or 0) for r in raters.values()):,}",
            "answers to live items (latest per rater)",
        ),
        Tile(str(len(raters)), "raters"),
        Tile(str(len(report.get("findings") or [])), "findings"),
        Tile(str(len(flagged)), "raters with a drift flag", bool(flagged)),
        Tile(f"{n_votes:,}", "pair votes"),
    )
    from .dashboard_certified import certified_section
    from .dashboard_debiased import debiased_section

    summary = _summary(report)
    sections = (
        *((summary,) if summary.blocks else ()),  # a report of an earlier version has none
        _agreement(rubric, view),
        _by_generator(rubric, view),
        _findings(rubric, view),
        *_raters(rubric, report, view),
        _calibrations(rubric, report),
        _pairwise(view),
        debiased_section(view),
        certified_section(view),
    )
    live = as_dict(view.get("live_estimate"))
    resamples = (
        f"live estimate: {live.get('approximate_intervals')} intervals (≈) carried from the "
        f"exact figures' {live.get('exact_n_boot')} bootstrap resamples"
        if live
        else f"bootstrap resamples: {inputs.n_boot}"
    )
    meta = (
        f"Rubric {rubric.title} ({view.get('rubric_id')}, version {view.get('rubric_version_short')})  ·  "
        f"{resamples}  ·  for the study lead: this page names generators and raters; raters "
        "never see it."
    )
    return DashboardModel(
        f"Study dashboard: {inputs.name}",
        meta,
        tiles,
        sections,
        report,
        inputs.data_version,
        inputs.n_boot,
        seconds,
        inputs.earlier_at,
    )


def _summary(report: Mapping[str, Any]) -> Section:
    """The report summary's lead: what is known, then what data would decide the rest (the same
    entries as the HTML report's summary: stats/next_steps.py)."""
    s = as_dict(report.get("summary"))
    blocks: list[Block] = [
        Note(str(as_dict(per).get("text")))
        for _name, per in sorted(as_dict(s.get("judges")).items())
        if as_dict(per).get("text")
    ]  # one verdict per judge, first
    blocks += [Note(f"Known: {as_dict(e).get('text')}") for e in s.get("known") or []]
    if not s.get("known") and "known" in s:
        blocks.append(Note("Known: nothing yet for sure; every figure is undecided on these data."))
    for e in s.get("to_decide") or []:
        cmd = as_dict(e).get("command")
        blocks.append(Note(f"To decide: {as_dict(e).get('text')}" + (f"  ·  {cmd}" if cmd else "")))
    return Section(
        "summary",
        "Summary",
        "What the figures say for sure, then what data would decide the rest, with the command "
        "that deals it.",
        tuple(blocks),
    )


def _agreement(rubric: Rubric, view: Mapping[str, Any]) -> Section:
    rows: list[tuple[str, ...]] = []
    for m in view.get("metrics") or []:
        counts = " · ".join(_or_dash(m.get(k)) for k in ("n_items", "n_raters", "n_judgements"))
        base = (
            metric_label(rubric, m["key"]),
            f"{m['kind']} / {m['level']}",
            counts,
            _est(m["human_alpha"]),
        )
        if not m["judges"]:
            rows.append((*base, "—", "—", "—", "—"))
        for i, j in enumerate(m["judges"]):
            perm = (
                f"{j['perm_mean']} (p {j['perm_p']})"
                if j.get("perm_mean")
                else ("undefined: " + j["perm_note"] if j.get("perm_note") else "—")
            )
            rows.append(
                (
                    *(base if i == 0 else ("", "", "", "")),
                    j["name"],
                    _est(j["alpha_vs_consensus"]),
                    perm,
                    _est(j["exact_agreement"], with_n=False),
                )
            )
    blocks: list[Block] = [
        Table(
            "agreementTable",
            (
                "metric",
                "kind / level",
                "items · raters · answers",
                "human alpha [95% CI]",
                "judge",
                "judge alpha vs consensus [95% CI]",
                "shuffled baseline",
                "exact agreement",
            ),
            tuple(rows),
        )
    ]
    png = _png(as_dict(view.get("charts")).get("agreement"))
    if png:
        blocks.append(
            Chart("agreementChart", png, "Krippendorff's alpha per metric with 95% intervals")
        )
    return Section(
        "agreement",
        "Agreement per metric",
        "Krippendorff's alpha among humans with its bootstrap 95% interval, and each judge against the "
        "human consensus beside the alpha it gets when its scores are shuffled across items.",
        tuple(blocks),
    )


def _by_generator(rubric: Rubric, view: Mapping[str, Any]) -> Section:
    """The report's per-generator agreement (`metrics.<m>.by_generator`), one table."""
    rows: list[tuple[str, ...]] = []
    for m in view.get("metrics") or []:
        for g in m.get("by_generator") or []:
            judges = g["judges"] or [("—", [])]
            for i, (name, cells) in enumerate(judges):
                head = (
                    (metric_label(rubric, m["key"]), g["generator"], _or_dash(g["n_items"]))
                    if i == 0
                    else ("", "", "")
                )
                humans = (
                    (_est(g["alpha"], with_n=False), _est(g["fleiss"], with_n=False))
                    if i == 0
                    else ("", "")
                )
                corr = tuple(_est(c, with_n=False) for c in cells) or ("—", "—", "—")
                rows.append((*head, *humans, name, *corr))
    blocks: tuple[Block, ...] = (
        (
            Table(
                "byGeneratorTable",
                (
                    "metric",
                    "generator",
                    "items",
                    "human alpha [95% CI]",
                    "Fleiss' kappa",
                    "judge",
                    "Pearson",
                    "Spearman",
                    "Kendall tau-b",
                ),
                tuple(rows),
            ),
        )
        if rows
        else (Note("No generator has answers yet."),)
    )
    return Section(
        "by_generator",
        "Agreement per generator",
        "The humans' alpha and Fleiss' kappa on each generator's items, and each judge's "
        "correlations with the human mean there (as the field reports agreement per model).",
        blocks,
    )


def _findings(rubric: Rubric, view: Mapping[str, Any]) -> Section:
    findings = view.get("findings") or []
    sub = (
        "Each disagreement between the humans and the judge (or among the humans), item by item and "
        "metric by metric; none is averaged away."
    )
    if not findings:
        return Section(
            "findings",
            "Findings: 0",
            sub,
            (Note("No findings: humans and judges agree wherever both answered."),),
        )
    # The lead's item id (case + generator), never a rater's display code: codes are per rater.
    rows = tuple(
        (
            str(f.get("item_id") or f.get("title") or ""),
            metric_label(rubric, str(f.get("metric") or "")),
            str(f.get("kind") or ""),
            str(f.get("humans") or ""),
            str(f.get("judge_value") or ""),
            str(f.get("generator") or ""),
        )
        for f in findings[:MAX_FINDING_ROWS]
    )
    blocks: list[Block] = [
        Table("findingsTable", ("item", "metric", "kind", "humans", "judge", "generator"), rows)
    ]
    if len(findings) > MAX_FINDING_ROWS:
        blocks.append(
            Note(
                f"The first {MAX_FINDING_ROWS} of {len(findings)} findings; the HTML report "
                "lists them all."
            )
        )
    return Section("findings", f"Findings: {len(findings)}", sub, tuple(blocks))


def _drift_text(
    rubric: Rubric, d: Mapping[str, Any], offsets: Mapping[str, Any] | None = None
) -> str:
    """The rater's drift flag (a change from where they started), then any standing offset
    from the reference (a calibration finding, not drift: stats/drift.calibration_offset)."""
    standing = "; ".join(
        f"consistently {off['direction']} by {abs(off['estimate']):.2f} on {metric_label(rubric, k)}"
        for k, off in (offsets or {}).items()
        if as_dict(off).get("flagged") and off.get("estimate") is not None
    )
    if not d:
        return standing or "—"
    if not d.get("flagged"):
        return "no drift flag" + (f"; {standing}" if standing else "")
    bits = [metric_label(rubric, str(d.get("metric") or "a metric")), str(d.get("direction") or "")]
    if d.get("first_flag_at") is not None:
        bits.append(f"from anchor answer {d.get('first_flag_at')}")
    return "drift: " + ", ".join(b for b in bits if b) + (f"; {standing}" if standing else "")


def _agreement_text(rep: Mapping[str, Any]) -> str:
    """Median over metrics of the rater's exact agreement with the others' consensus."""
    med = median_agreement(rep)
    return f"{med[0]:.0%} (median of {med[1]} metrics)" if med else "—"


def _competence_text(
    rubric: Rubric,
    name: str,
    raters: Mapping[str, Any],
    low_by_rater: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The rater's median competence, and the metrics where it is clearly below the others'
    (`low_by_rater`: the report summary's verdict, worked out again only when not given)."""
    comp = {r: dict(as_dict(as_dict(v).get("competence"))) for r, v in raters.items()}
    mine = median_competence(as_dict(raters.get(name)))
    if mine is None:
        # a degenerate fit is said as such, never as a number (report: "not estimable")
        notes = [str(as_dict(f).get("note") or "") for f in comp.get(name, {}).values()]
        return (
            "not estimable: too little overlap"
            if any(n.startswith("not estimable") for n in notes)
            else "—"
        )
    if low_by_rater is None:
        from ..stats.competence import low_competence  # numpy: never on the UI thread's import

        low_by_rater = low_competence(comp)
    low = low_by_rater.get(name, {})
    text = f"{mine:.2f} (median)"
    if low:
        text += "; low on " + ", ".join(
            f"{metric_label(rubric, k)} {f['estimate']:.2f}" for k, f in low.items()
        )
    return text


def _raters(
    rubric: Rubric, report: Mapping[str, Any], view: Mapping[str, Any]
) -> tuple[Section, Section]:
    raters = as_dict(report.get("raters"))
    attention = as_dict(report.get("summary")).get("raters_needing_attention")
    low_by_rater = (
        {a["rater"]: as_dict(a.get("low_competence")) for a in attention}
        if isinstance(attention, list)
        else None
    )
    rows, flagged = [], set()
    for i, r in enumerate(view.get("raters") or []):
        rep = as_dict(raters.get(r["name"]))
        acc = as_dict(rep.get("accuracy"))
        acc_text = (
            "; ".join(
                f"{metric_label(rubric, k)} {_share(v)}"
                for k, v in acc.items()
                if isinstance(v, Mapping)
            )
            or "—"
        )
        if r["flagged"]:
            flagged.add(i)
        rows.append(
            (
                r["name"],
                _or_dash(r.get("n_judgements")),
                _or_dash(r.get("anchors")),
                acc_text,
                _drift_text(
                    rubric, as_dict(rep.get("drift")), as_dict(rep.get("calibration_offset"))
                ),
                _agreement_text(rep),
                _competence_text(rubric, r["name"], raters, low_by_rater),
                r.get("calibrations") or "none",
            )
        )
    table = Section(
        "raters",
        "Raters",
        "Judgements, live anchors answered, accuracy on those anchors (gates exact, scales within one "
        "point; 95% interval), the CUSUM drift flag, agreement with the others' consensus and "
        "competence (MACE: how often the rater knows the answer rather than guesses).",
        (
            Table(
                "ratersTable",
                (
                    "rater",
                    "live items answered",
                    "anchor answers",
                    "accuracy on anchors",
                    "drift",
                    "agreement with consensus",
                    "competence",
                    "calibration",
                ),
                tuple(rows),
                frozenset(flagged),
            ),
        ),
    )
    charts: list[Block] = []
    drift = as_dict(as_dict(view.get("charts")).get("drift"))
    for name in sorted(
        drift, key=lambda n: (not as_dict(as_dict(raters.get(n)).get("drift")).get("flagged"), n)
    ):
        d = as_dict(as_dict(raters.get(name)).get("drift"))
        png = _png(drift[name])
        if png:
            caption = _drift_text(rubric, d).replace("drift:", "drift flag:", 1)
            charts.append(
                Chart(
                    f"driftChart:{name}",
                    png,
                    f"Drift chart for {name}",
                    f"{name}: {caption}",
                    bool(d.get("flagged")),
                )
            )
    if not charts:
        charts.append(Note("No drift charts yet: no rater has answered a live anchor."))
    return table, Section(
        "drift",
        "Drift on anchors",
        "Per rater: each anchor answer's deviation from the reference with its EWMA and control "
        "limits (top), and the CUSUM up / down against the threshold h that raises the flag "
        "(bottom). Flagged raters first.",
        tuple(charts),
    )


def _calibrations(rubric: Rubric, report: Mapping[str, Any]) -> Section:
    raters = as_dict(report.get("raters"))
    keys: list[str] = []
    recs: list[tuple[str, Mapping[str, Any]]] = []
    for name in sorted(raters, key=str):
        for c in as_dict(raters[name]).get("calibrations") or []:
            if isinstance(c, Mapping):
                recs.append((str(name), c))
                keys.extend(k for k in as_dict(c.get("metrics")) if k not in keys)
    sub = "Every calibration session: the share of anchors met per metric against its rule, and the verdict."
    if not recs:
        return Section(
            "calibration",
            "Calibration history",
            sub,
            (Note("No calibration session has been run yet."),),
        )
    rows, flagged = [], set()
    for i, (name, c) in enumerate(recs):
        metrics = as_dict(c.get("metrics"))
        cells = []
        for k in keys:
            m = as_dict(metrics.get(k))
            share = m.get("share")
            cells.append(
                "—"
                if share is None
                else f"{share:.0%} of {m.get('n')} (need {m.get('threshold', 0):.0%})"
                + ("" if m.get("passed") else " ✗")
            )
        ok = bool(c.get("qualified"))
        if not ok:
            flagged.add(i)
        rows.append(
            (name, str(c.get("created_at") or ""), "qualified" if ok else "not yet", *cells)
        )
    headers = ("rater", "when", "verdict", *(metric_label(rubric, k) for k in keys))
    return Section(
        "calibration",
        "Calibration history",
        sub,
        (Table("calibrationTable", headers, tuple(rows), frozenset(flagged)),),
    )


def _pairwise(view: Mapping[str, Any]) -> Section:
    p = view.get("pairwise")
    sub = (
        "Bradley-Terry strength per generator (95% interval) from the A/B votes, and whether raters favour "
        "a side."
    )
    if not p:
        return Section("pairwise", "Pairwise preferences", sub, (Note("No pair votes yet."),))
    blocks: list[Block] = []
    bt = p.get("bradley_terry") or []
    if bt:
        blocks.append(
            Table(
                "btTable",
                ("generator", "strength [95% CI]"),
                tuple((r["name"], _est(r["est"])) for r in bt),
            )
        )
        png = _png(as_dict(view.get("charts")).get("bradley_terry"))
        if png:
            blocks.append(Chart("btChart", png, "Bradley-Terry strength per generator"))
    elif p.get("bradley_terry_note"):
        blocks.append(Note(str(p["bradley_terry_note"])))
    pb = p.get("position_bias") or {}
    if pb.get("present"):
        by_rater = p.get("by_rater") or []
        rows = (
            (pb["name"], pb["left"], pb["right"], pb["n"], pb["p"]),
            *((r["name"], r["left"], r["right"], r["n"], r["p"]) for r in by_rater),
        )
        blocks.append(
            Note(
                "Position bias: how often the output shown on the left or the right won (binomial "
                "test against 50 / 50)." + (f" {pb['note']}." if pb.get("note") else "")
            )
        )
        blocks.append(
            Table(
                "positionTable",
                ("who", "left won", "right won", "n", "p"),
                tuple(tuple(str(c) for c in r) for r in rows),
                frozenset(i + 1 for i, r in enumerate(by_rater) if r.get("flagged")),
            )
        )
    ra = p.get("rater_alpha")
    if ra is not None and ra.present:
        blocks.append(Note(f"Agreement among raters on the votes (alpha): {_est(ra)}"))
    judges = p.get("judges") or []
    if judges:
        blocks.append(
            Table(
                "pairJudgesTable",
                ("judge", "n", "agreement with majority", "kappa vs majority"),
                tuple(
                    (j["name"], str(j.get("n") or "—"), _est(j["agreement"]), _est(j["kappa"]))
                    for j in judges
                ),
            )
        )
    return Section("pairwise", "Pairwise preferences", sub, tuple(blocks))
