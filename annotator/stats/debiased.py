"""Debiased generator figures: a judge on every item, humans on a random sample (PPI++).
(Over 500 lines on purpose: the PPI++ estimator, its small-sample interval and the report section
that publishes it are one method.)

A judge scores all of a generator's items; humans rate a random subset. The judge's own
pass rate is biased by exactly its disagreement with the humans; the humans' alone is
unbiased but wide. Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan &
Zrnic, Science 2023) with power tuning (PPI++, Angelopoulos, Duchi & Zrnic 2023,
arXiv:2311.01453) combines them:

    theta(lam) = lam * F_U + (Y_L - lam * F_L)

F_U: the judge's mean over the items no human rated in the sample, Y_L and F_L: the humans'
and the judge's means over the sampled items. It is unbiased for every lam (the second term
removes, on a random sample, what the judge gets wrong on average); lam in [0, 1] is chosen
to minimise the estimated variance, so a useless judge (lam near 0) gives the humans-only
interval and a perfect one (lam near 1) the judge's precision. With independent items and
equal weights this is `ppi_py.ppi_mean_pointestimate` / `ppi_mean_ci` (lam by their rule),
to 1e-9 (tests/unit/test_debiased.py).

Design as in stats/generators.py: within a generator, every case weighted equally (an item's
population weight is 1 / (K * items of its case)); several humans on an item are averaged
per item first. Sampled items carry their inclusion probability pi (weight 1/pi, Hajek
normalised); an item outside the sample counts in F_U with weight 1/(1 - pi) (so a stratum
sampled at a higher rate is not over-represented among the unsampled). Items cluster in
cases: the variance is the cluster-robust (sandwich) sum over cases of each case's summed
influence, with the CR1 factor K/(K-1) and a t quantile on K-1 degrees of freedom; with
no clustering (every item its own case, `cluster=None`) it is ppi_py's variance exactly.
lam is then the exact minimiser of that cluster-robust variance (ppi_py's pooled-variance
rule when items are independent and equally weighted, so the two agree there). The report
prints `small_sample=True`: a delete-one-case (or item) jackknife in which every replicate
re-tunes lam (so lam's own variability is counted) and a t quantile on the sampled units less
one; at 50 human items the plain interval covered 91-94% in simulation. Counted so, a judge
that adds little can leave the interval slightly wider than the humans' alone on a small
sample (the effective labels fall below n), never by much.

Beside it: the humans-only estimate (same weights, same variance), the judge-only figure
(the judge's case-weighted mean over all items, what a team would publish without humans),
the judge's error on the sample (judge minus humans on the sampled items, with its
interval: "the judge overstates ... by 0.12 [0.05, 0.19]"), and the *effective number of
human labels*: n * var(humans-only) / var(PPI), the humans-only sample size that would give
the PPI interval's width. Simulated coverage: tests/benchmarks/validity.md, model H. Per judge
and figure, the generators' ranks as sets from these figures and their covariance over shared
cases (`rank_sets`, stats/debiased_ranks.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from ..domain.figures import figure_label
from ..domain.settings import setting
from .answers import split_by_metric
from .consensus import MetricSpec
from .debiased_ranks import figure_rank_sets

SAMPLE_SETTING = "human_sample"  # the recorded random sample (services/sampling.py)


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float
    se: float
    n: int  # units the estimate averages (items)

    def as_dict(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "n": self.n}


@dataclass(frozen=True)
class PPIResult:
    ppi: Interval
    humans: Interval  # humans alone on the sampled items
    lam: float
    n_labelled: int
    n_unlabelled: int
    n_clusters: int | None  # None: independent items
    units: float  # Kish's effective number of sampled items
    # the small-sample variance as a sum of squares, one term per jackknife unit (ppi.se**2 =
    # sum jk_terms**2): units are clusters (their values in `jk_units`) or, without clusters,
    # items (labelled then unlabelled; `jk_units` None); generators sharing cases sum their
    # products over shared cases for their covariance (stats/debiased_ranks.py)
    jk_terms: np.ndarray | None = None
    jk_units: np.ndarray | None = None

    @property
    def effective_labels(self) -> float:
        """The humans-only sample size whose interval is as wide as the PPI interval."""
        if self.ppi.se <= 0:
            return float("inf") if self.humans.se > 0 else float(self.n_labelled)
        return float(self.n_labelled * (self.humans.se / self.ppi.se) ** 2)


def _weights(w: np.ndarray | None, n: int) -> np.ndarray:
    if w is None:
        return np.ones(n)
    w = np.asarray(w, dtype=float)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights: one finite non-negative number per item, not all zero")
    return w


def _quantile(alpha: float, k: float | None) -> float:
    """The two-sided normal, or Student's t on k - 1 degrees of freedom, quantile. The special
    functions scipy.stats' norm.isf and t.isf evaluate (the same numbers), called directly: the
    distribution objects' argument handling cost half a millisecond a call, and a report makes
    hundreds."""
    if k is None:
        return float(-special.ndtri(alpha / 2))
    return float(-special.stdtrit(max(1.0, k - 1), alpha / 2))


def _coded(cluster: np.ndarray) -> tuple[np.ndarray, int]:
    """Each unit's cluster as 0..K-1, and K. By hashing, not sorting: a figure codes the
    cases of a generator's (up to 50,000) items several times, and np.unique's sort of them
    was most of the debiased section's time."""
    inv, uniq = pd.factorize(np.asarray(cluster), use_na_sentinel=False)
    return inv, len(uniq)


