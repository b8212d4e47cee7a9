"""The alternative-annotator test: may a judge replace one of the human raters?

Two figures, under their own names:

- `alt_test`: the test as Calderon, Reichart & Dror (ACL 2025, "The Alternative Annotator
  Test for LLM-as-a-Judge") define it and their released code computes it. For one metric and
  one judge, each human annotator j in turn is left out; on every item j answered that has at
  least 2 human answers (so at least one other), the judge and j are each scored by how well
  they align with the *remaining* humans: accuracy (the share of them giving the same answer)
  for categorical metrics, minus the root mean squared difference for ratings. W_f = 1 when
  the judge aligns at least as well as j, W_h = 1 when j aligns at least as well as the judge
  (a tie is a win for both); a one-sided t-test of d = W_h - W_f against the margin epsilon
  (H0: mean(d) >= epsilon), the p-values of all annotators with at least `min_items` such items
  corrected by Benjamini-Yekutieli at q = 0.05; the winning rate is the share of annotators
  rejected, the judge passes at 0.5, and the advantage probability is the mean over
  annotators of mean(W_f).
- `alt_test_balanced`: the project's variant, the guard the summary's "replaceable" also
  needs. It keeps items with at least 2 *other* humans and needs 3 annotators (the paper's
  recommendation: with 2, the test only asks which of the two the judge is closer to), and on
  nominal metrics it takes a *class-balanced* mean of d: every class of answer weighs the same,
  as in balanced accuracy. An item belongs to class c in the share of the remaining humans who
  answered c (soft strata), and the mean of d is the average over classes of its mean within
  each class; the t-test is then Welch's over the classes (see mean_se). Why: with the plain
  mean a judge that always says PASS on a gate that passes 92% of the time loses only on the
  rare FAIL items, so it passes at epsilon 0.1 whatever the humans see; balanced, it loses on
  nearly all of the FAIL class. Scales keep the plain mean (minus the RMSE already punishes a
  constant answer in proportion to the spread).

`min_passing_epsilon` is the smallest epsilon on a 0.001 grid in [0, 1] at which the judge
passes (the winning rate can only grow with epsilon, so the first passing point is the answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from .bootstrap import batches, resample_counts

Q_LEVEL = 0.05
MIN_ANNOTATORS = 3  # the variant's: annotators the test needs (the paper's code runs from 1)
MIN_OTHERS = 2  # the variant's: human answers on an item besides the left-out one
PAPER_MIN_OTHERS = 1  # the paper's: items with at least 2 human answers
EPS_GRID = np.round(np.arange(0, 1001) / 1000.0, 3)
# two alignments closer than this are a tie (they are sums of few small whole numbers)
_TIE = 1e-9


@dataclass(frozen=True)
class Wins:
    """Per qualifying annotator: the paired indicators of the leave-one-out comparison."""

    annotators: list[str]
    w_judge: list[np.ndarray]  # W_f per item
    w_human: list[np.ndarray]  # W_h per item
    n_items: int  # distinct items in at least one annotator's comparison
    # per annotator the items' weights in the mean (sum 1): class-balanced for nominal
    # metrics, equal for scales; None: equal weights
    weights: list[np.ndarray] | None = None
    items: list[np.ndarray] | None = None  # per annotator the item of each comparison
    shares: list[np.ndarray] | None = None  # per annotator the others' class shares (nominal)

    def share(self, i: int) -> np.ndarray | None:
        return None if self.shares is None else self.shares[i]

    def weight(self, i: int) -> np.ndarray:
        if self.weights is not None:
            return self.weights[i]
        n = len(self.w_judge[i])
        return np.full(n, 1.0 / n)


def benjamini_yekutieli(p: np.ndarray, q: float = Q_LEVEL) -> np.ndarray:
    """Rejections (bool per p-value) of the Benjamini-Yekutieli step-up procedure at level q.

    Largest k with p_(k) <= k q / (m c(m)), c(m) = sum 1/i; the k smallest are rejected.
    Works on a 2-d array row by row (one row per epsilon).
    """
    p = np.asarray(p, dtype=float)
    flat = p.ndim == 1
    p2 = np.atleast_2d(p)
    m = p2.shape[1]
    if m == 0:
        return np.zeros(p.shape, dtype=bool)
    c_m = float(np.sum(1.0 / np.arange(1, m + 1)))
    order = np.argsort(p2, axis=1, kind="stable")
    srt = np.take_along_axis(p2, order, axis=1)
    ok = srt <= np.arange(1, m + 1) * q / (m * c_m)
    k = np.where(ok.any(axis=1), m - np.argmax(ok[:, ::-1], axis=1), 0)
    reject_sorted = np.arange(m)[None, :] < k[:, None]
    out = np.zeros_like(reject_sorted)
    np.put_along_axis(out, order, reject_sorted, axis=1)
    return out[0] if flat else out


def mean_se(d: np.ndarray, shares: np.ndarray | None = None) -> tuple[float, float, float]:
    """Mean of d, its standard error and degrees of freedom.

    Without `shares`: the plain mean, sd / sqrt(n) and n - 1 (the paired t-test). With
    `shares` (items x classes, rows summing to 1: the soft strata): the class-balanced mean
    (1/C) sum_c m_c, m_c the share-weighted mean of d in class c over its mass n_c (the summed
    shares), variance (1/C^2) sum_c s_c^2 / n_c and Welch-Satterthwaite degrees of freedom, so
    that a rare class seen on a few items makes the test wide, not confident. A class with a
    mass below 2 has no variance: the standard error is then infinite (the test cannot pass).
    """
    d = np.asarray(d, dtype=float)
    n = len(d)
    if shares is None:
        if n < 2:
            return float(d.mean()) if n else 0.0, 0.0, 0.0
        return float(d.mean()), float(d.std(ddof=1) / np.sqrt(n)), float(n - 1)
    mass = shares.sum(axis=0)
    keep = mass > 1e-12
    sh, mass = shares[:, keep], mass[keep]
    n_cls = len(mass)
    m_c = (sh * d[:, None]).sum(axis=0) / mass
    if (mass < 2).any():
        return float(m_c.mean()), float("inf"), 1.0
    ss = (sh * (d[:, None] - m_c[None, :]) ** 2).sum(axis=0)
    var_c = ss / (mass - 1) / mass / n_cls**2
    var = float(var_c.sum())
    denom = float((var_c**2 / (mass - 1)).sum())
    df = var * var / denom if denom > 0 else float(n - 1)
    return float(m_c.mean()), float(np.sqrt(var)), max(df, 1.0)


def one_sided_p(
    d: np.ndarray, eps: np.ndarray | float, shares: np.ndarray | None = None
) -> np.ndarray:
    """p-values of the paired t-test H0: mean(d) >= eps against mean(d) < eps, one per eps
    (the class-balanced mean when `shares` are given: see mean_se).

    With no spread in d the test is decided by the sign of mean(d) - eps (p 0 or 1).
    """
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    mean, se, df = mean_se(d, shares)
    diff = mean - eps
    if not np.isfinite(se):
        return np.ones_like(diff)
    if se <= 1e-12:
        return np.where(diff < -_TIE, 0.0, 1.0)
    return student_t.cdf(diff / se, df)


def _balanced_weights(shares: np.ndarray) -> np.ndarray:
    """Item weights (sum 1) that make every class of the remaining humans' answers weigh the
    same: item i counts to class c in the share of the others who answered c."""
    mass = shares.sum(axis=0)  # per class
    present = mass > 0
    w = (shares[:, present] / mass[present]).sum(axis=1) / present.sum()
    return w / w.sum()


def leave_one_out_wins(
    human: pd.DataFrame,
    judge: pd.Series,
    *,
    nominal: bool,
    min_items: int,
    min_others: int = MIN_OTHERS,
    balanced: bool = True,
) -> Wins:
    """W_f and W_h of every annotator with at least `min_items` qualifying items.

    `human`: columns idx, rater, code (NaN = no usable answer); `judge`: code per idx (NaN =
    none). An item qualifies for annotator j when j and the judge answered it and at least
    `min_others` other humans did. `balanced` (nominal metrics): the class-balanced weights
    of the project's variant; without, every item weighs the same (the paper).
    """
    h = human[human["code"].notna()][["idx", "rater", "code"]]
    h = h.drop_duplicates(["idx", "rater"], keep="last")
    jv = judge[judge.notna()]
    h = h[h["idx"].isin(jv.index)]
    if not len(h):
        return Wins([], [], [], 0)
    raters, rid = np.unique(h["rater"].astype(str).to_numpy(), return_inverse=True)
    items, iid = np.unique(h["idx"].to_numpy(), return_inverse=True)
    x = h["code"].to_numpy(float)
    f_item = jv.reindex(items).to_numpy(float)
    m_item = np.bincount(iid, minlength=len(items)).astype(float)
    f = f_item[iid]
    m = m_item[iid] - 1.0  # others on the item
    if nominal:
        dom, code = np.unique(np.concatenate([x, f_item]), return_inverse=True)
        xc, fc = code[: len(x)], code[len(x) :]
        counts = np.zeros((len(items), len(dom)))
        np.add.at(counts, (iid, xc), 1.0)
        same = (x == f).astype(float)
        # matches with the others: everyone's count of the value minus j's own answer
        s_f = counts[iid, fc[iid]] - same
        s_h = counts[iid, xc] - 1.0
        # the others' answers on the item (j's own taken out), for the class-balanced weights
        other_counts = counts[iid].copy()
        other_counts[np.arange(len(x)), xc] -= 1.0
    else:
        s1 = np.bincount(iid, weights=x, minlength=len(items))[iid] - x
        s2 = np.bincount(iid, weights=x * x, minlength=len(items))[iid] - x * x
        # minus the summed squared difference from the others (same order as minus the RMSE)
        s_f = -(m * f * f - 2 * f * s1 + s2)
        s_h = -(m * x * x - 2 * x * s1 + s2)
    keep = m >= min_others
    wf = (s_f >= s_h - _TIE).astype(float)
    wh = (s_h >= s_f - _TIE).astype(float)
    out_r, out_f, out_h, out_w, used = [], [], [], [], set()
    out_i: list[np.ndarray] = []
    out_s: list[np.ndarray] = []
    for r in range(len(raters)):
        mine = keep & (rid == r)
        n_mine = int(mine.sum())
        if n_mine < min_items:
            continue
        out_r.append(str(raters[r]))
        out_f.append(wf[mine])
        out_h.append(wh[mine])
        out_i.append(iid[mine])
        if nominal and balanced:
            oc = other_counts[mine]
            sh = oc / oc.sum(axis=1, keepdims=True)
            out_s.append(sh)
            out_w.append(_balanced_weights(sh))
        else:
            out_w.append(np.full(n_mine, 1.0 / n_mine))
        used.update(iid[mine].tolist())
    shares = out_s if nominal and balanced else None
    return Wins(out_r, out_f, out_h, len(used), out_w, out_i, shares)


def winning_rate(wins: Wins, eps: np.ndarray | float, q: float = Q_LEVEL) -> np.ndarray:
    """Share of annotators whose test rejects at each epsilon (after Benjamini-Yekutieli)."""
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    p = np.column_stack(
        [
            one_sided_p(wh - wf, eps, wins.share(i))
            for i, (wf, wh) in enumerate(zip(wins.w_judge, wins.w_human, strict=True))
        ]
    )
    return benjamini_yekutieli(p, q).mean(axis=1)


N_BOOT = 200  # resamples of the advantage probability (its interval only)


def advantage_interval(
    wins: Wins, seed: int = 0, n_boot: int = N_BOOT
) -> tuple[float | None, float | None]:
    """95% percentile interval of the advantage probability from an item bootstrap (the same
    resampled items for every annotator; class weights recomputed in each resample)."""
    if wins.items is None or not wins.items:
        return None, None
    n_units = 1 + max(int(i.max()) for i in wins.items if len(i))
    rng = np.random.default_rng([int(seed), 0xA17])
    out = []
    # resampled in batches so that one batch of weights stays within a few million floats
    # whatever the number of items (a report of a million judgements has 100,000 of them)
    for b in batches(n_boot, n_units):
        counts = resample_counts(rng, n_units, b)
        per = []
        for a, (wf, it) in enumerate(zip(wins.w_judge, wins.items, strict=True)):
            c = counts[:, it]  # (b, n_a)
            with np.errstate(divide="ignore", invalid="ignore"):
                if wins.shares is not None:
                    sh = wins.shares[a]
                    mass = c @ sh  # (b, C)
                    hit = c @ (sh * wf[:, None])
                    present = mass > 0
                    per_class = np.where(present, hit / np.where(present, mass, 1.0), 0.0)
                    per.append(per_class.sum(axis=1) / present.sum(axis=1))
                else:
                    per.append((c @ wf) / c.sum(axis=1))
        out.append(np.mean(per, axis=0))
    reps = np.concatenate(out)
    reps = reps[np.isfinite(reps)]
    if len(reps) < 0.95 * n_boot or np.ptp(reps) <= 1e-12:
        return None, None
    return float(np.quantile(reps, 0.025)), float(np.quantile(reps, 0.975))


WINNING_RATE_NOTE = (
    "no interval: the winning rate counts the raters the judge beats, after the "
    "Benjamini-Yekutieli correction over them; it is a decision on these raters, not an "
    "estimate of a share (each rater's p-value is under annotators)"
)
MIN_EPS_NOTE = (
    "no interval: the smallest margin at which the test passes is itself a one-sided bound "
    "(the human advantage the data can rule out at q, Benjamini-Yekutieli over the raters)"
)


def alt_test(
    human: pd.DataFrame,
    judge: pd.Series,
    *,
    nominal: bool,
    epsilon: float = 0.1,
    min_items: int = 30,
    q: float = Q_LEVEL,
    seed: int = 0,
) -> dict[str, Any]:
    """The test as the paper defines it: the figures for one judge and metric, or {"note"} when
    no annotator has `min_items` items with at least one other human's answer.

    Keys: epsilon, winning_rate, advantage_probability, passed, min_passing_epsilon (None when
    the judge does not pass even at epsilon 1), n_annotators, n_items, q, annotators (per
    annotator: n_items, p_value, rejected, judge_wins (mean W_f), human_wins (mean W_h)).
    """
    wins = leave_one_out_wins(
        human,
        judge,
        nominal=nominal,
        min_items=min_items,
        min_others=PAPER_MIN_OTHERS,
        balanced=False,
    )
    if not wins.annotators:
        return {
            "note": f"alt-test not run: no rater has {min_items} items shared with the judge "
            "and another rater",
            "n_annotators": 0,
            "n_items": wins.n_items,
        }
    return _figures(wins, nominal=nominal, epsilon=epsilon, q=q, seed=seed)


def alt_test_balanced(
    human: pd.DataFrame,
    judge: pd.Series,
    *,
    nominal: bool,
    epsilon: float = 0.1,
    min_items: int = 30,
    q: float = Q_LEVEL,
    seed: int = 0,
) -> dict[str, Any]:
    """The project's class-balanced variant (module doc): the same keys as `alt_test`, or
    {"note"} when fewer than MIN_ANNOTATORS annotators have `min_items` items with MIN_OTHERS
    other humans' answers."""
    wins = leave_one_out_wins(human, judge, nominal=nominal, min_items=min_items)
    n_ann = len(wins.annotators)
    if n_ann < MIN_ANNOTATORS:
        return {
            "note": f"alt-test not run: {n_ann} annotator(s) with at least {min_items} items "
            f"shared with the judge and {MIN_OTHERS} other raters (needs {MIN_ANNOTATORS}); "
            "lower alt_test_min_items or collect more overlap",
            "n_annotators": n_ann,
            "n_items": wins.n_items,
        }
    return _figures(wins, nominal=nominal, epsilon=epsilon, q=q, seed=seed)


