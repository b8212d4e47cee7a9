"""Debiased win rates: a judge's pair votes on every pair, humans' on a random sample (PPI++).

The pairwise twin of stats/debiased.py. Per generator pair "A vs B" (names
sorted, as pair_tallies.pair_key) the figure is A's win rate: a pair's value is 1 when A's
output is preferred, 0 when B's, 1/2 for a tie ("both" or "neither"). The judge's value per
pair is its vote, one per pair (a pair voted in both orders keeps its vote when the two agree
and is a tie when they do not, as judge_position.collapse_orders); the humans' is the mean of
their votes on the pair (several humans averaged per pair first). Only pairs of the recorded
random pair sample (`annotator assign --pair-sample N`, study setting `human_pair_sample`, in
the item sample's form) carry human values into the estimate; votes on other pairs are
counted, never used. The estimator is stats/debiased.py's, unit for unit: PPI++ with power
tuning, every case weighted equally, Hajek weights 1/pi, the delete-one-case jackknife when
pairs share cases (several pairs of a generator pair in one case), t on the sampled units
less one. With one pair per case, equal probabilities and the plain interval it is
ppi_py.ppi_mean_pointestimate / ppi_mean_ci to 1e-9 (tests/unit/test_debiased_pairs.py).
Coverage: tests/benchmarks/validity.md, model P.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .debiased import _one_figure, sample_of
from .debiased_bt import bt_from_pairs
from .judge_position import collapse_orders, has_both_orders
from .pair_tallies import coded_votes, pair_key

PAIR_SAMPLE_SETTING = "human_pair_sample"  # the recorded random pair sample (services/sampling.py)
FIGURE = "win rate of the first-named generator of the pair (a tie counts 1/2)"

NO_PAIR_SAMPLE = (
    "no random pair sample recorded: draw one with `annotator assign --pair-sample N "
    "--pair-overlap K`; human votes on hand-picked pairs cannot correct the judge"
)


def pair_values(votes: pd.DataFrame | None) -> pd.DataFrame:
    """One row per vote: pair_id, case_id, key ("A vs B"), rater and value (1: A preferred,
    0: B, 0.5: a tie). Votes between two outputs of one generator are left out."""
    cols = ["pair_id", "case_id", "key", "rater", "value"]
    v = coded_votes(votes)
    v = v[v["gen_a"].astype(str) != v["gen_b"].astype(str)] if len(v) else v
    if not len(v):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    first = np.minimum(v["gen_a"].astype(str), v["gen_b"].astype(str)).to_numpy()
    win = v["winner"].to_numpy()
    value = np.where(pd.isna(win), 0.5, (win == first).astype(float))
    return pd.DataFrame(
        {
            "pair_id": v["pair_id"].astype(str).to_numpy(),
            "case_id": v["case_id"].fillna("(none)").astype(str).to_numpy(),
            "key": [pair_key(a, b) for a, b in zip(v["gen_a"], v["gen_b"], strict=True)],
            "rater": v["rater"].astype(str).to_numpy(),
            "value": value.astype(float),
        }
    )


def _judge_values(judge_votes: pd.DataFrame | None) -> pd.DataFrame:
    """The judges' votes, one per judge and pair (both orders collapsed), as pair_values."""
    if judge_votes is None or not len(judge_votes):
        return pair_values(None)
    parts = []
    for _, g in judge_votes.groupby(judge_votes["rater"].astype(str), sort=True):
        parts.append(collapse_orders(g) if has_both_orders(g) else g)
    return pair_values(pd.concat(parts, ignore_index=True))


def debiased_pairs_section(
    votes: pd.DataFrame | None,
    judge_votes: pd.DataFrame | None,
    settings: dict[str, Any],
    *,
    min_labelled: int = 10,
    alpha: float = 0.05,
) -> dict[str, Any] | None:
    """Per judge and generator pair: PPI++, humans-only and judge-only win rates (the report's
    `debiased.pairs`). The pairs are those the judge voted on; a drawn pair no human has voted
    on yet is left out, and the answered share of a stratum's draw stands for it (as items).
    None when the study has neither judge pair votes nor a pair sample."""
    from .debiased_value import judge_value  # it imports stats/debiased.py, as this module

    jv = _judge_values(judge_votes)
    sample = sample_of(settings, PAIR_SAMPLE_SETTING)
    if sample is None and not len(jv):
        return None  # the study compares no pairs: nothing to say
    if sample is None:
        return {"recorded": False, "note": NO_PAIR_SAMPLE, "figure": FIGURE, "judges": {}}
    pi_of = {str(k): float(v) for k, v in sample["items"].items()}
    rates = {str(g): float(r) for g, r in (sample.get("rates") or {}).items()}
    hv = pair_values(votes)
    sampled = hv[hv["pair_id"].isin(pi_of.keys())]
    y = sampled.groupby("pair_id")["value"].mean()
    human_pairs = set(hv["pair_id"])
    out: dict[str, Any] = {
        "recorded": True,
        "sample": {
            "seed": sample.get("seed"),
            "design": sample.get("design"),
            "n_drawn": len(pi_of),
            "n_drawn_answered": int(len(y)),
            "n_human_pairs_outside_sample": len(human_pairs - set(pi_of)),
        },
        "used": "human votes on the pairs of the recorded random pair sample only; votes on "
        "other pairs are counted here and never enter the estimates",
        "figure": FIGURE,
        "judges": {},
    }
    for judge, rows in jv.groupby("rater", sort=True):
        f = rows.groupby("pair_id").agg(
            f=("value", "mean"), case_id=("case_id", "first"), key=("key", "first")
        )
        df = f.join(y.rename("y"))
        df["in_sample"] = df.index.isin(pi_of.keys())
        drawn_pi = df.index.to_series().map(pi_of)
        df["pi"] = drawn_pi.where(df["in_sample"], df["key"].map(rates)).fillna(0.0).astype(float)
        by_pair: dict[str, Any] = {}
        for key, sub in df.groupby("key", sort=True):
            first, second = str(key).split(" vs ", 1)
            fig = _one_figure(sub, True, min_labelled, alpha, (0.0, 1.0))
            fig["judge_value"] = judge_value(sub, fig, alpha=alpha)
            by_pair[str(key)] = {"first": first, "second": second, **fig}
        if by_pair:
            out["judges"][str(judge)] = {"by_pair": by_pair, "bradley_terry": bt_from_pairs(df)}
    return out


__all__ = ["FIGURE", "PAIR_SAMPLE_SETTING", "debiased_pairs_section", "pair_values"]
