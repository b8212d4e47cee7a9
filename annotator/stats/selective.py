"""Selective judging with a guarantee: the threshold searches on a calibration set.

Two modes, kept apart (a verdict names the one it used):

**PAC mode, Trust or Escalate** (Jung, Brahman & Choi, "Trust or Escalate: LLM Judges with
Provable Guarantees for Human Agreement", ICLR 2025, section 2). Calibration items carry the
judge's confidence c_i and whether it disagrees with the humans. The candidate thresholds are the
distinct calibration confidences with at least `MIN_ABOVE` calibration items at or above them,
from the highest down. At each, the exact one-sided (Clopper-Pearson) upper bound of the
disagreement rate among the n items at or above it, k of them disagreements, at level 1 - delta:
`beta.ppf(1 - delta, k + 1, n - k)` (1 when k = n). Fixed-sequence testing: a threshold is
accepted while its bound is <= alpha, the search stops at the first one that is not, and the
threshold is the last accepted. Then, with probability at least 1 - delta over the calibration
set, the judge disagrees with the humans on at most a share alpha of the items whose confidence
is at or above the threshold, for items exchangeable with the calibration set.

Where the authors' released code departs from the paper, this follows the paper:

- when no threshold passes, the judge abstains on every item (`threshold` None); the released
  code returns the highest threshold instead, which makes the guarantee false exactly when the
  judge is worst;
- in a cascade every judge is tested at delta / (number of judges), so the guarantee of the
  whole cascade holds at 1 - delta (a union bound); the released code tests each at delta.

The thresholds are the calibration confidences themselves: a threshold anywhere between two
neighbouring calibration confidences selects the same calibration items as the upper one, and
the upper one accepts the fewest other items, so it is the safe choice among them.

**Conformal alignment** (Gui, Jin & Candes, "Conformal Alignment: Knowing When to Trust
Foundation Models with Guarantees", NeurIPS 2024, algorithm 1). Per item to decide, the conformal
p-value p_j = (1 + #{calibration items that disagree with confidence >= c_j}) / (n + 1); the
Benjamini-Hochberg procedure at level q over the items to decide selects those the judge may
decide. The expected share of disagreements among the selected items is then at most q (the
false discovery rate), for items exchangeable with the calibration set. It controls an average,
not a probability: a second mode, reported under its own name.

The feasibility bound holds whatever the method: where the judge disagrees with the humans on a
share mu > alpha of the items, at least (mu - alpha) / (1 - alpha) of them must go to humans for
the accepted ones to disagree at most alpha (the accepted share c satisfies mu <= alpha c +
(1 - c)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta

MIN_ABOVE = 30  # calibration items a threshold needs at or above it (the paper's rule)

__all__ = [
    "MIN_ABOVE",
    "Cascade",
    "Selection",
    "Threshold",
    "cascade",
    "conformal_alignment",
    "cp_upper",
    "min_escalation",
    "pac_threshold",
]


def cp_upper(k: int, n: int, delta: float) -> float:
    """The exact (Clopper-Pearson) one-sided upper bound, at level 1 - delta, of a binomial
    proportion with k events in n trials: beta.ppf(1 - delta, k + 1, n - k); 1 when k = n."""
    if n <= 0 or k >= n:
        return 1.0
    return float(beta.ppf(1.0 - delta, k + 1, n - k))


@dataclass(frozen=True)
class Threshold:
    """The result of the PAC search on one calibration set.

    `threshold` None: the judge abstains on every item; `upper_bound` is then the bound at the
    highest threshold tried (None when no threshold has MIN_ABOVE items above it). `n_above`
    and `k_disagree_above` are at the threshold (or at the first one tried), `n_tested` counts
    the thresholds tested."""

    threshold: float | None
    n_calibration: int
    n_above: int
    k_disagree_above: int
    upper_bound: float | None
    n_tested: int
    n_disagree: int  # disagreements on the whole calibration set

    @property
    def accepted(self) -> bool:
        return self.threshold is not None

    def stage(
        self, judge: str, metric: str, version: str | None, delta: float, n_accepted: int
    ) -> dict[str, Any]:
        """This threshold as one stage of a cascade in the report (items and pairs alike)."""
        return {
            "judge": judge,
            "metric": metric,
            "version": version,
            "threshold": self.threshold,
            "delta": delta,
            "n_calibration": self.n_calibration,
            "n_above": self.n_above,
            "k_disagree_above": self.k_disagree_above,
            "upper_bound": self.upper_bound,
            "n_accepted": n_accepted,
        }


def _at_thresholds(conf: np.ndarray, disagree: np.ndarray) -> tuple[np.ndarray, ...]:
    """The distinct confidences from the highest down, and per one the items at or above it and
    the disagreements among them."""
    order = np.argsort(-conf, kind="stable")
    c, d = conf[order], disagree[order].astype(np.int64)
    n_above = np.arange(1, len(c) + 1)
    k_above = np.cumsum(d)
    last = np.flatnonzero(np.r_[c[1:] != c[:-1], True])  # the last of each run of equal values
    return c[last], n_above[last], k_above[last]


def pac_threshold(
    conf: np.ndarray,
    disagree: np.ndarray,
    *,
    alpha: float,
    delta: float,
    min_above: int = MIN_ABOVE,
) -> Threshold:
    """Trust or Escalate's fixed-sequence threshold search (module docstring)."""
    conf = np.asarray(conf, dtype=float)
    disagree = np.asarray(disagree, dtype=bool)
    if conf.shape != disagree.shape or np.isnan(conf).any():
        raise ValueError("pac_threshold needs one finite confidence per calibration item")
    n = len(conf)
    n_dis = int(disagree.sum())
    if n == 0:
        return Threshold(None, 0, 0, 0, None, 0, 0)
    values, n_above, k_above = _at_thresholds(conf, disagree)
    ok = n_above >= min_above
    if not ok.any():
        return Threshold(None, n, 0, 0, None, 0, n_dis)
    values, n_above, k_above = values[ok], n_above[ok], k_above[ok]
    # every candidate's bound at once; the sequence stops at the first above alpha
    bounds = upper_bounds(k_above, n_above, delta)
    failed = np.flatnonzero(bounds > alpha)
    n_pass = int(failed[0]) if len(failed) else len(values)
    tested = min(n_pass + 1, len(values))
    if n_pass == 0:
        return Threshold(None, n, int(n_above[0]), int(k_above[0]), float(bounds[0]), tested, n_dis)
    last = n_pass - 1
    return Threshold(
        float(values[last]),
        n,
        int(n_above[last]),
        int(k_above[last]),
        float(bounds[last]),
        tested,
        n_dis,
    )


