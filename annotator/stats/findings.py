"""Findings: where a judge contradicts a clear human consensus, item by item.
(Over 500 lines on purpose: the clear-consensus rule and every finding built on it (item,
systematic, reasons) stay side by side.)

A human consensus is *clear* when at least two humans answered the item (not
"cannot judge") and:

- gates, tags, choices, the verdict: at least 80% of them gave the same answer
  (with two to four raters that means all of them);
- scales: a judge value at least 2 points outside the range of the human
  answers (below the lowest or above the highest) contradicts them, whatever
  the spread inside that range.

Only judges answering on the rubric's scale can contradict; a judge on its own
scale (a [0, 1] score) is compared through correlations instead. Findings are
listed by case, item, metric and judge, never ranked by a score.

Beside each judge's findings: how often a *held-out human* contradicts the
others by the same rule on the same items (each human in turn left out and
compared with the clear consensus of the remaining ones; the judge compared
with the same remaining humans). A judge that is just another human has about
that rate; findings of a metric and judge whose rate is above it by a one-sided
test (items as clusters, p < 0.05) are listed first (`excess`); both rates come with
intervals.

A *systematic* finding is a metric where a judge is lenient (higher) or severe
(lower) as a whole, tested against a held-out human: each human in turn takes
the judge's place. The statistic is the judge's mean signed difference from a
held-out human's; since both are measured against the same remaining humans,
the consensus cancels and per item it is the judge's answer minus the mean
human answer (no majority or median, which is biased by construction for tags
and lopsided gates). Its null distribution relabels, on every item, a random
one of the K humans + judge as "the judge" (exact if the judge is exchangeable
with the humans; Monte Carlo, seeded). The p-values of every metric and judge
of the report are adjusted together with the Benjamini-Hochberg step-up (false
discovery rate 5%); a finding needs q < 0.05. In simulation an exchangeable
judge gets a systematic finding in at most 5% of studies and a judge lenient
by +0.5 on a 0-5 scale is caught in nearly all 150-item studies
(tests/benchmarks/validity.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..domain.clear_consensus import MIN_HUMANS
from .bootstrap import rng_for
from .consensus import MetricSpec, comparable, contradicted
from .distinct import position_in

FDR = 0.05
N_RELABEL = 4000
_MC_MAX_ITEMS = 2000  # items that vary; above this the normal limit of the relabelling law is used


def _kind(spec: MetricSpec, human: float, judge: float) -> str:
    if spec.multi:
        return "judge_tags_humans_do_not" if judge > human else "humans_tag_judge_does_not"
    if spec.ordinal:
        return "judge_above_human_range" if judge > human else "judge_below_human_range"
    if spec.directed:  # two directed values, e.g. FAIL/PASS: "judge_pass_humans_fail"
        return f"judge_{spec.label(judge).lower()}_humans_{spec.label(human).lower()}"
    return "judge_chooses_otherwise"


def contradictions(
    spec: MetricSpec, detail: dict[str, Any], items: pd.DataFrame
) -> list[dict[str, Any]]:
    """Every item where a judge contradicts a clear human consensus on this metric (the rule:
    consensus.contradicted)."""
    cons: pd.DataFrame = detail["consensus"]
    human: pd.DataFrame = detail["human"]
    # read by column, not by row: a study with a lenient judge flags thousands of items, and
    # a row of a mixed frame (or a group of one) costs a pandas object each; read once a
    # judge contradicts the humans (every metric of every refresh read them: 25 ms at 20,000
    # items, with no judge at all)
    item_cols: dict[str, np.ndarray | None] = {}
    out: list[dict[str, Any]] = []
    for name, view in detail["views"].items():
        if not view.same_scale:
            continue
        judge = view.values.dropna()
        common = judge.index.intersection(cons.index)
        if not len(common):
            continue
        c = cons.loc[common]
        j = judge.loc[common].to_numpy(dtype=float)
        hit = contradicted(spec, c, j)
        if spec.ordinal:  # the end of the humans' range the judge is beyond
            ref = np.where(j > c["max"].to_numpy(float), c["max"], c["min"])
        else:
            ref = c["value"].to_numpy(float)
        if not hit.any():
            continue
        flagged = common[hit]
        if not item_cols:
            item_cols = {
                c: items[c].to_numpy(dtype=object) if c in items else None
                for c in ("item_id", "display_code", "case_id", "generator")
            }
        answers = human[human["idx"].isin(flagged)].sort_values(["idx", "rater"])
        a_idx = answers["idx"].to_numpy(np.int64)
        a_rows = list(
            zip(
                answers["rater"].astype(object),
                answers["code"],
                answers["reason"].astype(object),
                strict=True,
            )
        )
        first = np.searchsorted(a_idx, flagged.to_numpy(np.int64), side="left")
        last = np.searchsorted(a_idx, flagged.to_numpy(np.int64), side="right")
        reasons = view.answers["reason"].reindex(flagged).to_numpy(dtype=object)
        for k, (idx, jval, r) in enumerate(zip(flagged, j[hit], ref[hit], strict=True)):
            human_list: list[dict[str, Any]] = [
                {"rater": str(rt), "value": spec.label(cd), "reason": _text(rs)}
                for rt, cd, rs in a_rows[first[k] : last[k]]
            ]
            at = int(idx)
            out.append(
                {
                    "item_id": str(_cell(item_cols["item_id"], at)),
                    "display_code": _text(_cell(item_cols["display_code"], at)),
                    "case_id": _text(_cell(item_cols["case_id"], at)),
                    "generator": _text(_cell(item_cols["generator"], at)),
                    "metric": spec.key,
                    "judge_name": name,
                    "humans": ", ".join(h["value"] for h in human_list),
                    "human_answers": human_list,
                    "judge": spec.label(jval),
                    "judge_reason": _text(reasons[k]),
                    "kind": _kind(spec, float(r), float(jval)),
                }
            )
    return out


def _cell(col: np.ndarray | None, at: int) -> Any:
    return None if col is None else col[at]


def _text(x: Any) -> str | None:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return None
    s = str(x)
    return s if s.strip() else None


def _offsets(
    item: np.ndarray, code: np.ndarray, who: np.ndarray, min_items: int = 2
) -> dict[str, Any]:
    """Each human held out in turn against the other humans on the same items: per human the
    offset D_k (mean over items of their answer minus the mean of the others), the variance of
    that mean from item to item (v_k), and c_k (1 + 1 / others, averaged), the factor of a
    personal offset's variance in D_k. Humans with fewer than `min_items` items are left out."""
    units, pos = np.unique(item, return_inverse=True)
    n_u = np.bincount(pos, minlength=len(units)).astype(float)
    s_u = np.bincount(pos, weights=code, minlength=len(units))
    others = n_u[pos] - 1.0
    ok = others >= 1
    with np.errstate(divide="ignore", invalid="ignore"):
        d = code - (s_u[pos] - code) / others
    out: dict[str, Any] = {}
    for r in np.unique(who[ok]):
        mine = ok & (who == r)
        n = int(mine.sum())
        if n < min_items:
            continue
        dk = d[mine]
        out[str(r)] = {
            "offset": float(dk.mean()),
            "var": float(dk.var(ddof=1) / n),
            "c": float(np.mean(1.0 + 1.0 / others[mine])),
            "n": n,
        }
    return out


