"""Reports: build the figures from a study and write JSON / HTML / CSV."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..base.task import TaskState
from ..domain.errors import InputError
from ..domain.rubric import format_value
from ..stats.frames import StudyFrames
from .frames import build_frames
from .study import DEFAULT_SETTINGS, Study


def study_frames(study: Study) -> StudyFrames:
    settings = {**DEFAULT_SETTINGS, **study.db.all_settings()}
    return build_frames(study.db, study.rubric, study.name, settings)


def study_report(
    frames: StudyFrames,
    calibrations: Sequence[Mapping[str, Any]],
    *,
    n_boot: int,
    seed: int,
    task: TaskState | None = None,
    intervals_from: Mapping[str, Any] | None = None,
    as_of: str | None = None,
) -> dict[str, Any]:
    """The one assembly of a study's report from what was read of it: the figures
    (`build_report`), a warning naming the stored answers left out as unreadable, and each
    rater's verified calibration sessions beside their figures. `annotator report`, the exports
    (through `build_study_report`) and the app's dashboard, full or live
    (`intervals_from`: services/dashboard_live.py), all assemble it here, so the app shows what
    the command publishes."""
    from ..stats.report_model import build_report

    say = (task or TaskState()).say
    say(f"computing agreement ({len(frames.judgements)} answers, {n_boot} bootstrap resamples)")
    report = build_report(
        frames, n_boot=n_boot, seed=seed, intervals_from=intervals_from, as_of=as_of
    )
    if frames.unreadable:
        note = unreadable_note(frames.unreadable)
        report["warnings"] = [note]
        say(f"warning: {note}")
    for rec in calibrations:
        entry = report["raters"].get(rec["rater"])
        if entry is not None:
            entry.setdefault("calibrations", []).append(
                {
                    "created_at": rec["created_at"],
                    "qualified": rec["qualified"],
                    "metrics": rec["result"].get("metrics", {}),
                }
            )
    return report


@dataclass(frozen=True)
class StudyReport:
    """A report as `build_study_report` made it, with the frames it was computed from (the CSV
    tables are written from them: no second read of the study)."""

    report: dict[str, Any]
    frames: StudyFrames


def build_study_report(
    study: Study, *, n_boot: int = 1000, seed: int = 0, task: TaskState | None = None
) -> dict[str, Any]:
    return read_and_report(study, n_boot=n_boot, seed=seed, task=task).report


def read_and_report(
    study: Study, *, n_boot: int = 1000, seed: int = 0, task: TaskState | None = None
) -> StudyReport:
    """Read the study and assemble its report (`study_report`), with the team's record; each
    stage is a line said to `task`."""
    from .calibration import verified_calibrations

    task = task or TaskState()
    task.say("reading the study")
    frames = study_frames(study)
    records = verified_calibrations(study)
    report = study_report(frames, records, n_boot=n_boot, seed=seed, task=task)
    report.update(team_record(study))
    return StudyReport(report, frames)


def team_record(study: Study) -> dict[str, Any]:
    """The report's `assignment` and `merges` keys (contract 5.5): the dealt design (the overlap
    `assign` asked for, per counted rater the items dealt and answered) and every package merged."""
    from ..store import assignments

    design = study.db.all_settings().get("assignment") or {}
    raters = {
        r.rater: {"assigned": r.assigned, "done": r.done}
        for r in assignments.progress(study.db)
        if not r.is_operator
    }
    return {
        "assignment": {"overlap": design.get("overlap"), "raters": raters},
        "merges": assignments.merges(study.db),
        "answer_times": answer_times(study),
    }


def answer_times(study: Study) -> dict[str, Any]:
    """The report's data-quality note on exposure: per rater, the current answers and pair votes
    stored below the study's `min_exposure_ms` (the app stores none; an import or another tool
    may have) and those at the one-day cap (on screen a day or more)."""
    from ..domain.settings import setting
    from ..domain.time_spent import MAX_TIME_MS
    from ..store.rows import answer_times as counted

    minimum = int(setting(study.db.all_settings(), "min_exposure_ms"))
    raters = {
        t.rater: {
            "answers": t.answers,
            "timed": t.timed,
            "below_min_exposure": t.below,
            "at_time_cap": t.at_cap,
        }
        for t in counted(study.db, minimum, MAX_TIME_MS)
    }
    flagged = [
        f"{name}: {r['below_min_exposure']} of {r['timed']} timed answers below {minimum} ms"
        for name, r in raters.items()
        if r["below_min_exposure"]
    ]
    return {
        "min_exposure_ms": minimum,
        "cap_ms": MAX_TIME_MS,
        "raters": raters,
        "note": (
            "answers given faster than the item could be seen (check how they were collected): "
            + "; ".join(flagged)
            if flagged
            else None
        ),
    }


def unreadable_note(ids: list[int]) -> str:
    """One line naming the stored answers a report or export left out as unreadable."""
    shown = ", ".join(str(i) for i in ids[:10]) + (" ..." if len(ids) > 10 else "")
    return (
        f"{len(ids)} stored answer(s) left out: their answers are not valid JSON (judgements id "
        f"{shown}); the file was edited or damaged there, restore those rows from a backup"
    )


def tidy_tables(frames: StudyFrames, report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """What `report --csv` writes: the answer tables, then every table of the report
    (reports/csv_report.report_tables: one list, so the shipped tables are the tested ones)."""
    from ..reports.csv_report import report_tables

    judgements = frames.judgements.copy()
    judgements["value"] = judgements["value"].map(format_value)
    judge = frames.judge_scores.copy()
    judge["value"] = judge["value"].map(format_value)
    return {"judgements": judgements, "judge_scores": judge} | report_tables(report)


def write_reports(
    study_path: str | Path,
    *,
    json_path: str | None = None,
    html_path: str | None = None,
    csv_dir: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    task: TaskState | None = None,
) -> list[Path]:
    from ..reports.html_report import write_html
    from ..reports.json_report import write_json

    check_outputs(json_path=json_path, html_path=html_path, csv_dir=csv_dir)
    study = Study.open(study_path, mode="read")
    try:
        study.require_lead("a report")
        from .report_cache import cached_report_and_frames

        report, frames = cached_report_and_frames(study, n_boot=n_boot, seed=seed, task=task)
        out: list[Path] = []
        if json_path:
            write_json(report, Path(json_path))
            out.append(Path(json_path))
        if html_path:
            write_html(report, Path(html_path), thumbnails=finding_thumbnails(study, report))
            out.append(Path(html_path))
        if csv_dir:
            from ..reports.csv_report import write_csv_tables

            # the frames the report was computed from; a report read from the cache has none, and
            # the answer tables are then read (the figures are not computed again)
            tables = tidy_tables(frames or study_frames(study), report)
            out.extend(Path(p) for p in write_csv_tables(tables, Path(csv_dir)))
        return out
    finally:
        study.close()


def check_outputs(
    *, json_path: str | None, html_path: str | None, csv_dir: str | None
) -> list[Path]:
    """Refuse output paths that cannot be written before hours of computing, in one line each."""
    out = []
    for flag, raw, want_dir in (
        ("--json", json_path, False),
        ("--html", html_path, False),
        ("--csv", csv_dir, True),
    ):
        if not raw:
            continue
        p = Path(raw)
        if want_dir and p.exists() and not p.is_dir():
            raise InputError(
                f"{p} is a file; --csv takes a folder to write the tables into",
                source=str(p),
                field=flag,
            )
        if not want_dir and p.is_dir():
            raise InputError(
                f"{p} is a folder; {flag} takes a file name", source=str(p), field=flag
            )
        parent = p if want_dir else p.parent
        for anc in (parent, *parent.parents):
            if anc.exists():
                if not anc.is_dir():
                    raise InputError(f"{anc} is a file, not a folder", source=str(p), field=flag)
                break
        out.append(p)
    return out


def finding_thumbnails(
    study: Study, report: dict[str, Any], *, size: int = 200
) -> dict[str, bytes]:
    """Small PNGs of the first output of each item named in a finding, keyed by item_id."""
    import io

    from PIL import Image

    from ..store.items import views_by_item_id

    ids = sorted({f["item_id"] for f in report.get("findings", [])})
    out: dict[str, bytes] = {}
    for item_id, view in views_by_item_id(study.db, ids).items():
        if not view.outputs:
            continue
        try:
            with Image.open(io.BytesIO(study.media.read(view.outputs[0]))) as im:
                im.thumbnail((size, size))
                buf = io.BytesIO()
                im.save(buf, format="PNG")
        except OSError:
            continue  # a missing or unreadable media file: the finding is listed without its picture
        out[item_id] = buf.getvalue()
    return out
