"""How often the summary's verdicts fire, by simulation (model V).

    python tests/benchmarks/bench_verdicts.py --runs 12 --sys-runs 300

Point 1 and 7 (through build_report, the report the CLI writes): per judge kind and study size,
the share of (study, metric) verdicts that are "replaceable", "inside_human_spread" and
"not_trustworthy", over the gates, tags and the verdict (nominal metrics) and the scales.
Point 2 (the report's own test functions): the share of studies with any systematic finding
(Benjamini-Hochberg over the 12 metrics) for an exchangeable judge with personal offsets of sd
0, 0.15 and 0.25, the per-metric rate on layout_hierarchy, and a +0.5 lenient judge caught; the
humans' offset spread pooled over the metrics of one scale, as the report does it.
Rates with their Wilson 95% interval; the output is the markdown of validity.md's section.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from verdict_model import UI, draw, frames, long_codes  # noqa: E402

from annotator.stats.consensus import metric_specs  # noqa: E402
from annotator.stats.findings import (  # noqa: E402
    benjamini_hochberg,
    held_out_difference,
    offset_pools,
)
from annotator.stats.report_model import build_report  # noqa: E402

SPECS = {s.key: s for s in metric_specs(UI) if s.directed}
POOL = True  # the offset spread pooled over the metrics of one scale (findings.offset_pools)


def wilson(k: int, n: int) -> str:
    if n == 0:
        return "n/a"
    z = 1.959964
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return f"{100 * p:.1f}% [{100 * max(0, c - h):.1f}%, {100 * min(1, c + h):.1f}%]"


def verdict_rates(runs: int, sizes: list[int], judges: list[str]) -> list[str]:
    lines = [
        "| judge | items | replaceable | inside_human_spread | not_trustworthy | undetermined "
        "| (study, metric) verdicts |",
        "|---|---|---|---|---|---|---|",
    ]
    for judge in judges:
        for n in sizes:
            counts = {"replaceable": 0, "inside_human_spread": 0, "not_trustworthy": 0}
            total = 0
            for s in range(runs):
                humans, j = draw(np.random.default_rng([s, n, len(judge)]), n, judge)
                rep = build_report(frames(humans, j), n_boot=200, n_perm=10, seed=s)
                for key, v in rep["summary"]["judges"]["j"].items():
                    if key == "text":
                        continue  # the judge's sentence, not a metric
                    total += 1
                    if v["verdict"] in counts:
                        counts[v["verdict"]] += 1
            und = total - sum(counts.values())
            lines.append(
                f"| {judge} | {n} | {wilson(counts['replaceable'], total)} | "
                f"{wilson(counts['inside_human_spread'], total)} | "
                f"{wilson(counts['not_trustworthy'], total)} | {wilson(und, total)} | {total} |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    return lines


def systematic(humans: list, judge: dict) -> tuple[list[tuple[str, str]], float]:
    keys, ps, signs, p_layout = [], [], [], 1.0
    frames = {key: long_codes(humans, key) for key in SPECS}
    pools = offset_pools(list(SPECS.values()), frames) if POOL else {}
    for key, spec in SPECS.items():
        r = held_out_difference(
            spec,
            frames[key],
            pd.Series(judge[key].astype(float)),
            n_relabel=999,
            pool=pools.get(key),
        )
        keys.append(key)
        ps.append(r["p_value"])
        signs.append(np.sign(r["estimate"]))
        if key == "layout_hierarchy":
            p_layout = r["p_value"]
    q = benjamini_hochberg(ps)
    found = [
        (k, "up" if sg > 0 else "down")
        for k, qq, sg in zip(keys, q, signs, strict=True)
        if qq < 0.05
    ]
    return found, p_layout


def systematic_rates(runs: int) -> list[str]:
    lines = [
        "| judge | offset sd | studies with any systematic finding | layout_hierarchy p < 0.05 "
        "| studies |",
        "|---|---|---|---|---|",
    ]
    for sd in (0.0, 0.15, 0.25):
        any_hit = layout = 0
        for s in range(runs):
            found, p = systematic(*draw(np.random.default_rng([s, 7]), 150, offset_sd=sd))
            any_hit += bool(found)
            layout += p < 0.05
        lines.append(
            f"| exchangeable | {sd:g} | {wilson(any_hit, runs)} | {wilson(layout, runs)} | {runs} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    for k in (3, 5, 8):  # the power depends on how many humans estimate their own spread
        caught = layout = 0
        for s in range(runs):
            humans, judge = draw(np.random.default_rng([s, 8]), 150, "lenient", n_humans=k)
            found, p = systematic(humans, judge)
            caught += ("layout_hierarchy", "up") in found
            layout += p < 0.05
        lines.append(
            f"| lenient +0.5, {k} humans (caught) | 0 | {wilson(caught, runs)} | "
            f"{wilson(layout, runs)} | {runs} |"
        )
        print(lines[-1], file=sys.stderr, flush=True)
    for k in (5, 8):
        any_hit = 0
        for s in range(runs):
            humans, judge = draw(np.random.default_rng([s, 9]), 150, n_humans=k, offset_sd=0.25)
            any_hit += bool(systematic(humans, judge)[0])
        lines.append(f"| exchangeable, {k} humans | 0.25 | {wilson(any_hit, runs)} | | {runs} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=12, help="studies per judge and size (reports)")
    ap.add_argument("--sys-runs", type=int, default=300, help="studies per systematic cell")
    ap.add_argument("--sizes", default="30,100,1000")
    ap.add_argument("--judges", default="constant,majority,random,noisier,exchangeable")
    ap.add_argument("--skip-reports", action="store_true")
    args = ap.parse_args()
    t0 = time.time()
    out = []
    if not args.skip_reports:
        out += verdict_rates(
            args.runs, [int(x) for x in args.sizes.split(",")], args.judges.split(",")
        )
        out.append("")
    out += systematic_rates(args.sys_runs)
    out.append(f"\n({time.time() - t0:.0f} s)")
    print("\n".join(out))


if __name__ == "__main__":
    main()
