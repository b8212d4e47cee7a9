"""The committed reference reports of the shipped real data (TIFA, PandaLM) in docs/reference/.

    python tests/reference_reports.py          # regenerate them (after a change to the statistics)

Deterministic: a fixed seed, 1000 resamples, no wall-clock inside (the HTML says "reference");
`tests/unit/test_reference_reports.py` fails when the code would publish other figures.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
OUT = REPO / "docs" / "reference"
N_BOOT, SEED = 1000, 0
STUDIES = {
    "tifa": (
        "tifa/rubric.toml",
        [
            ("items", "tifa/items.jsonl"),
            ("ratings", "tifa/ratings.csv"),
            ("judge", "tifa/judge.csv"),
        ],
    ),
    "pandalm": (
        "pandalm/rubric.toml",
        [
            ("items", "pandalm/items.jsonl"),
            ("pairs", "pandalm/pair_votes.csv"),
            ("judge-pairs", "pandalm/judge_pairs.csv"),
        ],
    ),
}


# TIFA's humans rated every item (a census): a sample of 40 of each generator's 160 items shows
# what the judges' scores on all of them add (tests/benchmarks/bench_debiased_tifa.py)
SAMPLES = {"tifa": 40}


def build(name: str, folder: Path):  # noqa: ANN201 - a Study
    from annotator.services.importers import run_import
    from annotator.services.study import Study

    rubric, imports = STUDIES[name]
    study = Study.create(folder / name, DATA / rubric)
    for kind, path in imports:
        run_import(study, kind, DATA / path)
    if name in SAMPLES:  # a recorded random human sample: the report's debiased section
        from annotator.services.sampling import draw

        draw(study, n=SAMPLES[name], share=None, seed=SEED)
    return study


def report(name: str, folder: Path) -> dict:
    from annotator.services.reporting import build_study_report

    study = build(name, folder)
    try:
        return build_study_report(study, n_boot=N_BOOT, seed=SEED)
    finally:
        study.close()


def write(name: str) -> list[Path]:
    from annotator.reports.csv_report import write_csv_tables
    from annotator.reports.html_report import write_html
    from annotator.reports.json_report import write_json
    from annotator.services.reporting import build_study_report, study_frames, tidy_tables

    dest = OUT / name
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        study = build(name, Path(tmp))
        try:
            rep = build_study_report(study, n_boot=N_BOOT, seed=SEED)
            out = [
                write_json(rep, dest / "report.json"),
                write_html(
                    rep,
                    dest / "report.html",
                    generated_at=f"reference (seed {SEED}, {N_BOOT} resamples)",
                ),
            ]
            frames = study_frames(study)
            # the source files carry no answer times: the study stamps them with the import's
            # wall clock, which has no place in a reference
            frames.judgements["created_at"] = None
            out += write_csv_tables(tidy_tables(frames, rep), dest / "tables", parquet=False)
        finally:
            study.close()
    return [Path(p) for p in out]


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    for n in STUDIES:
        for p in write(n):
            print(f"wrote {p.relative_to(REPO)}")
