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
2. ``compute(inputs, task) -> DashboardModel`` anywhere else (the compute
   worker): a pure function of its inputs that reports progress to its
   ``TaskState`` and stops at its next step once ``task.cancel()`` was called
   (raises ``Cancelled``).

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

import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.task import Cancelled, TaskState  # noqa: F401 - the dashboard view names them here
from ..domain.figures import as_dict
from ..domain.rubric import Rubric

# the view-model (reports/sections.py), metric_label and clock_text are named here for the view
from ..reports.formatting import clock_text  # noqa: F401
from ..reports.sections import (  # noqa: F401
    Answer,
    Block,
    Bullets,
    Chart,
    ItemCard,
    Note,
    Section,
    Table,
    Tile,
)
from ..store.changes import data_version

if TYPE_CHECKING:  # pandas and the statistics load when a report is computed, not at start-up
    from ..stats.frames import StudyFrames
    from .study import Study


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


def metric_label(rubric: Rubric, key: str) -> str:
    """A report key as the lead reads it: the rubric's label, the report's rule (key_label)."""
    return rubric.key_label(key)


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


def _base(
    study: Study, version: str, n_boot: int, seed: int, *, team: bool = True
) -> dict[str, Any]:
    """What every DashboardInputs of `study` holds: where and what it is, the figures' data
    version and resamples, and the team (quick counts, read fresh every time; `team=False`:
    read apart, by a caller that reads it while the figures compute)."""
    return dict(
        folder=study_key(study),
        name=study.name,
        rubric=study.rubric,
        data_version=version,
        n_boot=n_boot,
        seed=seed,
        team=team_section(study) if team else None,
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
    from ..stats.first_rows import first_rows, n_kept_values

    j = frames.judgements
    first = first_rows(j, grown=frames.judgements_grown)  # kept for the raters, fatigue, items
    n_raters = n_kept_values(j, "rater")
    if n_raters is None:  # every rater of the column has a first row: counted among those
        n_raters = j["rater"].iloc[first].nunique() if len(j) else 0
    return (
        Tile(f"{len(first):,}", "answers to live items (latest per rater)"),
        Tile(str(n_raters), "raters"),
        Tile(f"{len(frames.pair_votes):,}", "pair votes"),
    )


# -- step 2: the compute worker ----------------------------------------------------------------
def compute(inputs: DashboardInputs, task: TaskState | None = None) -> DashboardModel:
    """The dashboard's model from its inputs; pure (no database), cancellable between steps."""
    if inputs.cached is not None:
        return with_team(inputs.cached, inputs.team)
    from ..reports.html_report import build_view

    task = task or TaskState()
    started = time.monotonic()
    if inputs.kept is not None:
        task.step(
            0.05,
            "figures unchanged since the last report: read from the study's cache"
            if inputs.earlier_at is None
            else "the figures of the last computation, while the current ones compute",
        )
        report = inputs.kept
    else:
        report = _computed_report(inputs, task)
    task.step(0.75, "drawing charts")
    view = build_view(report, with_charts=True, generated_at="-")
    task.step(0.95, "laying out")
    model = _model(inputs, report, view, time.monotonic() - started)
    if model.earlier_at is None:  # earlier figures are never served as current
        CACHE.put(inputs.folder, inputs.seed, model)
    task.step(1.0, "done")
    return with_team(model, inputs.team)


def _computed_report(inputs: DashboardInputs, task: TaskState) -> dict[str, Any]:
    from .report_cache import keep_report
    from .reporting import study_report

    assert inputs.frames is not None
    report = study_report(
        inputs.frames,
        inputs.calibrations,
        n_boot=inputs.n_boot,
        seed=inputs.seed,
        # the report's stage lines, with the bar at the start of the computation
        task=TaskState(lambda _f, message: task.step(0.05, message)),
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
        Tile(str(len(as_dict(view.get("agreement")).get("metrics") or [])), "metrics"),
        Tile(
            f"{sum(int(as_dict(r).get('n_judgements') or 0) for r in raters.values()):,}",
            "answers to live items (latest per rater)",
        ),
        Tile(str(len(raters)), "raters"),
        Tile(str(len(report.get("findings") or [])), "findings"),
        Tile(str(len(flagged)), "raters with a drift flag", bool(flagged)),
        Tile(f"{n_votes:,}", "pair votes"),
    )
    # the sections every output lays out from the one model (the report's and the CSV's too)
    from ..reports.report_sections import SECTIONS

    # build_view laid out every section that has figures (a million-judgement study's per-case
    # table is half a second): those are taken as they are, the others say there is nothing yet
    laid_out = {s.key: s for s in (*view.get("top_sections", ()), *view.get("sections", ()))}
    sections = tuple(
        laid_out.get(s.key) or s.build(view)
        # the summary first, as the report has it
        for s in (*(s for s in SECTIONS if s.top), *(s for s in SECTIONS if not s.top))
    )
    live = as_dict(view.get("live_estimate"))
    resamples = (
        f"live estimate: {live.get('approximate_intervals')} intervals (≈) carried from the "
        f"exact figures' {live.get('exact_n_boot')} bootstrap resamples, "
        f"{live.get('carried') or 0} EM figures kept as of {live.get('as_of') or '?'}"
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