def _figures(wins: Wins, *, nominal: bool, epsilon: float, q: float, seed: int) -> dict[str, Any]:
    """The test's figures from the annotators' wins (`nominal`: class-balanced scoring)."""
    n_ann = len(wins.annotators)
    p = np.array(
        [
            one_sided_p(wh - wf, epsilon, wins.share(i))[0]
            for i, (wf, wh) in enumerate(zip(wins.w_judge, wins.w_human, strict=True))
        ]
    )
    rejected = benjamini_yekutieli(p, q)
    rate = float(rejected.mean())
    grid = winning_rate(wins, EPS_GRID, q)
    passing = np.flatnonzero(grid >= 0.5)
    adv = float(np.mean([np.sum(wins.weight(i) * wf) for i, wf in enumerate(wins.w_judge)]))
    lo, hi = advantage_interval(wins, seed)
    return {
        "epsilon": float(epsilon),
        "winning_rate": rate,
        "winning_rate_note": WINNING_RATE_NOTE,
        "advantage_probability": adv,
        "advantage_probability_ci": {
            "estimate": adv,
            "low": None if lo is None else min(lo, adv),
            "high": None if hi is None else max(hi, adv),
            "n": wins.n_items,
            **(
                {}
                if lo is not None
                else {"note": "no interval: every resample gives the same value"}
            ),
        },
        "score": (
            "class-balanced share of equal answers"
            if wins.shares is not None
            else "share of equal answers (accuracy)"
            if nominal
            else "minus the RMSE"
        ),
        "passed": bool(rate >= 0.5),
        "min_passing_epsilon": float(EPS_GRID[passing[0]]) if len(passing) else None,
        "min_passing_epsilon_note": MIN_EPS_NOTE,
        "n_annotators": n_ann,
        "n_items": wins.n_items,
        "q": float(q),
        "annotators": {
            r: {
                "n_items": int(len(wf)),
                "p_value": float(p[i]),
                "rejected": bool(rejected[i]),
                "judge_wins": float(np.sum(wins.weight(i) * wf)),
                "human_wins": float(np.sum(wins.weight(i) * wh)),
            }
            for i, (r, wf, wh) in enumerate(
                zip(wins.annotators, wins.w_judge, wins.w_human, strict=True)
            )
        },
    }