@dataclass(frozen=True)
class OffsetPool:
    """The humans' spread of held-out offsets pooled over the metrics of one scale.

    spread: the mean over the metrics of their spread (tau^2 + item noise); noise: the mean of
    their item-noise part; k: humans; df_noise: the degrees of freedom of the pooled noise part
    (k - 1 per metric, fewer when the raters' item errors are correlated across metrics).
    The personal-offset part keeps k - 1 degrees of freedom (counted by rater: a rater's
    offsets may be the same on every metric), so pooling only makes the noise part exact.
    """

    spread: float
    noise: float
    k: int
    df_noise: float
    metrics: tuple[str, ...] = ()


def _spread(offs: dict[str, Any]) -> tuple[float, float]:
    """(spread, noise) of held-out offsets: sum D_k^2 / sum c_k (tau^2 + noise) and the noise
    part sum v_k / sum c_k."""
    sum_c = sum(o["c"] for o in offs.values())
    spread = sum(o["offset"] ** 2 for o in offs.values()) / sum_c
    noise = sum(o["var"] for o in offs.values()) / sum_c
    return spread, noise


def offset_pool(frames: dict[str, pd.DataFrame]) -> OffsetPool | None:
    """The humans' offset spread pooled over metrics on one scale (frames: metric key -> human
    answers idx, rater, code). Items with MIN_HUMANS human answers; the same humans on every
    metric. The noise parts' degrees of freedom: (k - 1) M^2 / sum rho^2 over metric pairs,
    rho the correlation across (rater, item) of the per-item held-out differences (M (k - 1)
    when the item errors are independent across metrics, k - 1 when they are the same)."""
    parts, ds = [], []
    for key, h in frames.items():
        a = h[h["code"].notna()]
        idx = a["idx"].to_numpy(np.int64)
        code = a["code"].to_numpy(float)
        who = a["rater"].astype(str).to_numpy()
        units, pos = np.unique(idx, return_inverse=True)
        n_u = np.bincount(pos, minlength=len(units)).astype(float)
        keep = n_u[pos] >= MIN_HUMANS
        offs = _offsets(idx[keep], code[keep], who[keep])
        if len(offs) < 2:
            return None
        parts.append((key, frozenset(offs), *_spread(offs)))
        s_u = np.bincount(pos, weights=code, minlength=len(units))
        with np.errstate(divide="ignore", invalid="ignore"):
            d = code - (s_u[pos] - code) / (n_u[pos] - 1.0)
        ix = pd.MultiIndex.from_arrays([who[keep], idx[keep]])
        ds.append(pd.Series(d[keep], index=ix).groupby(level=[0, 1]).mean())
    if len(parts) < 2 or len({p[1] for p in parts}) != 1:
        return None  # the same humans on every metric, or no pool
    k = len(parts[0][1])
    m = len(parts)
    wide = pd.concat(ds, axis=1, join="inner")
    wide = wide - wide.groupby(level=0).transform("mean")  # each rater's own offset out
    rho = np.nan_to_num(np.corrcoef(wide.to_numpy(float), rowvar=False), nan=1.0)
    rho = np.atleast_2d(rho)
    np.fill_diagonal(rho, 1.0)
    return OffsetPool(
        spread=float(np.mean([p[2] for p in parts])),
        noise=float(np.mean([p[3] for p in parts])),
        k=k,
        df_noise=float((k - 1) * m * m / (rho**2).sum()) if len(wide) > m else float(k - 1),
        metrics=tuple(p[0] for p in parts),
    )