def upper_bounds(k: np.ndarray, n: np.ndarray, delta: float) -> np.ndarray:
    """`cp_upper` of each (k, n), at once."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    out = np.ones(np.broadcast(k, n).shape)
    ok = (n > 0) & (k < n)
    out[ok] = beta.ppf(1.0 - delta, k[ok] + 1, n[ok] - k[ok])
    return out


def min_escalation(mu: float, alpha: float) -> float:
    """The share of items that must go to humans, whatever the method, when the judge disagrees
    on a share mu of them and the accepted ones may disagree at most alpha."""
    if not 0 <= alpha < 1:
        raise ValueError("alpha must be in [0, 1)")
    return max(0.0, (float(mu) - alpha) / (1.0 - alpha))


@dataclass(frozen=True)
class Selection:
    """Conformal alignment's decision on the items to decide: `selected` (a mask over them),
    their p-values, and the lowest confidence selected (None: none selected)."""

    selected: np.ndarray
    p_values: np.ndarray
    threshold: float | None
    n_calibration: int
    n_disagree: int

    @property
    def n_selected(self) -> int:
        return int(self.selected.sum())


def conformal_alignment(
    cal_conf: np.ndarray, cal_disagree: np.ndarray, test_conf: np.ndarray, *, q: float
) -> Selection:
    """Gui, Jin & Candes's conformal p-values (alignment score: agreement, so an item is
    "aligned" when the judge agrees; the predicted score: the judge's confidence) and the
    Benjamini-Hochberg procedure at level q over the items to decide."""
    cal_conf = np.asarray(cal_conf, dtype=float)
    cal_disagree = np.asarray(cal_disagree, dtype=bool)
    test_conf = np.asarray(test_conf, dtype=float)
    n, m = len(cal_conf), len(test_conf)
    bad = np.sort(cal_conf[cal_disagree])
    # disagreeing calibration items with confidence >= each test confidence
    above = len(bad) - np.searchsorted(bad, test_conf, side="left")
    p = (1.0 + above) / (n + 1.0)
    selected = np.zeros(m, dtype=bool)
    if m:
        ranked = np.sort(p)
        passing = np.flatnonzero(ranked <= q * np.arange(1, m + 1) / m)
        if len(passing):
            r = int(passing[-1]) + 1
            selected = p <= q * r / m
    threshold = float(test_conf[selected].min()) if selected.any() else None
    return Selection(selected, p, threshold, n, int(cal_disagree.sum()))


@dataclass(frozen=True)
class Cascade:
    """Judges tried in order, each calibrated on the calibration items every earlier judge left,
    at delta / (number of judges). `stages[s]` is judge s's search; `cal_stage` and
    `test_stage` say which judge accepted each calibration item and item to decide (-1: none,
    escalated to humans)."""

    stages: list[Threshold]
    deltas: list[float]
    cal_stage: np.ndarray
    test_stage: np.ndarray


def cascade(
    cal_conf: np.ndarray,
    cal_disagree: np.ndarray,
    test_conf: np.ndarray,
    *,
    alpha: float,
    delta: float,
    min_above: int = MIN_ABOVE,
) -> Cascade:
    """The cascade of Trust or Escalate over judges 0..J-1 (rows of the arrays): `cal_conf`
    (J x n) and `test_conf` (J x m) hold each judge's confidence, NaN where it gave no answer
    (its item is then left to the next judge); `cal_disagree` (J x n) whether it disagrees with
    the humans there."""
    cal_conf = np.atleast_2d(np.asarray(cal_conf, dtype=float))
    test_conf = np.atleast_2d(np.asarray(test_conf, dtype=float))
    cal_disagree = np.atleast_2d(np.asarray(cal_disagree, dtype=bool))
    n_judges = cal_conf.shape[0]
    each = delta / max(1, n_judges)
    cal_stage = np.full(cal_conf.shape[1], -1, dtype=np.int64)
    test_stage = np.full(test_conf.shape[1], -1, dtype=np.int64)
    stages = []
    for s in range(n_judges):
        left = (cal_stage < 0) & ~np.isnan(cal_conf[s])
        t = pac_threshold(
            cal_conf[s, left], cal_disagree[s, left], alpha=alpha, delta=each, min_above=min_above
        )
        stages.append(t)
        if t.threshold is None:
            continue
        with np.errstate(invalid="ignore"):
            cal_stage[left & (cal_conf[s] >= t.threshold)] = s
            test_stage[(test_stage < 0) & (test_conf[s] >= t.threshold)] = s
    return Cascade(stages, [each] * n_judges, cal_stage, test_stage)
