"""Metrics as the statistics see them, answers as numbers, and the human consensus.

Every judged rubric metric becomes one or more *metric specs*, read from the
metric-kind registry (domain/kinds.py: `level`, `values()`, `multi`), never from
the kind's name: a single-answer metric is one spec; a multi-select metric
(tags) is one yes/no spec per option, keyed "<metric>:<option>"; the rubric's
verdict is one more ("verdict", PASS/FAIL from the rules). Answers are coded as
numbers: a nominal answer by its index in `values()` (FAIL 0 / PASS 1, a choice
by its option index, an option absent 0 / present 1), an ordinal answer by its
value (a scale point, a likert point 1..N). "cannot judge" is NaN: left out of
agreement, counted in `n_cannot_judge`. On a multi-select metric "cannot judge"
(an imported file may say it) makes *every* option of that answer unknown, never
"not ticked".

Consensus per item and metric: the majority answer for nominal metrics and the
verdict, the median for ordinal ones. A tie is flagged, never broken silently:
for nominal metrics a tie has no consensus value (NaN); for ordinal metrics the
median of an even number of answers whose two middle answers differ lies between
them and is flagged as a tie too (it is still the median).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..domain.errors import InputError
from ..domain.rubric import CANNOT_JUDGE, FAIL, PASS, Metric, Rubric
from ..domain.verdict import compile_rules
from .frames import StudyFrames

VERDICT_KEY = "verdict"
_YES_NO = ("no", "yes")


@dataclass(frozen=True)
class MetricSpec:
    key: str  # report key: "layout_hierarchy", "failure_tags:broken_layout", "verdict"
    kind: str  # the rubric kind's name or "verdict": shown in the report, never branched on
    base: str  # rubric metric key (the multi-select metric for an option; "verdict")
    level: str = "nominal"  # "nominal" | "ordinal" (from the kind registry)
    tag: str | None = None  # the option of a multi-select metric
    labels: tuple[str, ...] = ()  # label of code i (nominal)
    values: tuple[float, ...] = ()  # the answer values in order (ordinal)
    directed: bool = False  # codes have a direction (ordinal, yes/no, FAIL/PASS): a mean difference means something
    metric: Metric | None = field(default=None, compare=False, repr=False)

    @property
    def nominal(self) -> bool:
        return self.level == "nominal"

    @property
    def ordinal(self) -> bool:
        return self.level == "ordinal"

    @property
    def multi(self) -> bool:
        return self.tag is not None

    @property
    def ordered(self) -> bool:
        """Codes carry an order and spacing (ordinal metrics, and two-valued directed ones)."""
        return self.directed

    @property
    def lo(self) -> float | None:
        return self.values[0] if self.values else None

    @property
    def hi(self) -> float | None:
        return self.values[-1] if self.values else None

    @property
    def n_categories(self) -> int:
        return len(self.values) if self.ordinal else len(self.labels)

    def domain(self) -> np.ndarray:
        if self.ordinal:
            return np.asarray(self.values, dtype=float)
        return np.arange(len(self.labels), dtype=float)

    def encode(self, value: Any) -> float:
        """Code of a human-form answer; NaN for cannot judge / no answer / unknown."""
        return float(encode_series([self], pd.Series([value], dtype=object))[self.key][0])

    def label(self, code: float | None) -> str:
        """Human-readable form of a code (a median may be fractional)."""
        if code is None or _isnan(code):
            return CANNOT_JUDGE
        if self.ordinal:
            return f"{code:g}"
        return self.labels[int(code)] if float(code).is_integer() else f"{code:g}"


def _isnan(x: Any) -> bool:
    return isinstance(x, float) and np.isnan(x)


def _directed(m: Metric) -> bool:
    """Ordinal, or two values with a direction (the kind gives a signed deviation between them)."""
    if m.level == "ordinal":
        return True
    vals = m.values()
    return len(vals) == 2 and m.spec.deviation(m, vals[1], vals[0]) is not None


def metric_specs(rubric: Rubric) -> list[MetricSpec]:
    out: list[MetricSpec] = []
    for m in rubric.judged_metrics:
        vals = tuple(m.values())
        if m.spec.multi:
            for t in vals:
                out.append(
                    MetricSpec(
                        f"{m.key}:{t}",
                        m.kind,
                        m.key,
                        "nominal",
                        tag=str(t),
                        labels=_YES_NO,
                        directed=True,
                        metric=m,
                    )
                )
        elif m.level == "ordinal":
            out.append(
                MetricSpec(
                    m.key,
                    m.kind,
                    m.key,
                    "ordinal",
                    values=tuple(float(v) for v in vals),
                    directed=True,
                    metric=m,
                )
            )
        else:
            out.append(
                MetricSpec(
                    m.key,
                    m.kind,
                    m.key,
                    "nominal",
                    labels=tuple(str(v) for v in vals),
                    directed=_directed(m),
                    metric=m,
                )
            )
    if rubric.rules:
        out.append(
            MetricSpec(
                VERDICT_KEY, "verdict", VERDICT_KEY, "nominal", labels=(FAIL, PASS), directed=True
            )
        )
    return out


def typed_answer(metric: Metric, value: Any) -> Any:
    """The typed answer the rules expect, or None when it is missing, "cannot judge" or not on
    the rubric's scale (a judge scoring 0.7 on a 1-5 scale). Parsing is the kind's own."""
    if isinstance(value, tuple | list):
        return tuple(value) if metric.spec.multi else None
    if value is None or _isnan(value):
        return None
    try:
        v = metric.spec.parse_value(metric, str(value))
    except (InputError, ValueError):
        return None
    return None if v == CANNOT_JUDGE else v


def encode_series(specs: list[MetricSpec], raw: pd.Series) -> dict[str, np.ndarray]:
    """Codes of the answers `raw` for the specs of one rubric metric (one array per spec)."""
    s0 = specs[0]
    m = s0.metric
    # each distinct answer is typed once (a study has few distinct answers, many rows)
    codes, uniques = _factorize(raw)
    typed = []
    for v in uniques:
        if m is not None:
            typed.append(typed_answer(m, v))
        else:  # the verdict: PASS / FAIL as the rules return them
            t = str(v).strip().upper() if isinstance(v, str) else None
            typed.append(t if t in (PASS, FAIL) else None)
    out: dict[str, np.ndarray] = {}
    if s0.multi:
        for s in specs:  # unknown answer: every option unknown, never "not ticked"
            per = np.array([np.nan if t is None else float(s.tag in t) for t in typed] + [np.nan])
            out[s.key] = per[codes]
        return out
    if s0.ordinal:
        vals = set(s0.values)
        per = np.array(
            [float(t) if t is not None and float(t) in vals else np.nan for t in typed] + [np.nan]
        )
        out[s0.key] = per[codes]
        return out
    index = {lab: float(i) for i, lab in enumerate(s0.labels)}
    per = np.array(
        [index.get(str(t), np.nan) if t is not None else np.nan for t in typed] + [np.nan]
    )
    out[s0.key] = per[codes]
    return out


def _factorize(raw: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Codes of the distinct values of a column (-1, the last slot, for NaN/None) and the values;
    lists become tuples so that they can be counted."""
    col = pd.Series(raw, dtype=object).reset_index(drop=True)
    try:
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
    except TypeError:  # a list is not hashable: there is one, so count them as tuples
        col = col.map(lambda v: tuple(v) if isinstance(v, list) else v)
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
    return codes, list(uniques)


