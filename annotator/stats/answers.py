"""The study's answers as numbers: one row per rater (or judge) x item x metric spec.

`human_answers` and `judge_answers` turn the long judgement tables of a StudyFrames into coded
answers (see consensus.py for the metric specs and the coding), with each rater's verdict from
the rubric's rules. A study of a million judgements codes into several million rows, so the
output is built from integer row positions and categorical columns, never from per-row copies
of the input's strings.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..domain.rubric import FAIL, PASS, Rubric
from ..domain.verdict import compile_rules
from .consensus import (
    VERDICT_KEY,
    MetricSpec,
    _factorize,
    consensus,
    encode_series,
    metric_specs,
    typed_answer,
)
from .frames import StudyFrames


def item_table(frames: StudyFrames) -> pd.DataFrame:
    """Every item the figures can touch, with a 0-based `idx` (the bootstrap row)."""
    cols = ["item_id", "display_code", "case_id", "generator", "slice"]
    items = frames.items.reindex(columns=cols).copy()
    seen = pd.Index(items["item_id"]).unique()
    extra = []
    for df in (frames.judgements, frames.judge_scores):
        ids = df["item_id"].unique()  # in order of first appearance
        # a hash lookup (isin on arrow strings took 1.2 s for 200,000 ids, a loop 0.3 s)
        extra += list(ids[seen.get_indexer(ids) < 0])
    if extra:
        add = pd.DataFrame({"item_id": list(dict.fromkeys(extra))}).reindex(columns=cols)
        items = pd.concat([items, add], ignore_index=True) if len(items) else add
    items = items.drop_duplicates("item_id").reset_index(drop=True)
    for c in ("display_code", "case_id", "generator"):
        items[c] = items[c].astype(object).where(items[c].notna(), None)
    items["idx"] = np.arange(len(items), dtype=np.int64)
    return items


def _reasons(df: pd.DataFrame, who: str, text_keys: set[str]) -> pd.Series:
    """One reason per (item, rater/judge): the reason column, else a text metric."""
    parts = []
    if "reason" in df.columns:
        r = df[["item_id", who, "reason"]].dropna(subset=["reason"])
        r = r[r["reason"].astype(str).str.strip() != ""]
        parts.append(r)
    if text_keys:
        t = df[df["metric"].isin(text_keys)][["item_id", who, "value"]].rename(
            columns={"value": "reason"}
        )
        t = t.dropna(subset=["reason"])
        parts.append(t[t["reason"].astype(str).str.strip() != ""])
    if not parts:
        return pd.Series(dtype=object)
    allr = pd.concat(parts, ignore_index=True).drop_duplicates(["item_id", who])
    return allr.set_index(["item_id", who])["reason"].astype(str)


def human_answers(
    frames: StudyFrames, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """Long table of coded human answers, one row per rater x item x metric spec.

    Columns: idx, item_id, rater, metric, code (NaN = cannot judge), num, reason (a
    categorical: one text per (item, rater), repeated on each of its metric rows). Session
    order is read from the judgements themselves (raters._positions), not from here.
    """
    return _answers(frames.judgements, "rater", frames.rubric, specs, items)


def judge_answers(
    frames: StudyFrames, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """Long table of judge answers with `code` (on the human scale, else NaN) and `num` (any
    numeric reading of the raw value)."""
    return _answers(frames.judge_scores, "judge", frames.rubric, specs, items, judge=True)


_ANSWER_COLS = [
    "idx",
    "item_id",
    "who",
    "metric",
    "code",
    "num",
    "reason",
]


def _answers(
    df: pd.DataFrame,
    who: str,
    rubric: Rubric,
    specs: list[MetricSpec],
    items: pd.DataFrame,
    judge: bool = False,
) -> pd.DataFrame:
    kinds = {"idx": np.int64, "code": float, "num": float}
    empty = pd.DataFrame({c: pd.Series(dtype=kinds.get(c, object)) for c in _ANSWER_COLS})
    empty = empty.rename(columns={"who": who})
    if df is None or len(df) == 0:
        return empty
    # One row of the input becomes one row per metric spec (a tags answer: one per option), so
    # the output is built from integer row positions into the input and categorical columns:
    # nothing of the input's strings is copied per output row.
    item_index = pd.Index(items["item_id"])
    item_pos = item_index.get_indexer(df["item_id"])
    who_codes, who_names = _categories(df[who])
    by_base: dict[str, list[MetricSpec]] = {}
    for s in specs:
        by_base.setdefault(s.base, []).append(s)
    m_codes, m_names = pd.factorize(df["metric"])
    rows_of = {str(m): np.flatnonzero(m_codes == i) for i, m in enumerate(m_names)}
    pos, spec_no, codes_all, nums_all = [], [], [], []
    keys = [s.key for s in specs]
    values = df["value"]
    for key, group in by_base.items():
        rows = rows_of.get(key)
        if key == VERDICT_KEY or rows is None:
            continue
        raw = values.iloc[rows]
        codes = encode_series(group, raw)
        num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float) if judge else None
        for s in group:
            c = codes[s.key]
            pos.append(rows)
            spec_no.append(np.full(len(rows), keys.index(s.key), dtype=np.int32))
            codes_all.append(c)
            if judge and s.directed:
                assert num is not None  # read above whenever `judge`
                nums_all.append(np.where(np.isnan(c), num, c))
            else:  # unordered options: no numeric reading
                nums_all.append(c)
    verdict_spec = next((s for s in specs if s.key == VERDICT_KEY), None)
    v = pd.DataFrame()
    if verdict_spec is not None:
        item_rank = np.empty(len(item_index), dtype=np.int64)
        item_rank[np.argsort(item_index.astype(str).to_numpy(), kind="stable")] = np.arange(
            len(item_index)
        )
        v = _verdicts(
            df,
            who,
            rubric,
            item_pos,
            who_codes,
            item_rank,
        )
    if not pos and not len(v):
        return empty
    pos_a = np.concatenate(pos) if pos else np.zeros(0, np.int64)
    idx = item_pos[pos_a]
    who_c = who_codes[pos_a]
    cols: dict[str, Any] = {
        "metric": np.concatenate(spec_no) if spec_no else np.zeros(0, np.int32),
        "code": np.concatenate(codes_all) if codes_all else np.zeros(0),
        "num": np.concatenate(nums_all) if nums_all else np.zeros(0),
    }
    if len(v):
        idx = np.concatenate([idx, v["idx"].to_numpy(np.int64)])
        who_c = np.concatenate([who_c, v["who_code"].to_numpy(np.int64)])
        extra = {
            "metric": np.full(len(v), keys.index(VERDICT_KEY), dtype=np.int32),
            "code": v["code"].to_numpy(float),
            "num": v["num"].to_numpy(float),
        }
        for column, arr in extra.items():
            cols[column] = np.concatenate([cols[column], arr])
    keep = idx >= 0
    idx = idx[keep].astype(np.int64)
    out = pd.DataFrame(
        {
            "idx": idx,
            "item_id": pd.Categorical.from_codes(idx, categories=item_index),
            who: pd.Categorical.from_codes(who_c[keep], categories=who_names),
            "metric": pd.Categorical.from_codes(cols["metric"][keep], categories=keys),
            "code": cols["code"][keep].astype(float),
            "num": pd.to_numeric(pd.Series(cols["num"][keep]), errors="coerce").astype(float),
            "reason": _reason_rows(df, who, rubric, item_index, who_names, idx, who_c[keep]),
        }
    )
    return out


def _categories(col: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Codes (-1 for a missing value) and sorted distinct values as str: a categorical column
    that sorts and compares like the strings it stands for."""
    codes, uniques = pd.factorize(col, sort=False)
    names = pd.Index([str(u) for u in uniques], dtype=object)
    order = np.argsort(names.to_numpy(dtype=object), kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    if not len(rank):
        return np.full(len(codes), -1, dtype=np.int64), names
    return np.where(codes >= 0, rank[np.maximum(codes, 0)], -1), names[order]


def _reason_rows(
    df: pd.DataFrame,
    who: str,
    rubric: Rubric,
    item_index: pd.Index,
    who_names: pd.Index,
    idx: np.ndarray,
    who_c: np.ndarray,
) -> pd.Categorical:
    """Each output row's reason: the one of its (item, rater/judge), else missing. A categorical:
    one text serves every metric row of its answer."""
    codes = np.full(len(idx), -1, dtype=np.int32)
    text_keys = {m.key for m in rubric.metrics if not m.judgeable}
    reasons = _reasons(df, who, text_keys)
    if not len(reasons):
        return pd.Categorical.from_codes(codes, categories=pd.Index([], dtype=object))
    n_who = len(who_names) + 1
    r_item = item_index.get_indexer(reasons.index.get_level_values(0))
    r_who = who_names.get_indexer(reasons.index.get_level_values(1).astype(str))
    keys = np.where((r_item >= 0) & (r_who >= 0), r_item * n_who + r_who, -1)
    order = np.argsort(keys, kind="stable")
    text_codes, texts = pd.factorize(reasons.to_numpy(dtype=object)[order])
    keys = keys[order]
    want = idx * n_who + who_c
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    hit = keys[at] == want
    codes[hit] = text_codes[at[hit]]
    return pd.Categorical.from_codes(codes, categories=pd.Index(texts, dtype=object))


def _verdicts(
    df: pd.DataFrame,
    who: str,
    rubric: Rubric,
    item_pos: np.ndarray,
    who_codes: np.ndarray,
    item_rank: np.ndarray,
) -> pd.DataFrame:
    """Each rater's (judge's) verdict per item from their own answers and the rules.

    Complete answers only, for humans and judges alike: a verdict needs a known
    answer to every metric the rules use. Otherwise it is *undetermined* (code
    NaN, counted like "cannot judge"): keeping the verdicts that come out FAIL
    whatever the unknown answer would be, and dropping the rest, is a one-sided
    selection that biased pass rates down (0.578 against a true 0.626 in
    simulation). An answer off the rubric's scale (a judge scoring 0.7 on a 1-5
    scale) is unknown too.

    Rows of `df` are addressed by integer codes (item position, rater code), never by their
    strings. Returns idx, who_code, raw (PASS / FAIL / None), code and num, ordered by item id
    then rater.
    """
    rules = compile_rules(rubric)
    used = sorted(rules.metrics_used())
    m_idx = pd.Index(used).get_indexer(df["metric"])
    sel = np.flatnonzero((m_idx >= 0) & (item_pos >= 0) & (who_codes >= 0))
    if not len(sel):
        return pd.DataFrame()
    n_who, U = int(who_codes.max()) + 1, len(used)
    pair = item_pos[sel].astype(np.int64) * n_who + who_codes[sel]
    # one answer per (item, rater, metric): the last one
    key = pair * U + m_idx[sel]
    _, last = np.unique(key[::-1], return_index=True)
    keep = np.sort(len(key) - 1 - last)
    sel, pair = sel[keep], pair[keep]
    metric_of = m_idx[sel]
    upairs, pinv = np.unique(pair, return_inverse=True)
    # the rules run once per distinct combination of typed answers, not once per pair
    cols, typed_of = [], []
    for j, k in enumerate(used):
        mine = metric_of == j
        codes = np.full(len(upairs), -1, dtype=np.int64)
        c, uniques = _factorize(df["value"].iloc[sel[mine]])
        codes[pinv[mine]] = c
        typed_of.append([typed_answer(rubric.metric(k), v) for v in uniques] + [None])  # -1: None
        cols.append(codes)
    combos, inv = _unique_rows(cols)
    results = []
    for combo in combos:
        row = [typed[c] for typed, c in zip(typed_of, combo, strict=True)]
        results.append(
            None
            if any(x is None for x in row)
            else rules.evaluate(dict(zip(used, row, strict=True)))
        )
    raw = np.array([results[i] for i in np.ravel(inv)], dtype=object)
    code = np.array([1.0 if r == PASS else 0.0 if r == FAIL else np.nan for r in raw])
    p_item, p_who = upairs // n_who, upairs % n_who
    # someone who never gives the rules a complete set of answers (a judge scoring only some
    # metrics) has no verdict at all, rather than a column of undetermined ones
    some = np.bincount(p_who[~np.isnan(code)], minlength=n_who) > 0
    order = np.lexsort((p_who, item_rank[p_item]))
    order = order[some[p_who[order]]]
    return pd.DataFrame(
        {
            "idx": p_item[order],
            "who_code": p_who[order],
            "raw": raw[order],
            "code": code[order],
            "num": code[order],
        }
    )


def _unique_rows(cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(np.column_stack(cols), axis=0, return_inverse=True) for codes >= -1, through one
    integer key per row (sorting a 1-d key is many times faster than sorting rows)."""
    sizes = [int(c.max(initial=-1)) + 2 for c in cols]
    if not cols or math.prod(sizes) >= 2**62:
        return np.unique(np.column_stack(cols), axis=0, return_inverse=True)
    key = np.zeros(len(cols[0]), dtype=np.int64)
    for c, size in zip(cols, sizes, strict=True):
        key = key * size + (c.astype(np.int64) + 1)
    uk, inv = np.unique(key, return_inverse=True)
    combos = np.empty((len(uk), len(cols)), dtype=np.int64)
    for j in range(len(cols) - 1, -1, -1):
        combos[:, j] = uk % sizes[j] - 1
        uk = uk // sizes[j]
    return combos, inv


def coded_answers(
    df: pd.DataFrame, who: str, rubric: Rubric, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """Any long table of answers (item_id, `who`, metric, value) coded exactly as the raters'
    are: the lead's adjudications read through this, so "equal" means the same thing."""
    return _answers(df, who, rubric, specs, items)


def consensus_table(frames: StudyFrames) -> pd.DataFrame:
    """Human consensus of every item and metric, in readable form.

    Columns: item_id, metric, value (label), tie, n, n_cannot_judge.
    """
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    ans = human_answers(frames, specs, items)
    parts = []
    for s in specs:
        sub = ans[ans["metric"] == s.key]
        if not len(sub):
            continue
        c = consensus(sub, s)
        parts.append(
            pd.DataFrame(
                {
                    "item_id": items["item_id"].to_numpy()[c.index.to_numpy()],
                    "metric": s.key,
                    "value": [None if np.isnan(v) else s.label(v) for v in c["value"]],
                    "tie": c["tie"].to_numpy(),
                    "n": c["n"].to_numpy(),
                    "n_cannot_judge": c["n_cannot_judge"].to_numpy(),
                }
            )
        )
    cols = ["item_id", "metric", "value", "tie", "n", "n_cannot_judge"]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    return pd.concat(parts, ignore_index=True)[cols]
