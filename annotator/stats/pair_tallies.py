"""Pair votes coded against a fixed orientation, tallied per cell, and the human majority.

`left`/`right` in a vote are the sides *shown*. For agreement and for comparing
a judge with the humans, a vote is re-coded against a fixed orientation of its
pair: `a` = the pair's item with the smaller item id, `b` the other (as the store
keeps pairs), plus `both` / `neither`. So two raters who preferred the same item
agree even if it was dealt to different sides. Categories are pooled across
pairs as a/b, not as generator names: with generator names as categories,
chance agreement between pairs of different generators is impossible and alpha
is inflated (PandaLM: 0.9016 with generator names vs 0.8642 with a/b, the latter
equal to the published left/right coding because PandaLM always shows `a` on
the left).

A share is published only from `min_count` votes (10 by default); below that,
counts alone with a "note".
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .frames import PAIR_COLUMNS

CHOICES = ("left", "right", "both", "neither")
TIES = ("both", "neither")
CODES = ("a", "b", "both", "neither")

_CODED_EXTRA = ["item_a", "item_b", "gen_a", "gen_b", "code", "winner"]
# the vote frame's columns (frames.PAIR_COLUMNS) but its time: a tally does not read it
_VOTE_COLUMNS = [c for c in PAIR_COLUMNS if c != "created_at"]


def pair_key(gen_a: str, gen_b: str) -> str:
    """The unordered generator pair, names sorted: "<gen A> vs <gen B>"."""
    a, b = sorted((str(gen_a), str(gen_b)))
    return f"{a} vs {b}"


def coded_votes(votes: pd.DataFrame | None) -> pd.DataFrame:
    """Votes with a fixed orientation per pair and the choice coded against it.

    Adds item_a/item_b (sorted item ids), gen_a/gen_b, `code` in CODES and
    `winner` (the generator chosen, None for a tie). Rows with an unknown
    choice are dropped; a rater's repeated vote on a pair keeps the last row.
    """
    if votes is None or len(votes) == 0:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in [*_VOTE_COLUMNS, *_CODED_EXTRA]})
    v = votes[votes["choice"].isin(CHOICES)].copy()
    v = v.drop_duplicates(subset=["rater", "pair_id"], keep="last")
    left_is_a = v["item_left"].astype(str) <= v["item_right"].astype(str)
    v["item_a"] = np.where(left_is_a, v["item_left"], v["item_right"])
    v["item_b"] = np.where(left_is_a, v["item_right"], v["item_left"])
    v["gen_a"] = np.where(left_is_a, v["gen_left"], v["gen_right"])
    v["gen_b"] = np.where(left_is_a, v["gen_right"], v["gen_left"])
    ch = v["choice"].to_numpy()
    v["code"] = np.where(
        np.isin(ch, TIES), ch, np.where((ch == "left") == left_is_a.to_numpy(), "a", "b")
    )
    v["winner"] = np.where(
        ch == "left", v["gen_left"], np.where(ch == "right", v["gen_right"], None)
    )
    return v.reset_index(drop=True)


def _tally(rows: pd.DataFrame, gen_a: str, gen_b: str, min_count: int) -> dict[str, Any]:
    counts = rows["choice"].value_counts()
    n = int(len(rows))
    out: dict[str, Any] = {"n": n}
    for c in CHOICES:
        out[c] = int(counts.get(c, 0))
    wins = rows["winner"].dropna().value_counts()
    out["wins"] = {g: int(wins.get(g, 0)) for g in dict.fromkeys((gen_a, gen_b))}
    if n >= min_count:
        share = {g: w / n for g, w in out["wins"].items()}
        share.update(both=out["both"] / n, neither=out["neither"] / n)
        out["share"] = share
    else:
        out["note"] = f"n={n} is below the minimum of {min_count} votes for a share"
    return out


def _keyed(votes: pd.DataFrame) -> pd.DataFrame:
    v = coded_votes(votes)
    if not v.empty:
        v["key"] = [pair_key(a, b) for a, b in zip(v["gen_a"], v["gen_b"], strict=True)]
    return v


def cell_tallies(
    votes: pd.DataFrame, *, min_count: int = 10
) -> dict[str, dict[str, dict[str, Any]]]:
    """{case_id: {"<gen A> vs <gen B>": {n, left, right, both, neither, wins, [share|note]}}}.

    left/right count the side shown; `wins` counts the generator chosen; `share`
    (fractions of n: each generator's wins, both, neither) appears only when
    n >= min_count.
    """
    v = _keyed(votes)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if v.empty:
        return out
    for (case, key), rows in v.groupby(["case_id", "key"], sort=True):
        a, b = str(key).split(" vs ", 1)
        out.setdefault(str(case), {})[str(key)] = _tally(rows, a, b, min_count)
    return out


def generator_pair_tallies(
    votes: pd.DataFrame, *, min_count: int = 10
) -> dict[str, dict[str, Any]]:
    """The same tallies pooled over cells, per unordered generator pair."""
    v = _keyed(votes)
    if v.empty:
        return {}
    out = {}
    for key, rows in v.groupby("key", sort=True):
        a, b = str(key).split(" vs ", 1)
        out[str(key)] = _tally(rows, a, b, min_count) | {"n_cells": int(rows["case_id"].nunique())}
    return out


def human_majority(votes: pd.DataFrame) -> tuple[pd.Series, int]:
    """The unique most frequent code per pair_id (a plurality), and how many pairs have none
    (a tie at the top: excluded and counted)."""
    v = coded_votes(votes)
    if v.empty:
        return pd.Series(dtype=object), 0
    counts = v.groupby(["pair_id", "code"]).size().unstack(fill_value=0)
    top = counts.max(axis=1)
    unique = (counts.eq(top, axis=0)).sum(axis=1) == 1
    majority = counts[unique].idxmax(axis=1)
    majority.index = majority.index.astype(str)
    return majority, int((~unique).sum())


__all__ = [
    "CHOICES",
    "CODES",
    "TIES",
    "cell_tallies",
    "coded_votes",
    "generator_pair_tallies",
    "human_majority",
    "pair_key",
]