# ---- items and answers ------------------------------------------------------------------


def item_table(frames: StudyFrames) -> pd.DataFrame:
    """Every item the figures can touch, with a 0-based `idx` (the bootstrap row)."""
    cols = ["item_id", "display_code", "case_id", "generator", "slice"]
    items = frames.items.reindex(columns=cols).copy()
    seen = set(items["item_id"])
    extra = [
        i
        for df in (frames.judgements, frames.judge_scores)
        for i in df["item_id"].unique()
        if i not in seen
    ]
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

    Columns: idx, item_id, rater, metric, code (NaN = cannot judge), reason,
    session_id, position, created_at.
    """
    return _answers(frames.judgements, "rater", frames.rubric, specs, items)


def judge_answers(
    frames: StudyFrames, specs: list[MetricSpec], items: pd.DataFrame
) -> pd.DataFrame:
    """Long table of judge answers with `code` (on the human scale, else NaN),
    `num` (any numeric reading of the raw value) and `raw`."""
    return _answers(frames.judge_scores, "judge", frames.rubric, specs, items, judge=True)


_ANSWER_COLS = [
    "idx",
    "item_id",
    "who",
    "metric",
    "code",
    "num",
    "raw",
    "reason",
    "session_id",
    "position",
    "created_at",
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
                nums_all.append(np.where(np.isnan(c), num, c))
            else:  # unordered options: no numeric reading
                nums_all.append(c)
    verdict_spec = next((s for s in specs if s.key == VERDICT_KEY), None)
    v = pd.DataFrame()
    if verdict_spec is not None:
        missing = [c for c in ("session_id", "position", "created_at") if c not in df.columns]
        item_rank = np.empty(len(item_index), dtype=np.int64)
        item_rank[np.argsort(item_index.astype(str).to_numpy(), kind="stable")] = np.arange(
            len(item_index)
        )
        v = _verdicts(
            df.assign(**dict.fromkeys(missing)) if missing else df,
            who,
            rubric,
            item_pos,
            who_codes,
            item_rank,
        )
    if not pos and not len(v):
        return empty
    pos_a = np.concatenate(pos) if pos else np.zeros(0, np.int64)
    sess_codes, sess_names = _categories(_column(df, "session_id"))
    idx = item_pos[pos_a]
    who_c = who_codes[pos_a]
    sess_c = sess_codes[pos_a]
    cols: dict[str, Any] = {
        "metric": np.concatenate(spec_no) if spec_no else np.zeros(0, np.int32),
        "code": np.concatenate(codes_all) if codes_all else np.zeros(0),
        "num": np.concatenate(nums_all) if nums_all else np.zeros(0),
        "raw": values.to_numpy(dtype=object)[pos_a],
        "position": _column(df, "position").to_numpy()[pos_a],
        "created_at": _column(df, "created_at").to_numpy(dtype=object)[pos_a],
    }
    if len(v):
        v_idx = v["idx"].to_numpy(np.int64)
        v_who = v["who_code"].to_numpy(np.int64)
        v_sess = _codes_in(sess_names, v["session_id"].to_numpy(dtype=object))
        idx, who_c, sess_c = (
            np.concatenate([idx, v_idx]),
            np.concatenate([who_c, v_who]),
            np.concatenate([sess_c, v_sess]),
        )
        extra = {
            "metric": np.full(len(v), keys.index(VERDICT_KEY), dtype=np.int32),
            "code": v["code"].to_numpy(float),
            "num": v["num"].to_numpy(float),
            "raw": v["raw"].to_numpy(dtype=object),
            "position": v["position"].to_numpy(),
            "created_at": v["created_at"].to_numpy(dtype=object),
        }
        for c, arr in extra.items():
            if c == "position":
                cols[c] = pd.concat(
                    [pd.Series(cols[c]), pd.Series(arr)], ignore_index=True
                ).to_numpy()
            else:
                cols[c] = np.concatenate([cols[c], arr])
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
            "raw": cols["raw"][keep],
            "reason": _reason_rows(df, who, rubric, item_index, who_names, idx, who_c[keep]),
            "session_id": pd.Categorical.from_codes(sess_c[keep], categories=sess_names),
            "position": cols["position"][keep],
            "created_at": cols["created_at"][keep],
        }
    )
    return out


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df.columns else pd.Series([None] * len(df), dtype=object)


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
) -> np.ndarray:
    """Each output row's reason: the one of its (item, rater/judge), else None."""
    out = np.full(len(idx), None, dtype=object)
    text_keys = {m.key for m in rubric.metrics if not m.judgeable}
    reasons = _reasons(df, who, text_keys)
    if not len(reasons):
        return out
    n_who = len(who_names) + 1
    r_item = item_index.get_indexer(reasons.index.get_level_values(0))
    r_who = who_names.get_indexer(reasons.index.get_level_values(1).astype(str))
    keys = np.where((r_item >= 0) & (r_who >= 0), r_item * n_who + r_who, -1)
    order = np.argsort(keys, kind="stable")
    keys, texts = keys[order], reasons.to_numpy(dtype=object)[order]
    want = idx * n_who + who_c
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    hit = keys[at] == want
    out[hit] = texts[at[hit]]
    return out


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
    strings. Returns idx, who_code, session_id, position, created_at (the first known of the
    pair's answers), raw (PASS / FAIL / None), code and num, ordered by item id then rater.
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
    firsts = (
        pd.DataFrame(
            {
                "p": pinv,
                **{
                    c: df[c].to_numpy(dtype=object)[sel]
                    for c in ("session_id", "position", "created_at")
                },
            }
        )
        .groupby("p", sort=True)
        .first()
    )
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
            "session_id": firsts["session_id"].to_numpy(dtype=object)[order],
            "position": firsts["position"].to_numpy(dtype=object)[order],
            "created_at": firsts["created_at"].to_numpy(dtype=object)[order],
            "raw": raw[order],
            "code": code[order],
            "num": code[order],
        }
    )


