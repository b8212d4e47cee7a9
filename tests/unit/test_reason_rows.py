"""Each answer's reason read from the text metric's rows as the coding found them (RowCodes
rows_of) is the reason read by comparing every row's metric: the reason column first, then a
text metric's answer, blanks left out, one per (item, rater)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from annotator.stats.reasons import _reasons
from annotator.stats.row_codes import row_codes


def test_the_text_metrics_rows_give_the_same_reasons():
    rng = np.random.default_rng(3)
    n = 600
    metrics = rng.choice(["layout", "notes", "legible", "remarks"], n)
    df = pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in rng.integers(0, 40, n)],
            "rater": rng.choice(["ada", "bo", "cy"], n),
            "metric": metrics,
            "value": [
                rng.choice(["fine", "  ", "cramped", None]) if m in ("notes", "remarks") else "PASS"
                for m in metrics
            ],
            "reason": rng.choice(["too small", "", None, "ok"], n, p=[0.1, 0.1, 0.7, 0.1]),
        }
    )
    rows_of = row_codes(df, "rater", [], pd.Index(sorted(set(df["item_id"]))), False).rows_of
    for keys in ({"notes"}, {"notes", "remarks"}, {"absent"}, set()):
        compared = _reasons(df, "rater", keys)
        from_rows = _reasons(df, "rater", keys, rows_of)
        pd.testing.assert_series_equal(from_rows, compared, check_exact=True)
    assert len(_reasons(df, "rater", {"notes", "remarks"})) > len(_reasons(df, "rater", set()))


def test_a_grown_tables_reasons_are_those_read_whole():
    """A table that grew from an earlier one reads the added rows' reasons only (the text
    metric's rows among them found by position): the reasons of the whole table read afresh,
    with text columns in several chunks as a live refresh's concatenation leaves them."""
    from annotator.stats.frames import Grown

    rng = np.random.default_rng(5)

    def rows(n: int, first: int) -> pd.DataFrame:
        metrics = rng.choice(["layout", "notes"], n)
        return pd.DataFrame(
            {
                "item_id": pd.array([f"i{k}" for k in rng.integers(0, 30, n)], dtype="string"),
                "rater": pd.array(rng.choice(["ada", "bo", f"new{first}"], n), dtype="string"),
                "metric": pd.array(metrics, dtype="string"),
                "value": [
                    rng.choice(["fine", " ", None]) if m == "notes" else "1" for m in metrics
                ],
                "reason": rng.choice(["too small", "", None], n, p=[0.2, 0.1, 0.7]),
            }
        )

    earlier = rows(300, 0)
    index = pd.Index([f"i{k}" for k in range(30)])
    _reasons(earlier, "rater", {"notes"}, row_codes(earlier, "rater", [], index, False).rows_of)
    for step in (1, 2, 3):
        table = pd.concat([earlier, rows(40, step)], ignore_index=True)
        rows_of = row_codes(table, "rater", [], index, False).rows_of
        grown = _reasons(table, "rater", {"notes"}, rows_of, Grown(earlier, table))
        afresh = _reasons(table, "rater", {"notes"}, rows_of)
        pd.testing.assert_series_equal(grown, afresh, check_exact=True)
        earlier = table
