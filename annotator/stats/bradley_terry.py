"""Bradley-Terry strengths of the generators from pair votes, with pair-bootstrap intervals.

- **Ties.** `both` and `neither` count as half a win to each side. This is a
  quasi-likelihood, *not* the Davidson (1970) or Rao-Kupper likelihood with a
  fixed tie parameter: under Davidson's model the expected half-win share of
  the stronger side lies between 1/2 and its Bradley-Terry probability, so
  half-win strengths are shrunk towards each other when ties are frequent
  (order and signs are kept). We keep it because a tie then says exactly
  "equally good/bad" (it pulls two strengths together), the model keeps one
  parameter per generator and the fit stays a plain logistic one. Votes
  between two items of the same generator carry no information about
  strengths and are left out of the fit.
- **Strengths.** Natural-log strengths, centred to mean 0 over the generators
  of the fit. Each fit is a maximum a-posteriori estimate under an N(0, 1/0.1)
  prior (precision `PRIOR_PRECISION`), so that a generator that won every vote
  of a small case gets a finite strength; with hundreds of votes the prior is
  negligible. Fitted per case and pooled. The pooled fit is one joint model in
  which each vote weighs N / (C * n_case), so every case carries the same total
  weight whatever its number of votes. Per-case centred strengths are not
  averaged: a case holding only some generators would centre them against a
  different company, and per-case fits of 3-30 votes are dominated by the prior.
- **Intervals.** From MIN_CASES_CASE_BOOT (2) cases: a bootstrap of whole
  cases (all pairs of a case together, Rao-Wu with C - 1 draws), published as
  estimate +- t(0.975, C - 1) x the replicates' standard deviation. Where cases
  hold different generators, show their pairs different numbers of times and a
  generator is better at some cases than others (an unbalanced design), which
  generators meet where is part of the sampling variance: resampling pairs
  within cases held it fixed and covered 84-88% there at 2 to 40 cases, the case
  bootstrap 93.5-97.5% (validity.md, model U); the t multiplier on the cases
  less one is what keeps few cases honest (at 2 cases the interval is as wide as
  two prompts allow). With a single case: a 95% percentile bootstrap that
  resamples *pairs* within it (all votes of a pair come along together, as alpha
  resamples items), rescaled for a small case (Rao-Wu, see `_Pairs.resampled`),
  which describes that case's prompt only. Several raters
  voting on one pair see the same two outputs, so their votes are not
  independent: resampling votes made PandaLM's intervals 1.5-1.7x too narrow.
  Coverage of the pair bootstrap with output quality varying from output to
  output: tests/benchmarks/validity.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.special import expit
from scipy.stats import t as student_t

from .bootstrap import batches, rng_for, summarize
from .pair_tallies import coded_votes

PRIOR_PRECISION = 0.1
# from this many cases the pooled interval resamples whole cases: with the t multiplier it
# covers 94-97% from 2 cases on in model U (validity.md), where holding the cases fixed covered
# 84-87% once generators are better at some cases than others
MIN_CASES_CASE_BOOT = 2
CASE_INTERVAL = (
    "95%: estimate +- t(0.975, cases - 1) x the standard error of a bootstrap of whole cases "
    "(Rao-Wu, cases - 1 drawn)"
)
PAIR_INTERVAL = (
    "95% percentile bootstrap of pairs within the one case (Rao-Wu): it holds the case fixed, "
    "so it says nothing of the generators on other prompts"
)
DESCRIPTION = (
    f"log-strength, mean 0; ties = half a win each (a quasi-likelihood, not Davidson's); "
    f"cases weighted equally; N(0, 1/{PRIOR_PRECISION:g}) prior; intervals resample whole cases "
    f"(t on the bootstrap standard error) from {MIN_CASES_CASE_BOOT} cases, pairs within a "
    "single case"
)


def fit_bradley_terry(
    wins: np.ndarray, prior: float = PRIOR_PRECISION, iters: int = 100
) -> np.ndarray:
    """MAP log-strengths for a batch of win matrices, shape (B, G, G) -> (B, G).

    wins[b, i, j] = (fractional) wins of i over j. Newton's method on the
    concave penalised log-likelihood, steps capped at 2 to avoid overshooting
    in near-separated data. The ridge prior makes the solution sum to zero over
    every set of generators linked by votes (and 0 for unseen ones).
    """
    wins = np.asarray(wins, dtype=float)
    if wins.ndim == 2:
        wins = wins[None]
    nb, g, _ = wins.shape
    comps = wins + wins.transpose(0, 2, 1)
    won = wins.sum(axis=2)
    theta = np.zeros((nb, g))
    eye = np.eye(g)
    for _ in range(iters):
        p = expit(theta[:, :, None] - theta[:, None, :])
        grad = won - (comps * p).sum(axis=2) - prior * theta
        w = comps * p * (1 - p)
        hess = w - eye * w.sum(axis=2)[:, :, None] - prior * eye
        step = np.linalg.solve(hess, grad[..., None])[..., 0]
        big = np.abs(step).max(axis=1, keepdims=True)
        step = np.where(big > 2.0, step * (2.0 / np.maximum(big, 1e-300)), step)
        theta = theta - step
        if np.abs(step).max() < 1e-9:
            break
    return theta


class _Pairs:
    """Votes summed per pair: the resampling unit."""

    def __init__(self, v: pd.DataFrame, gens: list[str]) -> None:
        idx = {g: i for i, g in enumerate(gens)}
        code = v["code"].to_numpy()
        win_a = np.where(code == "a", 1.0, np.where(code == "b", 0.0, 0.5))
        pid = v["pair_id"].astype(str).to_numpy()
        pairs, inv = np.unique(pid, return_inverse=True)
        first = np.unique(inv, return_index=True)[1]
        self.n = len(pairs)
        self.ga = v["gen_a"].map(idx).to_numpy(dtype=np.int64)[first]
        self.gb = v["gen_b"].map(idx).to_numpy(dtype=np.int64)[first]
        self.wa = np.bincount(inv, weights=win_a, minlength=self.n)
        self.nv = np.bincount(inv, minlength=self.n).astype(float)
        self.wb = self.nv - self.wa
        case = v["case_id"].astype(str).to_numpy()[first]
        self.cases, self.case = np.unique(case, return_inverse=True)
        self.g = len(gens)

    def subset(self, keep: np.ndarray, gens_local: np.ndarray) -> _Pairs:
        out = object.__new__(_Pairs)
        local = np.full(self.g, -1)
        local[gens_local] = np.arange(len(gens_local))
        out.n = int(keep.sum())
        out.ga, out.gb = local[self.ga[keep]], local[self.gb[keep]]
        out.wa, out.wb, out.nv = self.wa[keep], self.wb[keep], self.nv[keep]
        out.cases, out.case = np.unique(self.case[keep], return_inverse=True)
        out.g = len(gens_local)
        return out

    def wins(self, mult: np.ndarray) -> np.ndarray:
        """(B, G, G) win matrices for pair multiplicities mult (B x P); each pair keeps the case
        weight of the data (every case the same total weight), so a resample is a reweighting."""
        g, C = self.g, len(self.cases)
        n_case = np.bincount(self.case, weights=self.nv, minlength=C)
        scale = self.nv.sum() / (C * n_case)
        coef = mult * scale[self.case]
        rows = np.concatenate([np.arange(self.n), np.arange(self.n)])
        cols = np.concatenate([self.ga * g + self.gb, self.gb * g + self.ga])
        s = sp.csr_matrix((np.concatenate([self.wa, self.wb]), (rows, cols)), shape=(self.n, g * g))
        return np.asarray((s.T @ coef.T).T).reshape(len(mult), g, g)

    def strata(self) -> np.ndarray:
        """Resampling strata: the cases; cases of a single pair pooled into one stratum (a pair
        alone in its stratum could never vary)."""
        size = np.bincount(self.case, minlength=len(self.cases))
        single = size[self.case] == 1
        st = self.case.copy()
        st[single] = len(self.cases)
        return np.unique(st, return_inverse=True)[1]

    def resampled(self, n_boot: int, rng: np.random.Generator) -> np.ndarray:
        """(n_boot, G) centred strengths from the rescaled bootstrap of pairs within strata.

        Rao and Wu (1988) with n_h - 1 draws: each stratum of n_h pairs draws n_h - 1 of them
        with replacement, weighted n_h / (n_h - 1). Drawing all n_h would shrink the variance
        by (n_h - 1) / n_h, which with 1-10 pairs per case (PandaLM) is far from negligible
        (coverage 93% instead of 95% at 6 pairs per case). A stratum of one pair stays fixed.
        """
        st = self.strata()
        order = np.argsort(st, kind="stable")
        size = np.bincount(st)
        start = np.cumsum(size) - size
        draws = np.maximum(size - 1, 1)  # n_h - 1 slots per stratum (a lone pair keeps its one)
        slot_st = np.repeat(np.arange(len(size)), draws)
        factor = np.where(size > 1, size / np.maximum(size - 1, 1), 1.0)
        out = np.empty((n_boot, self.g))
        done = 0
        for b in batches(n_boot, self.n, self.g * self.g):
            u = rng.random((b, len(slot_st)))
            pick = order[start[slot_st] + (u * size[slot_st]).astype(np.int64)]
            flat = (np.arange(b)[:, None] * self.n + pick).ravel()
            mult = np.bincount(flat, minlength=b * self.n).reshape(b, self.n).astype(float)
            theta = fit_bradley_terry(self.wins(mult * factor[st]))
            out[done : done + b] = theta - theta.mean(axis=1, keepdims=True)
            done += b
        return out

    def resampled_cases(self, n_boot: int, rng: np.random.Generator) -> np.ndarray:
        """(n_boot, G) centred strengths from the rescaled bootstrap of whole cases (all pairs of
        a case together): C - 1 cases drawn with replacement, weighted C / (C - 1) (Rao-Wu).
        Where cases differ in which generators they hold and how often each pair is shown (an
        unbalanced design), which generators meet where is part of the sampling variance; the
        within-case pair bootstrap holds it fixed and covered 87-90% there."""
        C = len(self.cases)
        draws = max(C - 1, 1)
        factor = C / draws
        out = np.empty((n_boot, self.g))
        done = 0
        for b in batches(n_boot, self.n, self.g * self.g):
            pick = rng.integers(0, C, (b, draws))
            flat = (np.arange(b)[:, None] * C + pick).ravel()
            case_mult = np.bincount(flat, minlength=b * C).reshape(b, C).astype(float)
            theta = fit_bradley_terry(self.wins(case_mult[:, self.case] * factor))
            out[done : done + b] = theta - theta.mean(axis=1, keepdims=True)
            done += b
        return out

    def point(self) -> np.ndarray:
        theta = fit_bradley_terry(self.wins(np.ones((1, self.n))))[0]
        return theta - theta.mean()


def _summary(
    point: np.ndarray,
    boot: np.ndarray | None,
    gens: list[str],
    n_votes: Mapping[str, int],
    n_pairs: Mapping[str, int],
) -> dict[str, Any]:
    out = {}
    for i, name in enumerate(gens):
        fig = summarize(point[i], None if boot is None else boot[:, i], int(n_votes.get(name, 0)))
        fig["n_pairs"] = int(n_pairs.get(name, 0))
        out[name] = fig
    return out


def _counts(v: pd.DataFrame) -> tuple[dict[str, int], dict[str, int]]:
    votes = pd.concat([v["gen_left"], v["gen_right"]]).value_counts().to_dict()
    first = v.drop_duplicates("pair_id")
    pairs = pd.concat([first["gen_left"], first["gen_right"]]).value_counts().to_dict()
    return votes, pairs


MIN_CASE_PAIRS = 2  # a case's own fit needs two pairs at least; smaller cases are only pooled


def bradley_terry(
    votes: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0, by_case: bool = True
) -> dict[str, Any]:
    """{"pooled": {gen: {estimate, low, high, n, n_pairs}}, "by_case": {case: {gen: {...}}}}.

    Estimates are centred natural-log strengths (see the module docstring for
    ties, the prior and the equal weighting of cases); `n` = votes involving
    the generator, `n_pairs` = pairs. Intervals resample pairs within cases.
    """
    v = coded_votes(votes)
    v = v[v["gen_left"] != v["gen_right"]].reset_index(drop=True) if not v.empty else v
    if v.empty:
        return {"pooled": {}, "by_case": {}}
    gens = sorted(set(v["gen_left"]) | set(v["gen_right"]))
    pairs = _Pairs(v, gens)
    n_votes, n_pairs = _counts(v)
    rng = rng_for(seed, "bradley-terry")
    point = pairs.point()
    C = len(pairs.cases)
    if n_boot > 0 and C >= MIN_CASES_CASE_BOOT:
        # cases resampled: a t interval on the case-bootstrap standard error (C - 1 degrees of
        # freedom), as with few clusters the percentile interval of a cluster bootstrap is short
        cboot = pairs.resampled_cases(n_boot, rng)
        pooled = _summary(point, cboot, gens, n_votes, n_pairs)
        half = student_t.ppf(0.975, C - 1) * cboot.std(axis=0, ddof=1)
        for i, name in enumerate(gens):
            if pooled[name].get("low") is not None:
                pooled[name]["low"] = float(point[i] - half[i])
                pooled[name]["high"] = float(point[i] + half[i])
                pooled[name]["interval"] = CASE_INTERVAL
    else:
        boot = pairs.resampled(n_boot, rng) if n_boot > 0 else None
        pooled = _summary(point, boot, gens, n_votes, n_pairs)
        if boot is not None:
            for fig in pooled.values():
                fig["interval"] = PAIR_INTERVAL
    per_case: dict[str, Any] = {}
    if by_case:
        case_of = v["case_id"].astype(str)
        for c, name in enumerate(pairs.cases):
            keep = pairs.case == c
            if keep.sum() < MIN_CASE_PAIRS:
                continue  # one pair in a case fits nothing (an arena: thousands of such cases)
            # fit only the generators this case holds (keeps the matrices small)
            present = np.unique(np.concatenate([pairs.ga[keep], pairs.gb[keep]]))
            local = pairs.subset(keep, present)
            bt = local.resampled(n_boot, rng) if n_boot > 0 else None
            nv, npairs = _counts(v[case_of == name])
            per_case[str(name)] = _summary(
                local.point(), bt, [gens[i] for i in present], nv, npairs
            )
    return {"pooled": pooled, "by_case": per_case}


__all__ = ["DESCRIPTION", "PRIOR_PRECISION", "bradley_terry", "fit_bradley_terry"]
