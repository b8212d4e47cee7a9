"""Model C: judges with confidences, to check certified judging's guarantees by simulation
(tests/unit/test_certified_validity.py, tests/benchmarks/bench_certified.py, validity.md).

Every design draws, per item, the judge's stated confidence and whether it disagrees with the
humans' consensus, from laws the code was not written against. The population is a fixed pool
of POOL items per design (seeded); a run draws a fresh calibration set, searches the threshold,
and reads the *realized* disagreement among the pool's items at or above it (the pool stands
for the fresh items: its standard error is under 0.002 where a threshold accepts 20,000 items).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from annotator.stats.selective import cascade, conformal_alignment, pac_threshold

POOL = 200_000
Draw = Callable[[np.random.Generator, int], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _calibrated(rng: np.random.Generator, n: int):
    c = rng.uniform(0.5, 1.0, n)
    return c, rng.random(n) >= c, np.zeros(n, dtype=np.int64)


def _overconfident(rng: np.random.Generator, n: int):
    # says 0.7-1.0, is right 50-85% of the time
    c = rng.uniform(0.7, 1.0, n)
    right = 0.5 + (c - 0.7) / 0.3 * 0.35
    return c, rng.random(n) >= right, np.zeros(n, dtype=np.int64)


def _underconfident(rng: np.random.Generator, n: int):
    # says 0.5-0.8, is right 75-100% of the time
    c = rng.uniform(0.5, 0.8, n)
    right = 0.75 + (c - 0.5) / 0.3 * 0.25
    return c, rng.random(n) >= right, np.zeros(n, dtype=np.int64)


def _by_generator(rng: np.random.Generator, n: int):
    # three generators, equally many items; the judge is right c, c - 0.15 and c + 0.05 of the
    # time on them, its confidence blind to which
    g = rng.integers(0, 3, n)
    c = rng.uniform(0.5, 1.0, n)
    right = np.clip(c + np.array([0.0, -0.15, 0.05])[g], 0.0, 1.0)
    return c, rng.random(n) >= right, g


def _chance(rng: np.random.Generator, n: int):
    c = rng.uniform(0.0, 1.0, n)
    return c, rng.random(n) < 0.5, np.zeros(n, dtype=np.int64)


def _imbalanced(rng: np.random.Generator, n: int):
    # 95% of the items pass; the judge says PASS to 99% of them and to 60% of the failing ones,
    # with a confidence that rises a little where it is right (Beta(6, 1) vs Beta(4, 1))
    fails = rng.random(n) < 0.05
    says_pass = np.where(fails, rng.random(n) < 0.6, rng.random(n) < 0.99)
    wrong = says_pass == fails
    c = np.where(wrong, rng.beta(4, 1, n), rng.beta(6, 1, n))
    return c, wrong, fails.astype(np.int64)


@dataclass(frozen=True)
class Design:
    name: str
    what: str
    draw: Draw


DESIGNS = (
    Design("calibrated", "confidence U(0.5, 1), right with probability = confidence", _calibrated),
    Design("overconfident", "says 0.7-1.0, right 50-85% (linear in it)", _overconfident),
    Design("underconfident", "says 0.5-0.8, right 75-100% (linear in it)", _underconfident),
    Design(
        "by generator",
        "3 generators; right c, c - 0.15, c + 0.05 of the time, confidence c ~ U(0.5, 1) blind "
        "to the generator",
        _by_generator,
    ),
    Design("chance", "confidence U(0, 1), right half the time whatever it says", _chance),
    Design(
        "imbalanced",
        "95% PASS; says PASS to 99% of passes and 60% of fails; confidence Beta(6, 1) where "
        "right, Beta(4, 1) where wrong",
        _imbalanced,
    ),
)
SIZES = (50, 200, 1000)


@dataclass
class Pool:
    """A design's population, sorted by confidence (highest first) with cumulative counts, so
    the disagreement at or above any threshold is two lookups."""

    conf: np.ndarray
    cum_wrong: np.ndarray
    cum_wrong_g: np.ndarray  # (groups, POOL)
    cum_g: np.ndarray

    @classmethod
    def of(cls, design: Design, seed: int = 1) -> Pool:
        c, w, g = design.draw(np.random.default_rng([seed, 99]), POOL)
        order = np.argsort(-c, kind="stable")
        c, w, g = c[order], w[order], g[order]
        groups = int(g.max()) + 1
        onehot = g[None, :] == np.arange(groups)[:, None]
        return cls(c, np.cumsum(w), np.cumsum(onehot & w[None, :], axis=1), np.cumsum(onehot, 1))

    def above(self, t: float) -> int:
        """Items at or above t (conf is sorted descending)."""
        return int(np.searchsorted(-self.conf, -t, side="right"))

    def disagreement(self, t: float) -> tuple[float, float, float]:
        """(realized disagreement at or above t, the worst group's, share accepted)."""
        n = self.above(t)
        if n == 0:
            return 0.0, 0.0, 0.0
        worst = max(
            self.cum_wrong_g[k, n - 1] / self.cum_g[k, n - 1]
            for k in range(len(self.cum_g))
            if self.cum_g[k, n - 1] > 0
        )
        return self.cum_wrong[n - 1] / n, float(worst), n / len(self.conf)


@dataclass
class Tally:
    runs: int = 0
    accepted: int = 0
    violations: int = 0  # realized disagreement above alpha (abstaining never violates)
    group_violations: int = 0  # the same for the worst generator / class
    coverage: float = 0.0  # summed share of the pool accepted
    agreement: float = 0.0  # summed realized agreement of the accepted runs

    def add(self, accepted: bool, realized: float, worst: float, share: float, alpha: float):
        self.runs += 1
        if accepted:
            self.accepted += 1
            self.violations += realized > alpha
            self.group_violations += worst > alpha
            self.coverage += share
            self.agreement += 1 - realized


def released_fallback(conf: np.ndarray, wrong: np.ndarray, alpha: float, delta: float):
    """The authors' released code where no threshold passes: it returns the highest candidate
    threshold (the paper's guarantee then does not hold). Everything else as the paper."""
    t = pac_threshold(conf, wrong, alpha=alpha, delta=delta)
    if t.accepted or t.n_above == 0:
        return t.threshold
    top = np.sort(conf)[::-1]
    return float(top[min(len(top), 30) - 1])


def simulate_pac(
    design: Design,
    n_cal: int,
    runs: int,
    *,
    alpha: float = 0.1,
    delta: float = 0.1,
    seed: int = 0,
    pool: Pool | None = None,
    released: bool = False,
) -> Tally:
    pool = pool or Pool.of(design)
    rng = np.random.default_rng([seed, n_cal, len(design.name)])
    tally = Tally()
    for _ in range(runs):
        c, w, _g = design.draw(rng, n_cal)
        if released:
            t = released_fallback(c, w, alpha, delta)
        else:
            t = pac_threshold(c, w, alpha=alpha, delta=delta).threshold
        if t is None:
            tally.add(False, 0.0, 0.0, 0.0, alpha)
            continue
        realized, worst, share = pool.disagreement(t)
        tally.add(share > 0, realized, worst, share, alpha)
    return tally


def _cheap(rng: np.random.Generator, n: int):
    c = rng.uniform(0.5, 1.0, n)
    return c, rng.random(n) < np.clip(1.3 * (1 - c), 0, 1)


def _strong(rng: np.random.Generator, n: int):
    c = rng.uniform(0.6, 1.0, n)
    return c, rng.random(n) < 0.5 * (1 - c)


CASCADE_WHAT = (
    "cheap judge: confidence U(0.5, 1), wrong 1.3 (1 - c) of the time (overconfident); strong "
    "judge, independent: confidence U(0.6, 1), wrong 0.5 (1 - c)"
)


def _two_judges(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    c1, w1 = _cheap(rng, n)
    c2, w2 = _strong(rng, n)
    return np.vstack([c1, c2]), np.vstack([w1, w2])


def simulate_cascade(
    n_cal: int,
    runs: int,
    *,
    alpha: float = 0.1,
    delta: float = 0.1,
    seed: int = 0,
    full_delta: bool = False,
    n_pool: int = POOL,
) -> Tally:
    """The two-judge cascade; realized disagreement over every pool item either judge accepts.
    `full_delta`: each judge at delta, as the released code does (for contrast)."""
    pc, pw = _two_judges(np.random.default_rng([1, 77]), n_pool)
    rng = np.random.default_rng([seed, n_cal, 5])
    tally = Tally()
    for _ in range(runs):
        c, w = _two_judges(rng, n_cal)
        d = 2 * delta if full_delta else delta  # cascade() splits delta over the 2 judges
        casc = cascade(c, w, pc, alpha=alpha, delta=d)
        stage = casc.test_stage
        acc = stage >= 0
        if not acc.any():
            tally.add(False, 0.0, 0.0, 0.0, alpha)
            continue
        wrong = np.where(stage == 0, pw[0], pw[1])[acc]
        realized = float(wrong.mean())
        tally.add(True, realized, realized, float(acc.mean()), alpha)
    return tally


@dataclass
class FdrTally:
    runs: int = 0
    fdp: list[float] | None = None
    selected: float = 0.0

    def mean_and_interval(self) -> tuple[float, float, float]:
        x = np.asarray(self.fdp or [0.0])
        m, se = float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0
        return m, m - 1.96 * se, m + 1.96 * se


def simulate_fdr(
    design: Design, n_cal: int, runs: int, *, q: float = 0.1, m_test: int = 500, seed: int = 0
) -> FdrTally:
    """Conformal alignment: per run a fresh calibration set and m_test fresh items; the
    realized share of disagreements among the selected (0 when none is selected)."""
    rng = np.random.default_rng([seed, n_cal, 11, len(design.name)])
    out = FdrTally(fdp=[])
    for _ in range(runs):
        c, w, _ = design.draw(rng, n_cal)
        tc, tw, _ = design.draw(rng, m_test)
        sel = conformal_alignment(c, w, tc, q=q)
        k = sel.n_selected
        out.runs += 1
        out.fdp.append(float(tw[sel.selected].sum() / k) if k else 0.0)  # type: ignore[union-attr]
        out.selected += k / m_test
    return out


__all__ = [
    "CASCADE_WHAT",
    "DESIGNS",
    "SIZES",
    "Design",
    "Pool",
    "Tally",
    "simulate_cascade",
    "simulate_fdr",
    "simulate_pac",
]
