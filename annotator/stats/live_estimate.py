"""The live dashboard's figures between two full computations.

A full report resamples every item a thousand times (and the EM fits two hundred); a live
refresh after a few new answers does not. It computes every point estimate again, exactly
(the same code on the same frames: bit for bit what a full computation gives), with no
resampling, and takes each interval's *width* from the last full report: the interval is
moved onto the new point estimate, keeping its distances below and above it, and marked
`approximate`. A few answers more on a study of thousands move a width by far less than its
own Monte Carlo error (tests/unit/test_live_estimate.py measures how far, against a full
computation on the same data). Bounded figures stay in their bounds: an interval the full
report kept within [0, 1] is clipped to it.

Figures that read intervals (the systematic findings, the summary) are computed from the
moved intervals, so they are live estimates too; the report's `live_estimate` key says when
the exact figures were computed.

What has no quick exact form is not computed again at all: the raters' competence and the
latent truth (MACE and Dawid-Skene EM fits, over a third of a live estimate's time) are the
last full computation's, each figure marked `carried` (`carry_competence`); the dashboard
shows them with the time they were computed ("as of 14:02") until the full computation in
the background replaces them. Nothing here is ever published: `annotator report`, exports
and the HTML report always compute (or read from the cache) the full figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

_NUMBER = (int, float)


def _num(v: Any) -> bool:
    return type(v) is float or (isinstance(v, _NUMBER) and not isinstance(v, bool))


def carry_intervals(live: Any, exact: Any) -> int:
    """Move the intervals of `exact` onto the point estimates of `live`, in place, wherever
    the two reports hold the same figure; returns how many were moved."""
    if isinstance(live, dict) and isinstance(exact, Mapping):
        if live.get("carried"):
            return 0
        if "low" in live and "high" in live:
            return _carry_one(live, exact) if "estimate" in live else _carry_bare(live, exact)
        moved = 0
        for k, v in live.items():
            # a report holds tens of thousands of figures: the plain types checked first
            if (type(v) is dict or type(v) is list or isinstance(v, dict | list)) and k in exact:
                moved += carry_intervals(v, exact[k])
        return moved
    if isinstance(live, list) and isinstance(exact, list):
        return sum(carry_intervals(a, b) for a, b in _matched(live, exact))
    return 0


def _name(entry: Any) -> tuple[tuple[str, str], ...] | None:
    """What names a list entry (its text fields: a judge, a metric, a version...), or None."""
    if not isinstance(entry, Mapping):
        return None
    return tuple(sorted((k, v) for k, v in entry.items() if isinstance(v, str))) or None


def _matched(live: list[Any], exact: list[Any]) -> list[tuple[Any, Any]]:
    """The entries of two lists that are the same figure: by name when entries carry names
    (a finding, a judge's version: the lists' order or length may differ), else by place when
    the lists have one length (a calibration's bins, a session's quarters)."""
    names = [_name(e) for e in exact]
    if all(n is not None for n in names) and len(set(names)) == len(names):
        by_name = dict(zip(names, exact, strict=True))
        return [(e, by_name[n]) for e in live if (n := _name(e)) in by_name]
    if len(live) == len(exact) and not any(names):
        return list(zip(live, exact, strict=True))
    return []


def carried(value: Any, *, top: bool = True) -> Any:
    """`value` from the last full computation, kept whole: it (and every estimate in it) marked
    `carried`, which `carry_intervals` leaves alone (its interval is already its own)."""
    if isinstance(value, Mapping):
        out = {k: carried(v, top=False) for k, v in value.items()}
        if top or "estimate" in value:
            out["carried"] = True
        return out
    if isinstance(value, list):
        return [carried(v, top=False) for v in value]
    return value


CARRIED_NOTE = "new since the last full computation: its competence follows with the next one"


def carry_competence(
    exact: Mapping[str, Any], keys: list[str], verdict_key: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The raters' competence and each metric's latent truth as the last full computation
    fitted them (rater_competence's two results), marked `carried`. A rater or a metric that
    computation did not have has none until the next one."""
    competence = {
        r: {key: carried(fig) for key, fig in figs.items()}
        for r, v in (exact.get("raters") or {}).items()
        if isinstance(v, Mapping) and (figs := v.get("competence"))
    }
    sections = dict(exact.get("metrics") or {})
    if exact.get("verdict") is not None:
        sections[verdict_key] = exact["verdict"]
    latent = {k: carried(lt) for k in keys if (lt := (sections.get(k) or {}).get("latent_truth"))}
    return competence, latent


