"""Coverage of the debiased (PPI++) generator figures by simulation (validity.md, model H).

    PYTHONPATH=$PWD python tests/benchmarks/bench_debiased.py [--runs 1000] [--quick]

Model H: one generator; an item's pass probability p = sigmoid(0.4 + u_case + e_item), case
effect u ~ N(0, 0.8) (clustered designs: 40 cases of equal size; unclustered: every item its
own case), item effect e ~ N(0, 1); the human answer Y ~ Bernoulli(p) (averaged over two
humans per item in the clustered design, the judges following the first). Judges: `unbiased` (Y with probability 0.8, else an
independent Bernoulli(p) draw: E f = E Y); `lenient0.1` / `lenient0.3` (the unbiased judge
with FAIL turned to PASS so its rate is 0.1 / 0.3 higher); `noisy` (Y with probability 0.3,
else a coin); `constant` (always PASS). N = 10 n items are judged, n rated by humans: a
uniform sample without replacement (`uniform`), or Poisson sampling with probabilities that
follow the judge's uncertainty (`active`: pi proportional to 1 - |2c - 1| + 0.1 for a
stated confidence c, scaled to n expected). The target is the superpopulation pass rate
(every case weighted equally), the Monte Carlo mean over 4M draws.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import norm

from annotator.stats.debiased import ppi_mean

SMALL = False  # --small-sample: the report's interval (t on n-1 df, n/(n-1))
JUDGES = ("unbiased", "lenient0.1", "lenient0.3", "noisy", "constant")


def truth(rng: np.random.Generator) -> float:
    u = rng.normal(0, 0.8, 4_000_000)
    e = rng.normal(0, 1.0, 4_000_000)
    return float(np.mean(1 / (1 + np.exp(-(0.4 + u + e)))))


def draw(rng: np.random.Generator, n_items: int, clustered: bool, judge: str, p_rate: float):
    """Items: case code, human value Y (item mean), judge value f, judge confidence."""
    k = 40 if clustered else n_items
    case = np.repeat(np.arange(k), -(-n_items // k))[:n_items]
    u = rng.normal(0, 0.8, k)[case]
    p = 1 / (1 + np.exp(-(0.4 + u + rng.normal(0, 1.0, n_items))))
    n_h = 2 if clustered else 1
    answers = rng.binomial(1, p[:, None], (n_items, n_h)).astype(float)
    y, y1 = answers.mean(axis=1), answers[:, 0]  # the judge follows the first human
    if judge == "constant":
        f = np.ones(n_items)
    elif judge == "noisy":
        f = np.where(rng.random(n_items) < 0.3, y1, rng.binomial(1, 0.5, n_items))
    else:
        f = np.where(rng.random(n_items) < 0.8, y1, rng.binomial(1, p))
        if judge.startswith("lenient"):
            d = float(judge[len("lenient") :])
            q = d / (1 - p_rate)
            f = np.maximum(f, rng.binomial(1, min(q, 1.0), n_items))
    conf = np.clip(np.abs(f - p) + rng.normal(0, 0.1, n_items), 0, 1)
    return case, y, f.astype(float), conf


def one(rng, n, clustered, judge, sampling, p_rate):
    N = 10 * n
    case, y, f, conf = draw(rng, N, clustered, judge, p_rate)
    if sampling == "uniform":
        lab = np.zeros(N, bool)
        lab[rng.choice(N, n, replace=False)] = True
        w_l = w_u = None
    else:
        s = 1 - np.abs(2 * conf - 1) + 0.1
        pi = np.clip(s * n / s.sum(), 0.01, 0.95)
        lab = rng.random(N) < pi
        w_l, w_u = 1 / pi[lab], 1 / (1 - pi[~lab])
    cl = case if clustered else None
    res = ppi_mean(
        y[lab],
        f[lab],
        f[~lab],
        w_labelled=w_l,
        w_unlabelled=w_u,
        cluster_labelled=None if cl is None else cl[lab],
        cluster_unlabelled=None if cl is None else cl[~lab],
        small_sample=SMALL,
    )
    return res


def wilson(k: int, n: int) -> tuple[float, float]:
    z = norm.isf(0.025)
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return c - h, c + h


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--sizes", default="50,200,1000")
    ap.add_argument("--small-sample", action="store_true")
    ap.add_argument(
        "--designs", default="independent, uniform;cases, uniform;independent, active;cases, active"
    )
    a = ap.parse_args()
    global SMALL
    SMALL = a.small_sample
    rng = np.random.default_rng(20261201)
    theta = truth(rng)
    print(f"truth {theta:.4f}; runs {a.runs}")
    print(
        "| design | judge | n | PPI coverage [Wilson] | humans-only | width PPI / humans | lambda | eff. labels | humans-only width at eff. labels / PPI width |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for design in a.designs.split(";"):
        clustered = design.startswith("cases")
        sampling = design.split(", ")[1]
        for judge in JUDGES:
            for n in [int(s) for s in a.sizes.split(",")]:
                t0 = time.time()
                cov = cov_h = 0
                widths, widths_h, lams, effs = [], [], [], []
                for _ in range(a.runs):
                    r = one(rng, n, clustered, judge, sampling, theta)
                    cov += r.ppi.low <= theta <= r.ppi.high
                    cov_h += r.humans.low <= theta <= r.humans.high
                    widths.append(r.ppi.high - r.ppi.low)
                    widths_h.append(r.humans.high - r.humans.low)
                    lams.append(r.lam)
                    effs.append(r.effective_labels)
                lo, hi = wilson(cov, a.runs)
                eff = float(np.median(effs))
                # the check of the effective-labels figure: humans alone on that many items
                # (uniform, same design) give an interval as wide as PPI's
                check = ""
                if sampling == "uniform" and judge != "constant" and eff >= 2:
                    n2 = int(round(eff))
                    w2 = []
                    for _ in range(max(100, a.runs // 4)):
                        case, y, f, _c = draw(rng, max(10 * n, n2 + 1), clustered, judge, theta)
                        pick = rng.choice(len(y), n2, replace=False)
                        r2 = ppi_mean(
                            y[pick],
                            f[pick],
                            f[:0],
                            cluster_labelled=case[pick] if clustered else None,
                            cluster_unlabelled=case[:0] if clustered else None,
                        )
                        w2.append(r2.humans.high - r2.humans.low)
                    check = f"{np.mean(w2) / np.mean(widths):.3f}"
                print(
                    f"| {design} | {judge} | {n} | {cov / a.runs:.1%} [{lo:.1%}, {hi:.1%}] | "
                    f"{cov_h / a.runs:.1%} | {np.mean(widths) / np.mean(widths_h):.3f} | "
                    f"{np.mean(lams):.2f} | {eff:.0f} | {check} |  ({time.time() - t0:.1f} s)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
