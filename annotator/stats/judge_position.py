"""A judge's position bias on pairs it voted on in both orders (A|B and B|A).

Each pair asked both ways gives two votes. Mapped back to the items, they are
*consistent* when they pick the same item (or the same tie); otherwise the
side decided. Among inconsistent pairs with two decisive votes, "left, left"
is a preference for the first-shown output and "right, right" for the second.
Under no position bias the two orders are exchangeable, so given that a pair
is inconsistent both patterns are equally likely: the exact two-sided binomial
test of left-left against 1/2 is valid whatever the judge's quality, with one
count per pair (the two votes of a pair are never counted as independent).

For agreement with the humans, a consistent pair keeps its vote and an
inconsistent one counts as a tie ("both"): the MT-Bench convention
(Zheng et al. 2023), so a judge cannot gain agreement from its position.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from .bootstrap import ItemBootstrap, Pending, ratio

LEVEL = 0.05
TIES = ("both", "neither")


def _outcomes(v: pd.DataFrame) -> np.ndarray:
    """Each vote as an item (its id) or a tie."""
    ch = v["choice"].to_numpy()
    return np.where(
        ch == "left",
        v["item_left"].astype(str).to_numpy(),
        np.where(ch == "right", v["item_right"].astype(str).to_numpy(), ch.astype(str)),
    )


def _ordered(votes: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Votes, the last per order, sorted so a pair's order with the smaller left item is first."""
    v = votes.drop_duplicates([*by, "item_left"], keep="last").copy()
    v["outcome"] = _outcomes(v)
    v["_left"] = v["item_left"].astype(str)
    v["_pair"] = v["pair_id"].astype(str)
    return v.sort_values([*(["rater"] if "rater" in by else []), "_pair", "_left"], kind="stable")


def paired_orders(votes: pd.DataFrame) -> pd.DataFrame:
    """One row per pair voted in both orders: pair_id, choice_1, choice_2 (the order with the
    smaller left item first), consistent, pattern (LL, RR, LR, RL, or T for a tie)."""
    cols = ["pair_id", "choice_1", "choice_2", "consistent", "pattern"]
    if votes is None or not len(votes):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    v = _ordered(votes, ["pair_id"])
    g = v.groupby("_pair", sort=True)
    agg = g.agg(
        n=("choice", "size"),
        choice_1=("choice", "first"),
        choice_2=("choice", "last"),
        o1=("outcome", "first"),
        o2=("outcome", "last"),
    )
    agg = agg[agg["n"] == 2]
    letter = {"left": "L", "right": "R"}
    pattern = agg["choice_1"].map(lambda c: letter.get(c, "T")) + agg["choice_2"].map(
        lambda c: letter.get(c, "T")
    )
    return pd.DataFrame(
        {
            "pair_id": agg.index.astype(str),
            "choice_1": agg["choice_1"].to_numpy(),
            "choice_2": agg["choice_2"].to_numpy(),
            "consistent": (agg["o1"] == agg["o2"]).to_numpy(),
            "pattern": pattern.to_numpy(),
        },
        columns=cols,
    )


def swap_figures(votes: pd.DataFrame, *, plan_seed: int = 0, n_boot: int = 1000) -> dict[str, Any]:
    """Consistency and left preference of one judge's two-order votes.

    {"n_pairs", "consistent", "swap_consistency": {estimate, low, high, n} (bootstrap over
    pairs), "position_bias": {"left_left", "right_right", "p_value", "share_left_left",
    "flagged", "test", "left", "right"}}.
    """
    p = paired_orders(votes)
    n = len(p)
    ll = int((p["pattern"] == "LL").sum()) if n else 0
    rr = int((p["pattern"] == "RR").sum()) if n else 0
    dec = votes[votes["choice"].isin(("left", "right"))] if len(votes) else votes
    bias: dict[str, Any] = {
        "left": int((dec["choice"] == "left").sum()) if len(dec) else 0,
        "right": int((dec["choice"] == "right").sum()) if len(dec) else 0,
        "left_left": ll,
        "right_right": rr,
        "test": "exact two-sided binomial test of left-left against right-right among "
        "inconsistent pairs with two decisive votes",
    }
    if ll + rr:
        bias["p_value"] = float(binomtest(ll, ll + rr, 0.5).pvalue)
        bias["share_left_left"] = ll / (ll + rr)
    else:
        bias["p_value"] = None
        bias["note"] = "no inconsistent pair with two decisive votes: nothing to test"
    bias["flagged"] = bool(bias["p_value"] is not None and bias["p_value"] < LEVEL)
    out: dict[str, Any] = {"n_pairs": n, "consistent": int(p["consistent"].sum()) if n else 0}
    if n:
        plan = ItemBootstrap(n, n_boot, plan_seed)
        ok = p["consistent"].to_numpy(dtype=float)
        reps = plan.add_dense(np.arange(n), np.column_stack([np.ones(n), ok]), ratio)
        plan.run()
        out["swap_consistency"] = Pending(reps, n).resolve()
    else:
        out["swap_consistency"] = {
            "estimate": None,
            "low": None,
            "high": None,
            "n": 0,
            "note": "no pair voted in both orders",
        }
    out["position_bias"] = bias
    return out


def collapse_orders(votes: pd.DataFrame) -> pd.DataFrame:
    """One vote per judge and pair: a pair voted in both orders keeps its vote when the two
    agree and becomes a tie ("both") when they do not (MT-Bench); a pair voted once is kept."""
    if votes is None or not len(votes):
        return votes
    v = _ordered(votes, ["rater", "pair_id"])
    key = [v["rater"].astype(str), v["_pair"]]
    mixed = v.groupby(key, sort=False)["outcome"].transform("nunique") > 1
    first = ~v.duplicated(["rater", "_pair"], keep="first")
    out = v[first.to_numpy()].copy()
    out.loc[mixed[first].to_numpy(), "choice"] = "both"
    return out.drop(columns=["outcome", "_left", "_pair"]).reset_index(drop=True)


def has_both_orders(votes: pd.DataFrame) -> bool:
    if votes is None or not len(votes):
        return False
    return bool((votes.groupby(votes["pair_id"].astype(str))["item_left"].nunique() > 1).any())


__all__ = ["collapse_orders", "has_both_orders", "paired_orders", "swap_figures"]