def offset_pools(specs: list[MetricSpec], frames: dict[str, pd.DataFrame]) -> dict[str, OffsetPool]:
    """Per metric key, the humans' offset spread pooled over the ordinal metrics with the same
    answer values (a personal offset is a property of the rater, in that scale's points);
    metrics alone on their scale, and two-valued ones, keep their own spread."""
    groups: dict[tuple[float, ...], list[str]] = {}
    for s in specs:
        if s.directed and s.ordinal and len(s.values) > 2 and s.key in frames:
            groups.setdefault(tuple(s.values), []).append(s.key)
    out: dict[str, OffsetPool] = {}
    for keys in groups.values():
        if len(keys) < 2:
            continue
        pool = offset_pool({k: frames[k] for k in keys})
        if pool is not None:
            out |= dict.fromkeys(keys, pool)
    return out


def held_out_difference(
    spec: MetricSpec,
    h: pd.DataFrame,
    judge: pd.Series,
    *,
    seed: int = 0,
    key: str = "",
    n_relabel: int = N_RELABEL,
    pool: OffsetPool | None = None,
) -> dict[str, Any]:
    """The judge's offset from the humans, tested against the humans' own offsets.

    h: human answers (idx, rater, code; NaN = no answer); judge: code per idx. Items need a
    judge code and MIN_HUMANS human codes. Per item delta = judge - mean human answer; the
    judge's offset D_J is its mean. The null is "the judge is like a human drawn from these
    raters", personal offset included: every human is held out in turn against the others
    (the same rule), giving offsets D_k; a personal offset of variance tau^2 enters D_J with
    factor c_J = 1 + 1/K and D_k with c_k = 1 + 1/(K-1). Their spread S = sum D_k^2 / sum c_k
    is tau^2 + noise (noise = sum v_k / sum c_k, v_k: D_k's item-to-item variance) with K - 1
    degrees of freedom, and tau^2 is drawn by a generalized pivot (Weerahandi), max(0,
    S (K-1) / chi^2_(K-1) - noise); the null law of D_J is the relabelling law of the item
    part (on every item a random one of the K humans + judge in the judge's place: exact for
    exchangeable answers) plus N(0, c_J tau^2), drawn together (Monte Carlo, seeded by `seed`
    and `key`); tau hat = sqrt(max(0, S - noise)) is reported.
    With no personal offsets (tau hat 0) it is the relabelling test alone.

    pool (offset_pools): the humans' spread taken over the metrics of this one's scale instead
    (a personal offset is the rater's, in that scale's points). Its two parts are drawn apart:
    tau^2 = max(0, (spread - noise B) / A), A ~ chi^2_(K-1) / (K-1) (the offsets, counted by
    rater: they may be the same on every metric) and B ~ chi^2_f / f (the item noise in the
    held-out offsets, f = df_noise, independent across metrics up to the correlation that
    offset_pool measures). With one metric's spread both parts have K - 1 degrees of freedom
    and the noise cannot be told from the offsets (the pivot above); pooled, the noise is
    known better, and three humans who agree are less often taken for raters with offsets.

    Returns {"rows", "delta", "estimate", "p_value", "n", "test", "human_offsets" (per human:
    their held-out offset), "human_offset_range" ([min, max]), "offset_sd" (tau hat)}.
    """
    idx = h["idx"].to_numpy(np.int64)
    code = h["code"].to_numpy(float)
    who = h["rater"].astype(str).to_numpy()
    j = judge[judge.notna()]
    known = ~np.isnan(code) & np.isin(idx, j.index.to_numpy(np.int64))
    idx, code, who = idx[known], code[known], who[known]
    units, pos = np.unique(idx, return_inverse=True)
    kk = np.bincount(pos, minlength=len(units)).astype(float)
    keep_unit = kk >= MIN_HUMANS
    out: dict[str, Any] = {"n": int(keep_unit.sum()), "rows": units[keep_unit]}
    if keep_unit.sum() < 2:
        out.update(
            delta=np.zeros(0),
            estimate=None,
            p_value=None,
            note=f"fewer than 2 items with a judge answer and {MIN_HUMANS} human answers",
        )
        return out
    ssum = np.bincount(pos, weights=code, minlength=len(units))
    sel = keep_unit[pos]
    items, kk, ssum = units[keep_unit], kk[keep_unit], ssum[keep_unit]
    jj = j.reindex(items).to_numpy(float)
    delta = jj - ssum / kk
    n = len(delta)
    est = float(delta.mean())
    offs = _offsets(idx[sel], code[sel], who[sel])
    out.update(
        delta=delta,
        estimate=est,
        human_offsets={r: o["offset"] for r, o in sorted(offs.items())},
        human_offset_range=(
            [min(o["offset"] for o in offs.values()), max(o["offset"] for o in offs.values())]
            if offs
            else None
        ),
    )
    c_j = float(np.mean(1.0 + 1.0 / kk))
    k_h = len(offs)
    if pool is not None and pool.k >= 2:
        k_h, spread, noise = pool.k, pool.spread, pool.noise
        tau2 = max(0.0, spread - noise)
    elif k_h >= 2:
        spread, noise = _spread(offs)  # tau^2 + item noise, and the noise
        tau2 = max(0.0, spread - noise)
    else:
        spread = noise = tau2 = 0.0
    out["offset_sd"] = float(np.sqrt(tau2)) if k_h >= 2 else None
    # the item part: relabelling, on item i a random one of the K humans + judge labelled
    # "judge" contributes ((K+1) a - total) / K (exact if the answers are exchangeable)
    new_pos = np.cumsum(keep_unit) - 1
    a = np.concatenate([jj, code[sel]])
    item_of = np.concatenate([np.arange(len(items)), new_pos[pos[sel]]])
    total = (ssum + jj)[item_of]
    c = ((kk[item_of] + 1.0) * a - total) / kk[item_of]
    obs = float(delta.sum())
    varies = np.bincount(item_of, weights=c * c, minlength=len(items)) > 1e-12
    if not varies.any() and spread <= 0:
        out.update(p_value=1.0, test="every item's answers agree: nothing to test")
        return out
    order = np.argsort(item_of, kind="stable")
    c, item_of = c[order], item_of[order]
    size = np.bincount(item_of, minlength=len(items))
    start = np.cumsum(size) - size
    vi = np.flatnonzero(varies)
    rng = rng_for(seed, "held-out-human", key)
    # the offset part: the judge's own offset minus the humans' mean, of sd sqrt(c_J) tau,
    # as Student's t with K - 1 degrees of freedom (tau estimated from K humans)
    # the offset part, a generalized pivot (Weerahandi): the humans' spread of offsets is
    # tau^2 + noise with K - 1 degrees of freedom, so a draw of tau^2 is
    # max(0, spread (K - 1) / chi^2_(K-1) - noise), and the judge's own offset minus the humans'
    # mean is N(0, c_J tau^2): the uncertainty of tau^2 from K humans is in the law, not a
    # point estimate (three close raters are not evidence of no offsets)
    normal = len(vi) > _MC_MAX_ITEMS
    var_r = float((np.bincount(item_of, weights=c * c, minlength=len(items)) / size).sum())
    hits = 0
    step = max(1, 2_000_000 // max(1, len(vi))) if not normal else n_relabel
    for s0 in range(0, n_relabel, step):
        b = min(step, n_relabel - s0)
        if normal:
            r = rng.normal(0.0, np.sqrt(var_r), b)
        elif len(vi):
            pick = start[vi] + (rng.random((b, len(vi))) * size[vi]).astype(np.int64)
            r = c[pick].sum(axis=1)
        else:
            r = np.zeros(b)
        if pool is not None and k_h >= 2 and spread > 0:
            # two parts, each with its own degrees of freedom: the personal offsets' k - 1
            # (by rater) and the pooled item noise's df_noise
            a_ = rng.chisquare(k_h - 1, b) / (k_h - 1)
            b_ = rng.chisquare(pool.df_noise, b) / pool.df_noise
            t2 = np.maximum(0.0, (spread - noise * b_) / a_)
            r = r + n * np.sqrt(c_j * t2) * rng.standard_normal(b)
        elif k_h >= 2 and spread > 0:
            t2 = np.maximum(0.0, spread * (k_h - 1) / rng.chisquare(k_h - 1, b) - noise)
            r = r + n * np.sqrt(c_j * t2) * rng.standard_normal(b)
        hits += int((np.abs(r) >= abs(obs) - 1e-9).sum())
    out.update(
        p_value=float((1 + hits) / (1 + n_relabel)),
        test=(
            "the judge's offset against the humans' own: each human in turn in the judge's "
            f"place on every item ({'normal limit' if normal else 'relabelling'}), plus a "
            f"personal offset (sd {np.sqrt(tau2):.3g} estimated from the {k_h} humans' "
            "held-out offsets"
            + (
                f" on {', '.join(pool.metrics)} (one scale)"
                if pool is not None and pool.metrics
                else ""
            )
            + f", drawn with its uncertainty: {max(k_h - 1, 0)} degrees of freedom"
            + (
                f", the item noise in them {pool.df_noise:.3g}"
                if pool is not None and pool.k >= 2
                else ""
            )
            + "); "
            f"{n_relabel} draws"
        ),
    )
    return out


def benjamini_hochberg(p: list[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), in the input order."""
    m = len(p)
    if not m:
        return []
    order = np.argsort(p)
    q = np.empty(m)
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        q[i] = running
    return [float(min(1.0, x)) for x in q]


def systematic(
    sections: dict[str, dict[str, Any]], specs: dict[str, MetricSpec]
) -> list[dict[str, Any]]:
    """Metric and judge pairs whose difference from a held-out human survives the
    Benjamini-Hochberg adjustment over every test of the report (q < FDR).

    Writes each judge entry's `vs_held_out_human.q_value` in place.
    """
    tests = []
    for key, sec in sections.items():
        for name, j in sec.get("judges", {}).items():
            ho = j.get("vs_held_out_human") or {}
            if (
                ho.get("p_value") is not None
                and (ho.get("difference") or {}).get("estimate") is not None
            ):
                tests.append((key, name, ho))
    qs = benjamini_hochberg([t[2]["p_value"] for t in tests])
    out = []
    for (key, name, ho), q in zip(tests, qs, strict=True):
        ho["q_value"] = q
        if q >= FDR:
            continue
        up = ho["difference"]["estimate"] > 0
        if specs[key].multi:
            kind = "judge_tags_more_often" if up else "judge_tags_less_often"
        else:
            kind = "lenient" if up else "severe"
        out.append(
            {
                "metric": key,
                "judge_name": name,
                "kind": kind,
                "mean_difference": sections[key]["judges"][name].get("mean_difference"),
                "vs_held_out_human": ho,
                "q_value": q,
                "judge_offset": ho["difference"]["estimate"],
                "human_offset_range": ho.get("human_offset_range"),
                "note": (
                    f"the judge's offset {ho['difference']['estimate']:+.2f}"
                    + (
                        " beside the humans' own {:+.2f} to {:+.2f}".format(
                            *ho["human_offset_range"]
                        )
                        if ho.get("human_offset_range")
                        else ""
                    )
                    + f" (each held out against the others) has q = {q:.3g} "
                    f"(Benjamini-Hochberg over {len(tests)} tests, FDR {FDR:g})"
                ),
            }
        )
    return out


def held_out_finding_rates(spec: MetricSpec, h: pd.DataFrame, judge: pd.Series) -> dict[str, Any]:
    """How often a held-out human, and the judge, contradict the clear consensus of the
    remaining humans by the finding rule (each human left out in turn; pooled over them)."""
    a = h[h["code"].notna()][["idx", "code"]]
    out: dict[str, Any] = {"rule": "same rule as the findings, against the remaining humans"}
    if not len(a):
        return {**out, "n_comparisons": 0, "human_rate": None, "judge_rate": None}
    dom = np.unique(np.concatenate([a["code"].to_numpy(float), judge.dropna().to_numpy(float)]))
    items, pos = np.unique(a["idx"].to_numpy(), return_inverse=True)
    own = position_in(dom, a["code"].to_numpy(float))
    counts = np.zeros((len(items), len(dom)))
    np.add.at(counts, (pos, own), 1.0)
    others = counts[pos]
    others[np.arange(len(a)), own] -= 1.0
    n_o = others.sum(axis=1)
    jv = judge.reindex(items).to_numpy(float)[pos]
    # the remaining humans' consensus, one row per held-out answer, in consensus()'s columns
    present = others > 0
    top = others.max(axis=1)
    unique = (others == top[:, None]).sum(axis=1) == 1
    with np.errstate(divide="ignore", invalid="ignore"):
        rest = pd.DataFrame(
            {
                "n": n_o,
                "value": np.where(unique, dom[others.argmax(axis=1)], np.nan),
                "clear_share": top / n_o,
                "min": dom[np.argmax(present, axis=1)],
                "max": dom[len(dom) - 1 - np.argmax(present[:, ::-1], axis=1)],
            }
        )
    eligible = comparable(spec, rest)
    h_hit = contradicted(spec, rest, dom[own])
    j_hit = contradicted(spec, rest, jv)
    j_ok = eligible & ~np.isnan(jv)
    n_h, n_j = int(eligible.sum()), int(j_ok.sum())
    res = {
        **out,
        "n_comparisons": n_h,
        "human_rate": float(h_hit[eligible].mean()) if n_h else None,
        "n_judge_comparisons": n_j,
        "judge_rate": float(j_hit[j_ok].mean()) if n_j else None,
    }
    if n_j:
        res.update(_rate_figures(pos[j_ok], h_hit[j_ok], j_hit[j_ok]))
    return res


def _cluster_ratio(unit: np.ndarray, hit: np.ndarray) -> tuple[float, float, int]:
    """A rate over comparisons, with its standard error with items as clusters (a held-out
    human's comparisons on one item share that item), and the number of items."""
    units, inv = np.unique(unit, return_inverse=True)
    n_i = np.bincount(inv).astype(float)
    s_i = np.bincount(inv, weights=hit.astype(float))
    m = len(units)
    rate = float(s_i.sum() / n_i.sum())
    if m < 2:
        return rate, float("nan"), m
    resid = s_i - rate * n_i
    se = float(np.sqrt((resid**2).sum() * m / (m - 1)) / n_i.sum())
    return rate, se, m


def _rate_figures(unit: np.ndarray, h_hit: np.ndarray, j_hit: np.ndarray) -> dict[str, Any]:
    """Intervals of the two rates on the comparisons where the judge answered, and `excess` as
    a test: the judge's rate above the held-out human's by a one-sided paired test over items
    (p < 0.05), never by any margin."""
    from scipy.stats import t as student_t

    def ci(hit: np.ndarray) -> dict[str, Any]:
        rate, se, m = _cluster_ratio(unit, hit)
        if not np.isfinite(se) or se <= 0:
            return {
                "estimate": rate,
                "low": None,
                "high": None,
                "n": m,
                "note": "no interval: too few items or nothing varies",
            }
        q = float(student_t.ppf(0.975, m - 1))
        return {
            "estimate": rate,
            "low": max(0.0, rate - q * se),
            "high": min(1.0, rate + q * se),
            "n": m,
        }

    diff, se, m = _cluster_ratio(unit, j_hit.astype(float) - h_hit.astype(float) + 1.0)
    diff -= 1.0  # the shift keeps the ratio's weights; the difference of the two rates
    if np.isfinite(se) and se > 0:
        p = float(student_t.sf(diff / se, m - 1))
    else:
        p = 1.0 if diff <= 0 else 0.0
    return {
        "human_rate_ci": ci(h_hit),
        "judge_rate_ci": ci(j_hit),
        "excess_difference": diff,
        "excess_p_value": p,
        "excess_test": "judge's rate minus the held-out human's on the same comparisons, "
        "one-sided t-test with items as clusters; excess when p < 0.05",
    }


def baseline_summary(
    sections: dict[str, dict[str, Any]], findings: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per metric and judge: the judge's findings beside a held-out human's rate by the same rule."""
    count: dict[tuple[str, str], int] = {}
    for f in findings:
        k = (f["metric"], f["judge_name"])
        count[k] = count.get(k, 0) + 1
    out = []
    for key, sec in sections.items():
        for name, j in sec.get("judges", {}).items():
            r = j.get("item_findings") or {}
            if r.get("human_rate") is None:
                continue
            hr, jr = r["human_rate"], r.get("judge_rate")
            # a test, not any margin: the judge's rate above the held-out human's at p < 0.05
            excess = r.get("excess_p_value") is not None and r["excess_p_value"] < FDR
            r["excess"] = bool(excess)
            out.append(
                {
                    "metric": key,
                    "judge_name": name,
                    "n_findings": count.get((key, name), 0),
                    "judge_rate": jr,
                    "held_out_human_rate": hr,
                    "n_comparisons": r["n_comparisons"],
                    "judge_rate_ci": r.get("judge_rate_ci"),
                    "held_out_human_rate_ci": r.get("human_rate_ci"),
                    "excess_p_value": r.get("excess_p_value"),
                    "excess": bool(excess),
                }
            )
    return out


def order_findings(
    findings: list[dict[str, Any]], baseline: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Findings of a metric and judge whose rate is above a held-out human's first (marked
    `excess`), then the rest; within each, by case, item, metric, judge (a listing, not a ranking)."""
    excess = {(b["metric"], b["judge_name"]) for b in baseline if b["excess"]}
    for f in findings:
        f["excess"] = (f["metric"], f["judge_name"]) in excess
    return sorted(
        findings,
        key=lambda f: (
            not f["excess"],
            f["case_id"] or "",
            f["display_code"] or "",
            f["item_id"],
            f["metric"],
            f["judge_name"],
        ),
    )
