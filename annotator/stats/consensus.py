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

The clear-consensus rule lives here, once, for the report's findings, the held-out human's
rate beside them, the lead's review queue and the gold (services/adjudication.py): `clear`
says whether the humans agree clearly (MIN_HUMANS answers and, nominal, CLEAR_SHARE of them the
same; ordinal, a range under SCALE_GAP points), `contradicted` whether another answer (a
judge's, a held-out human's) contradicts them (nominal: a clear consensus and another answer;
ordinal: SCALE_GAP or more outside the range of MIN_HUMANS answers, whatever the spread inside
it), and `metric_consensus` reads a rubric metric's consensus off its specs (a multi-select
metric is clear when every option is, as each option is its own question everywhere else).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..domain.clear_consensus import CLEAR_SHARE, MIN_HUMANS, SCALE_GAP
from ..domain.errors import InputError
from ..domain.rubric import CANNOT_JUDGE, FAIL, PASS, Metric, Rubric
from .distinct import distinct

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


def _points_up(spec: MetricSpec, v: np.ndarray) -> list[Any]:
    """Per median, the scale point nearest to it, the upper one at a tie (4.5 -> 5; on
    0 / 0.5 / 1, 0.25 -> 0.5), as the point is stored (an int where whole); NaN stays NaN."""
    points = np.asarray(spec.values, dtype=float)
    if not len(points):
        points = np.arange(np.floor(np.nanmin(v, initial=0)), np.nanmax(v, initial=0) + 2)
    # how many midpoints lie at or below the median: a median on a midpoint goes up
    mids = (points[:-1] + points[1:]) / 2
    at = np.searchsorted(mids, v + 1e-9, side="right")
    at = np.minimum(at, len(points) - 1)
    chosen = points[at]
    return [
        float("nan") if np.isnan(x) else int(p) if float(p).is_integer() else float(p)
        for x, p in zip(v, chosen, strict=True)
    ]


def _isnan(x: Any) -> bool:
    return isinstance(x, float) and np.isnan(x)


def _directed(m: Metric) -> bool:
    """Ordinal, or two values with a direction (the kind gives a signed deviation between them)."""
    if m.level == "ordinal":
        return True
    vals = m.values()
    return len(vals) == 2 and m.spec.deviation(m, vals[1], vals[0]) is not None


def metric_specs(rubric: Rubric) -> list[MetricSpec]:
    out = [s for m in rubric.judged_metrics for s in specs_of(m)]
    if rubric.rules:
        out.append(
            MetricSpec(
                VERDICT_KEY, "verdict", VERDICT_KEY, "nominal", labels=(FAIL, PASS), directed=True
            )
        )
    return out


def specs_of(m: Metric) -> list[MetricSpec]:
    """The specs of one judged rubric metric: one, or one yes/no spec per option (multi)."""
    vals = tuple(m.values())
    if m.spec.multi:
        return [
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
            for t in vals
        ]
    if m.level == "ordinal":
        return [
            MetricSpec(
                m.key,
                m.kind,
                m.key,
                "ordinal",
                values=tuple(float(v) for v in vals),
                directed=True,
                metric=m,
            )
        ]
    return [
        MetricSpec(
            m.key,
            m.kind,
            m.key,
            "nominal",
            labels=tuple(str(v) for v in vals),
            directed=_directed(m),
            metric=m,
        )
    ]


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


def _positions_among(items: np.ndarray, at: np.ndarray) -> np.ndarray:
    """np.searchsorted(items, at) for `at` drawn from the sorted distinct item indexes `items`:
    through a table over their range where it is small (item rows), not a binary search per
    pair."""
    if not len(items) or items.dtype.kind not in "iu" or at.dtype.kind not in "iu":
        return np.searchsorted(items, at)
    lo, hi = int(items[0]), int(items[-1])
    if lo < 0 or hi > 4 * len(at) + 4096:
        return np.searchsorted(items, at)
    place = np.zeros(hi + 1, dtype=np.int64)
    place[items] = np.arange(len(items))
    return place[at]


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