def stamp_carried(figures: Any, as_of: str | None) -> int:
    """Give every carried figure in `figures` the time it was computed (`as_of`, shown beside
    it; None: left unstamped); returns how many there are. build_report stamps what it carries
    as it carries it (walking the whole report took 0.04 s at a million judgements)."""
    if isinstance(figures, dict):
        n = 0
        if figures.get("carried"):
            if as_of is not None:
                figures["as_of"] = as_of
            n = 1
        values: Any = figures.values()
    elif isinstance(figures, list):
        n, values = 0, figures
    else:
        return 0
    for v in values:  # only the containers are walked into
        if type(v) is dict or type(v) is list or isinstance(v, dict | list):
            n += stamp_carried(v, as_of)
    return n


def _carry_bare(live: dict[str, Any], exact: Mapping[str, Any]) -> int:
    """An interval whose point estimate sits elsewhere (a pair judge's `kappa_interval`): the
    full computation's, as it was."""
    if not (_num(exact.get("low")) and _num(exact.get("high"))):
        return 0
    live["low"], live["high"] = exact["low"], exact["high"]
    live["note"] = exact.get("note")
    live["approximate"] = True
    return 1


def _carry_one(live: dict[str, Any], exact: Mapping[str, Any]) -> int:
    values = (live.get("estimate"), exact.get("estimate"), exact.get("low"), exact.get("high"))
    if not (_num(values[0]) and _num(values[1]) and _num(values[2]) and _num(values[3])):
        if values[0] is not None and values[2] is None and live.get("low") is None:
            # no interval either way: say why as the full computation did, not "no resamples"
            live["note"] = exact.get("note")
        return 0
    est, ex, lo, hi = (float(v) for v in values)  # type: ignore[arg-type]  # numbers: checked
    live["low"], live["high"] = _moved(est, ex, lo, hi)
    live["note"] = exact.get("note")
    live["approximate"] = True
    return 1


def _moved(est: float, ex: float, lo: float, hi: float) -> tuple[float, float]:
    """The interval [lo, hi] around `ex` moved onto `est`, its distances below and above kept."""
    low = est - (ex - lo)
    high = est + (hi - ex)
    if lo >= 0 and est >= 0:  # a figure the full computation kept non-negative
        low = max(low, 0.0)
    if hi <= 1 and est <= 1:  # a share, or an agreement coefficient: at most 1
        high = min(high, 1.0)
    return low, high


def carried_figure(estimate: float, n: int, exact: Any) -> dict[str, Any] | None:
    """What `carry_intervals` makes of `summarize(estimate, <one resample>, n)` against the full
    computation's figure `exact`, made at once; None where it would not move an interval (the
    caller then takes the long way). For a section of tens of thousands of small figures (the
    generators' cells), where summarising and then walking to each one cost more than the
    figures themselves."""
    if type(exact) is not dict or not math.isfinite(estimate):
        return None
    ex, lo, hi = exact.get("estimate"), exact.get("low"), exact.get("high")
    if not (type(ex) is float and type(lo) is float and type(hi) is float):  # as JSON gives them
        if not (_num(ex) and _num(lo) and _num(hi)):
            return None
        ex, lo, hi = float(ex), float(lo), float(hi)  # type: ignore[arg-type]  # numbers
    low, high = _moved(estimate, ex, lo, hi)
    return {
        "estimate": estimate,
        "low": low,
        "high": high,
        "n": n,
        "note": exact.get("note"),
        "approximate": True,
    }
