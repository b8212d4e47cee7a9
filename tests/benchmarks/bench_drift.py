"""CUSUM run lengths for the drift defaults: exact (Markov chain) plus a simulation cross-check.

Setup (ui_mockup-like): 2 gates + 2 scales 0-5 watched at once, each with an
up and a down CUSUM. Reference scales drawn from P_REF (mostly 1..4), gate
references PASS with probability P_PASS. Run from the repository root:
    python drift_run_lengths.py   (this block of tests/benchmarks/drift.md saved to a file)
"""
import platform
import time

import numpy as np

from annotator.stats.drift import H, K, first_alarm

P_REF = np.array([.03, .20, .27, .27, .20, .03])  # reference scale values 0..5
P_PASS = 0.6                                       # share of gate references that are PASS
STEADY = (.15, .70, .15)                           # P(deviation = -1, 0, +1) of a steady rater
NOISY = (.25, .50, .25)


def scale_dev(noise=STEADY, shift=0, clip=True):
    """{deviation: p} of answer - reference on a 0-5 scale (answer = ref + noise + shift, clipped)."""
    out: dict[int, float] = {}
    for ref, pr in enumerate(P_REF):
        for e, pe in zip((-1, 0, 1), noise, strict=True):
            ans = ref + e + shift
            if clip:
                ans = min(max(ans, 0), 5)
            out[ans - ref] = out.get(ans - ref, 0) + pr * pe
    return out


def gate_dev(flip=.15):
    return {-1: P_PASS * flip, 1: (1 - P_PASS) * flip, 0: 1 - flip}


def chain(dist, k, h):
    """Transition matrix of (S+, S-) on the half-point grid 0..h plus one absorbing alarm state."""
    grid = np.arange(0, h + 1e-9, 0.5)
    n = len(grid)
    T = np.zeros((n * n + 1, n * n + 1))
    for i, sp in enumerate(grid):
        for j, sm in enumerate(grid):
            for d, p in dist.items():
                a, b = max(0, sp + d - k), max(0, sm - d - k)
                dst = n * n if (a > h or b > h) else int(round(a * 2)) * n + int(round(b * 2))
                T[i * n + j, dst] += p
    T[n * n, n * n] = 1
    return T


def survival(phases, steps, k, h):
    """P(no alarm after t steps), t = 1..steps; phases = [(from_step, distribution), ...]."""
    mats = [(s, chain(d, k, h)) for s, d in phases]
    v = np.zeros(len(mats[0][1]))
    v[0] = 1
    out = []
    for t in range(steps):
        v = v @ [m for s, m in mats if s <= t][-1]
        out.append(1 - v[-1])
    return np.array(out)


def arl(dist, k, h):
    Q = chain(dist, k, h)[:-1, :-1]
    return np.linalg.solve(np.eye(len(Q)) - Q, np.ones(len(Q)))[0]


def row(k, h):
    st_s, st_g = scale_dev(clip=False), gate_dev()
    fa = 1 - survival([(0, st_s)], 100, k, h)[-1] ** 2 * survival([(0, st_g)], 100, k, h)[-1] ** 2
    fa_noisy = 1 - (survival([(0, scale_dev(NOISY, clip=False))], 100, k, h)[-1] ** 2
                    * survival([(0, gate_dev(.25))], 100, k, h)[-1] ** 2)
    arl_sys = 1 / (2 / arl(st_s, k, h) + 2 / arl(st_g, k, h))
    res = {"k": k, "h": h, "arl0_scale": arl(st_s, k, h), "arl0_system": arl_sys,
           "fa100": fa, "fa100_noisy": fa_noisy}
    for label, n_shifted in (("both", 2), ("one", 1)):
        horizon = 300
        sh = survival([(0, scale_dev()), (30, scale_dev(shift=1))], horizon, k, h)
        ins = survival([(0, scale_dev())], horizon, k, h)
        g = survival([(0, st_g)], horizon, k, h)
        total = sh ** n_shifted * ins ** (2 - n_shifted) * g ** 2
        res[f"detect15_{label}"] = total[29] - total[44]
        cond = total[29:] / total[29]
        pm = cond[:-1] - cond[1:]          # P(first flag on the d-th shifted anchor), d = 1..
        d = np.arange(1, len(pm) + 1)
        cdf = np.cumsum(pm)
        res[f"delay_mean_{label}"] = float(np.sum(d * pm) / cdf[-1])
        res[f"delay_med_{label}"] = int(d[np.searchsorted(cdf, .5)])
        res[f"delay_p90_{label}"] = int(d[np.searchsorted(cdf, .9)])
    return res


def simulate(k, h, runs=20000, seed=1):
    rng = np.random.default_rng(seed)

    def gate(steps):
        flips = rng.random((runs, steps)) < .15
        return flips * np.where(rng.random((runs, steps)) < P_PASS, -1, 1)

    def scale(steps, shift_at=None):
        ref = rng.choice(6, p=P_REF, size=(runs, steps))
        noise = rng.choice([-1, 0, 1], p=STEADY, size=(runs, steps))
        if shift_at is None:
            return noise                   # the steady rater exactly as specified
        shift = np.zeros((runs, steps))
        shift[:, shift_at:] = 1
        return np.clip(ref + noise + shift, 0, 5) - ref

    t0 = time.perf_counter()
    first = np.min([first_alarm(d, k, h)[0] for d in (scale(100), scale(100), gate(100), gate(100))], axis=0)
    fa = float((first < 100).mean())
    first = np.min([first_alarm(d, k, h)[0] for d in (scale(45, 30), scale(45, 30), gate(45), gate(45))], axis=0)
    det = float(((first >= 30) & (first < 45)).mean())
    return fa, det, time.perf_counter() - t0


def main():
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}")
    print("| k | h | ARL0 one scale | ARL0 4 metrics | false flag <=100 (steady) | false flag <=100 (noisier)"
          " | flag 30..44, +1 both scales | delay mean/median/p90 | flag 30..44, +1 one scale"
          " | delay mean/median/p90 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for h in (2.5, 3.0, 3.5, 4.0, 5.0):
        r = row(K, h)
        mark = " **(default)**" if h == H else ""
        print(f"| {K} | {h}{mark} | {r['arl0_scale']:.3g} | {r['arl0_system']:.3g} | {r['fa100']:.2e} | "
              f"{r['fa100_noisy']:.2e} | {r['detect15_both']:.4f} | {r['delay_mean_both']:.1f} / "
              f"{r['delay_med_both']} / {r['delay_p90_both']} | {r['detect15_one']:.4f} | "
              f"{r['delay_mean_one']:.1f} / {r['delay_med_one']} / {r['delay_p90_one']} |")
    fa, det, secs = simulate(K, H)
    print(f"\nsimulation at the default (20000 runs each): false flag within 100 = {fa:.4f}, "
          f"flag at 30..44 = {det:.4f}  ({secs:.1f} s)")


if __name__ == "__main__":
    main()
