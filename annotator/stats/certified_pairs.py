"""Certified judging of the judges' pair votes: which pairs a judge may decide without a human,
with the guarantee of stats/selective.py (the PAC rule and its cascade), beside the items'
(stats/certified.py).

A judge votes on each pair in both orders (judge/pairs.py). Its vote on a pair is the one the
pair comparisons read (judge_position.collapse_orders): the two orders' common answer when they
agree, a tie ("both") when they do not, the single vote when only one order was voted. Its
confidence is how consistent it was across the orders, a coarse one with three values: both
orders agree 1.0, one order only 0.75, the orders disagree 0.5. The candidate thresholds are
those three, so the judge decides its consistent pairs (1.0), those and the pairs voted once
(0.75), every pair (0.5), or nothing, and each still needs MIN_ABOVE calibration pairs at or
above it.

On a calibration pair the judge agrees when its vote, coded against the pair's fixed
orientation (pair_tallies.coded_votes: item a, item b, both, neither), equals the humans' clear
majority (pair_tallies.human_majority, the reference the judges' pair agreement reads); a pair
whose humans have no unique most frequent vote is left out and counted (`n_unclear`).

The calibration set is the recorded random pair sample (`annotator assign --pair-sample N`, the
one the debiased win rates read) where one was drawn, else every pair humans voted on, with the
note that the guarantee then assumes those pairs exchangeable with the rest. The pairs to decide
are those a judge voted on that no human has; pairs with a human vote are "already rated" (a pair
no one voted on is in no table the figures read: `annotator assign --pair-overlap K` deals it).

Pair votes carry no judge version in the study's tables (a pair run's version is kept with the
run, not with each vote): the report names the judge, and the label export adds the version of
the judge's latest pair run (services/escalation.py). Conformal alignment does not decide pairs:
with three confidence values its p-values cannot separate pairs the threshold does not already
separate, so the pair decisions always follow the PAC rule, whatever `certified_mode` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .debiased import sample_of
from .debiased_pairs import PAIR_SAMPLE_SETTING
from .judge_position import collapse_orders, paired_orders
from .pair_tallies import coded_votes, human_majority
from .selective import Threshold, cascade, pac_threshold

METRIC = "pair_vote"  # the key of the pair votes' blocks beside the metrics' in `certified`
CONSISTENT, ONE_ORDER, INCONSISTENT = 1.0, 0.75, 0.5
FROM_SAMPLE = "random pair sample"
FROM_RATED = "all pairs humans voted on (assumed exchangeable)"
PAIR_DECISION_COLUMNS = [
    "pair_id",
    "case_id",
    "item_a",
    "item_b",
    "gen_a",
    "gen_b",
    "decision",  # accepted | escalated | rated
    "judge",
    "threshold",
    "confidence",
    "code",  # the judge's vote where accepted, the humans' majority where rated (None: unclear)
]


@dataclass(frozen=True)
class PairVotes:
    """Each judge's one vote per pair, coded, with its confidence (columns pair_id, case_id,
    item_a, item_b, gen_a, gen_b, judge, code, conf)."""

    table: pd.DataFrame

    @classmethod
    def of(cls, judge_votes: pd.DataFrame | None) -> PairVotes:
        cols = ["pair_id", "case_id", "item_a", "item_b", "gen_a", "gen_b", "judge", "code", "conf"]
        if judge_votes is None or not len(judge_votes):
            return cls(pd.DataFrame({c: pd.Series(dtype=object) for c in cols}))
        parts = []
        for judge, g in judge_votes.groupby(judge_votes["rater"].astype(str), sort=True):
            v = coded_votes(collapse_orders(g))
            both = paired_orders(g).set_index("pair_id")["consistent"]
            pid = v["pair_id"].astype(str)
            consistent = both.reindex(pid).to_numpy(dtype=object)
            conf = np.where(
                pd.isna(consistent),
                ONE_ORDER,
                np.where(consistent == True, CONSISTENT, INCONSISTENT),  # noqa: E712
            )
            parts.append(
                pd.DataFrame(
                    {
                        "pair_id": pid.to_numpy(dtype=object),
                        "case_id": v["case_id"].to_numpy(dtype=object),
                        "item_a": v["item_a"].astype(str).to_numpy(dtype=object),
                        "item_b": v["item_b"].astype(str).to_numpy(dtype=object),
                        "gen_a": v["gen_a"].to_numpy(dtype=object),
                        "gen_b": v["gen_b"].to_numpy(dtype=object),
                        "judge": str(judge),
                        "code": v["code"].to_numpy(dtype=object),
                        "conf": conf.astype(float),
                    }
                )
            )
        return cls(pd.concat(parts, ignore_index=True))


def _pool(settings: dict[str, Any], voted: set[str]) -> tuple[set[str], str | None, str]:
    """(pair ids of the calibration pool, what it is, a note)."""
    sample = sample_of(settings, PAIR_SAMPLE_SETTING)
    if sample is None:
        return (
            voted,
            FROM_RATED,
            "no random pair sample recorded (`annotator assign --pair-sample N --pair-overlap K`): "
            "every pair humans voted on is the calibration set, and the guarantee assumes those "
            "pairs are exchangeable with the rest (hand-picked pairs break it)",
        )
    if (sample.get("request") or {}).get("active") or sample.get("unsampled"):
        return (
            set(),
            None,
            "the pair sample was not drawn uniformly: no threshold is certified on pairs",
        )
    note = "human votes on the pairs of the recorded random pair sample only"
    rates = [float(r) for r in (sample.get("rates") or {}).values() if float(r) > 0]
    if rates and max(rates) > 1.5 * min(rates):
        note += (
            f"; the sample's rate differs by generator pair ({min(rates):.2f} to "
            f"{max(rates):.2f}), so the guarantee holds for pairs drawn the way the sample was"
        )
    return {str(p) for p in sample["items"]}, FROM_SAMPLE, note


@dataclass(frozen=True)
class PairCertification:
    """The pair part of `certified`: per judge the block (`judges[judge]["pair_vote"]`), the
    cascade's stages, the split, the section `pairs`, and one decision per pair."""

    judges: dict[str, dict[str, Any]]
    stages: list[dict[str, Any]]
    split: dict[str, Any]
    section: dict[str, Any]
    decisions: pd.DataFrame


