"""Each judgement's place in its session (fatigue._positions), ranked over codes, is the
groupby's rank(method="first") over (rater, session) divided by the group's size: ties in table
order, missing orders, raters and sessions left out, several sessions per rater."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from annotator.stats.fatigue import _positions


def _by_groupby(j: pd.DataFrame) -> pd.DataFrame:
    """The place as the groupby computed it (the code before ranking over codes)."""
    first = j.drop_duplicates(["rater", "item_id"])
    first = first[first["session_id"].notna()].copy()
    first["order"] = pd.to_numeric(first["position"], errors="coerce")
    first = first[first["order"].notna()]
    first["session"] = first["session_id"].astype(object)
    g = first.groupby(["rater", "session"])["order"]
    first["rel"] = (g.rank(method="first") - 1.0) / g.transform("size")
    return first[first["rel"].notna()]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(
    "columns", ["with gaps", "the app's integers", "half places", "mostly imported"]
)
def test_the_place_in_the_session_is_the_groupby_s_rank(seed, columns):
    """Missing sessions and places (float columns), the app's integer columns (session ids
    numbered by counting, places sorted as one key), places that are not whole numbers (the
    lexsort), and most rows without a session (imported: the rows of the raters and items in
    a session looked at alone)."""
    rng = np.random.default_rng(seed)
    n = 400
    session = rng.choice([1.0, 2.0, 3.0, np.nan], n)
    position = np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 12, n))  # ties
    if columns == "the app's integers":
        session = rng.choice([7, 30, 31, 500], n)
        position = rng.integers(0, 12, n)
    elif columns == "half places":
        position = rng.integers(0, 24, n) / 2.0
    elif columns == "mostly imported":
        session = np.where(rng.random(n) < 0.8, np.nan, session)
    j = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in rng.integers(0, 60, n)],
            "rater": rng.choice(["ada", "bo", "cy", None], n, p=[0.4, 0.3, 0.25, 0.05]),
            "session_id": session,
            "position": position,
            "created_at": pd.Timestamp("2026-12-01"),
        }
    )
    got = _positions(SimpleNamespace(judgements=j))
    want = _by_groupby(j)
    got = got[~got["rel"].isna()]
    assert list(got.index) == list(want.index)
    assert got["rel"].to_numpy().tobytes() == want["rel"].to_numpy(float).tobytes()
    # a session's code stands for its id within a rater: the same pairs, counted alike
    pairs = set(zip(j.loc[got.index, "rater"], got["session"], strict=True))
    assert len(pairs) == len(set(zip(want["rater"], want["session_id"], strict=True)))
