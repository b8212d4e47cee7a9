"""Position bias: do votes favour the side an item was shown on?

Decisive votes (left/right) only. The p-value published for the pool, each rater and a
one-order judge is `conditioned_test`: a side effect given the pair of generators (a better
generator shown mostly on one side is a generator difference, not a side effect; with the
first generator left in 80% of pairs the tests below read one in 61% of studies pooled and 44%
per rater, the conditioned test 3.5% and 4.3%: validity.md). The tests below are kept beside it
under their own names (`p_value_sign_flip`, `p_value_votes_independent`, and per rater
`p_value_unconditioned`): they hold where every side was dealt at random.

- **Per rater** (and per judge): exact two-sided binomial test of the rater's
  left share against 1/2. One rater votes once per pair, so the votes are
  independent given the pairs. Per-rater p-values are Holm-adjusted over the
  study's raters (family-wise 5%; 2-4% in simulation), so a study of twenty fair
  raters is not expected to name one; a rater is named in `flagged_raters` when
  the adjusted p < 0.05.
- **Pooled over raters**: several raters vote on the same pair, and when they
  all saw one layout (an imported CSV such as PandaLM) their votes move
  together with the pair's two outputs. A binomial test over all votes then
  counts one pair three times (false-positive rate 11-30% in simulation). The
  pooled test is a sign-flip randomisation test over pairs: d_p = left - right
  votes of pair p; under no position bias (sides dealt at random) each d_p is
  as likely to have either sign, so p = P(|sum s_p d_p| >= |sum d_p|) over
  random signs s_p, computed exactly. With one vote per pair this is the
  two-sided binomial test.
- **Power** beside every "not flagged": the probability that the same test, on
  the same numbers of votes (and, pooled, the same clustering), would detect a
  65% left preference. Per rater it is exact at the level Holm uses first
  (0.05 / raters); pooled, a normal approximation with the observed variance.
- **Only where sides were randomized.** Every test above takes its null from the
  sides having been dealt at random. An imported layout often was not: PandaLM
  shows the alphabetically first generator on the left in all 999 pairs, so a
  left/right difference there is a generator difference (88-95% false flags in
  simulation). `layout_check` finds a layout in which the side is determined by
  the generators (one generator of a generator pair on the left) or by the pair
  itself (its first-listed, smaller item id on the left) in more than 90% of the
  pairs shown; then no side test is printed, with a note saying why. A layout
  shared by all raters of a pair is not "determined": the pooled test keeps a
  pair's votes together for exactly that case.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy.signal import fftconvolve
from scipy.stats import binom, binomtest, norm

from .pair_tallies import coded_votes

ALPHA_LEVEL = 0.05
POWER_SHARE = 0.65  # the left preference the power statement is about
FIXED_SHARE = 0.9  # a side determined in more than this share of the shown pairs: not randomized
# fewer shown pairs than this cannot tell a fixed layout from chance (2^-10 for 20 of 20)
MIN_LAYOUTS = 30


def holm(pvals: Mapping[str, float]) -> dict[str, float]:
    """Holm step-down adjusted p-values (family-wise error)."""
    keys = sorted(pvals, key=lambda k: pvals[k])
    m = len(keys)
    out, running = {}, 0.0
    for i, k in enumerate(keys):
        running = max(running, min(1.0, (m - i) * pvals[k]))
        out[k] = running
    return out


def binomial_power(n: int, level: float, share: float = POWER_SHARE) -> float:
    """Probability that the exact two-sided binomial test at `level` rejects 1/2 when the
    true left share is `share`, with n decisive votes."""
    if n <= 0:
        return 0.0
    k = np.arange(n + 1)
    # binomtest's two-sided p-value against 1/2 (a symmetric law): twice the smaller tail
    p = np.minimum(1.0, 2 * np.minimum(binom.cdf(k, n, 0.5), binom.sf(k - 1, n, 0.5)))
    return float(binom.pmf(k, n, share)[p <= level].sum())


def _power_note(n: int, prob: float, level: float) -> str:
    return (
        f"with {n} decisive votes a {POWER_SHARE:.0%} left preference is detected with "
        f"probability {prob:.2f} (level {level:.3g})"
    )


def side_counts(rows: pd.DataFrame, min_count: int, level: float = ALPHA_LEVEL) -> dict[str, Any]:
    """Left/right counts of one rater (or judge) with the exact binomial test and its power."""
    left = int((rows["choice"] == "left").sum())
    right = int((rows["choice"] == "right").sum())
    n = left + right
    out: dict[str, Any] = {"left": left, "right": right, "n": n}
    if n == 0:
        out["p_value"] = None
        out["note"] = "no decisive (left/right) votes"
        return out
    out["p_value"] = float(binomtest(left, n, 0.5, alternative="two-sided").pvalue)
    if n >= min_count:
        out["share_left"] = left / n
    else:
        out["note"] = f"n={n} is below the minimum of {min_count} votes for a share"
    prob = binomial_power(n, level)
    out["power"] = {
        "share_left": POWER_SHARE,
        "probability": prob,
        "level": level,
        "text": _power_note(n, prob, level),
    }
    return out


def sign_flip_test(d: np.ndarray) -> float:
    """Exact two-sided sign-flip p-value of sum(d) for whole-number cluster totals d.

    Under the null every cluster's sign is a fair coin, so the a-valued clusters add
    a * (2 Binomial(c_a, 1/2) - c_a); the law of the sum is the convolution of those
    scaled binomials, computed exactly (no Monte Carlo, no seed).
    """
    signed = np.asarray(d, dtype=np.int64)
    obs = abs(int(signed.sum()))
    d = np.abs(signed[signed != 0])
    if len(d) == 0:
        return 1.0
    total = int(d.sum())
    pmf = np.zeros(1)
    pmf[0] = 1.0
    for a, c in zip(*np.unique(d, return_counts=True), strict=True):
        part = np.zeros(int(a) * int(c) + 1)
        part[:: int(a)] = binom.pmf(np.arange(c + 1), c, 0.5)
        pmf = fftconvolve(pmf, part) if len(pmf) * len(part) > 1_000_000 else np.convolve(pmf, part)
    pmf = np.clip(pmf, 0.0, None)
    x = np.arange(len(pmf)) * 2 - total  # support -total..total in steps of 2
    return float(min(1.0, pmf[np.abs(x) >= obs - 1e-9].sum()))


# ---- the side test conditioned on the generator pair ---------------------------------------

CONDITIONED = (
    "stratified randomisation test: within each pair of generators, the showings with the "
    "first-named generator on the left against those with it on the right (a showing: one pair "
    "in one layout, the votes of the raters who saw it together); showings of a generator pair "
    "whose side never varied carry no information"
)
MIN_NORMAL = 60  # informative showings from which the normal approximation is used
PERMUTATIONS = 20_000


def showings(dec: pd.DataFrame) -> pd.DataFrame:
    """Decisive votes grouped into showings (pair_id, item on the left): per showing the stratum
    (the unordered generator pair; for two outputs of one generator the generator), `a` (1 when
    the stratum's first item, the first-named generator's or the smaller item id, was on the
    left) and `d`, the mean over its votes of +1 for that item, -1 for the other."""
    if dec.empty:
        return pd.DataFrame({"stratum": [], "a": [], "d": [], "votes": []})
    gl = dec["gen_left"].astype(str).to_numpy(dtype=object)
    gr = dec["gen_right"].astype(str).to_numpy(dtype=object)
    il = dec["item_left"].astype(str).to_numpy(dtype=object)
    ir = dec["item_right"].astype(str).to_numpy(dtype=object)
    same = gl == gr
    first_left = np.where(same, il < ir, gl < gr)
    stratum = np.where(gl < gr, gl + "\x00" + gr, gr + "\x00" + gl)
    left = (dec["choice"] == "left").to_numpy()
    d = np.where(left == first_left, 1.0, -1.0)
    g = pd.DataFrame(
        {
            # a pair's layout: which generator was left (which item, for one generator's two)
            "showing": dec["pair_id"].astype(str).to_numpy() + "\x00" + np.where(same, il, gl),
            "stratum": stratum,
            "a": first_left.astype(float),
            "d": d,
        }
    ).groupby("showing", sort=True)
    return pd.DataFrame(
        {
            "stratum": g["stratum"].first(),
            "a": g["a"].first(),
            "d": g["d"].mean(),
            "votes": g.size(),
        }
    ).reset_index(drop=True)


def conditioned_test(
    units: pd.DataFrame, level: float = ALPHA_LEVEL, seed: int = 0
) -> dict[str, Any]:
    """Two-sided test of a side effect given the generator pair (see `CONDITIONED`).

    Within a stratum the sides are the randomised part: under no side effect the first item's
    preference d does not depend on its side a, so T = sum a d is referred to its law when the
    stratum's a are permuted (mean n a_bar d_bar, variance sum (a - a_bar)^2 sum (d - d_bar)^2 /
    (n - 1)), summed over strata: a normal approximation from MIN_NORMAL informative showings,
    seeded Monte Carlo permutations below. A generator better than the other shows as d, never
    as a side effect, however fixed the layout; a stratum whose side never varied drops out
    (`randomized_share`: the share of showings in strata where it did). `power`: the probability
    of detecting a POWER_SHARE left preference on the same showings (normal approximation)."""
    out: dict[str, Any] = {"test": CONDITIONED, "n_showings": int(len(units))}
    if not len(units):
        return {**out, "p_value": None, "randomized_share": None, "note": "no decisive votes"}
    a_bar = units.groupby("stratum")["a"].transform("mean").to_numpy()
    d_bar = units.groupby("stratum")["d"].transform("mean").to_numpy()
    size = units.groupby("stratum")["a"].transform("size").to_numpy()
    varied = (a_bar > 0) & (a_bar < 1) & (size >= 2)
    out["randomized_share"] = float(varied.mean())
    u = units[varied]
    out["n_informative"] = int(len(u))
    if len(u) < 2:
        out.update(
            p_value=None,
            note="no pair of generators was shown with either one on the left: the side cannot "
            "be told from the generators",
        )
        return out
    a, d = u["a"].to_numpy(), u["d"].to_numpy()
    ab, db = a_bar[varied], d_bar[varied]
    dev = float(np.sum((a - ab) * d))  # T minus its permutation mean, summed over strata
    keys = u["stratum"].to_numpy()
    var = 0.0
    shift = 0.0
    for k in np.unique(keys):
        at = keys == k
        if at.sum() < 2:
            continue
        var += float(np.sum((a[at] - ab[at]) ** 2) * np.sum((d[at] - db[at]) ** 2) / (at.sum() - 1))
        # a left preference s moves d by +-(2 s - 1) with the side: +2 (2 s - 1) a (1 - a) per unit
        shift += float((2 * POWER_SHARE - 1) * 2 * np.sum((a[at] - ab[at]) * a[at]))
    if var <= 0:
        out.update(p_value=1.0, z=0.0)
    elif len(u) >= MIN_NORMAL:
        z = dev / np.sqrt(var)
        out.update(p_value=float(min(1.0, 2 * norm.sf(abs(z)))), z=float(z))
    else:
        rng = np.random.default_rng(seed)
        sims = np.zeros(PERMUTATIONS)
        for k in np.unique(keys):
            at = np.flatnonzero(keys == k)
            perm = rng.permuted(np.tile(a[at], (PERMUTATIONS, 1)), axis=1)
            sims += (perm - ab[at]) @ d[at]
        hits = int(np.sum(np.abs(sims) >= abs(dev) - 1e-12))
        out.update(
            p_value=float((hits + 1) / (PERMUTATIONS + 1)),
            method=f"{PERMUTATIONS:,} seeded permutations of the sides within each generator pair",
        )
    z_crit = norm.isf(level / 2)
    prob = (
        float(norm.cdf(shift / np.sqrt(var) - z_crit) + norm.cdf(-shift / np.sqrt(var) - z_crit))
        if var > 0
        else 0.0
    )
    out["power"] = {
        "share_left": POWER_SHARE,
        "probability": prob,
        "level": level,
        "text": f"on {len(u)} showings whose side varied within their pair of generators, a "
        f"{POWER_SHARE:.0%} left preference is detected with probability {prob:.2f} "
        f"(level {level:.3g})",
    }
    return out


def layout_check(v: pd.DataFrame) -> dict[str, Any]:
    """Were the sides dealt at random? On coded votes (pair_tallies.coded_votes).

    The unit is a pair as shown (pair_id, left item): raters sharing one layout count once.
    - by item order: share of shown pairs with the pair's smaller item id on the left;
    - by generator: per generator pair shown in two or more pairs, the larger of the two
      generators' left counts, summed and divided by those pairs' count.
    Either above FIXED_SHARE (or below 1 - FIXED_SHARE for the first) with at least MIN_LAYOUTS
    shown pairs: {"randomized": False, "determined_by": ..., "note"}. Under random sides the
    generator share is about 0.75 with two pairs per generator pair and nears 0.5 with more.
    """
    out: dict[str, Any] = {"randomized": True, "fixed_share": FIXED_SHARE}
    if v.empty:
        out["n_layouts"] = 0
        return out
    shown = v.drop_duplicates(["pair_id", "item_left"])
    n = len(shown)
    out["n_layouts"] = int(n)
    a_left = float((shown["item_left"].astype(str) == shown["item_a"].astype(str)).mean())
    out["share_smaller_item_left"] = a_left
    two = shown[shown["gen_left"].astype(str) != shown["gen_right"].astype(str)]
    by_gen = None
    first_left = np.zeros(0, dtype=bool)
    if len(two):
        gl = two["gen_left"].astype(str).to_numpy(dtype=object)
        gr = two["gen_right"].astype(str).to_numpy(dtype=object)
        first_left = gl < gr
        key = np.where(first_left, gl + "\x00" + gr, gr + "\x00" + gl)
        g = pd.Series(first_left).groupby(key)
        k, m = g.sum(), g.size()
        keep = m >= 2
        if int(m[keep].sum()) >= MIN_LAYOUTS:
            by_gen = float(np.maximum(k[keep], m[keep] - k[keep]).sum() / m[keep].sum())
            out["share_generator_side_fixed"] = by_gen
            out["n_layouts_by_generator"] = int(m[keep].sum())
    if n < MIN_LAYOUTS:
        out["note"] = f"{n} pairs shown: too few to check that sides were randomized"
        return out
    item_fixed = max(a_left, 1 - a_left)
    if by_gen is not None and by_gen > FIXED_SHARE and by_gen >= item_fixed:
        first_share = float(first_left.mean())
        which = (
            f"; the alphabetically {'first' if first_share >= 0.5 else 'second'} generator was on "
            f"the left in {max(first_share, 1 - first_share):.0%} of all pairs"
            if max(first_share, 1 - first_share) > FIXED_SHARE
            else ""
        )
        out.update(
            randomized=False,
            determined_by="generator",
            note=(
                f"sides were not randomized: in {by_gen:.0%} of the {out['n_layouts_by_generator']}"
                " pairs shown the side followed the generators (one generator of each pair of "
                f"generators on the left){which}, so a left/right difference cannot be told from "
                "a generator difference: no side test"
            ),
        )
    elif item_fixed > FIXED_SHARE:
        out.update(
            randomized=False,
            determined_by="pair",
            note=(
                f"sides were not randomized: in {item_fixed:.0%} of the {n} pairs shown the pair's "
                f"{'first' if a_left >= 0.5 else 'second'}-listed item (by item id) was on the "
                "left, so a left/right difference cannot be told from a difference between the "
                "items listed first and second: no side test"
            ),
        )
    return out


def no_side_test(
    rows: pd.DataFrame, layout: dict[str, Any], *, with_layout: bool = True
) -> dict[str, Any]:
    """Counts only, where the sides were not randomized (layout_check)."""
    left = int((rows["choice"] == "left").sum())
    right = int((rows["choice"] == "right").sum())
    out: dict[str, Any] = {
        "left": left,
        "right": right,
        "n": left + right,
        "p_value": None,
        "flagged": False,
        "note": layout["note"],
    }
    if with_layout:
        out["layout"] = layout
    return out


def _conditioned(out: dict[str, Any], dec: pd.DataFrame, level: float) -> dict[str, Any]:
    """`out` (counts) with the test conditioned on the generator pair in place of the
    unconditioned one, which is kept beside it under its own name."""
    c = conditioned_test(showings(dec), level)
    out["p_value_unconditioned"] = out.get("p_value")
    out["p_value"] = c["p_value"]
    out["test"] = c["test"]
    for k in ("randomized_share", "n_showings", "n_informative", "z", "method"):
        if k in c:
            out[k] = c[k]
    if "power" in c:
        out["power"] = c["power"]
    if c.get("note"):
        out["note"] = c["note"]
    return out


def side_test(rows: pd.DataFrame, min_count: int, level: float = ALPHA_LEVEL) -> dict[str, Any]:
    """One rater's (or judge's) side test where their own layout was randomized, conditioned on
    the generator pair (a generator shown mostly on one side is not a side effect); counts and
    a note where the layout was not randomized."""
    own = layout_check(rows)
    if not own["randomized"]:
        return no_side_test(rows, own)
    out = side_counts(rows, min_count, level)
    if out["n"] == 0:
        return out
    return _conditioned(out, rows[rows["choice"].isin(("left", "right"))], level)


def pooled_test(v: pd.DataFrame, min_count: int, level: float) -> dict[str, Any]:
    out = side_counts(v, min_count, level)
    out.pop("power", None)
    if out["n"] == 0:
        out["n_pairs"] = 0
        return out
    dec = v[v["choice"].isin(("left", "right"))]
    d = (dec["choice"] == "left").astype(float) * 2 - 1
    per_pair = d.groupby(dec["pair_id"].astype(str)).sum().to_numpy()
    # the pair-level sign-flip test holds only where every side was dealt at random: kept
    # under its own name beside the test conditioned on the generator pair
    out["p_value_sign_flip"] = sign_flip_test(per_pair.astype(np.int64))
    out["p_value_votes_independent"] = float(binomtest(out["left"], out["n"], 0.5).pvalue)
    out["n_pairs"] = int(len(per_pair))
    out.pop("p_value", None)
    out = _conditioned(out, dec, level)
    out.pop("p_value_unconditioned", None)
    return out


MIN_LISTED_VOTES = 2  # a rater with one vote says nothing about sides: counted, not listed


def _listed(by_rater: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The raters with MIN_LISTED_VOTES votes or more, and a count of the others (an arena's
    crowd of one-vote raters would otherwise fill the report with empty entries)."""
    listed = {r: d for r, d in by_rater.items() if int(d.get("n") or 0) >= MIN_LISTED_VOTES}
    rest = [d for r, d in by_rater.items() if r not in listed]
    if not rest:
        return listed, None
    return listed, {
        "raters": len(rest),
        "votes": sum(int(d.get("n") or 0) for d in rest),
        "note": f"{len(rest)} raters with fewer than {MIN_LISTED_VOTES} decisive votes each: "
        "nothing to test per rater, counted here, not listed (their votes are in the pooled test)",
    }


