"""The alternative-annotator test: may a judge replace one of the human raters?

After Calderon, Reichart & Dror (2025), "The Alternative Annotator Test for
LLM-as-a-Judge", written from the paper's description. For one metric and one
judge, each human annotator j in turn is left out:

- on every item j answered that has at least 2 other human answers, the judge
  and j are each scored by how well they align with the *remaining* humans:
  the share of them giving the same answer (nominal metrics) or minus the root
  mean squared difference from them (scales);
- W_f = 1 when the judge aligns at least as well as j, W_h = 1 when j aligns at
  least as well as the judge (a tie is a win for both);
- a one-sided paired t-test of d = W_h - W_f asks whether the human's advantage
  is below the margin epsilon (H0: mean(d) >= epsilon, H1: mean(d) < epsilon):
  epsilon is what the study is willing to give up for a cheaper annotator.

The p-values of all annotators are corrected together by Benjamini-Yekutieli
at q = 0.05 (valid under any dependence: the annotators share items). The
winning rate is the share of annotators whose test rejects H0; the judge
passes when it is at least 0.5. The advantage probability is the mean over
annotators of the share of items where the judge did at least as well (mean
W_f). Annotators need `min_items` qualifying items; the test needs at least
3 such annotators (the paper's minimum: with fewer, a winning rate of 0.5 is
one annotator). `min_passing_epsilon` is the smallest epsilon on a 0.001 grid
in [0, 1] at which the judge passes (the winning rate can only grow with
epsilon, so the first passing grid point is the answer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

Q_LEVEL = 0.05
MIN_ANNOTATORS = 3
MIN_OTHERS = 2  # human answers on an item besides the left-out one
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


def one_sided_p(d: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """p-values of the paired t-test H0: mean(d) >= eps against mean(d) < eps, one per eps.

    With no spread in d the test is decided by the sign of mean(d) - eps (p 0 or 1).
    """
    d = np.asarray(d, dtype=float)
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    n = len(d)
    mean = d.mean()
    sd = d.std(ddof=1) if n > 1 else 0.0
    diff = mean - eps
    if sd <= 0 or not np.isfinite(sd):
        return np.where(diff < -_TIE, 0.0, 1.0)
    return student_t.cdf(diff / (sd / np.sqrt(n)), n - 1)


def leave_one_out_wins(
    human: pd.DataFrame, judge: pd.Series, *, nominal: bool, min_items: int
) -> Wins:
    """W_f and W_h of every annotator with at least `min_items` qualifying items.

    `human`: columns idx, rater, code (NaN = no usable answer); `judge`: code per idx (NaN =
    none). An item qualifies for annotator j when j and the judge answered it and at least
    MIN_OTHERS other humans did.
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
    else:
        s1 = np.bincount(iid, weights=x, minlength=len(items))[iid] - x
        s2 = np.bincount(iid, weights=x * x, minlength=len(items))[iid] - x * x
        # minus the summed squared difference from the others (same order as minus the RMSE)
        s_f = -(m * f * f - 2 * f * s1 + s2)
        s_h = -(m * x * x - 2 * x * s1 + s2)
    keep = m >= MIN_OTHERS
    wf = (s_f >= s_h - _TIE).astype(float)
    wh = (s_h >= s_f - _TIE).astype(float)
    out_r, out_f, out_h, used = [], [], [], set()
    for r in range(len(raters)):
        mine = keep & (rid == r)
        if mine.sum() < min_items:
            continue
        out_r.append(str(raters[r]))
        out_f.append(wf[mine])
        out_h.append(wh[mine])
        used.update(iid[mine].tolist())
    return Wins(out_r, out_f, out_h, len(used))


def winning_rate(wins: Wins, eps: np.ndarray | float, q: float = Q_LEVEL) -> np.ndarray:
    """Share of annotators whose test rejects at each epsilon (after Benjamini-Yekutieli)."""
    eps = np.atleast_1d(np.asarray(eps, dtype=float))
    p = np.column_stack(
        [one_sided_p(wh - wf, eps) for wf, wh in zip(wins.w_judge, wins.w_human, strict=True)]
    )
    return benjamini_yekutieli(p, q).mean(axis=1)


def alt_test(
    human: pd.DataFrame,
    judge: pd.Series,
    *,
    nominal: bool,
    epsilon: float = 0.1,
    min_items: int = 30,
    q: float = Q_LEVEL,
) -> dict[str, Any]:
    """The test's figures for one judge and metric, or {"note"} when the data cannot support it.

    Keys: epsilon, winning_rate, advantage_probability, passed, min_passing_epsilon (None when
    the judge does not pass even at epsilon 1), n_annotators, n_items, q, annotators (per
    annotator: n_items, p_value, rejected, judge_wins (mean W_f), human_wins (mean W_h)).
    """
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
    p = np.array(
        [
            one_sided_p(wh - wf, epsilon)[0]
            for wf, wh in zip(wins.w_judge, wins.w_human, strict=True)
        ]
    )
    rejected = benjamini_yekutieli(p, q)
    rate = float(rejected.mean())
    grid = winning_rate(wins, EPS_GRID, q)
    passing = np.flatnonzero(grid >= 0.5)
    return {
        "epsilon": float(epsilon),
        "winning_rate": rate,
        "advantage_probability": float(np.mean([wf.mean() for wf in wins.w_judge])),
        "passed": bool(rate >= 0.5),
        "min_passing_epsilon": float(EPS_GRID[passing[0]]) if len(passing) else None,
        "n_annotators": n_ann,
        "n_items": wins.n_items,
        "q": float(q),
        "annotators": {
            r: {
                "n_items": int(len(wf)),
                "p_value": float(p[i]),
                "rejected": bool(rejected[i]),
                "judge_wins": float(wf.mean()),
                "human_wins": float(wh.mean()),
            }
            for i, (r, wf, wh) in enumerate(
                zip(wins.annotators, wins.w_judge, wins.w_human, strict=True)
            )
        },
    }


def judge_alt_tests(
    views: dict[str, Any], h: pd.DataFrame, *, nominal: bool, epsilon: float, min_items: int
) -> dict[str, dict[str, Any]]:
    """Per judge of one metric the report keys: `alt_test` (the figures, or None) and, when it
    is None, `alt_test_note` saying why. `views`: judge name -> reconcile.JudgeView."""
    out = {}
    for name, view in views.items():
        if not view.same_scale:
            res: dict[str, Any] = {
                "note": "alt-test not run: the judge does not answer on the rubric's scale"
            }
        else:
            res = alt_test(
                h, view.answers["code"], nominal=nominal, epsilon=epsilon, min_items=min_items
            )
        if "winning_rate" in res:
            out[name] = {"alt_test": res}
        else:
            out[name] = {"alt_test": None, "alt_test_note": res["note"]}
    return out


__all__ = [
    "judge_alt_tests",
    "alt_test",
    "benjamini_yekutieli",
    "leave_one_out_wins",
    "one_sided_p",
    "winning_rate",
]
