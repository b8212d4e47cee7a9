"""Active sampling against uniform (validity.md, model AS): labels for the same interval width,
and the coverage of the interval the report prints.

    PYTHONPATH=$PWD python tests/benchmarks/bench_active.py [--runs 1000] [--n 200] [--big-n 2000]
        [--tau 0.1] [--max-loss 0.03] [--judges "calibrated,unrelated"]
        [--designs "uniform;active, 4 batches"]

One generator of N independent items, a 0/1 figure (the pass rate). The judge answers f on
every item with a stated confidence c that its answer is right; the human answer is f, or its
opposite where the judge is wrong. Judges (the models the code was not written for are the
last three):

- calibrated: c uniform on [0.5, 1], wrong with probability 1 - c;
- mostly sure: 80% of items c in [0.95, 1], 20% in [0.5, 0.8], wrong with probability 1 - c;
- unrelated: c uniform on [0.5, 1], wrong with probability 0.25 whatever c says;
- lopsided unrelated: c as the mostly sure judge's, wrong with probability 0.09 whatever c says
  (a lopsided confidence that means nothing: what an unchecked map would lose most on);
- by generator: wrong with probability 1 - c on a pass and 0.6 (1 - c) on a fail (the error
  depends on what the generator produced, not on c alone);
- over-confident: states c, wrong with probability 2 (1 - c) (a judge claiming 0.9 is right
  80% of the time).

Designs: uniform (n items, simple random sample, as `assign --sample N`); active in one batch
(`--sample N --active`); active in four batches of n/4 (`--batch`), each later batch
recalibrated on the labels of the ones before it (`--max-loss`: the setting active_max_loss).
Each study goes through the report's own path: domain/sampling_active.draw_active, the stored
probabilities read as stats/debiased.debiased_section reads them, stats/debiased._one_figure.
Labels are the items labelled; "labels for the width" is labels x (mean width / uniform's mean
width)^2 over uniform's n, the share of uniform's labels the design needs for uniform's width,
with its 95% interval (delta method over the mean labels, the design's mean width and
uniform's, each from its own studies). Coverage over the studies with an interval, Wilson 95%
intervals.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.stats import norm

from annotator.domain.sampling_active import ACTIVE_MAX_LOSS, draw_active
from annotator.stats.debiased import _one_figure

JUDGES = (
    "calibrated",
    "mostly sure",
    "unrelated",
    "lopsided unrelated",
    "by generator",
    "over-confident",
)
DESIGNS = ("uniform", "active", "active, 4 batches")


def wilson(k: int, n: int) -> tuple[float, float]:
    z = norm.isf(0.025)
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


def population(rng: np.random.Generator, judge: str, big_n: int) -> dict[str, np.ndarray]:
    """One study's items: the judge's answer f, its stated confidence c, the human answer y."""
    if judge in ("mostly sure", "lopsided unrelated"):
        sure = rng.random(big_n) < 0.8
        c = np.where(sure, rng.uniform(0.95, 1.0, big_n), rng.uniform(0.5, 0.8, big_n))
    else:
        c = rng.uniform(0.5, 1.0, big_n)
    f = (rng.random(big_n) < 0.7).astype(float)
    if judge == "unrelated":
        p_wrong = np.full(big_n, 0.25)
    elif judge == "lopsided unrelated":
        p_wrong = np.full(big_n, 0.09)
    elif judge == "by generator":
        p_wrong = np.where(f == 1, 1 - c, 0.6 * (1 - c))
    elif judge == "over-confident":
        p_wrong = np.minimum(1.0, 2 * (1 - c))
    else:
        p_wrong = 1 - c
    wrong = rng.random(big_n) < p_wrong
    y = np.where(wrong, 1 - f, f)
    return {"f": f, "c": c, "y": y, "wrong": wrong.astype(float)}


def one(
    rng: np.random.Generator,
    judge: str,
    design: str,
    n: int,
    big_n: int,
    alpha: float = 0.05,
    tau: float = 0.1,
    max_loss: float = ACTIVE_MAX_LOSS,
) -> tuple[dict, float, int]:
    """One study: the report's figure, the truth (the population's human pass rate), labels."""
    pop = population(rng, judge, big_n)
    ids = [f"i{k}" for k in range(big_n)]
    live = [(k + 1, ids[k], "g", ids[k]) for k in range(big_n)]
    seed = int(rng.integers(2**31))
    if design == "uniform":
        chosen = set(rng.choice(big_n, n, replace=False).tolist())
        pi = np.full(big_n, n / big_n)
        drawn = np.array([k in chosen for k in range(big_n)])
    else:
        unc = {ids[k]: float(1 - pop["c"][k]) for k in range(big_n)}
        batches = 4 if "4 batches" in design else 1
        sample = None
        for _ in range(batches):
            observed = (
                {i: float(pop["wrong"][int(i[1:])]) for i in sample["items"]} if sample else None
            )
            sample = draw_active(
                live,
                unc,
                n=n,
                share=None,
                seed=seed,
                created_at="t",
                batch=n // batches,
                before=sample,
                observed=observed,
                tau=tau,
                max_loss=max_loss,
            )
        assert sample is not None
        probs = {**sample["unsampled"], **sample["items"]}
        pi = np.array([probs[i] for i in ids])
        drawn = np.array([i in sample["items"] for i in ids])
    sub = pd.DataFrame(
        {
            "case_id": ids,
            "f": pop["f"],
            "y": np.where(drawn, pop["y"], np.nan),
            "pi": pi,
            "in_sample": drawn,
        }
    )
    fig = _one_figure(sub, True, 10, alpha, (0.0, 1.0))
    return fig, float(pop["y"].mean()), int(drawn.sum())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--big-n", type=int, default=2000)
    ap.add_argument("--judges", default=",".join(JUDGES))
    ap.add_argument("--tau", type=float, default=0.1, help="the setting active_tau")
    ap.add_argument(
        "--max-loss", type=float, default=ACTIVE_MAX_LOSS, help="the loss budget per batch"
    )
    ap.add_argument("--designs", default=";".join(DESIGNS), help="';'-separated")
    a = ap.parse_args()
    rng = np.random.default_rng(20261205)
    print(f"N {a.big_n}, n {a.n}, runs {a.runs}, tau {a.tau}")
    print("| judge | design | labels | mean width | labels for uniform's width | coverage |")
    print("|---|---|---|---|---|---|")
    designs = a.designs.split(";")
    if "uniform" not in designs:
        designs.insert(0, "uniform")  # the baseline every ratio is against
    for judge in a.judges.split(","):
        base: tuple[float, float] | None = None  # uniform's mean width, its relative se
        for design in designs:
            widths, labels, covered, printed = [], [], 0, 0
            for _ in range(a.runs):
                fig, truth, k = one(
                    rng, judge, design, a.n, a.big_n, tau=a.tau, max_loss=a.max_loss
                )
                labels.append(k)
                ppi = fig.get("ppi") or {}
                if ppi.get("low") is None:
                    continue
                printed += 1
                widths.append(ppi["high"] - ppi["low"])
                covered += ppi["low"] <= truth <= ppi["high"]
            w = float(np.mean(widths))
            rel_w = float(np.std(widths, ddof=1)) / w / np.sqrt(len(widths))
            rel_l = float(np.std(labels, ddof=1)) / float(np.mean(labels)) / np.sqrt(a.runs)
            if design == "uniform":
                base = (w, rel_w)
            assert base is not None
            need = float(np.mean(labels)) * (w / base[0]) ** 2 / a.n
            # the ratio's 95% interval (delta method; the designs' studies are independent)
            rel = np.sqrt(
                rel_l**2 + 4 * rel_w**2 + (4 * base[1] ** 2 if design != "uniform" else 0)
            )
            ratio = f"{need:.1%}" + (
                f" [{need * (1 - 1.96 * rel):.1%}, {need * (1 + 1.96 * rel):.1%}]"
                if design != "uniform"
                else ""
            )
            lo, hi = wilson(covered, printed)
            print(
                f"| {judge} | {design} | {np.mean(labels):.1f} | {w:.4f} | {ratio} | "
                f"{covered / printed:.1%} [{lo:.1%}, {hi:.1%}] |"
                + (f" ({printed} of {a.runs} with an interval)" if printed < a.runs else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()