def position_bias(
    votes: pd.DataFrame, *, min_count: int = 10, alpha: float = ALPHA_LEVEL
) -> dict[str, Any]:
    """Share of decisive votes that went left, pooled (pair-clustered test) and per rater
    (exact binomial tests, Holm).

    {left, right, n, n_pairs, p_value, test, p_value_votes_independent, power, [share_left],
    by_rater: {r: {left, right, n, p_value, p_adjusted, flagged, power, [share_left]}},
    flagged_raters, multiplicity}.
    """
    v = coded_votes(votes)
    layout = layout_check(v)
    if not layout["randomized"]:
        out = no_side_test(v, layout)
        dec = v[v["choice"].isin(("left", "right"))] if not v.empty else v
        out["n_pairs"] = int(dec["pair_id"].nunique()) if len(dec) else 0  # as pooled_test
        out["by_rater"], out["by_rater_omitted"] = _listed(
            {
                str(r): {**no_side_test(rows, layout, with_layout=False), "p_adjusted": None}
                for r, rows in (v.groupby("rater", sort=True) if not v.empty else [])
            }
        )
        out["flagged_raters"] = []
        out["multiplicity"] = "no side test: the sides were not randomized"
        return out
    out = pooled_test(v, min_count, alpha)
    out["layout"] = layout
    by_rater: dict[str, dict[str, Any]] = {}
    groups = list(v.groupby("rater", sort=True)) if not v.empty else []
    m = max(1, len(groups))
    for rater, rows in groups:
        # a rater dealt a fixed layout of their own gets no test either
        by_rater[str(rater)] = side_test(rows, min_count, alpha / m)
    adjusted = holm({r: d["p_value"] for r, d in by_rater.items() if d["p_value"] is not None})
    for r, d in by_rater.items():
        d["p_adjusted"] = adjusted.get(r)
        d["flagged"] = bool(d["p_adjusted"] is not None and d["p_adjusted"] < alpha)
    out["by_rater"], out["by_rater_omitted"] = _listed(by_rater)
    out["flagged_raters"] = [r for r, d in by_rater.items() if d["flagged"]]
    out["multiplicity"] = f"Holm over {len(adjusted)} raters, family-wise {alpha:g}"
    return out


__all__ = [
    "ALPHA_LEVEL",
    "POWER_SHARE",
    "binomial_power",
    "holm",
    "layout_check",
    "no_side_test",
    "position_bias",
    "side_counts",
    "side_test",
    "sign_flip_test",
]