def _kish_units(w: np.ndarray, cluster: np.ndarray | None) -> float:
    """Kish's effective number of sampled units, (sum w)^2 / sum w^2 over items (or cases,
    their weights summed): the t quantile's units. Unequal inclusion weights (an active
    sample) make a few units carry the estimate, and a t on the raw count then under-covers
    (90.5% for a lenient judge at 15 active labels, in simulation); equal weights give the
    count itself."""
    if cluster is not None:
        inv, _k = _coded(cluster)
        w = np.bincount(inv, weights=w)
    return float(w.sum() ** 2 / np.sum(w**2))


def _cluster_var(infl: np.ndarray, cluster: np.ndarray | None) -> float:
    """Sum over clusters of the squared summed influence (CR1-scaled); per item without
    clusters (then exactly the plug-in variance, as ppi_py)."""
    if cluster is None:
        return float(np.sum(infl**2))
    inv, k = _coded(cluster)
    sums = np.bincount(inv, weights=infl, minlength=k)
    return float(np.sum(sums**2) * (k / (k - 1) if k > 1 else 1.0))


def ppi_mean(
    y: np.ndarray,
    f_labelled: np.ndarray,
    f_unlabelled: np.ndarray,
    *,
    w_labelled: np.ndarray | None = None,
    w_unlabelled: np.ndarray | None = None,
    cluster_labelled: np.ndarray | None = None,
    cluster_unlabelled: np.ndarray | None = None,
    lam: float | None = None,
    alpha: float = 0.05,
    small_sample: bool = False,
) -> PPIResult:
    """PPI++ estimate and interval of a mean, with the humans-only one beside it.

    `y`, `f_labelled`: the human value (per item, already averaged over its humans) and the
    judge's on the sampled items; `f_unlabelled`: the judge's on the items no human rated.
    Weights (e.g. population weight / inclusion probability) are Hajek-normalised within
    each set. Clusters (case codes, comparable between the two sets) make the variance
    cluster-robust; without them items are independent. `lam=None` tunes lam.
    """
    y = np.asarray(y, dtype=float)
    fl = np.asarray(f_labelled, dtype=float)
    fu = np.asarray(f_unlabelled, dtype=float)
    n, m = len(y), len(fu)
    if n < 2 or len(fl) != n:
        raise ValueError("ppi_mean needs at least two sampled items with a judge value each")
    b = _weights(w_labelled, n)
    a = _weights(w_unlabelled, m) if m else np.zeros(0)
    B, A = b.sum(), a.sum() if m else 1.0
    y_b, f_b = float(b @ y / B), float(b @ fl / B)
    f_a = float(a @ fu / A) if m else 0.0
    alpha_i = a * (fu - f_a) / A  # the unlabelled judge mean's influence (per unlabelled item)
    beta_i = b * (y - y_b) / B  # the humans' mean
    gamma_i = b * (fl - f_b) / B  # the judge's mean on the sampled items
    clustered = cluster_labelled is not None
    if clustered:
        cl = np.asarray(cluster_labelled)
        cu = np.asarray(cluster_unlabelled) if m else np.zeros(0, dtype=cl.dtype)
        both = np.concatenate([cl, cu])
        cluster: np.ndarray | None = both
        k: int | None = _coded(both)[1]
    else:
        cluster, k = None, None
    zeros_u = np.zeros(m)
    # influence(lam) = base + lam * slope, items in order (labelled, unlabelled)
    base = np.concatenate([beta_i, zeros_u])
    slope = np.concatenate([-gamma_i, alpha_i]) if m else -gamma_i
    tuned = lam is None and m > 0
    if lam is None:
        plain = not clustered and w_labelled is None and w_unlabelled is None
        if not m:
            lam = 0.0  # nothing the judge alone adds
        elif plain:
            # ppi_py's rule: cov(Y, f) on the sample over (1 + n/N) var(f) pooled (ddof 1)
            cov = float(np.mean((y - y.mean()) * (fl - fl.mean())))
            var = float(np.var(np.concatenate([fl, fu]), ddof=1))
            lam = cov / ((1 + n / m) * var) if var > 0 else 0.0
        else:
            # exact minimiser of the (cluster-robust) variance, quadratic in lam
            if cluster is None:
                sb, ss = base, slope
            else:
                inv, _k = _coded(cluster)
                sb = np.bincount(inv, weights=base)
                ss = np.bincount(inv, weights=slope)
            den = float(ss @ ss)
            # a judge that does not vary (rounding leaves ~1e-17) adds nothing: lam 0
            lam = -float(sb @ ss) / den if den > 1e-12 * max(float(sb @ sb), 1e-300) else 0.0
        lam = float(np.clip(lam, 0.0, 1.0))
    est = lam * f_a + y_b - lam * f_b
    jk_terms, jk_units = None, None
    se = np.sqrt(_cluster_var(base + lam * slope, cluster))
    se_h = np.sqrt(_cluster_var(np.concatenate([beta_i, zeros_u]), cluster))
    z = _quantile(alpha, k)
    if small_sample:
        # the report's choice (ppi_py's interval is the plain one): a jackknife variance,
        # deleting one case (or item) at a time, which counts each unit's leverage (a heavy
        # weight, a large case) where the sandwich does not, and a t quantile on the
        # sampled units less one
        lams = None
        if tuned:
            # lam tuned on the same data varies with it: each replicate re-tunes it (the
            # minimiser without that unit, moved from the full-data one), so the interval
            # carries lam's own variability
            if cluster is None:
                sb, ss = base, slope
            else:
                inv, _k = _coded(cluster)
                sb, ss = np.bincount(inv, weights=base), np.bincount(inv, weights=slope)
            num, den = float(sb @ ss), float(ss @ ss)
            if den > 1e-12 * max(float(sb @ sb), 1e-300):
                rest = den - ss * ss
                with np.errstate(invalid="ignore", divide="ignore"):
                    moved = np.where(rest > 0, -(num - sb * ss) / rest, -num / den) + num / den
                lams = np.clip(lam + moved, 0.0, 1.0)
        se, se_h, jk_terms, jk_units = _jackknife(
            lam, y, fl, fu, b, a, cluster_labelled, cluster_unlabelled, lams
        )
        # counted with lam's own variability, a judge that adds little can leave the interval
        # a little wider than the humans' alone (effective labels below n say so); falling
        # back to the humans then would pick the narrower interval and cost coverage (92.1%
        # against 93.2% at 60 items in 25 cases, in simulation)
        z = _quantile(alpha, _kish_units(b, cluster_labelled))
    return PPIResult(
        ppi=Interval(float(est), float(est - z * se), float(est + z * se), float(se), n + m),
        humans=Interval(y_b, float(y_b - z * se_h), float(y_b + z * se_h), float(se_h), n),
        lam=lam,
        n_labelled=n,
        n_unlabelled=m,
        n_clusters=k,
        units=_kish_units(b, None),
        jk_terms=jk_terms,
        jk_units=jk_units,
    )


