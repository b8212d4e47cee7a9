"""Active sampling: the human sample drawn in batches where the judge is likely wrong.

Zrnic & Candes 2024 (active inference), Gligoric et al. 2025 (confidence-driven inference):
each batch draws every undrawn item on its own with a probability from the judge's predicted
error (its stated confidence, recalibrated on the labels so far and followed only as far as
they confirm it), mixed with a uniform share that bounds what the design can lose to uniform
should the confidence mean nothing. The batches combine into one design the report reads
(`combined`). Uniform samples and their top-ups: domain/sampling.py; by strata:
domain/sampling_strata.py.
Tested in tests/unit/test_active_sampling.py.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from .errors import InputError
from .sampling import _by_generator, _check, _key

ACTIVE_FLOOR = 0.1  # an item's uncertainty counts at least this much: every item can be drawn


def active_probabilities(u: list[float], n: float, floor: float = ACTIVE_FLOOR) -> list[float]:
    """Inclusion probabilities proportional to max(u, floor), capped at 1, summing to n
    (the cap's excess is spread over the others)."""
    w = [max(float(x), floor) for x in u]
    n = min(float(n), len(w))
    # water-filling: the k largest weights capped at 1, the rest scaled to the remaining n - k;
    # the smallest k for which the first uncapped weight stays below 1
    order = sorted(w, reverse=True)
    rest = sum(order)
    scale = 0.0
    for k, x in enumerate(order):
        if rest <= 0:
            break
        scale = (n - k) / rest
        if scale * x <= 1.0:
            break
        rest -= x
    return [min(1.0, scale * x) for x in w]


ACTIVE_TAU = 0.1  # the least uniform share of an active design (study setting `active_tau`)
# what the batches drawn before the labels confirm the judge's confidence may lose to uniform,
# together, should it mean nothing (study setting `active_max_loss`)
ACTIVE_MAX_LOSS = 0.03
CALIBRATION_BINS = 5  # confidence bins the error map is recalibrated in
CALIBRATION_PRIOR = 10.0  # labels' worth of trust in the stated confidence, per bin
CALIBRATION_ALPHA = 0.01  # the labels must show errors rising with u at this level


def _capped(w: list[float], n: float) -> list[float]:
    """Probabilities proportional to w (>= 0), capped at 1, summing to n (<= len(w)): the
    cap's excess spread over the others; items of weight 0 share what the others cannot take."""
    pos = [x for x in w if x > 0]
    if len(pos) <= n:  # every item that has a weight is certain; the rest spread evenly
        zeros = len(w) - len(pos)
        rest = (n - len(pos)) / zeros if zeros else 0.0
        return [1.0 if x > 0 else rest for x in w]
    return active_probabilities(w, n, floor=0.0)


def errors_follow(u: list[float], wrong: list[float], alpha: float = CALIBRATION_ALPHA) -> bool:
    """Whether the labels show the judge erring more where it states more uncertainty: the
    one-sided trend test (Cochran-Armitage, per item) of the errors `wrong` (0/1, or the
    share of an item's answers) on the stated `u` of the labelled items, at level alpha. A
    confidence that does not tell the judge's errors apart passes it only by chance (alpha)."""
    k = len(u)
    if k < 2:
        return False
    u_bar, rate = sum(u) / k, sum(wrong) / k
    ss = sum((x - u_bar) ** 2 for x in u)
    if not 0.0 < rate < 1.0 or ss <= 0.0:
        return False  # every label right (or every one wrong), or one stated value: no trend
    z = sum((x - u_bar) * e for x, e in zip(u, wrong, strict=True))
    z /= math.sqrt(rate * (1.0 - rate) * ss)
    return 0.5 * math.erfc(z / math.sqrt(2.0)) < alpha


def calibrated_errors(
    u: list[float],
    observed: dict[int, float],
    *,
    bins: int = CALIBRATION_BINS,
    prior: float = CALIBRATION_PRIOR,
    alpha: float = CALIBRATION_ALPHA,
    gate: bool = True,
) -> tuple[list[float], bool]:
    """Each item's predicted error rate, and whether the labels confirm the confidence tells
    the errors apart. The rate: the judge's error rate on the labelled items of its
    confidence bin (`observed`: item index -> share of its answers the humans disagreed with),
    shrunk toward the item's stated uncertainty `u` (1 - the judge's confidence that its
    answer is right), which counts as `prior` labels. Equal-count bins over all items' u, about
    five labels a bin at least. No labels: u itself, unconfirmed. Labels that do not show the
    errors rising with u (`errors_follow`): every item the pooled error rate (a flat map, a
    uniform design): the stated confidence is followed only as far as the labels confirm it.
    `gate` False (Zrnic & Candes's design, `active_rule` "zrnic-candes"): the recalibrated map
    is followed whatever the test says (which is still returned)."""
    m = len(u)
    if not observed or m == 0:
        return [min(1.0, max(0.0, x)) for x in u], False
    order = sorted(range(m), key=lambda i: u[i])
    k = max(1, min(bins, len(observed) // 5 or 1))  # about five labels a bin at least
    bin_of = [0] * m
    for rank, i in enumerate(order):
        bin_of[i] = rank * k // m
    wrong, count = [0.0] * k, [0] * k
    for i, e in observed.items():
        wrong[bin_of[i]] += float(e)
        count[bin_of[i]] += 1
    labelled = list(observed)
    follows = errors_follow([u[i] for i in labelled], [observed[i] for i in labelled], alpha)
    if gate and not follows:
        return [sum(wrong) / sum(count)] * m, False
    # the bin's observed errors and the item's stated value, the latter worth `prior`
    # labels: a bin with few labels keeps the stated map, one with many follows the labels
    return [
        min(1.0, max(0.0, (wrong[bin_of[i]] + prior * u[i]) / (count[bin_of[i]] + prior)))
        for i in range(m)
    ], follows


def error_sizes(err: list[float]) -> list[float]:
    """The predicted size (standard deviation) of each item's error in the debiased figure,
    from the judge's error rate e on it and its mean rate r: PPI++ leans on a judge wrong at
    rate r by lam = 1 - 2r (the slope of a 0/1 human answer on the judge's), so an item's error
    is y - lam f, of variance e (1 - e) + (r - e)^2 (for PASS as likely as FAIL; the second
    term is what a weak judge's confident answers still carry). A judge right everywhere it is
    sure sizes its sure items near 0; a judge wrong half the time sizes every item alike."""
    r = sum(err) / len(err) if err else 0.0
    return [math.sqrt(max(0.0, e * (1.0 - e) + (r - e) ** 2)) for e in err]


def flat_loss(p: list[float]) -> float:
    """What a design costs against a uniform one of the same expected size when the judge's
    error is alike on every item (its confidence means nothing): the inverse-probability
    estimate's variance grows by mean(pbar / p) - 1 (Jensen: 0 only for a uniform design)."""
    pbar = sum(p) / len(p)
    if pbar <= 0:
        return 0.0
    if min(p) <= 0:
        return math.inf  # an item that cannot be drawn: no estimate is unbiased
    return sum(pbar / x for x in p) / len(p) - 1.0


def active_design(
    err: list[float], n: float, tau: float = ACTIVE_TAU, max_loss: float | None = None
) -> tuple[list[float], float]:
    """Inclusion probabilities summing to n, and the uniform share they use: (1 - t) of them
    proportional to the predicted size of the item's error in the figure (`error_sizes` of the
    judge's error rates err: proportional to the standard deviation is the allocation that
    minimises the inverse-probability estimate's variance), capped at 1, and t spread
    uniformly, so every item has at least
    t * n / N (a confidence that is wrong about an item never leaves it undrawable). t is tau,
    or with `max_loss` the least t >= tau whose `flat_loss` is at most max_loss: the most the
    design may lose to uniform should the predicted errors be wrong."""
    big_n = len(err)
    n = min(float(n), big_n)
    by_error = _capped(error_sizes(err), n)
    even = n / big_n

    def mix(t: float) -> list[float]:
        return [(1.0 - t) * p + t * even for p in by_error]

    if max_loss is not None and flat_loss(mix(tau)) > max_loss + 1e-12:  # rounding: uniform
        # the loss falls as t grows (to 0 at t = 1): bisect for the least t within budget
        lo, hi = tau, 1.0
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if flat_loss(mix(mid)) <= max_loss else (mid, hi)
        tau = hi
    return mix(tau), tau


def draw_active(
    live: Iterable[tuple[int, str, str, str]],
    uncertainty: dict[str, float],
    *,
    n: int | dict[str, int] | None,
    share: float | None,
    seed: int,
    created_at: str,
    batch: int | None = None,
    before: dict[str, Any] | None = None,
    observed: dict[str, float] | None = None,
    tau: float = ACTIVE_TAU,
    max_loss: float = ACTIVE_MAX_LOSS,
    guarded: bool = True,
) -> dict[str, Any]:
    """Active sampling (Zrnic & Candes 2024; Gligoric et al. 2025), drawn in batches.

    Per generator, n (or the share; by generator name: the planner's top-up) items are
    expected in all, `batch` of them per call (None: all that remain). A batch draws every
    item of the generator not drawn yet on its own (Poisson sampling) with probability
    `active_design` of its predicted error: `uncertainty` (1 - the judge's stated confidence)
    recalibrated on the human labels gathered so far (`observed`: item -> share of its answers
    the judge got wrong; `calibrated_errors`), its uniform share the least >= tau that loses at
    most `max_loss` to uniform should the prediction be wrong (`flat_loss`). The estimate is
    the average of the batches' estimates, weighted by their planned sizes: batch b's is the
    items drawn before it, counted as they are, plus the inverse-probability estimate over the
    rest from its own draws; each is unbiased given the batches before it, so the average is
    too, however the labels moved the design. A drawn item's weight is w_b / p_b for the batch
    that drew it plus the w of every later batch, recorded as its probability 1 / weight in
    `items`; an undrawn item's probability of having been drawn in some batch in `unsampled`;
    each batch's own probabilities in `batches`. `before`: the active sample so far, whose
    batches this one follows. `guarded` False is the papers' design as they define it: the
    recalibrated map followed at tau from the first batch, with neither the trend test nor the
    loss budget (`active_rule` "zrnic-candes")."""
    _check(n, share)
    if not 0 <= tau <= 1:
        raise InputError(f"active_tau {tau}: a share in [0, 1]", field="active_tau")
    if not max_loss >= 0:
        raise InputError(f"active_max_loss {max_loss}: at least 0", field="active_max_loss")
    if batch is not None and batch < 1:
        raise InputError(f"--batch {batch}: at least 1 item per generator", field="--batch")
    by_gen = _by_generator(live)
    prev = list((before or {}).get("batches") or [])
    b = len(prev)
    drawn_before = {i for pb in prev for i in pb["drawn"]}
    sizes: dict[str, float] = {}
    totals: dict[str, float] = {}
    for g, rows in by_gen.items():
        if isinstance(n, dict):  # the planner's top-up: a generator not named draws nothing
            total = float(min(len(rows), int(n.get(g, 0))))
        else:
            total = min(len(rows), n) if n is not None else share * len(rows)  # type: ignore[operator]
        done = sum(float(pb["size"].get(g, 0.0)) for pb in prev)
        left = sum(1 for _, i, _ in rows if i not in drawn_before)
        sizes[g] = max(0.0, min(float(batch) if batch else total, total - done, float(left)))
        totals[g] = float(total)
    if not any(v > 0 for v in sizes.values()):
        raise InputError(
            f"the active sample is complete: {b} batches drew what --sample asks per generator; "
            "ask for more with a larger --sample N",
            field="--sample",
        )
    obs = {str(k): float(v) for k, v in (observed or {}).items()}
    # one error map over every generator's items: the judge's confidence means the same on
    # each, and pooled the bins hold more labels
    every = [i for g in sorted(by_gen) for _, i, _ in by_gen[g]]
    u_all = [float(uncertainty.get(i, 1.0)) for i in every]
    err_all, confirmed = calibrated_errors(
        u_all, {k: obs[i] for k, i in enumerate(every) if i in obs}, gate=guarded
    )
    err_of = dict(zip(every, err_all, strict=True))
    probs: dict[str, float] = {}
    taus: dict[str, float] = {}
    losses: dict[str, float] = {}
    drawn_now: list[str] = []
    for g in sorted(by_gen):
        if sizes[g] <= 0:
            continue
        # an item drawn before is known: the batch estimates the rest
        ids = [i for _, i, _ in by_gen[g] if i not in drawn_before]
        salt = f"active:{g}" if b == 0 else f"active:{g}:{b}"
        # a map the labels confirm is followed at tau. One they have not confirmed is held
        # to what is left of max_loss: the whole sample loses to uniform the size-weighted
        # mean of its batches' losses, so the unconfirmed batches together may lose at most
        # max_loss * total (a first batch of a quarter of n: up to 4 max_loss on its own; the
        # later batches, flat if the labels do not confirm the map, lose nothing)
        budget = None
        if guarded and not confirmed:
            spent = sum(
                float(pb["size"].get(g, 0.0)) * float((pb.get("loss") or {}).get(g, 0.0))
                for pb in prev
                if not pb.get("confirmed")
            )
            budget = max(0.0, max_loss * totals[g] - spent) / sizes[g]
        p, taus[g] = active_design([err_of[i] for i in ids], sizes[g], tau, budget)
        losses[g] = flat_loss(p)
        for i, p_i in zip(ids, p, strict=True):
            probs[i] = p_i
            if _key(seed, i, salt) < p_i:
                drawn_now.append(i)
    batches = [
        *prev,
        {
            "created_at": created_at,
            "size": {g: v for g, v in sizes.items() if v > 0},
            "tau": taus,
            "loss": losses,
            "calibrated_on": len(obs),
            "confirmed": confirmed,
            "p": probs,
            "drawn": sorted(drawn_now),
        },
    ]
    return {
        "seed": int(seed),
        "created_at": created_at,
        "design": "active: Poisson sampling in batches over the items not drawn yet, pi "
        "following the predicted size of each item's error in the figure (from the judge's "
        + (
            "error rate, recalibrated once the labels confirm its confidence), mixed with "
            f"uniform (tau at least {tau:g}; until confirmed, at most {max_loss:.0%} lost to "
            "uniform should the confidence mean nothing)"
            if guarded
            else "error rate, recalibrated on the labels), mixed with uniform (tau "
            f"{tau:g}): Zrnic & Candes's design, unguarded"
        ),
        "request": {
            "n": n,
            "share": share,
            "active": True,
            "batch": batch,
            "tau": tau,
            "max_loss": max_loss,
            "rule": "guarded" if guarded else "zrnic-candes",
        },
        "frame_max_pk": max(pk for rows in by_gen.values() for pk, _, _ in rows),
        **combined(by_gen, batches),
        "batches": batches,
    }


def combined(
    by_gen: dict[str, list[tuple[int, str, str]]], batches: list[dict[str, Any]]
) -> dict[str, Any]:
    """The batches as one design the report reads: per drawn item 1 / (its weight in the
    average of the batches' estimates), per undrawn item the probability that some batch drew
    it, per generator the expected share drawn. A later batch that gives a drawn item no
    probability counts it as known (weight w_b); one that gives it a probability (a sample
    drawn before batches skipped the drawn items) counts it only if drawn again (w_b / p_b)."""
    items: dict[str, float] = {}
    unsampled: dict[str, float] = {}
    rates: dict[str, float] = {}
    strata: dict[str, dict[str, int]] = {}
    for g in sorted(by_gen):
        ids = [i for _, i, _ in by_gen[g]]
        mine = [pb for pb in batches if float(pb["size"].get(g, 0.0)) > 0]
        total = sum(float(pb["size"][g]) for pb in mine)
        weight: dict[str, float] = defaultdict(float)
        missed = dict.fromkeys(ids, 1.0)
        for pb in mine:
            share_b = float(pb["size"][g]) / total
            p_b = pb["p"]
            known = [i for i in weight if i not in p_b]  # drawn in an earlier batch
            for i in known:
                weight[i] += share_b
            for i in pb["drawn"]:
                if i in missed:
                    weight[i] += share_b / float(p_b[i])
            for i in ids:
                if i in p_b:  # an item imported after this batch was not in its frame
                    missed[i] *= 1.0 - float(p_b[i])
        for i in ids:
            if weight.get(i, 0.0) > 0:
                items[i] = 1.0 / weight[i]
            else:
                unsampled[i] = 1.0 - missed[i]
        rates[g] = total / len(ids) if ids else 0.0
        strata[g] = {"n_live": len(ids), "n_drawn": sum(1 for i in ids if i in items)}
    return {"rates": rates, "strata": strata, "items": items, "unsampled": unsampled}
