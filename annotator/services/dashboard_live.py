"""The dashboard between two full computations: a live estimate in seconds.

When the study moves on while the dashboard follows it, the full report (every figure with a
thousand resamples) takes as long as it takes; the view then shows a live estimate at once:

1. ``read_live_inputs`` on the database worker brings the frames the view keeps up to date
   (`live_frames.refresh`: only the answers added or superseded since, decoded);
2. ``compute_live`` on the compute worker computes every point estimate again, exactly, and
   moves each interval of the last full report onto it (`stats/live_estimate.py`), so a
   figure's value is current and its interval, marked "≈", is the last full computation's.

The model says so (``DashboardModel.exact_at``: when the exact figures it leans on were
computed); the view replaces it with the full computation, which it runs in the background at
most every ``max(60 s, its last duration)``. A live estimate is never kept in the cache or on
disk, and never published.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.task import TaskState
from ..reports.formatting import clock_text
from ..store.changes import data_version
from . import dashboard as dash
from .memory import collection_paused

if TYPE_CHECKING:
    from .live_frames import LiveFrames
    from .study import Study


@dataclass(frozen=True)
class LiveInputs:
    inputs: dash.DashboardInputs
    frames: LiveFrames
    exact: Mapping[str, Any]  # the last full report, whose intervals the estimate carries
    exact_at: datetime


def read_live_inputs(
    study: Study,
    live: LiveFrames | None,
    exact: Mapping[str, Any],
    exact_at: datetime,
    *,
    n_boot: int,
    seed: int,
    team: bool = True,
) -> LiveInputs:
    """The view's frames brought up to date, on the database worker. The first time they are
    read back from the frames cache and brought up to date from there (read whole when none was
    kept); `keep_frames`, a job of its own, keeps them again. A refresh holds the cycle
    collector off meanwhile (memory.collection_paused); the first read, of every answer through
    the ORM, does not. `team=False` leaves the team's progress out (the dashboard reads it,
    `dashboard.team_section`, on the database worker while the estimate computes: a tenth of
    a refresh at a million judgements, on the other core)."""
    with collection_paused() if live is not None else nullcontext():
        inputs, frames = _read_inputs(study, live, n_boot, seed, team)
    return LiveInputs(inputs, frames, exact, exact_at)


def _read_inputs(
    study: Study, live: LiveFrames | None, n_boot: int, seed: int, team: bool
) -> tuple[dash.DashboardInputs, LiveFrames]:
    from . import frames_cache
    from .calibration import verified_calibrations
    from .live_frames import read_live, refresh
    from .study import DB_NAME, DEFAULT_SETTINGS

    version = data_version(study.db)  # before the rows: a later write only brings a refresh more
    settings = {**DEFAULT_SETTINGS, **study.db.all_settings()}
    folder = Path(study.folder) if study.folder is not None else None
    if live is None and folder is not None:
        live = frames_cache.load(folder, folder / DB_NAME, study.db, study.rubric, study.name)
    if live is None:
        frames = read_live(study.db, study.rubric, study.name, settings)
    else:
        frames = refresh(live, study.db, study.rubric, study.name, settings)
    inputs = dash.DashboardInputs(
        **dash._base(study, version, n_boot, seed, team=team),
        frames=frames.frames,
        calibrations=tuple(verified_calibrations(study)),
        tiles=dash._count_tiles(frames.frames),
    )
    return inputs, frames


def keep_frames(study: Study, frames: LiveFrames) -> LiveFrames:
    """`frames` kept in the study folder's frames cache when enough answers were read since the
    copy there (frames_cache.due), on the database worker after the live estimate's inputs were
    handed on (a million judgements take a second or more to keep: never before the estimate)."""
    from . import frames_cache
    from .study import DB_NAME

    if study.folder is None or not frames_cache.due(frames):
        return frames
    folder = Path(study.folder)
    return frames_cache.keep(folder, folder / DB_NAME, frames)


def forget_kept() -> None:
    """Let go of what live estimates keep from one refresh to the next (stats/kept_counts.py:
    6 MB at a million judgements; the last pairwise section and its votes), when the dashboard
    stops following a study."""
    from ..stats import kept_counts
    from ..stats.report_model import forget_pairwise

    kept_counts.forget()
    forget_pairwise()


def compute_live(live: LiveInputs, task: TaskState | None = None) -> dash.DashboardModel:
    """The live estimate's model: current point estimates, the last full report's intervals;
    the cycle collector held off meanwhile (memory.collection_paused)."""
    with collection_paused():
        return _compute_live(live, task)


def _compute_live(live: LiveInputs, task: TaskState | None) -> dash.DashboardModel:
    from ..reports.html_report import build_view
    from .reporting import study_report

    task = task or TaskState()
    started = time.monotonic()
    inputs = live.inputs
    assert inputs.frames is not None
    task.step(0.05, "live estimate: every figure on the current answers, without resampling")
    as_of = clock_text(live.exact_at)
    report = study_report(
        inputs.frames,
        inputs.calibrations,
        n_boot=inputs.n_boot,
        seed=inputs.seed,
        intervals_from=live.exact,
        as_of=as_of,
    )
    task.step(0.75, "the tables of the figures (the charts: the last full computation's)")
    # the charts are the last full computation's, marked (drawn then: no matplotlib here)
    view = build_view(
        report, with_charts=True, generated_at="-", charts_from=live.exact, charts_as_of=as_of
    )
    task.step(0.95, "laying out")
    model = dash._model(inputs, report, view, time.monotonic() - started)
    task.step(1.0, "done")
    return dash.with_team(replace(model, exact_at=live.exact_at), inputs.team)