def _drop_one(s: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The Hajek mean sum(s)/sum(w) without each unit in turn (s, w: per-unit sums)."""
    rest = w.sum() - w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rest > 0, (s.sum() - s) / rest, s.sum() / w.sum())


def _jk_var(theta: np.ndarray) -> float:
    k = len(theta)
    return float((k - 1) / k * np.sum((theta - theta.mean()) ** 2)) if k > 1 else 0.0


def _jk_terms(theta: np.ndarray) -> np.ndarray:
    """Each replicate's term of `_jk_var`: their squares sum to it."""
    k = len(theta)
    return np.sqrt((k - 1) / k) * (theta - theta.mean()) if k > 1 else np.zeros(k)


def _jackknife(
    lam: float,
    y: np.ndarray,
    fl: np.ndarray,
    fu: np.ndarray,
    b: np.ndarray,
    a: np.ndarray,
    cl: np.ndarray | None,
    cu: np.ndarray | None,
    lams: np.ndarray | None = None,
) -> tuple[float, float, np.ndarray, np.ndarray | None]:
    """Delete-one jackknife standard errors of the PPI estimate and of the humans-only mean,
    with the PPI variance's per-unit terms and their clusters (None: items, labelled then
    unlabelled). Independent items: the two samples apart (they are independent); clusters:
    one case at a time, both samples together (a case's items share its effect). `lams`: each
    replicate's lam (per unit: labelled items then unlabelled, or per case), else this lam
    throughout."""
    n = len(y)
    if cl is None:
        lam_l = np.full(n, lam) if lams is None else lams[:n]
        lam_u = np.full(len(fu), lam) if lams is None else lams[n:]
        f_a = float(a @ fu / a.sum()) if len(fu) else 0.0
        y_b, f_b = float(b @ y / b.sum()), float(b @ fl / b.sum())
        theta_l = lam_l * f_a + _drop_one(b * y, b) - lam_l * _drop_one(b * fl, b)
        v = _jk_var(theta_l)
        terms_u = np.zeros(len(fu))
        if len(fu) > 1:
            theta_u = lam_u * _drop_one(a * fu, a) + y_b - lam_u * f_b
            v += _jk_var(theta_u)
            terms_u = _jk_terms(theta_u)
        terms = np.concatenate([_jk_terms(theta_l), terms_u])
        return float(np.sqrt(v)), float(np.sqrt(_jk_var(_drop_one(b * y, b)))), terms, None
    inv, uniq = pd.factorize(
        np.concatenate([cl, cu if cu is not None else cl[:0]]), use_na_sentinel=False
    )
    k = len(uniq)
    il, iu = inv[: len(y)], inv[len(y) :]

    def sums(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return np.bincount(idx, weights=x, minlength=k)

    bl = sums(b, il)
    lam_c = np.full(k, lam) if lams is None else lams
    theta = _drop_one(sums(b * y, il), bl) - lam_c * _drop_one(sums(b * fl, il), bl)
    if len(fu):
        theta = theta + lam_c * _drop_one(sums(a * fu, iu), sums(a, iu))
    humans = _drop_one(sums(b * y, il), bl)
    return (
        float(np.sqrt(_jk_var(theta))),
        float(np.sqrt(_jk_var(humans))),
        _jk_terms(theta),
        np.asarray(uniq),
    )


def weighted_mean(
    x: np.ndarray, w: np.ndarray | None, cluster: np.ndarray | None, alpha: float = 0.05
) -> Interval:
    """A (Hajek) weighted mean with its delete-one-case (or item) jackknife interval, t on
    Kish's effective units less one (the judge-only figure, the judge's error on the sample)."""
    x = np.asarray(x, dtype=float)
    w = _weights(w, len(x))
    W = w.sum()
    est = float(w @ x / W)
    se = float(np.sqrt(_cluster_var(w * (x - est) / W, cluster)))
    k = None if cluster is None else _coded(cluster)[1]
    z = _quantile(alpha, k)
    if len(x) > 1:  # as ppi_mean(small_sample=True): the jackknife, t on Kish's units less one
        z = _quantile(alpha, _kish_units(w, cluster))
        if cluster is None:
            se = float(np.sqrt(_jk_var(_drop_one(w * x, w))))
        else:
            inv, k_c = _coded(cluster)
            sx = np.bincount(inv, weights=w * x, minlength=k_c)
            sw = np.bincount(inv, weights=w, minlength=k_c)
            se = float(np.sqrt(_jk_var(_drop_one(sx, sw))))
    return Interval(est, est - z * se, est + z * se, se, len(x))


# ---------------------------------------------------------------------------------------------
# the report section


def sample_of(settings: dict[str, Any], key: str = SAMPLE_SETTING) -> dict[str, Any] | None:
    """The recorded random human sample: {"items": {item_id: pi}, "seed", ...} or None (`key`:
    the setting, the pair sample's for stats/debiased_pairs.py)."""
    s = settings.get(key)
    if not isinstance(s, dict) or not isinstance(s.get("items"), dict) or not s["items"]:
        return None
    return s


NO_SAMPLE = (
    "no random human sample recorded: draw one with `annotator assign --sample N` (or "
    "--sample-share F); human answers on hand-picked items cannot correct the judge"
)


def debiased_section(
    items: pd.DataFrame,
    human: pd.DataFrame,
    judged: pd.DataFrame,
    specs: list[MetricSpec],
    settings: dict[str, Any],
    *,
    min_labelled: int = 10,
    alpha: float = 0.05,
    confidences: pd.DataFrame | None = None,
    strata_members: bool = False,
) -> dict[str, Any]:
    """Per judge, generator and figure: PPI++, humans-only and judge-only figures, and the
    stratified PPI++ beside them (stats/debiased_strata.py; `confidences`: its
    `latest_confidences`, the judges' stated confidences that make its default strata;
    `strata_members`: each stratified block names its items' strata, for `assign --by-strata`).

    Only human answers on items of the recorded random sample enter (answers elsewhere are
    counted, never used); a sampled item no human has answered yet is left out, and the
    sampled items answered so far stand for the sample (their inclusion probability scaled
    by the answered share of their generator's sample: missing at random within it).
    """
    from .debiased_strata import latest_confidences, strata_mode, stratified_entry
    from .debiased_value import judge_value  # it imports this module
    from .generators import figure_name

    sample = sample_of(settings)
    if sample is None:
        return {"recorded": False, "note": NO_SAMPLE, "judges": {}}
    pi_of = {str(k): float(v) for k, v in sample["items"].items()}
    figs = [s for s in specs if s.directed]
    meta = items.reindex(columns=["idx", "item_id", "case_id", "generator", "slice"]).copy()
    meta["case_id"] = meta["case_id"].fillna("(none)").astype(str)
    meta["generator"] = meta["generator"].fillna("(none)").astype(str)
    meta["item_id"] = meta["item_id"].astype(str)
    meta["in_sample"] = meta["item_id"].isin(pi_of.keys())
    meta["pi"] = meta["item_id"].map(pi_of)
    # unsampled items' probability of being drawn: their generator's sampling rate (uniform
    # within a generator), recorded per generator; 0 for items added after the draw
    rates = {str(g): float(r) for g, r in (sample.get("rates") or {}).items()}
    rate = meta["generator"].map(rates).fillna(0.0)
    # an active sample records every item's probability (Poisson sampling)
    unsampled = {str(k): float(v) for k, v in (sample.get("unsampled") or {}).items()}
    if unsampled:
        rate = meta["item_id"].map(unsampled).fillna(rate)
    meta["pi"] = meta["pi"].where(meta["in_sample"], rate).astype(float)
    # a sample drawn by strata (`assign --by-strata`) records each item's cell: the items that
    # shared every draw's stratum, among which the answered ones stand for the drawn (`design`)
    cells = sample.get("cells")
    if isinstance(cells, dict) and cells:
        meta["cell"] = meta["item_id"].map({str(k): str(v) for k, v in cells.items()}).fillna("")
    # items imported after the draw could never have been drawn: a figure covers the sample's
    # frame only (services/frames.py names them from the draw's frame_max_pk)
    after = {str(i) for i in sample.get("imported_after") or []}
    outside = meta[meta["item_id"].isin(after)].groupby("generator").size().to_dict()
    meta = meta[~meta["item_id"].isin(after)]
    h_by, j_by = split_by_metric(human), split_by_metric(judged)
    h_items = set(human["idx"].unique()) if len(human) else set()
    sampled_idx = set(meta.loc[meta["in_sample"], "idx"])
    out: dict[str, Any] = {
        "recorded": True,
        "sample": {
            "seed": sample.get("seed"),
            "design": sample.get("design"),
            "n_drawn": int(meta["in_sample"].sum()),
            "n_drawn_answered": len(h_items & sampled_idx),
            "n_human_items_outside_sample": len(h_items - sampled_idx),
            # topped up by strata (`assign --by-strata`): a top-up must follow strata again
            **({"by_strata": True} if sample.get("cells") else {}),
        },
        "used": "human answers on the items of the recorded random sample only; answers on "
        "other items are counted here and never enter the estimates",
        "figures": {figure_name(s): _kind(s) for s in figs},
        "judges": {},
    }
    judges = sorted(str(j) for j in judged["judge"].unique()) if len(judged) else []
    conf = latest_confidences(None) if confidences is None else confidences
    conf_by = dict(tuple(conf.groupby(["judge", "metric"]))) if len(conf) else {}
    mode = strata_mode(settings)
    plan_width = float(setting(settings, "debiased_plan_width"))
    for judge in judges:
        per_gen: dict[str, dict[str, Any]] = {}
        ranks: dict[str, Any] = {}  # per figure, over the generators (stats/debiased_ranks.py)
        for spec in figs:
            h, j = h_by.get(spec.key), j_by.get(spec.key)
            if h is None or j is None:
                continue
            j = j[(j["judge"].astype(str) == judge) & j["num"].notna()]
            if not len(j):
                continue
            f = j.groupby("idx")["num"].mean()
            # in the humans' units: on their points, or between them where the rubric says its
            # judges score on the metric's own scale at any value (judge_scale = "interval")
            between = spec.metric is not None and spec.metric.judge_scale == "interval"
            in_range = bool(j["num"].between(float(spec.lo or 0), float(spec.hi or 0)).all())
            same_scale = bool(j["code"].notna().all()) or (between and in_range)
            hy = h[h["code"].notna() & h["idx"].isin(sampled_idx)].groupby("idx")["code"].mean()
            df = meta.set_index("idx").join(f.rename("f"), how="inner").join(hy.rename("y"))
            span = (0.0, 1.0) if spec.nominal else (float(spec.lo), float(spec.hi))  # type: ignore[arg-type]
            c = conf_by.get((judge, spec.base))
            df["conf"] = (
                np.nan if c is None else df["item_id"].map(c.set_index("item_id")["confidence"])
            )
            terms: dict[str, pd.Series | None] = {}
            for g, sub in df.groupby("generator", sort=True):
                fig, terms[str(g)] = figure_and_terms(sub, same_scale, min_labelled, alpha, span)
                accuracy = same_scale and _kind(spec) == "pass rate"
                fig["judge_value"] = judge_value(sub, fig, pass_rate=accuracy, alpha=alpha)
                if fig.get("ppi") is not None:
                    fig.update(stratified_entry(sub, mode, alpha, span, plan_width, strata_members))
                else:
                    fig.update(stratified=None, stratified_note="no debiased estimate")
                if outside.get(g):
                    fig["outside_frame"] = _outside(len(sub), int(outside[g]))
                per_gen.setdefault(g, {})[figure_name(spec)] = fig
            name = figure_name(spec)
            ranks[name] = figure_rank_sets({g: per_gen[g][name] for g in terms}, terms, alpha)
        if per_gen:
            out["judges"][judge] = {"by_generator": per_gen, "rank_sets": ranks}
    return out


def _outside(n_frame: int, n_after: int) -> dict[str, Any]:
    return {
        "n_items": n_after,
        "note": f"covers the {n_frame} items that existed when the sample was drawn; {n_after} "
        "imported since could not have been drawn and are not in this figure: `annotator "
        "assign --sample N` again tops the sample up over them",
    }


def _kind(spec: MetricSpec) -> str:
    if spec.multi:
        return "share tagged"
    return "pass rate" if spec.nominal else "mean score"


# Below this many effective sampled items (Kish's, `_kish_units`) the report's interval
# under-covers: 90.1-91.6% for a lenient judge at 10-15 labels, uniform or active, against
# 92.8-97.0% from 20 up (tests/benchmarks/validity.md, model H at small samples). Items, not
# cases: with several humans per item in few cases the interval held from 10 items (92.7-95.7%).
# The estimate is still printed; its interval is not.
MIN_UNITS_FOR_INTERVAL = 20


def too_few_units_note(units: float) -> str:
    return (
        f"no interval: the sample counts as {units:.0f} labels (fewer than "
        f"{MIN_UNITS_FOR_INTERVAL}, where an interval would cover less than it claims); "
        "`annotator assign --sample N` draws more"
    )


def _published(
    iv: Interval, span: tuple[float, float], units: float | None = None
) -> dict[str, Any]:
    """An interval as the report prints it: inside the figure's range (a normal interval of
    a pass rate near 0 would reach below it), none when nothing varies (a zero-width interval
    would claim a certainty the data do not have) or when the sample is too small for it to
    hold (`units`: the sample's effective size, where it is a sample)."""
    out = iv.as_dict()
    if not iv.se > 0:
        out["low"] = out["high"] = None
        out["note"] = "no interval: nothing varies in the sample (too few items or all alike)"
        return out
    if units is not None and units < MIN_UNITS_FOR_INTERVAL:
        out["low"] = out["high"] = None
        out["note"] = too_few_units_note(units)
        return out
    out["low"], out["high"] = max(span[0], iv.low), min(span[1], iv.high)
    return out


@dataclass(frozen=True)
class Design:
    """How a generator's items enter PPI++ (sub as `_one_figure` takes it): `codes` each
    item's case (0..K-1), `v` its population weight, `lab` answered in the sample, `cl` the
    clusters (None: one item per case), `pi_lab` the answered items' inclusion probability,
    `unl` the items no human was drawn for, `w_u` their weights, `uniform` all weights equal."""

    codes: np.ndarray
    n_cases: int
    v: np.ndarray
    lab: np.ndarray
    cl: np.ndarray | None
    pi_lab: np.ndarray
    unl: np.ndarray
    w_u: np.ndarray
    uniform: bool


def design(sub: pd.DataFrame) -> Design:
    """The weights, sets and clusters of one generator's items (see `Design`)."""
    # one coding of the cases serves the weights, the clusters and the count (a generator
    # of 50,000 items: sorting its case ids once per figure was most of the section's time)
    codes, uniq = pd.factorize(sub["case_id"])
    n_cases = len(uniq)
    # every case weighted equally: an item's population weight is 1 / (K * items of its case)
    size = np.bincount(codes, minlength=n_cases)[codes].astype(float)
    v = 1.0 / (size * n_cases)
    lab = sub["y"].notna().to_numpy()
    n_lab = int(lab.sum())
    cl = codes if n_cases < len(sub) else None  # some case holds several items
    pi = sub["pi"].to_numpy(float)
    # the answered share of the drawn items stands for the sample (missing at random): over the
    # generator, or within each cell of a sample drawn by strata, whose cells were drawn at
    # different rates (new draws in one stratum, not yet answered, must not thin the others)
    drawn = sub["in_sample"].to_numpy(bool)
    if "cell" in sub:
        cell = pd.factorize(sub["cell"])[0]
        answered = np.bincount(cell[lab], minlength=cell.max() + 1)
        of_drawn = np.maximum(1, np.bincount(cell[drawn], minlength=cell.max() + 1))
        pi_lab = pi[lab] * (answered / of_drawn)[cell[lab]]
    else:
        pi_lab = pi[lab] * (n_lab / max(1, int(drawn.sum())))
    unl = ~lab & ~drawn  # a drawn item not answered yet is in neither set
    w_u = v[unl] / np.clip(1.0 - pi[unl], 1e-12, None)
    uniform = bool(
        np.ptp(v) < 1e-15
        and (not len(pi_lab) or np.ptp(pi_lab) < 1e-15)
        and (not unl.any() or np.ptp(w_u) < 1e-15)
    )
    return Design(codes, n_cases, v, lab, cl, pi_lab, unl, w_u, uniform)


def _one_figure(
    sub: pd.DataFrame,
    same_scale: bool,
    min_labelled: int,
    alpha: float,
    span: tuple[float, float],
) -> dict[str, Any]:
    """One generator, judge and figure (sub: its items with a judge value f, the human mean y
    on sampled answered items, case_id, pi; span: the figure's range)."""
    return figure_and_terms(sub, same_scale, min_labelled, alpha, span)[0]


def figure_and_terms(
    sub: pd.DataFrame,
    same_scale: bool,
    min_labelled: int,
    alpha: float,
    span: tuple[float, float],
) -> tuple[dict[str, Any], pd.Series | None]:
    """`_one_figure`, with its PPI++ variance as per-case terms (index case_id; their squares
    sum to the published interval's variance): generators sharing cases are correlated
    through them (stats/debiased_ranks.py). None where there is no estimate."""
    d = design(sub)
    n_cases, v, lab, cl = d.n_cases, d.v, d.lab, d.cl
    n_lab, n_all = int(lab.sum()), len(sub)
    clustered = cl is not None
    fig: dict[str, Any] = {"n_items": n_all, "n_sampled": n_lab, "n_cases": n_cases}
    judge_only = weighted_mean(sub["f"].to_numpy(float), v, cl, alpha)
    fig["judge_only"] = _published(judge_only, span) if same_scale else None
    if not same_scale:
        fig["judge_only_note"] = "the judge does not answer on the rubric's scale"
    if n_lab < min_labelled:
        fig["ppi"] = None
        fig["note"] = f"{n_lab} sampled items answered, fewer than {min_labelled}: no estimate"
        return fig, None
    pi_lab, unl, w_u, uniform = d.pi_lab, d.unl, d.w_u, d.uniform
    fv = sub["f"].to_numpy(float)
    res = ppi_mean(
        sub["y"].to_numpy(float)[lab],
        fv[lab],
        fv[unl],
        w_labelled=None if uniform else v[lab] / pi_lab,
        w_unlabelled=None if uniform or not unl.any() else w_u,
        cluster_labelled=None if cl is None else cl[lab],
        cluster_unlabelled=None if cl is None else cl[unl],
        alpha=alpha,
        small_sample=True,
    )
    fig["ppi"] = _published(res.ppi, span, res.units)
    fig["humans_only"] = _published(res.humans, span, res.units)
    fig["effective_sampled_units"] = round(res.units, 1)
    fig["lambda"] = res.lam
    fig["effective_human_labels"] = round(res.effective_labels, 1)
    fig["clustered_by_case"] = clustered
    if same_scale:
        err = weighted_mean(
            fv[lab] - sub["y"].to_numpy(float)[lab],
            None if uniform else v[lab] / pi_lab,
            None if cl is None else cl[lab],
            alpha,
        )
        width = span[1] - span[0]
        fig["judge_minus_humans"] = _published(err, (-width, width), res.units)
    return fig, _case_terms(res, d, sub["case_id"].to_numpy())


def _case_terms(res: PPIResult, d: Design, case_ids: np.ndarray) -> pd.Series | None:
    """The jackknife's terms summed by case (its units are cases, or items of one case each)."""
    if res.jk_terms is None:
        return None
    name = np.empty(d.n_cases, dtype=object)
    name[d.codes] = case_ids
    if res.jk_units is None:  # items: the labelled, then the unlabelled
        code = np.concatenate([d.codes[d.lab], d.codes[d.unl]])
    else:  # clusters: their values are design's case codes
        code = res.jk_units.astype(int)
    return pd.Series(np.bincount(code, weights=res.jk_terms, minlength=d.n_cases), index=name)


def _main_figure(figures: list[str]) -> str | None:
    if "verdict_pass_rate" in figures:
        return "verdict_pass_rate"
    return figures[0] if figures else None


def figure_words(gen: str, name: str, kind: str, labels: Mapping[str, str] | None = None) -> str:
    """A generator's figure in a sentence: "gen-a's pass rate on Instruction following"."""
    if name == "verdict_pass_rate":
        return f"{gen}'s pass rate"
    label = figure_label(name, labels)
    if ":" in name:
        return f"{gen}'s share tagged “{label}”"
    return f"{gen}'s {kind} on {label}"


def worth_words(fig: Mapping[str, Any]) -> str:
    """What the judge's figures were worth in human labels, beside the labels it took; where
    it added nothing or cannot help yet, that verdict (stats/debiased_value.judge_value)."""
    from .debiased_value import NOTHING  # it imports this module

    value = fig.get("judge_value") or {}
    if value.get("added_nothing"):
        # every caller has just named the figure "humans only": the verdict without saying it twice
        return str(value["words"]).replace(NOTHING, "the judge added nothing here", 1)
    if value.get("below_floor"):
        return str(value["words"])
    eff = float(fig.get("effective_human_labels") or 0.0)
    text = f"{eff:.0f} human labels' worth from {fig.get('n_sampled')} rated items"
    if value.get("rho") is not None:
        text += f" (rho {value['rho']:.2f}"
        if value.get("rho_low") is not None:
            text += f" [{value['rho_low']:.2f}, {value['rho_high']:.2f}]"
        n_eff = value.get("n_eff")
        # two readings of one worth: what the interval this sample reached gives (the number said
        # first), and what rho gives at the best weight (the figure's own words); where they
        # part, both are said
        if n_eff and abs(eff - float(n_eff)) > 0.1 * float(n_eff):
            text += f"; by rho alone about {float(n_eff):.0f} at the best weight"
        text += ")"
    return text


def debiased_words(fig: Mapping[str, Any]) -> str:
    """How a debiased figure is named: "humans only" where the judge's weight is 0 (the PPI++
    figure is then the humans' sample alone), else "debiased"."""
    return "humans only" if (fig.get("judge_value") or {}).get("added_nothing") else "debiased"


def debiased_summary(
    section: dict[str, Any], labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """For the summary: how far each judge's own figures were off, with the sign, in words
    (figures named by `labels`, the rubric's labels of the report keys).

    Per judge and generator the rubric's main figure (the verdict pass rate, else the first),
    and every other figure whose error interval excludes 0; `lines` says it as a sentence
    ("the judge overstates gen-gamma's pass rate by 0.12 [0.05, 0.19]")."""
    if not section.get("recorded"):
        return {"recorded": False, "note": section.get("note"), "lines": []}
    lines, rows = [], []
    kinds = section.get("figures") or {}
    for judge, jd in sorted((section.get("judges") or {}).items()):
        for gen, figs in sorted((jd.get("by_generator") or {}).items()):
            main = _main_figure(list(figs))
            for name, fig in figs.items():
                err = fig.get("judge_minus_humans")
                ppi = fig.get("ppi") or {}
                units = fig.get("effective_sampled_units")
                if name == main and units is not None and units < MIN_UNITS_FOR_INTERVAL:
                    # no interval to read a bias from yet: the estimate and what to do
                    label = figure_words(gen, name, kinds.get(name, "figure"), labels)
                    lines.append(
                        f"{label} {debiased_words(fig)} with the judge {judge}: "
                        f"{ppi['estimate']:.2f}, "
                        f"{too_few_units_note(units)}"
                        + (f"; {worth_words(fig)}" if debiased_words(fig) == "humans only" else "")
                    )
                    continue
                if name == main and not err and ppi.get("low") is not None:
                    # a judge off the rubric's scale has no error to state, only its worth
                    label = figure_words(gen, name, kinds.get(name, "figure"), labels)
                    lines.append(
                        f"{label} {debiased_words(fig)} with the judge {judge} (not on the "
                        "rubric's scale): "
                        f"{ppi['estimate']:.2f} [{ppi['low']:.2f}, {ppi['high']:.2f}], "
                        f"{worth_words(fig)}"
                    )
                    continue
                if not err or err.get("estimate") is None:
                    continue
                clear = err.get("low") is not None and (err["low"] > 0 or err["high"] < 0)
                if name != main and not clear:
                    continue
                label = figure_words(gen, name, kinds.get(name, "figure"), labels)
                if err.get("low") is None:
                    continue
                est, low, high = err["estimate"], err["low"], err["high"]
                if clear:  # the sign is in the verb, so the size and its interval are positive
                    verb = "overstates" if est > 0 else "understates"
                    size = f"{abs(est):.2f} [{min(abs(low), abs(high)):.2f}, "
                    size += f"{max(abs(low), abs(high)):.2f}]"
                    text = f"the judge {judge} {verb} {label} by {size}"
                else:
                    text = (
                        f"the judge {judge} is off the humans on {label} by {est:+.2f} "
                        f"[{low:+.2f}, {high:+.2f}] (no clear bias)"
                    )
                if ppi.get("low") is not None:
                    text += (
                        f"; {debiased_words(fig)} {ppi['estimate']:.2f} [{ppi['low']:.2f}, "
                        f"{ppi['high']:.2f}], {worth_words(fig)}"
                    )
                lines.append(text)
                rows.append(
                    {
                        "judge": judge,
                        "generator": gen,
                        "figure": name,
                        "judge_minus_humans": err,
                        "clear": clear,
                        "debiased": fig.get("ppi"),
                        "judge_value": fig.get("judge_value"),
                    }
                )
    return {"recorded": True, "off_by": rows, "lines": lines}
