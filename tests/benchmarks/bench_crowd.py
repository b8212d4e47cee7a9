"""Benchmark: a crowd of one-vote raters, an arena's shape: 2,061 votes from 2,061
raters on 12 generators, one battle a case. Prints the report's time, its JSON size and the peak
memory of the process. Run: python tests/benchmarks/bench_crowd.py [--votes N]"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

from annotator.ingest.rubrics import load_rubric
from annotator.stats.frames import ITEM_COLUMNS, PAIR_COLUMNS, StudyFrames

REPO = Path(__file__).resolve().parents[2]


def arena_frames(votes: int, seed: int = 0) -> StudyFrames:
    rng = np.random.default_rng(seed)
    gens = [f"model-{i:02d}" for i in range(12)]
    strength = rng.normal(0, 0.6, len(gens))
    rows, items = [], []
    for v in range(votes):
        a, b = rng.choice(len(gens), 2, replace=False)
        left, right = f"b{v}-a", f"b{v}-b"
        case = f"battle{v}"
        items += [
            (left, left, case, f"{case}/{gens[a]}", gens[a], None),
            (right, right, case, f"{case}/{gens[b]}", gens[b], None),
        ]
        p_left = 1 / (1 + np.exp(strength[b] - strength[a]))
        u = rng.random()
        choice = "both" if u < 0.08 else "left" if rng.random() < p_left else "right"
        rows.append((f"p{v}", case, left, right, gens[a], gens[b], f"voter{v}", choice, None))
    return StudyFrames(
        "arena",
        load_rubric(REPO / "rubrics" / "ui_mockup.toml"),
        items=pd.DataFrame(items, columns=ITEM_COLUMNS),
        pair_votes=pd.DataFrame(rows, columns=PAIR_COLUMNS),
    )


def main() -> int:
    from annotator.stats.report_model import build_report

    ap = argparse.ArgumentParser()
    ap.add_argument("--votes", type=int, default=2061)
    ap.add_argument("--n-boot", type=int, default=1000)
    a = ap.parse_args()
    frames = arena_frames(a.votes)
    t0 = time.perf_counter()
    report = build_report(frames, n_boot=a.n_boot, seed=0)
    took = time.perf_counter() - t0
    size = len(json.dumps(report, default=str).encode())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{a.votes} votes from {a.votes} raters, n_boot {a.n_boot}: report {took:.1f} s, "
        f"JSON {size / 1e6:.2f} MB, peak RSS {peak:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
