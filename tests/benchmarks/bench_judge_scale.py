"""The judge side at scale: `build_report` on 1,000,000 judge scores beside 10,000 human labels.

    python tests/benchmarks/bench_judge_scale.py [--items-per-generator 50000] [--sample 250]

With the debiased and certified figures the judge scores every item and humans a random sample:
4 generators x 50,000 items, 5 metrics of the ui_mockup rubric scored by one judge with a stated
confidence (1,000,000 judge scores), and a uniform random sample of 250 items per generator
answered by two raters on every metric (10,000 human labels), recorded as `human_sample`.
Prints the wall time and peak memory of the whole report and the time of each section
(cProfile's cumulative time of the function that builds it, in a second, profiled run).
Target (tests/benchmarks/README.md): under 10 s and 1 GB on the project's machine.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from annotator.ingest.rubrics import load_rubric  # noqa: E402
from annotator.stats.frames import StudyFrames  # noqa: E402
from annotator.stats.report_model import build_report  # noqa: E402

GENERATORS = ("gen-a", "gen-b", "gen-c", "gen-d")
# the functions that build each part of the report (cumulative time in the profiled run)
SECTIONS = {
    "metric_section": "per-metric agreement, judges vs humans",
    "judge_alt_tests": "alternative-annotator test",
    "contradictions": "item findings",
    "rater_section": "raters",
    "run": "the shared item bootstrap",
    "rater_competence": "rater competence (MACE, Dawid-Skene)",
    "systematic": "systematic findings",
    "generator_section": "generators",
    "debiased_figures": "debiased (PPI++) figures",
    "certify": "certified judging",
    "build_summary": "summary",
    "jsonable": "JSON form",
}


def frames(per_generator: int, sample: int, seed: int = 0) -> StudyFrames:
    rng = np.random.default_rng(seed)
    rubric = load_rubric(ROOT / "rubrics" / "ui_mockup.toml")
    n = per_generator * len(GENERATORS)
    gen = np.repeat(np.arange(len(GENERATORS)), per_generator)
    case = np.tile(np.arange(per_generator), len(GENERATORS)) // 5  # 5 items a case and generator
    item_ids = np.array([f"it{i:07d}" for i in range(n)])
    items = pd.DataFrame(
        {
            "item_id": item_ids,
            "display_code": [f"D{i:07d}" for i in range(n)],
            "case_id": [f"case{c:05d}" for c in case],
            "cell_id": [f"cell{c:05d}" for c in case],
            "generator": np.array(GENERATORS)[gen],
            "slice": None,
        }
    )
    q = rng.normal(0, 1, n) + np.linspace(-0.6, 0.6, len(GENERATORS))[gen]
    tags = next(m for m in rubric.metrics if m.kind == "tags").options

    def answers(noise: np.ndarray) -> dict[str, list]:
        pick = (
            rng.random((len(noise[0]), len(tags)))
            < (1 / (1 + np.exp(2.5 + 1.5 * noise[4])))[:, None]
        )
        return {
            "instruction_following": list(np.where(noise[0] > -0.8, "PASS", "FAIL")),
            "text_rendering": list(np.where(noise[1] > -0.5, "PASS", "FAIL")),
            "layout_hierarchy": list(np.clip(np.rint(2.8 + 1.1 * noise[2]), 0, 5).astype(int)),
            "ui_affordance": list(np.clip(np.rint(3.0 + 0.9 * noise[3]), 0, 5).astype(int)),
            "failure_tags": [tuple(t for t, p in zip(tags, r, strict=True) if p) for r in pick],
        }

    judge_noise = q[None, :] + rng.normal(0.15, 0.6, (5, n))  # a slightly lenient judge
    confidence = np.clip(1 - np.abs(rng.normal(0, 0.25, n)), 0.5, 1.0)
    judge = pd.concat(
        [
            pd.DataFrame(
                {
                    "item_id": item_ids,
                    "judge": "judge-a",
                    "metric": key,
                    "value": vals,
                    "reason": None,
                    "confidence": confidence,
                }
            )
            for key, vals in answers(judge_noise).items()
        ],
        ignore_index=True,
    )
    drawn = np.concatenate(
        [
            rng.choice(np.flatnonzero(gen == g), sample, replace=False)
            for g in range(len(GENERATORS))
        ]
    )
    human = []
    for r in range(2):
        noise = q[None, drawn] + rng.normal(0, 0.7, (5, len(drawn)))
        base = {
            "item_id": item_ids[drawn],
            "rater": f"rater{r}",
            "reason": None,
            "created_at": None,
            "session_id": f"s{r}",
            "position": np.arange(len(drawn)),
        }
        for key, vals in answers(noise).items():
            human.append(pd.DataFrame({**base, "metric": key, "value": vals}))
    rate = sample / per_generator
    settings = {
        "human_sample": {
            "items": {str(i): rate for i in item_ids[drawn]},
            "rates": dict.fromkeys(GENERATORS, rate),
            "seed": seed,
            "design": "uniform",
        }
    }
    return StudyFrames(
        "judge-scale",
        rubric,
        items=items,
        judgements=pd.concat(human, ignore_index=True),
        judge_scores=judge,
        settings=settings,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items-per-generator", type=int, default=50_000)
    ap.add_argument("--sample", type=int, default=250)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    f = frames(args.items_per_generator, args.sample)
    print(
        f"{len(f.judge_scores):,} judge scores, {len(f.judgements):,} human labels, "
        f"{len(f.items):,} items"
    )
    t0 = time.perf_counter()
    build_report(f, n_boot=args.n_boot, seed=0)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"build_report {wall:.1f} s, peak RSS {peak:.0f} MB")
    prof = cProfile.Profile()
    prof.enable()
    build_report(f, n_boot=args.n_boot, seed=0)
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    cum: dict[str, float] = {}
    for (path, _line, name), (_cc, _nc, _tt, ct, _callers) in stats.items():
        if "annotator" in path and name in SECTIONS:
            cum[name] = max(cum.get(name, 0.0), ct)
    for name, what in SECTIONS.items():
        if name in cum:
            print(f"  {what:45s} {cum[name]:6.2f} s")


if __name__ == "__main__":
    main()
