"""Builders for test inputs: real Pillow images, real manifests, judgement tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image, PngImagePlugin

REPO = Path(__file__).resolve().parents[2]


def make_png(
    path: Path, colour=(200, 40, 40), size=(64, 48), text_chunk: str | None = None
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    info = None
    if text_chunk:
        info = PngImagePlugin.PngInfo()
        info.add_text("parameters", text_chunk)
    Image.new("RGB", size, colour).save(path, pnginfo=info)
    return path


def write_manifest(folder: Path, rows: list[dict], name: str = "manifest.jsonl") -> Path:
    p = folder / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def basic_rows(folder: Path, n_cases: int = 3, gens=("gen-a", "gen-b", "gen-c")) -> list[dict]:
    rows = []
    for c in range(n_cases):
        for g, gen in enumerate(gens):
            img = make_png(
                folder / "out" / f"{gen}_case{c}.png", colour=(40 * g + 20, 30 * c + 10, 90)
            )
            rows.append(
                {
                    "item_id": f"it-{c}-{g}",
                    "case_id": f"case{c}",
                    "prompt": f"Draw screen {c}",
                    "criteria": "All sections present.",
                    "generator": gen,
                    "images": [str(img.relative_to(folder))],
                }
            )
    return rows


def study_settings(study: Path) -> dict:
    """A study folder's stored settings, read with the study opened read-only."""
    from annotator.services.study import Study

    s = Study.open(study, mode="read")
    try:
        return s.db.all_settings()
    finally:
        s.close()


# one answer to every metric of the ui_mockup rubric (rubrics/ui_mockup.toml)
ANSWERS = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "fine",
}


def answer_items(study, rater: str, n: int, change: dict | None = None):  # noqa: ANN001, ANN201
    """`rater` answers the next `n` items served (ANSWERS, with `change`) through the app's own
    labelling session, which is returned."""
    from annotator.services.labeling import LabelSession

    s = LabelSession(study, rater)
    for _ in range(n):
        item = s.next()
        if item is None:
            break
        s.submit(item, {**ANSWERS, **(change or {})}, 700)
    return s


def judgement_table(rows: list[tuple[str, str, str, object]]) -> pd.DataFrame:
    """A StudyFrames judgements table of (item_id, rater, metric, value) rows, imported (no
    session, no place), the values as they are."""
    return pd.DataFrame(
        {
            "item_id": [r[0] for r in rows],
            "rater": [r[1] for r in rows],
            "metric": [r[2] for r in rows],
            "value": pd.Series([r[3] for r in rows], dtype=object),
            "reason": None,
            "created_at": pd.Timestamp("2026-01-01"),
            "session_id": np.nan,
            "position": np.nan,
        }
    )