def certify_pairs(
    votes: pd.DataFrame | None,
    judge_votes: pd.DataFrame | None,
    settings: dict[str, Any],
    *,
    alpha: float,
    delta: float,
    order: list[str] | None,
) -> PairCertification | None:
    """The pair votes' certification (module docstring); None when no judge voted on a pair.
    `order`: the setting `certified_cascade` (judges without pair votes are skipped)."""
    from .certified import judge_block

    jv = PairVotes.of(judge_votes).table
    if not len(jv):
        return None
    hv = coded_votes(votes)
    human_pairs = set(hv["pair_id"].astype(str)) if len(hv) else set()
    majority, _ = human_majority(votes) if len(hv) else (pd.Series(dtype=object), 0)
    pool, calibration, note = _pool(settings, human_pairs)
    cal = sorted(pool & human_pairs)
    cal_ok = [p for p in cal if p in majority.index]
    n_unclear = len(cal) - len(cal_ok)
    ref = majority.reindex(cal_ok).to_numpy(dtype=object)
    # every pair a judge or a human voted on, with its fixed orientation
    meta = ["pair_id", "case_id", "item_a", "item_b", "gen_a", "gen_b"]
    both = pd.concat([jv[meta], hv[meta].astype({"pair_id": str})], ignore_index=True)
    pairs = both.drop_duplicates("pair_id").set_index("pair_id")
    todo = sorted(set(jv["pair_id"]) - human_pairs)
    judges = sorted(jv["judge"].unique())
    chosen = [j for j in (order or judges) if j in set(judges)]

    def conf_and_disagree(name: str, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        mine = jv[jv["judge"] == name].set_index("pair_id")
        conf = mine["conf"].reindex(ids).to_numpy(dtype=float)
        code = mine["code"].reindex(ids).to_numpy(dtype=object)
        return conf, code

    blocks: dict[str, dict[str, Any]] = {}
    for name in judges:
        conf, code = conf_and_disagree(name, cal_ok)
        has = ~np.isnan(conf)
        disagree = code[has] != ref[has]
        t = (
            pac_threshold(conf[has], disagree.astype(bool), alpha=alpha, delta=delta)
            if calibration
            else Threshold(None, 0, 0, 0, None, 0, 0)
        )
        conf_t, _ = conf_and_disagree(name, todo)
        with np.errstate(invalid="ignore"):
            n_acc = int((conf_t >= t.threshold).sum()) if t.accepted else 0
        mu = float(disagree.mean()) if has.any() else None
        blocks[name] = judge_block(
            t,
            mu,
            alpha=alpha,
            delta=delta,
            n_to_decide=len(todo),
            n_accepted=n_acc,
            n_unclear=n_unclear,
            version=None,
            calibration=calibration,
            unit="pairs",
        ) | {"confidence_rule": "consistency across the two orders (1.0, 0.75 one order, 0.5)"}
    conf_c = np.full((len(chosen), len(cal_ok)), np.nan)
    dis_c = np.zeros((len(chosen), len(cal_ok)), dtype=bool)
    conf_t = np.full((len(chosen), len(todo)), np.nan)
    code_t = np.full((len(chosen), len(todo)), None, dtype=object)
    for s, name in enumerate(chosen):
        c, code = conf_and_disagree(name, cal_ok)
        conf_c[s] = c if calibration else np.nan
        dis_c[s] = ~pd.isna(code) & (code != ref)
        conf_t[s], code_t[s] = conf_and_disagree(name, todo)
    casc = cascade(conf_c, dis_c, conf_t, alpha=alpha, delta=delta)
    stages, accepted = [], {}
    for s, name in enumerate(chosen):
        t = casc.stages[s]
        n = int((casc.test_stage == s).sum())
        stages.append(t.stage(name, METRIC, None, casc.deltas[s], n))
        accepted[name] = n
    dec = _decisions(pairs, todo, human_pairs, majority, casc, chosen, conf_t, code_t)
    split = {
        "accepted": accepted,
        "escalated": int((casc.test_stage < 0).sum()),
        "already_rated": len(human_pairs),
        "n_items": len(pairs),
    }
    section = {
        "calibration": calibration,
        "calibration_note": note,
        "n_calibration": len(cal),
        "n_unclear": n_unclear,
        "order": chosen,
        "confidence": "the judge's consistency across the two orders: both agree 1.0, one order "
        "voted 0.75, the orders disagree 0.5 (its vote is then a tie)",
        "n_pairs": len(pairs),
        "accepted": int((dec["decision"] == "accepted").sum()),
        "escalated": int((dec["decision"] == "escalated").sum()),
        "already_rated": int((dec["decision"] == "rated").sum()),
        "decisions": [
            {k: (None if pd.isna(v) else v) for k, v in r.items()}
            for r in dec[
                ["pair_id", "decision", "judge", "threshold", "confidence", "code"]
            ].to_dict("records")
        ],
    }
    return PairCertification(blocks, stages, split, section, dec)


def _decisions(
    pairs: pd.DataFrame,
    todo: list[str],
    human_pairs: set[str],
    majority: pd.Series,
    casc: Any,
    chosen: list[str],
    conf_t: np.ndarray,
    code_t: np.ndarray,
) -> pd.DataFrame:
    """One row per pair: rated (the humans' majority code, None when unclear), accepted (the
    judge and its vote) or escalated; by pair id."""
    ids = pairs.index.astype(str).to_numpy(dtype=object)
    out = pairs[["case_id", "item_a", "item_b", "gen_a", "gen_b"]].reset_index(drop=True)
    out.insert(0, "pair_id", ids)
    n = len(ids)
    stage = np.full(n, -1, dtype=np.int64)
    col = pd.Index(todo, dtype=object).get_indexer(ids)
    undecided = col >= 0
    stage[undecided] = np.asarray(casc.test_stage, dtype=np.int64)[col[undecided]]
    rated = pd.Index(sorted(human_pairs), dtype=object).get_indexer(ids) >= 0
    acc = ~rated & (stage >= 0)
    judge = np.full(n, None, dtype=object)
    threshold = np.full(n, None, dtype=object)
    confidence = np.full(n, None, dtype=object)
    code = np.full(n, None, dtype=object)
    if acc.any():
        s, c = stage[acc], col[acc]
        judge[acc] = np.array(chosen, dtype=object)[s]
        threshold[acc] = np.array([t.threshold for t in casc.stages], dtype=object)[s]
        confidence[acc] = conf_t[s, c].astype(float)
        code[acc] = code_t[s, c]
    code[rated] = majority.reindex(ids[rated]).to_numpy(dtype=object)
    out["decision"] = np.where(rated, "rated", np.where(acc, "accepted", "escalated"))
    out["judge"], out["threshold"] = judge, threshold
    out["confidence"], out["code"] = confidence, code
    out = out[PAIR_DECISION_COLUMNS].astype(object)
    out = out.where(out.notna(), None)  # None, not NaN: the JSON and the CSV say "no value"
    return out.sort_values("pair_id", kind="stable").reset_index(drop=True)


def no_pair_decisions() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in PAIR_DECISION_COLUMNS})


__all__ = [
    "METRIC",
    "PAIR_DECISION_COLUMNS",
    "PairCertification",
    "PairVotes",
    "certify_pairs",
    "no_pair_decisions",
]