def _codes_in(names: pd.Index, values: np.ndarray) -> np.ndarray:
    """Positions in `names` (str) of each value as str; -1 for a missing value or an unknown."""
    vals = pd.Series(values, dtype=object)
    out = names.get_indexer(vals.map(str))
    return np.where(vals.isna().to_numpy(), -1, out)


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


# ---- consensus --------------------------------------------------------------------------


def consensus(answers: pd.DataFrame, spec: MetricSpec) -> pd.DataFrame:
    """Per item consensus of coded answers of one metric.

    Input columns: idx, code (NaN = cannot judge). Output indexed by idx with
    n (answers), n_cannot_judge, value (majority / median; NaN at a nominal tie),
    tie, mean, min, max, and `clear_share` (share of answers equal to the
    majority, nominal only).
    """
    a = answers[["idx", "code"]].astype({"idx": np.int64, "code": float})
    cj = a["code"].isna().groupby(a["idx"]).sum().rename("n_cannot_judge")
    ok = a.dropna(subset=["code"])
    g = ok.groupby("idx")["code"]
    out = pd.DataFrame({"n": g.size(), "mean": g.mean(), "min": g.min(), "max": g.max()})
    if spec.nominal:
        cnt = ok.groupby(["idx", "code"]).size().rename("c").reset_index()
        top = cnt.groupby("idx")["c"].transform("max")
        best = cnt[cnt["c"] == top]
        n_best = best.groupby("idx").size()
        first = best.groupby("idx")["code"].first()
        out["tie"] = (n_best > 1).reindex(out.index, fill_value=False)
        out["value"] = first.where(n_best == 1).reindex(out.index)
        out["clear_share"] = (best.groupby("idx")["c"].first() / out["n"]).reindex(out.index)
    else:
        lo = g.quantile(0.5, interpolation="lower")
        hi = g.quantile(0.5, interpolation="higher")
        out["value"] = (lo + hi) / 2.0
        out["tie"] = (lo != hi).reindex(out.index, fill_value=False)
        out["clear_share"] = np.nan
    out = out.join(cj, how="outer")
    out["n"] = out["n"].fillna(0).astype(int)
    out["n_cannot_judge"] = out["n_cannot_judge"].fillna(0).astype(int)
    out["tie"] = out["tie"].fillna(False).astype(bool)
    return out


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
