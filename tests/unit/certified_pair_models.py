"""Model CP: a judge voting on pairs in both orders, to check the pair votes' certification
(stats/certified_pairs.py) by simulation (tests/unit/test_certified_pairs.py,
tests/benchmarks/bench_certified_pairs.py, validity.md section "Certified judging").

Per pair: the humans' clear majority is item a or item b (1/2 each); the pair's difficulty is
the judge's chance s of picking the right item in one order, s ~ Beta(k m, k (1 - m)) shared by
both orders (a hard pair is hard both ways, so the judge can be consistently wrong); in each
order, with probability `bias` it picks the item shown left whatever it is, else the right item
with probability s; with probability `one_order` only the first order was voted. From the two
picks the confidence and the disagreement follow the code's rules: both orders pick one item
1.0 (the vote: that item), one order 0.75, the orders disagree 0.5 (the vote: a tie, which the
humans' majority never is here, so it disagrees). The population is a fixed pool of POOL pairs
per design; a run draws a fresh calibration set, searches the threshold (stats/selective.py)
and reads the realized disagreement among the pool's pairs at or above it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotator.stats.selective import pac_threshold

POOL = 200_000
SIZES = (50, 200, 1000)


@dataclass(frozen=True)
class PairDesign:
    name: str
    mean: float  # m: the judge's mean chance of the right item in one order
    concentration: float  # k: low is a spread of easy and hard pairs
    bias: float  # the chance an order's pick is the left item whatever it is
    one_order: float  # the share of pairs voted in one order only

    @property
    def what(self) -> str:
        return (
            f"s ~ Beta(k m, k (1 - m)), m {self.mean}, k {self.concentration:g}; picks left "
            f"{self.bias:.0%}; one order only {self.one_order:.0%}"
        )

    def draw(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        """(truth, pick 1, pick 2) per pair: 0 = item a, 1 = item b; pick 2 is -1 where only
        the first order (a shown left) was voted; the second shows b left."""
        truth = rng.integers(0, 2, n)
        k, m = self.concentration, self.mean
        s = rng.beta(k * m, k * (1 - m), n)

        def pick(left: int) -> np.ndarray:
            right_item = np.where(rng.random(n) < s, truth, 1 - truth)
            return np.where(rng.random(n) < self.bias, left, right_item)

        p1, p2 = pick(0), pick(1)
        p2 = np.where(rng.random(n) < self.one_order, -1, p2)
        return truth, p1, p2


def confidence_and_disagreement(
    truth: np.ndarray, p1: np.ndarray, p2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The code's rules (stats/certified_pairs.py), written again from the module's docstring."""
    one = p2 < 0
    same = p1 == p2
    conf = np.where(one, 0.75, np.where(same, 1.0, 0.5))
    disagree = np.where(one | same, p1 != truth, True)
    return conf, disagree


DESIGNS = (
    PairDesign("good", 0.92, 20.0, 0.05, 0.1),
    PairDesign("position-biased", 0.9, 20.0, 0.35, 0.0),
    PairDesign("hard pairs", 0.8, 2.0, 0.05, 0.1),
    PairDesign("borderline", 0.82, 3.0, 0.05, 0.0),
    PairDesign("chance", 0.5, 1e6, 0.0, 0.1),
)


@dataclass
class PairPool:
    """A design's population: the disagreement among its pairs at or above each of the three
    confidences, and the share there."""

    rate: dict[float, float]
    share: dict[float, float]

    @classmethod
    def of(cls, design: PairDesign, seed: int = 1) -> PairPool:
        conf, dis = confidence_and_disagreement(
            *design.draw(np.random.default_rng([seed, 77]), POOL)
        )
        rate, share = {}, {}
        for t in (1.0, 0.75, 0.5):
            above = conf >= t
            share[t] = float(above.mean())
            rate[t] = float(dis[above].mean()) if above.any() else 0.0
        return cls(rate, share)


@dataclass
class PairTally:
    runs: int = 0
    accepted: int = 0
    violations: int = 0  # realized disagreement above alpha among the accepted (abstaining: no)
    at_consistent: int = 0  # runs whose threshold is 1.0: the consistent pairs only
    coverage: float = 0.0
    agreement: float = 0.0


def simulate_pair_pac(
    design: PairDesign,
    n: int,
    runs: int,
    *,
    alpha: float = 0.1,
    delta: float = 0.1,
    pool: PairPool | None = None,
    seed: int = 0,
) -> PairTally:
    pool = pool or PairPool.of(design)
    rng = np.random.default_rng([seed, n, 5])
    out = PairTally()
    for _ in range(runs):
        conf, dis = confidence_and_disagreement(*design.draw(rng, n))
        t = pac_threshold(conf, dis, alpha=alpha, delta=delta)
        out.runs += 1
        if t.threshold is None:
            continue
        realized = pool.rate[t.threshold]
        out.accepted += 1
        out.violations += int(realized > alpha)
        out.at_consistent += int(t.threshold == 1.0)
        out.coverage += pool.share[t.threshold]
        out.agreement += 1 - realized
    return out
