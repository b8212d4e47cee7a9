"""Certified judging on real data: TIFA v1.0 with the DSG raters (tests/data/tifa), the figures of
docs/statistics.md ("Certified judging", real data).

    python tests/benchmarks/bench_certified_tifa.py [--splits 1000]

The question is a gate: is the image faithful to the prompt (a rating of 4 or 5 on the 1-5
scale)? The humans: the 5 DSG raters, clear consensus as the report's rule (at least 2 answers,
80% the same). The judges: the TIFA scores of mPLUG-large and BLIP-2 (the share of the item's
generated questions the VQA model answers right): PASS when at least half are, the confidence
the share on the side it took, max(s, 1 - s). Per split, a random calibration set of n of the
800 items (the random human sample; items without a clear consensus left out, as the report
does), the threshold from it, and on the other items: the share with confidence at or above the
threshold (coverage) and the agreement with the raters' clear consensus among them (realized).
Each judge alone, then the cascade mPLUG -> BLIP-2 (delta split).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from annotator.domain.clear_consensus import CLEAR_SHARE, MIN_HUMANS  # noqa: E402
from annotator.stats.selective import cascade, pac_threshold  # noqa: E402

DATA = ROOT / "tests" / "data" / "tifa"
JUDGES = ("tifa_mplug-large", "tifa_blip2-flant5xl")


def load() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(clear consensus per item, its value PASS=1, confidence (judges x items), disagree)."""
    r = pd.read_csv(DATA / "ratings_dsg.csv")
    r["pass"] = (r["value"] >= 4).astype(float)
    g = r.groupby("item_id")["pass"].agg(["mean", "count"])
    share = np.maximum(g["mean"], 1 - g["mean"])
    clear = (g["count"] >= MIN_HUMANS) & (share >= CLEAR_SHARE)
    j = pd.read_csv(DATA / "judge.csv")
    items = g.index
    conf, wrong = [], []
    for name in JUDGES:
        s = j[j["judge"] == name].set_index("item_id")["value"].reindex(items).to_numpy()
        says = s >= 0.5
        conf.append(np.maximum(s, 1 - s))
        wrong.append(says != (g["mean"].to_numpy() >= 0.5))
    return clear.to_numpy(), (g["mean"] >= 0.5).to_numpy(), np.vstack(conf), np.vstack(wrong)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", type=int, default=1000)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=0.1)
    a = ap.parse_args()
    clear, _value, conf, wrong = load()
    n_items = len(clear)
    print(
        f"{n_items} items, {int(clear.sum())} with a clear consensus of the 5 DSG raters; "
        f"overall agreement on them: "
        + ", ".join(f"{n} {1 - wrong[k][clear].mean():.3f}" for k, n in enumerate(JUDGES))
    )
    print()
    print(
        "| judge | calibration items | splits accepting | threshold (median) | coverage | "
        "realized agreement | splits with realized >= 1 - alpha [95%] |"
    )
    print("|---|---|---|---|---|---|---|")
    for n_cal in (200, 400):
        for which in (*range(len(JUDGES)), "cascade"):
            rng = np.random.default_rng([7, n_cal])
            got = {"acc": 0, "t": [], "cov": [], "real": [], "ok": 0}
            for _ in range(a.splits):
                cal = np.zeros(n_items, dtype=bool)
                cal[rng.choice(n_items, n_cal, replace=False)] = True
                use = cal & clear
                test = ~cal
                if which == "cascade":
                    c = cascade(
                        conf[:, use], wrong[:, use], conf[:, test], alpha=a.alpha, delta=a.delta
                    )
                    stage = c.test_stage
                    accepted = stage >= 0
                    w = np.where(stage == 0, wrong[0][test], wrong[1][test])
                    t = c.stages[0].threshold
                else:
                    t = pac_threshold(
                        conf[which][use], wrong[which][use], alpha=a.alpha, delta=a.delta
                    ).threshold
                    accepted = (
                        conf[which][test] >= t
                        if t is not None
                        else np.zeros(test.sum(), dtype=bool)
                    )
                    w = wrong[which][test]
                if not accepted.any():
                    got["ok"] += 1  # abstaining keeps the guarantee
                    continue
                got["acc"] += 1
                judged = accepted & clear[test]
                realized = 1 - w[judged].mean()
                got["t"].append(t if t is not None else np.nan)
                got["cov"].append(accepted.mean())
                got["real"].append(realized)
                got["ok"] += realized >= 1 - a.alpha
            name = "cascade mPLUG -> BLIP-2" if which == "cascade" else JUDGES[which]
            ci = binomtest(got["ok"], a.splits).proportion_ci(0.95, method="exact")
            acc = got["acc"]
            print(
                f"| {name} | {n_cal} | {acc / a.splits:.1%} | "
                f"{np.nanmedian(got['t']) if acc else float('nan'):.3f} | "
                f"{np.mean(got['cov']) if acc else 0:.1%} | "
                f"{np.mean(got['real']) if acc else float('nan'):.3f} | "
                f"{got['ok'] / a.splits:.1%} [{ci.low:.1%}, {ci.high:.1%}] |"
            )


if __name__ == "__main__":
    main()
