"""Crowds of one-vote raters: an arena's votes, whose rater column is one anonymous
string, are refused naming the lines that clash inside the file (not "already in the study",
which would be false in an empty study) and import with --anonymous, each vote its own rater; with thousands of one-vote
raters the report compares only rater pairs that share votes, counts the rest, and stays small."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from factories import basic_rows, write_manifest
from test_ingest_bad_input import _run_bad, _study

from annotator.cli import main
from annotator.services.reporting import build_study_report
from annotator.services.study import Study

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def _arena_csv(path: Path, votes: int) -> Path:
    lines = ["pair_id,item_left,item_right,rater,choice"]
    for v in range(votes):
        c = v % 3
        a, b = [(0, 1), (1, 2), (0, 2)][v % 3]
        choice = ("left", "right", "both")[v % 3]
        lines.append(f"battle{v},it-{c}-{a},it-{c}-{b},anonymous,{choice}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_one_anonymous_voter_is_refused_by_line_and_imports_with_anonymous(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    rows = write_manifest(src, basic_rows(src))
    assert main(["import", "items", str(rows), "--study", str(folder)]) == 0
    p = _arena_csv(tmp_path / "arena.csv", 12)
    line = _run_bad(
        capsys, ["import", "pairs", str(p), "--study", str(folder)], "voted twice on the same two"
    )
    assert "lines 2 and 5" in line and "--anonymous" in line and "arena.csv" in line
    assert main(["import", "pairs", str(p), "--study", str(folder), "--anonymous"]) == 0
    assert "each its own anonymous rater" in capsys.readouterr().out
    with sqlite3.connect(folder / "study.sqlite") as con:
        assert con.execute("SELECT count(*) FROM pair_votes").fetchone()[0] == 12
        assert con.execute("SELECT count(DISTINCT rater_pk) FROM pair_votes").fetchone()[0] == 12
    # the same file again is the same votes: refused, nothing doubled
    assert main(["import", "pairs", str(p), "--study", str(folder), "--anonymous"]) != 0
    study = Study.open(folder, mode="read")
    try:
        report = build_study_report(study, n_boot=50, seed=0)
    finally:
        study.close()
    pw = report["pairwise"]
    assert pw["rater_kappas"] == {} and pw["rater_pairs"]["compared"] == 0
    assert pw["rater_pairs"]["sharing_too_few"] == 12 * 11 // 2
    assert pw["position_bias"]["by_rater"] == {}
    assert pw["position_bias"]["by_rater_omitted"]["raters"] == 12
    assert not any(r.startswith("anonymous-") for r in report["raters"])


def test_two_thousand_one_vote_raters_report_small_and_fast() -> None:
    """A crowd of one-vote raters (2,061 votes from 2,061 raters, an arena's shape): a figure per
    rater pair over 1.1 million pairs would make the report hundreds of MB, so the pairs that
    share too few items are counted, not listed, and the report stays under 1 MB. The time is
    the benchmark's
    (tests/benchmarks/bench_crowd.py); here, what the report holds."""
    from bench_crowd import arena_frames

    from annotator.stats.report_model import build_report

    report = build_report(arena_frames(2061), n_boot=200, seed=0)
    size = len(json.dumps(report, default=str).encode())
    assert size < 1_000_000, size
    pw = report["pairwise"]
    assert pw["rater_pairs"]["sharing_too_few"] == 2061 * 2060 // 2
    assert pw["rater_alpha"]["n_raters"] == 2061
    assert len(pw["bradley_terry"]) == 12