def consensus(
    answers: pd.DataFrame,
    spec: MetricSpec,
    items_of: tuple[np.ndarray, np.ndarray] | None = None,
    counted: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Per item consensus of coded answers of one metric.

    Input columns: idx, code (NaN = cannot judge). Output indexed by idx with
    n (answers), n_cannot_judge, value (majority / median; NaN at a nominal tie),
    tie, mean, min, max, and `clear_share` (share of answers equal to the
    majority, nominal only).

    Computed with numpy from one count per item and distinct answer (an item has few distinct
    answers), not with pandas' groupby: a report runs it on every answer of every metric spec,
    some twice. `items_of`: `distinct` of the answers' idx (as int64), where the caller has it;
    `counted`: the known answers counted where the caller has them (the value counts of alpha):
    per item and distinct answer its idx, its answer and its count, ordered by idx then answer.
    """
    col = answers["code"]
    # a float column read as it is, not copied (never written below)
    code = col.to_numpy() if col.dtype == np.float64 else col.astype(float).to_numpy()
    if items_of is None:
        items_of = distinct(answers["idx"].astype(np.int64).to_numpy())
    items, item = items_of  # the items in order, each answer's among them
    m = len(items)
    unknown = np.isnan(code)
    n_cannot_judge = np.bincount(item[unknown], minlength=m).astype(np.int64)
    if n_cannot_judge.any():  # from here on, the known answers only
        code, item = code[~unknown], item[~unknown]
    # one pair per item and distinct known answer, ordered by item then answer, with its count
    if counted is None:
        pair_item, answer, count = _counted(code, item, m)
    else:  # whole counts (as floats): every sum and comparison below is the same
        at_idx, answer, count = counted
        pair_item = _positions_among(items, at_idx)
    # an item's pairs are consecutive: one segment per item with a known answer, from `first` to
    # `last`; an item with cannot-judge answers only has none and keeps `per_item`'s fill value
    first = np.flatnonzero(np.diff(pair_item, prepend=-1) != 0)
    last = np.append(first[1:], len(pair_item))[: len(first)] - 1
    seg = pair_item[first]

    def per_item(x: np.ndarray, fill: Any, dtype: Any = float) -> np.ndarray:
        out = np.full(m, fill, dtype=dtype)
        out[seg] = x
        return out

    running = np.cumsum(count)  # the answers up to each pair
    before = running[first] - count[first]  # the answers ahead of each segment
    n_seg = running[last] - before
    # answers go up within a segment: its first pair is the lowest answer, its last the highest
    columns: dict[str, np.ndarray] = {
        "n": per_item(n_seg, 0, np.int64),
        "mean": per_item(_means(code, item, answer, count, first, last, n_seg), np.nan),
        "min": per_item(answer[first], np.nan),
        "max": per_item(answer[last], np.nan),
    }
    if spec.nominal:
        top = np.maximum.reduceat(count, first)
        best = count == np.repeat(top, last + 1 - first)
        running_best = np.cumsum(best)
        tie = running_best[last] - (running_best[first] - best[first]) > 1
        # the value: the lowest of the most frequent answers (each segment's first best pair)
        # when it is alone at the top
        at_top = np.flatnonzero(best)
        lowest_best = answer[at_top[np.diff(pair_item[at_top], prepend=-1) != 0]]
        columns["tie"] = per_item(tie, False, bool)
        columns["value"] = per_item(np.where(tie, np.nan, lowest_best), np.nan)
        columns["clear_share"] = per_item(top / n_seg, np.nan)
    else:
        # the median: the mean of the answers of rank (n-1)//2 and n//2 (from 0), which the
        # running count passes at before + rank
        lo = answer[np.searchsorted(running, before + (n_seg - 1) // 2, side="right")]
        hi = answer[np.searchsorted(running, before + n_seg // 2, side="right")]
        columns["value"] = per_item((lo + hi) / 2.0, np.nan)
        columns["tie"] = per_item(lo != hi, False, bool)
        columns["clear_share"] = np.full(m, np.nan)
    columns["n_cannot_judge"] = n_cannot_judge
    # copy=False: the columns are new arrays, kept as they are rather than copied into one block
    return pd.DataFrame(columns, index=pd.Index(items, name="idx"), copy=False)


def _counted(
    code: np.ndarray, item: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per item (`item`: its place among `m`) and distinct known answer, its place, its answer
    and its count, ordered by item then answer."""
    which, values = _answer_columns(code)
    k = max(len(values), 1)
    key = item * k + which
    if m * k <= 4 * len(key) + 4096:  # the table of counts is small: count in one pass
        table = np.bincount(key, minlength=m * k)
        key = np.flatnonzero(table)
        count = table[key]
    else:
        key, count = np.unique(key, return_counts=True)
    pair_item, pair_value = np.divmod(key, k)
    return pair_item, values[pair_value], count


def _answer_columns(code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each known answer's position among the answer values, and the values in order. Codes
    are mostly small whole numbers (an option's index, a scale point): each is its own
    position, some values absent; other codes are factorized (a hash, then a sort)."""
    with np.errstate(invalid="ignore"):  # an infinite code is not whole: factorized below
        whole = code.astype(np.int64)
    if len(code) and whole.min() >= 0 and whole.max() <= 1024 and np.array_equal(whole, code):
        return whole, np.arange(whole.max() + 1, dtype=float)
    which, values = pd.factorize(code, sort=True)
    return which, np.asarray(values, dtype=float)


def _means(
    code: np.ndarray,
    item: np.ndarray,
    answer: np.ndarray,
    count: np.ndarray,
    first: np.ndarray,
    last: np.ndarray,
    n: np.ndarray,
) -> np.ndarray:
    """Mean answer of each item with a known answer, bit for bit as pandas' groupby mean.

    pandas sums with compensation (or np.add.reduceat on sorted items); when every partial sum
    is exact, as with answers on a grid of 1/1024 (codes, scale points) and small totals, any
    order of summing gives the same sum, here running sums' differences. Otherwise pandas sums
    them itself, the same answers in the same order."""
    grid = answer * 1024.0
    if np.all(grid == np.round(grid)) and np.abs(grid).max(initial=0) * len(code) < 2.0**53:
        weighted = count * answer
        running = np.cumsum(weighted)
        total = running[last] - running[first] + weighted[first]
        return total / n
    return pd.Series(code).groupby(item, sort=True).mean().to_numpy()


# ---- the clear-consensus rule (its thresholds: domain/clear_consensus.py) -----------------

DEFINITION = (
    f"clear human consensus: at least {MIN_HUMANS} human answers and at least "
    f"{CLEAR_SHARE:.0%} of them the same (gates, tags, choices, verdict); for scales the judge "
    f"is at least {SCALE_GAP:g} points outside the range of the human answers"
)


def _col(cons: pd.DataFrame, name: str) -> np.ndarray:
    return cons[name].to_numpy(dtype=float)


def clear(spec: MetricSpec, cons: pd.DataFrame) -> np.ndarray:
    """Per row of `cons` (consensus()'s columns n, value, clear_share, min, max): whether the
    humans agree clearly: MIN_HUMANS answers and, nominal, CLEAR_SHARE of them the same (so no
    tie), ordinal, their answers spanning less than SCALE_GAP points."""
    enough = _col(cons, "n") >= MIN_HUMANS
    with np.errstate(invalid="ignore"):
        if spec.ordinal:
            return enough & (_col(cons, "max") - _col(cons, "min") < SCALE_GAP)
        return enough & (_col(cons, "clear_share") >= CLEAR_SHARE) & ~np.isnan(_col(cons, "value"))


def comparable(spec: MetricSpec, cons: pd.DataFrame) -> np.ndarray:
    """Rows where another answer can contradict the humans: nominal, a clear consensus; ordinal,
    MIN_HUMANS answers (their range counts, whatever its spread)."""
    if spec.ordinal:
        return _col(cons, "n") >= MIN_HUMANS
    return clear(spec, cons)


def contradicted(spec: MetricSpec, cons: pd.DataFrame, answer: np.ndarray) -> np.ndarray:
    """Per row of `cons`, whether `answer` (codes; NaN: none) contradicts the humans: on a
    comparable row, nominal, another answer than the clear one; ordinal, SCALE_GAP or more
    below their lowest or above their highest answer."""
    a = np.asarray(answer, dtype=float)
    with np.errstate(invalid="ignore"):
        if spec.ordinal:
            off = (a <= _col(cons, "min") - SCALE_GAP) | (a >= _col(cons, "max") + SCALE_GAP)
        else:
            off = a != _col(cons, "value")
    return comparable(spec, cons) & ~np.isnan(a) & off


def metric_consensus(specs: list[MetricSpec], cons: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One rubric metric's consensus per item from its specs' (`cons`: spec key -> consensus()):
    n, n_cannot_judge, clear, value (the typed answer when clear, else None), share (of the
    least agreed-upon option: nominal) and spread (1 - share; ordinal: highest - lowest).

    A multi-select metric is clear when every option is; its value is then the options the
    humans clearly ticked. Its answers are known or unknown as a whole, so every option has
    the same n and n_cannot_judge."""
    first = specs[0]
    base = cons[first.key]
    out = pd.DataFrame(index=base.index)
    out["n"] = base["n"]
    out["n_cannot_judge"] = base["n_cannot_judge"]
    if first.ordinal:
        ok = clear(first, base)
        out["clear"] = ok
        out["share"] = np.nan
        out["spread"] = (base["max"] - base["min"]).fillna(0.0)
        # the median; a tie's half point goes up (to the next point of the scale's grid)
        up = _points_up(first, base["value"].to_numpy(dtype=float))
        out["value"] = _objects(
            [p if c else None for p, c in zip(up, ok, strict=True)],
            out.index,
        )
        return out
    ok = np.ones(len(base), dtype=bool)
    share = np.ones(len(base))
    for s in specs:
        c = cons[s.key].reindex(base.index)
        ok &= clear(s, c)
        share = np.fmin(share, _col(c, "clear_share"))
    answered = out["n"].to_numpy() > 0
    out["clear"] = ok
    out["share"] = np.where(answered, share, np.nan)
    out["spread"] = np.where(answered, 1.0 - share, 0.0)
    if first.multi:
        ticked = [cons[s.key]["value"].reindex(base.index).to_numpy() == 1.0 for s in specs]
        values: list[Any] = [
            tuple(sorted(str(s.tag) for s, t in zip(specs, row, strict=True) if t)) if c else None
            for c, row in zip(ok, zip(*ticked, strict=True), strict=True)
        ]
    else:
        values = [
            first.labels[int(v)] if c else None for v, c in zip(base["value"], ok, strict=True)
        ]
    out["value"] = _objects(values, out.index)
    return out


def _objects(values: list[Any], index: pd.Index) -> pd.Series:
    """Typed answers as they are (an int stays an int, None stays None)."""
    return pd.Series(values, index=index, dtype=object)
