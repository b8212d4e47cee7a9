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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..domain.errors import InputError
from ..domain.rubric import CANNOT_JUDGE, FAIL, PASS, Metric, Rubric

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