def judge_alt_tests(
    views: dict[str, Any], h: pd.DataFrame, *, nominal: bool, epsilon: float, min_items: int
) -> dict[str, dict[str, Any]]:
    """Per judge of one metric the report keys of both tests: `alt_test` (the paper's) and
    `alt_test_balanced` (the project's variant), each the figures or None, and when None,
    `<key>_note` saying why (and `<key>_needs`: the design it needs). `views`: judge name ->
    reconcile.JudgeView."""
    out: dict[str, dict[str, Any]] = {}
    for name, view in views.items():
        out[name] = {}
        for key, test in (("alt_test", alt_test), ("alt_test_balanced", alt_test_balanced)):
            if not view.same_scale:
                res: dict[str, Any] = {
                    "note": "alt-test not run: the judge does not answer on the rubric's scale"
                }
            else:
                res = test(h, view.values, nominal=nominal, epsilon=epsilon, min_items=min_items)
            if "winning_rate" in res:
                out[name][key] = res
                continue
            out[name][key] = None
            out[name][f"{key}_note"] = res["note"]
            if "n_annotators" in res:  # too few raters with enough shared items: what it needs
                balanced = key == "alt_test_balanced"
                out[name][f"{key}_needs"] = {
                    "annotators": MIN_ANNOTATORS if balanced else 1,
                    "annotators_now": res["n_annotators"],
                    "items_per_annotator": int(min_items),
                    "other_raters_per_item": MIN_OTHERS if balanced else PAPER_MIN_OTHERS,
                }
    return out


def verdict_test(j: dict[str, Any]) -> dict[str, Any] | None:
    """The alt-test a verdict of "replaceable" reads for one judge and metric: the judge must pass
    both the paper's test and the project's class-balanced variant. The variant's figures (the
    stricter on nominal metrics, and what its guard needs) with `passed` true only when both
    pass and `used` naming the two; None when neither ran."""
    paper, variant = j.get("alt_test"), j.get("alt_test_balanced")
    if not paper and not variant:
        return None
    base: dict[str, Any] = dict(variant or paper or {})
    base["passed"] = bool(paper and paper.get("passed") and variant and variant.get("passed"))
    base["used"] = (
        "the paper's alternative-annotator test and the class-balanced variant, both required"
        + ("" if variant else f" (the variant did not run: {j.get('alt_test_balanced_note')})")
        + ("" if paper else f" (the paper's did not run: {j.get('alt_test_note')})")
    )
    return base


__all__ = [
    "judge_alt_tests",
    "alt_test",
    "alt_test_balanced",
    "verdict_test",
    "benjamini_yekutieli",
    "leave_one_out_wins",
    "one_sided_p",
    "winning_rate",
]
