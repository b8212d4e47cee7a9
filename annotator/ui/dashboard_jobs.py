"""What the dashboard's two workers run (ui/dashboard_follow.py): the database worker reads
(the inputs, the earlier figures, the data version, a live estimate's new answers, the team's
progress, the frames kept on disk), the compute worker computes (the report or the live
estimate, the charts decoded with Pillow: no Qt image plugin off the interface's thread). Each
takes the study first (the database worker's) or the task state (the compute worker's)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtGui import QImage

from ..services import dashboard as dash
from ..services import dashboard_live as dash_live
from .worker import decode_image


def job_inputs(study: Any, n_boot: int, seed: int, use_cache: bool) -> dash.DashboardInputs:
    return dash.read_inputs(study, n_boot=n_boot, seed=seed, use_cache=use_cache)


def job_earlier(study: Any, n_boot: int, seed: int) -> dash.DashboardInputs | None:
    return dash.read_earlier(study, n_boot=n_boot, seed=seed)


def job_version(study: Any) -> str:
    return dash.data_version(study.db)


def job_live_inputs(
    study: Any, live: Any, exact: Any, exact_at: datetime, n_boot: int, seed: int
) -> dash_live.LiveInputs:
    # the team's progress is read next (job_team), while the estimate computes
    return dash_live.read_live_inputs(
        study, live, exact, exact_at, n_boot=n_boot, seed=seed, team=False
    )


def job_team(study: Any) -> Any:
    return dash.team_section(study)


def job_keep_frames(study: Any, frames: Any) -> Any:
    return dash_live.keep_frames(study, frames)


def job_live_compute(
    task: dash.TaskState, live: dash_live.LiveInputs
) -> tuple[dash.DashboardModel, dict[str, QImage]]:
    model = dash_live.compute_live(live, task)
    return model, decoded_charts(model)


def job_compute(
    task: dash.TaskState, inputs: dash.DashboardInputs
) -> tuple[dash.DashboardModel, dict[str, QImage]]:
    """Compute worker: the model, and its charts decoded with Pillow (no Qt image plugin off the UI thread)."""
    model = dash.compute(inputs, task)
    return model, decoded_charts(model)


# the last model's charts decoded, by their PNG bytes (the compute worker's alone)
_DECODED: dict[bytes, QImage] = {}


def decoded_charts(model: dash.DashboardModel) -> dict[str, QImage]:
    """The model's charts decoded, by name. A live estimate's charts are the last full
    computation's, the same bytes at every refresh (a million judgements: 15-20 ms of
    decoding each time): a chart the last model had is its image again (a QImage is shared,
    never written). Only the last model's are kept."""
    global _DECODED
    kept, decoded = _DECODED, {}
    for c in model.charts():
        if c.png not in decoded:
            decoded[c.png] = kept[c.png] if c.png in kept else decode_image(c.png)
    _DECODED = decoded
    return {c.name: decoded[c.png] for c in model.charts()}
