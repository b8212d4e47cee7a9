"""The "pairwise" object of the report (docs/design.md 5.5): tallies, Bradley-Terry, position bias,
agreement among raters and of each judge with the human majority.

The pieces live in their own modules (pair_tallies, bradley_terry, position_bias);
agreement uses the one alpha and kappa of agreement.py on the shared
ItemBootstrap, with *pairs* as the resampling unit (all votes on a pair come
along together).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd

from .agreement import IDENTICAL, register_alpha, value_counts
from .bootstrap import ItemBootstrap, Pending, jsonable, ratio, undefined
from .bradley_terry import DESCRIPTION as BT_DESCRIPTION
from .bradley_terry import bradley_terry
from .frames import StudyFrames
from .judge_position import collapse_orders, has_both_orders, swap_figures
from .kappa import kappa_from_tables, register_cohen
from .pair_tallies import CODES, cell_tallies, coded_votes, generator_pair_tallies, human_majority
from .position_bias import position_bias, side_test

CODING = "choice coded as the pair's item a (smaller item id) / item b / both / neither"
_VALUES = np.arange(len(CODES), dtype=float)
MIN_SHARED_PAIRS = 2  # a kappa needs two shared pairs at least (on one it is 1 or undefined)


def _code_table(v: pd.DataFrame) -> tuple[np.ndarray, list[str], list[str]]:
    """(pairs x raters) table of code indices into CODES, -1 where a rater did not vote."""
    pairs = sorted(v["pair_id"].astype(str).unique())
    raters = sorted(v["rater"].astype(str).unique())
    pi = {p: i for i, p in enumerate(pairs)}
    ri = {r: i for i, r in enumerate(raters)}
    ci = {c: i for i, c in enumerate(CODES)}
    table = np.full((len(pairs), len(raters)), -1, dtype=np.int8)
    table[
        v["pair_id"].astype(str).map(pi).to_numpy(), v["rater"].astype(str).map(ri).to_numpy()
    ] = v["code"].map(ci).to_numpy()
    return table, pairs, raters


def rater_agreement(votes: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Krippendorff's alpha (nominal, a/b/both/neither) among raters on shared pairs, and Cohen kappas.

    {"rater_alpha": {estimate, low, high, n, n_pairs, n_raters, n_votes, coding},
     "rater_kappas": {"a|b": value}, "rater_kappas_detail": {"a|b": {estimate, low, high, n}}}
    """
    v = coded_votes(votes)
    n_raters = int(v["rater"].nunique()) if not v.empty else 0
    meta = {"n_pairs": 0, "n_raters": n_raters, "n_votes": 0, "coding": CODING}
    n_rater_pairs = n_raters * (n_raters - 1) // 2
    empty = {
        "rater_alpha": {**undefined(0, "needs two raters voting on the same pair"), **meta},
        "rater_kappas": {},
        "rater_kappas_detail": {},
        "rater_pairs": _rater_pairs(0, n_rater_pairs),
    }
    if v.empty:
        return empty
    table, pairs, raters = _code_table(v)
    shared = (table >= 0).sum(axis=1) >= 2
    if len(raters) < 2 or not shared.any():
        return empty
    plan = ItemBootstrap(len(pairs), n_boot, seed)
    r, c = np.nonzero(table >= 0)
    vc = value_counts(r, table[r, c].astype(float), _VALUES)
    alpha = register_alpha(plan, vc, "nominal")
    kappas: dict[str, Pending | dict[str, Any]] = {}
    for i, j in _sharing(table >= 0):
        both = np.flatnonzero((table[:, i] >= 0) & (table[:, j] >= 0))
        kappas[f"{raters[i]}|{raters[j]}"] = register_cohen(
            plan, both, table[both, i], table[both, j], _VALUES
        )["unweighted"]
    plan.run()
    ra = alpha.resolve()
    if ra["estimate"] is None:
        ra["note"] = "undefined: every vote on the shared pairs is the same"
    ra.update(
        n_pairs=int(shared.sum()),
        n_raters=len(raters),
        n_votes=int((table[shared] >= 0).sum()),
        coding=CODING,
    )
    detail = {k: p.resolve() if isinstance(p, Pending) else p for k, p in kappas.items()}
    for d in detail.values():
        if d["estimate"] is None and d.get("note") == IDENTICAL:
            d["note"] = "undefined: no variation"
    return {
        "rater_alpha": ra,
        "rater_kappas": {k: d["estimate"] for k, d in detail.items()},
        "rater_kappas_detail": detail,
        "rater_pairs": _rater_pairs(len(detail), len(raters) * (len(raters) - 1) // 2),
    }


def _sharing(voted: np.ndarray) -> list[tuple[int, int]]:
    """The rater pairs (i < j) that voted on at least MIN_SHARED_PAIRS of the same pairs, from a
    sparse overlap count: with thousands of one-vote raters (an arena's crowd) the pairs that
    share nothing are never enumerated: the report stays proportional to what it can say."""
    from scipy import sparse

    ind = sparse.csc_matrix(voted.astype(np.int32))
    overlap = sparse.triu(ind.T @ ind, k=1).tocoo()
    keep = overlap.data >= MIN_SHARED_PAIRS
    return sorted(zip(overlap.row[keep].tolist(), overlap.col[keep].tolist(), strict=True))


def _rater_pairs(compared: int, total: int) -> dict[str, Any]:
    """How many rater pairs have a kappa, and how many share too few pairs for one."""
    return {
        "compared": compared,
        "sharing_too_few": total - compared,
        "minimum_shared": MIN_SHARED_PAIRS,
        "note": (
            f"{total - compared} rater pairs voted on fewer than {MIN_SHARED_PAIRS} of the same "
            "pairs: no kappa for them (counted here, not listed)"
            if total - compared
            else None
        ),
    }


def macro_prf(y_true: Any, y_pred: Any) -> dict[str, float | None]:
    """Macro precision/recall/F1 over the labels in either sequence (0 where a label's
    precision or recall has no denominator, as scikit-learn's zero_division=0)."""
    t, p = np.asarray(list(y_true), dtype=object), np.asarray(list(y_pred), dtype=object)
    if not len(t):
        return {"macro_precision": None, "macro_recall": None, "macro_f1": None}
    labels = sorted(set(t) | set(p), key=str)
    prec, rec, f1 = [], [], []
    for lab in labels:
        tp = float(((t == lab) & (p == lab)).sum())
        npred, ntrue = float((p == lab).sum()), float((t == lab).sum())
        pr = tp / npred if npred else 0.0
        rc = tp / ntrue if ntrue else 0.0
        prec.append(pr)
        rec.append(rc)
        f1.append(2 * pr * rc / (pr + rc) if pr + rc else 0.0)
    return {
        "macro_precision": float(np.mean(prec)),
        "macro_recall": float(np.mean(rec)),
        "macro_f1": float(np.mean(f1)),
    }


def _macro_from_tables(s: np.ndarray, k: int, labels: np.ndarray) -> np.ndarray:
    """Macro precision, recall and F1 of a batch of summed confusion tables (rows: reference,
    columns: judge), over the fixed `labels` (those of the full data: the same quantity in
    every resample), 0 where a denominator is 0 (as macro_prf)."""
    t = s.reshape(len(s), k, k)
    tp = np.einsum("bii->bi", t)[:, labels]
    npred = t.sum(axis=1)[:, labels]
    ntrue = t.sum(axis=2)[:, labels]
    with np.errstate(divide="ignore", invalid="ignore"):
        pr = np.where(npred > 0, tp / np.where(npred > 0, npred, 1), 0.0)
        rc = np.where(ntrue > 0, tp / np.where(ntrue > 0, ntrue, 1), 0.0)
        f1 = np.where(pr + rc > 0, 2 * pr * rc / np.where(pr + rc > 0, pr + rc, 1), 0.0)
    return np.column_stack([pr.mean(axis=1), rc.mean(axis=1), f1.mean(axis=1)])


def _interval(d: dict[str, Any]) -> dict[str, Any]:
    return {"low": d["low"], "high": d["high"]}


def judge_agreement(
    votes: pd.DataFrame,
    judge_votes: pd.DataFrame,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    min_count: int = 10,
) -> dict[str, dict[str, Any]]:
    """Per judge: agreement and Cohen kappa with the human majority, its own position bias.

    {judge: {n, agreement_with_majority, kappa_vs_majority, agreement_interval,
    kappa_interval, n_no_majority, n_without_humans, position_bias,
    macro_precision, macro_recall, macro_f1 (each with a `_interval`), [note]}}. Intervals
    resample pairs.
    """
    # a judge that voted in both orders: its swap figures, then one vote per pair (MT-Bench)
    swaps: dict[str, dict[str, Any]] = {}
    if judge_votes is not None and len(judge_votes):
        parts = []
        for judge, g in judge_votes.groupby(judge_votes["rater"].astype(str), sort=True):
            if has_both_orders(g):
                swaps[str(judge)] = swap_figures(g, plan_seed=seed, n_boot=n_boot)
                g = collapse_orders(g)
            parts.append(g)
        judge_votes = pd.concat(parts, ignore_index=True)
    jv = coded_votes(judge_votes)
    if jv.empty:
        return {}
    majority, _ = human_majority(votes)
    hv = coded_votes(votes)
    human_pairs = set(hv["pair_id"].astype(str)) if not hv.empty else set()
    ci = {c: i for i, c in enumerate(CODES)}
    out: dict[str, dict[str, Any]] = {}
    for judge, rows in jv.groupby("rater", sort=True):
        pid = rows["pair_id"].astype(str)
        with_humans = pid.isin(human_pairs)
        has_major = pid.isin(majority.index)
        sel = rows[has_major.to_numpy()]
        ref = majority.loc[sel["pair_id"].astype(str)].to_numpy()
        pred = sel["code"].to_numpy()
        n = len(sel)
        d: dict[str, Any] = {
            "n": n,
            "n_no_majority": int((with_humans & ~has_major).sum()),
            "n_without_humans": int((~with_humans).sum()),
            # one vote per pair: the exact binomial test is valid as it is, where the sides were
            # dealt at random (else counts and a note); with both orders the test is on the
            # pairs whose two votes disagree (judge_position.py), valid whatever the layout
            "position_bias": swaps[str(judge)]["position_bias"]
            if str(judge) in swaps
            else side_test(rows, min_count),
        }
        if str(judge) in swaps:
            d["swap_consistency"] = swaps[str(judge)]["swap_consistency"]
            d["n_pairs_both_orders"] = swaps[str(judge)]["n_pairs"]
            d["inconsistent_as_tie"] = True
        if n == 0:
            d.update(
                agreement_with_majority=None,
                kappa_vs_majority=None,
                note="no pair with a human majority",
            )
            out[str(judge)] = d
            continue
        plan = ItemBootstrap(n, n_boot, seed)
        a = np.array([ci[x] for x in ref], dtype=np.int64)
        b = np.array([ci[x] for x in pred], dtype=np.int64)
        agree = (a == b).astype(float)
        rows_n = np.arange(n)
        share = plan.add_dense(rows_n, np.column_stack([np.ones(n), agree]), ratio)
        kap = register_cohen(plan, rows_n, a, b, _VALUES)["unweighted"]
        kk = len(CODES)
        labels = np.unique(np.concatenate([a, b]))
        onehot = np.zeros((n, kk * kk))
        onehot[rows_n, a * kk + b] = 1.0
        prf = plan.add_dense(
            rows_n, onehot, functools.partial(_macro_from_tables, k=kk, labels=labels)
        )
        plan.run()
        ag = Pending(share, n).resolve()
        k = kap.resolve()
        d["agreement_with_majority"] = float(agree.mean())
        d["agreement_interval"] = _interval(ag)
        table = np.bincount(a * len(CODES) + b, minlength=len(CODES) ** 2).reshape(len(CODES), -1)
        kv = kappa_from_tables(table[None], _VALUES)[0, 0]
        d["kappa_vs_majority"] = float(kv) if np.isfinite(kv) else None
        if d["kappa_vs_majority"] is None:
            d["note"] = "kappa undefined: a single class in reference and judge"
            d["kappa_interval"] = {"low": None, "high": None}
        else:
            d["kappa_interval"] = _interval(k)
        for key, fig in (("agreement_interval", ag), ("kappa_interval", k)):
            if fig.get("note") and d[key]["low"] is None:
                d[key]["note"] = fig["note"]
        d.update(macro_prf(ref, pred))
        for col, key in enumerate(("macro_precision", "macro_recall", "macro_f1")):
            d[f"{key}_interval"] = _interval(Pending(prf, n, col=col).resolve())
        out[str(judge)] = d
    return out


def pairwise_section(
    frames: StudyFrames, *, n_boot: int = 1000, seed: int = 0, min_count: int = 10
) -> dict[str, Any]:
    """The "pairwise" object of the report JSON (docs/design.md 5.5), JSON-safe.

    Contract keys: cells, bradley_terry, position_bias {left, right, p_value,
    by_rater}, rater_alpha {estimate, low, high}, judges {name: {n,
    agreement_with_majority, kappa_vs_majority}}. Extras: generator_pairs,
    bradley_terry_by_case, rater_kappas(_detail), majority_counts, settings.
    """
    votes = frames.pair_votes
    bt = bradley_terry(votes, n_boot=n_boot, seed=seed)
    agreement = rater_agreement(votes, n_boot=n_boot, seed=seed + 1)
    majority, n_undefined = human_majority(votes)
    counts = majority.value_counts() if len(majority) else pd.Series(dtype=int)
    section: dict[str, Any] = {
        "cells": cell_tallies(votes, min_count=min_count),
        "generator_pairs": generator_pair_tallies(votes, min_count=min_count),
        "bradley_terry": bt["pooled"],
        "bradley_terry_by_case": bt["by_case"],
        "position_bias": position_bias(votes, min_count=min_count),
        "rater_alpha": agreement["rater_alpha"],
        "rater_kappas": agreement["rater_kappas"],
        "rater_kappas_detail": agreement["rater_kappas_detail"],
        "rater_pairs": agreement["rater_pairs"],
        "majority_counts": {c: int(counts.get(c, 0)) for c in CODES} | {"undefined": n_undefined},
        "judges": judge_agreement(
            votes, frames.judge_pair_votes, n_boot=n_boot, seed=seed + 2, min_count=min_count
        ),
        "settings": {
            "n_boot": n_boot,
            "seed": seed,
            "min_count": min_count,
            "bradley_terry": BT_DESCRIPTION,
            "interval": "95% percentile bootstrap over pairs (all votes of a pair together)",
        },
    }
    if not section["bradley_terry"]:
        section["bradley_terry_note"] = "no votes between two different generators"
    return jsonable(section)


__all__ = ["judge_agreement", "macro_prf", "pairwise_section", "rater_agreement"]
