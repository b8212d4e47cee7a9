"""Metrics as the statistics see them, answers as numbers, and the human consensus.

Every judged rubric metric becomes one or more *metric specs*: a gate, scale or
choice is one; a tags metric is one binary metric per tag, keyed
"<metric>:<tag>"; the rubric's verdict is one more ("verdict", PASS/FAIL from
the rules). Answers are coded as numbers: FAIL 0 / PASS 1, tag absent 0 /
present 1, a choice by its option index, a scale by its value. "cannot judge"
is NaN: left out of agreement, counted in the denominators.

Consensus per item and metric: the majority answer for gates, tags, choices and
the verdict, the median for scales. A tie is flagged, never broken silently:
for nominal metrics a tie has no consensus value (NaN); for scales the median
of an even number of answers whose two middle answers differ lies between
them and is flagged as a tie too (it is still the median).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..domain.rubric import CANNOT_JUDGE, FAIL, PASS, Rubric
from ..domain.verdict import compile_rules
from .frames import StudyFrames

VERDICT_KEY = "verdict"


@dataclass(frozen=True)
class MetricSpec:
    key: str  # report key: "layout_hierarchy", "failure_tags:broken_layout", "verdict"
    kind: str  # gate | scale | tags | choice | verdict
    base: str  # rubric metric key (the tags metric for a tag; "verdict")
    tag: str | None = None
    labels: tuple[str, ...] = ()  # label of code i for nominal kinds
    lo: int | None = None
    hi: int | None = None

    @property
    def level(self) -> str:
        return "ordinal" if self.kind == "scale" else "nominal"

    @property
    def nominal(self) -> bool:
        return self.kind != "scale"

    @property
    def ordered(self) -> bool:
        """Codes carry an order and spacing (scales, and two-valued metrics)."""
        return self.kind != "choice"

    @property
    def n_categories(self) -> int:
        return (self.hi - self.lo + 1) if self.kind == "scale" else len(self.labels)

    def domain(self) -> np.ndarray:
        if self.kind == "scale":
            return np.arange(self.lo, self.hi + 1, dtype=float)
        return np.arange(len(self.labels), dtype=float)

    def encode(self, value: Any) -> float:
        """Code of a human-form answer; NaN for cannot judge / no answer / unknown."""
        if value is None or value == CANNOT_JUDGE or _isnan(value):
            return np.nan
        if self.kind in ("gate", "verdict"):
            v = str(value).strip().upper()
            return 1.0 if v == PASS else 0.0 if v == FAIL else np.nan
        if self.kind == "tags":
            return 1.0 if self.tag in _tags(value) else 0.0
        if self.kind == "choice":
            return float(self.labels.index(value)) if value in self.labels else np.nan
        try:
            f = float(value)
        except (TypeError, ValueError):
            return np.nan
        return f if self.lo <= f <= self.hi else np.nan

    def label(self, code: float | None) -> str:
        """Human-readable form of a code (a median may be fractional)."""
        if code is None or _isnan(code):
            return CANNOT_JUDGE
        if self.kind == "scale":
            return f"{code:g}"
        return self.labels[int(code)] if float(code).is_integer() else f"{code:g}"


def _isnan(x: Any) -> bool:
    return isinstance(x, float) and np.isnan(x)


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(p.strip() for p in value.split(";") if p.strip())
    if isinstance(value, list | tuple | set | frozenset):
        return tuple(value)
    return ()


def metric_specs(rubric: Rubric) -> list[MetricSpec]:
    out: list[MetricSpec] = []
    for m in rubric.judged_metrics:
        if m.kind == "gate":
            out.append(MetricSpec(m.key, "gate", m.key, labels=(FAIL, PASS)))
        elif m.kind == "scale":
            out.append(MetricSpec(m.key, "scale", m.key, lo=m.min, hi=m.max))
        elif m.kind == "choice":
            out.append(MetricSpec(m.key, "choice", m.key, labels=tuple(m.options)))
        elif m.kind == "tags":
            for t in m.options:
                out.append(MetricSpec(f"{m.key}:{t}", "tags", m.key, tag=t, labels=("no", "yes")))
    if rubric.rules:
        out.append(MetricSpec(VERDICT_KEY, "verdict", VERDICT_KEY, labels=(FAIL, PASS)))
    return out


# ---- items and answers ------------------------------------------------------------------


def item_table(frames: StudyFrames) -> pd.DataFrame:
    """Every item the figures can touch, with a 0-based `idx` (the bootstrap row)."""
    cols = ["item_id", "display_code", "case_id", "generator", "slice"]
    items = frames.items.reindex(columns=cols).copy()
    seen = set(items["item_id"])
    extra = [i for df in (frames.judgements, frames.judge_scores) for i in df["item_id"].unique()
             if i not in seen]
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
        t = df[df["metric"].isin(text_keys)][["item_id", who, "value"]].rename(columns={"value": "reason"})
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


def judge_answers(frames: StudyFrames, specs: list[MetricSpec], items: pd.DataFrame) -> pd.DataFrame:
    """Long table of judge answers with `code` (on the human scale, else NaN),
    `num` (any numeric reading of the raw value) and `raw`."""
    return _answers(frames.judge_scores, "judge", frames.rubric, specs, items, judge=True)


_ANSWER_COLS = ["idx", "item_id", "who", "metric", "code", "num", "raw", "reason",
                "session_id", "position", "created_at"]


def _answers(
    df: pd.DataFrame, who: str, rubric: Rubric, specs: list[MetricSpec], items: pd.DataFrame,
    judge: bool = False,
) -> pd.DataFrame:
    kinds = {"idx": np.int64, "code": float, "num": float}
    empty = pd.DataFrame({c: pd.Series(dtype=kinds.get(c, object)) for c in _ANSWER_COLS})
    empty = empty.rename(columns={"who": who})
    if df is None or len(df) == 0:
        return empty
    text_keys = {m.key for m in rubric.metrics if m.kind == "text"}
    reasons = _reasons(df, who, text_keys)
    idx_of = pd.Series(items["idx"].to_numpy(), index=items["item_id"])
    base = df.copy()
    for c in ("session_id", "position", "created_at"):
        if c not in base.columns:
            base[c] = None
    parts = []
    by_base: dict[str, list[MetricSpec]] = {}
    for s in specs:
        by_base.setdefault(s.base, []).append(s)
    by_metric = dict(tuple(base.groupby("metric", sort=False)))
    for key, group in by_base.items():
        rows = by_metric.get(key)
        if key == VERDICT_KEY or rows is None:
            continue
        codes = encode_series(group, rows["value"])
        for s in group:
            part = rows[["item_id", who, "session_id", "position", "created_at"]].copy()
            part["metric"] = s.key
            part["raw"] = rows["value"].to_numpy()
            part["code"] = codes[s.key]
            if judge:
                num = pd.to_numeric(rows["value"], errors="coerce").to_numpy(dtype=float)
                part["num"] = np.where(np.isnan(codes[s.key]), num, codes[s.key])
                if s.kind == "choice":
                    part["num"] = codes[s.key]
            else:
                part["num"] = codes[s.key]
            parts.append(part)
    verdict_spec = next((s for s in specs if s.key == VERDICT_KEY), None)
    if verdict_spec is not None:
        v = _verdicts(base, who, rubric, complete=judge)
        if len(v):
            parts.append(v)
    if not parts:
        return empty
    out = pd.concat(parts, ignore_index=True)
    out["idx"] = idx_of.reindex(out["item_id"]).to_numpy()
    out = out[out["idx"].notna()].copy()
    out["idx"] = out["idx"].astype(np.int64)
    key = pd.MultiIndex.from_arrays([out["item_id"], out[who]])
    out["reason"] = reasons.reindex(key).to_numpy() if len(reasons) else None
    out["num"] = pd.to_numeric(out["num"], errors="coerce").astype(float)
    return out[[c if c != "who" else who for c in _ANSWER_COLS]].reset_index(drop=True)


def encode_series(specs: list[MetricSpec], raw: pd.Series) -> dict[str, np.ndarray]:
    """Vectorised MetricSpec.encode for the specs of one rubric metric."""
    out: dict[str, np.ndarray] = {}
    s0 = specs[0]
    if s0.kind in ("gate", "verdict"):
        code = raw.map({PASS: 1.0, FAIL: 0.0})
        odd = code.isna() & raw.map(lambda v: isinstance(v, str))
        if odd.any():  # lower case, spaces
            code[odd] = raw[odd].str.strip().str.upper().map({PASS: 1.0, FAIL: 0.0})
        out[s0.key] = code.to_numpy(dtype=float)
    elif s0.kind == "scale":
        num = pd.to_numeric(raw.map(lambda v: v if isinstance(v, int | float | str) else None),
                            errors="coerce").to_numpy(dtype=float)
        out[s0.key] = np.where((num >= s0.lo) & (num <= s0.hi), num, np.nan)
    elif s0.kind == "choice":
        out[s0.key] = raw.map({o: float(i) for i, o in enumerate(s0.labels)}).to_numpy(dtype=float)
    else:  # tags: one binary column per tag
        tags = raw.map(_tags).reset_index(drop=True).explode()
        tags = tags[tags.notna()]
        for s in specs:
            col = np.zeros(len(raw))
            col[tags.index[tags.to_numpy() == s.tag].to_numpy()] = 1.0
            out[s.key] = col
    return out


def _verdicts(df: pd.DataFrame, who: str, rubric: Rubric, complete: bool = False) -> pd.DataFrame:
    """Each rater's (judge's) verdict per item from their own answers and the rules.

    An answer that is not on the rubric's scale (a judge scoring 0.7 on a 1-5
    scale) is unknown to the rules, so such verdicts come out undetermined.
    With `complete` (judges), a verdict needs a value for every metric the
    rules use: a judge that scores only some of them would otherwise get a
    verdict only where a known answer fails, a one-sided (severe) selection.
    """
    rules = compile_rules(rubric)
    used = sorted(rules.metrics_used())
    sub = df[df["metric"].isin(used)].drop_duplicates(["item_id", who, "metric"], keep="last")
    if not len(sub):
        return pd.DataFrame()
    first = sub.groupby(["item_id", who], sort=False).agg(
        session_id=("session_id", "first"), position=("position", "first"),
        created_at=("created_at", "first"))
    wide = sub.set_index(["item_id", who, "metric"])["value"].unstack("metric")
    if complete:
        wide = wide.reindex(columns=used)
        wide = wide[wide.notna().all(axis=1)]
        if not len(wide):
            return pd.DataFrame()
    keys = list(wide.columns)
    typed = [_typed_column(rubric.metric(k), wide[k]) for k in keys]
    verdicts = [rules.evaluate(dict(zip(keys, row, strict=True))) for row in zip(*typed, strict=True)]
    v = pd.DataFrame({"raw": verdicts}, index=wide.index).join(first).reset_index()
    v["metric"] = VERDICT_KEY
    v["code"] = v["raw"].map({PASS: 1.0, FAIL: 0.0}).astype(float)
    v["num"] = v["code"]
    return v


def _typed_column(metric: Any, col: pd.Series) -> list[Any]:
    """_typed over a column, vectorised for the common kinds."""
    if metric.kind == "scale":
        num = pd.to_numeric(col.map(lambda v: v if isinstance(v, int | float | str) else None),
                            errors="coerce").to_numpy(dtype=float)
        ok = (num % 1 == 0) & (num >= metric.min) & (num <= metric.max)
        return [int(v) if k else None for v, k in zip(num, ok, strict=True)]
    if metric.kind == "gate":
        m = col.map({PASS: PASS, FAIL: FAIL}).astype(object)
        rest = m.isna() & col.notna()
        if rest.any():  # lower case, spaces, junk
            m[rest] = col[rest].map(lambda v: _typed(metric, v))
        return m.where(m.notna(), None).tolist()
    return [_typed(metric, v) for v in col]


def _typed(metric: Any, value: Any) -> Any:
    """The typed answer the rules expect, or None when it is not on the rubric's scale."""
    if value is None or value == CANNOT_JUDGE or _isnan(value):
        return None
    if metric.kind == "scale":
        try:
            f = float(value)
        except (TypeError, ValueError):
            return None
        return int(f) if f.is_integer() and metric.min <= f <= metric.max else None
    if metric.kind == "gate":
        v = str(value).strip().upper()
        return v if v in (PASS, FAIL) else None
    if metric.kind == "tags":
        return _tags(value)
    if metric.kind == "choice":
        return value if value in metric.options else None
    return value


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
        parts.append(pd.DataFrame({
            "item_id": items["item_id"].to_numpy()[c.index.to_numpy()],
            "metric": s.key,
            "value": [None if np.isnan(v) else s.label(v) for v in c["value"]],
            "tie": c["tie"].to_numpy(),
            "n": c["n"].to_numpy(),
            "n_cannot_judge": c["n_cannot_judge"].to_numpy(),
        }))
    cols = ["item_id", "metric", "value", "tie", "n", "n_cannot_judge"]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    return pd.concat(parts, ignore_index=True)[cols]
