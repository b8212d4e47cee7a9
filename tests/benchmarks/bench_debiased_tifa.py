"""TIFA's human ratings are a census: simulate the human sample by drawing subsets, and check
that the debiased figures cover the full-census human figure (validity.md, section H, TIFA).

    PYTHONPATH=$PWD python tests/benchmarks/bench_debiased_tifa.py [--draws 500] [--n 40]

The reference study (tests/reference_reports.py) is built once; each draw records a uniform
sample of n of the 160 items per generator (domain/sampling.py, seeded by the draw) and reads
the report's debiased section (stats/debiased.py) from the same frames. The census figure is
each generator's mean faithfulness over all 160 items from every human (what the generator
section publishes). Every judge: the two TIFA VQA judges (0-1 scores) and CLIPScore, all off
the rubric's 1-5 scale: PPI corrects them anyway (lambda rescales them).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reference_reports import build  # noqa: E402

from annotator.domain.sampling import draw_sample  # noqa: E402
from annotator.services.reporting import study_frames  # noqa: E402
from annotator.stats.answers import human_answers, item_table, judge_answers  # noqa: E402
from annotator.stats.consensus import metric_specs  # noqa: E402
from annotator.stats.debiased import SAMPLE_SETTING, debiased_section  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--n", type=int, default=40)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        study = build("tifa", Path(tmp))
        try:
            frames = study_frames(study)
        finally:
            study.close()
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    judged = judge_answers(frames, specs, items)
    key = "faithfulness"
    per_item = human[human["metric"] == key].groupby("idx")["code"].mean()
    census = (
        items.set_index("idx").join(per_item.rename("y")).groupby("generator")["y"].mean().to_dict()
    )
    live = list(
        zip(range(len(items)), items["item_id"], items["generator"], items["case_id"], strict=True)
    )
    hits: dict[str, list[int]] = {}
    widths: dict[str, list[tuple[float, float]]] = {}
    t0 = time.time()
    for d in range(a.draws):
        sample = draw_sample(live, n=a.n, share=None, seed=d, before=None, created_at="bench")
        sec = debiased_section(
            items, human, judged, specs, {SAMPLE_SETTING: sample}, min_labelled=10
        )
        for judge, jd in sec["judges"].items():
            for gen, figs in jd["by_generator"].items():
                fig = figs[key]
                ppi, hum = fig["ppi"], fig["humans_only"]
                hits.setdefault(judge, []).append(int(ppi["low"] <= census[gen] <= ppi["high"]))
                widths.setdefault(judge, []).append(
                    (ppi["high"] - ppi["low"], hum["high"] - hum["low"])
                )
    print(
        f"{a.draws} draws of {a.n} of 160 items per generator, 5 generators ({time.time() - t0:.0f} s)"
    )
    print("| judge | covers the census figure | mean width PPI | humans only | ratio |")
    print("|---|---|---|---|---|")
    for judge in sorted(hits):
        h = np.array(hits[judge])
        w = np.array(widths[judge])
        print(
            f"| {judge} | {h.mean():.1%} of {len(h)} | {w[:, 0].mean():.3f} | "
            f"{w[:, 1].mean():.3f} | {w[:, 0].mean() / w[:, 1].mean():.3f} |"
        )


if __name__ == "__main__":
    main()
