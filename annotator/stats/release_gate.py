"""The release gate: whether a generator's figures clear the team's thresholds.

From the generators' section (generators.py): a generator passes when it was rated on at least
`release_gate_min_cases` cases and `release_gate_min_items` items and, for every figure the
setting names, the conservative (lower) bound reaches the threshold: for a pass rate the lower
of the bootstrap and the Wilson bound (`generator_gate`); with `"source": "debiased"` in the
setting, the lower end of the debiased (PPI++) interval of the judge named, on randomly sampled
human labels (`debiased_release_gate`). A live estimate's gate reads its carried bounds
(generator_section carries them first).
"""

from __future__ import annotations

from typing import Any

GATE_KEYS = ("source", "judge")  # the release_gate setting's keys that are not figures


def debiased_release_gate(
    gens: dict[str, Any], debiased: dict[str, Any], judge: str | None = None
) -> None:
    """The release gate on the debiased lower bounds (setting `{"source": "debiased", ...}`), in
    place of the humans-only one, in `gens` (the generator section, its gate already set up).

    A figure passes when the lower end of its debiased (PPI++) interval reaches the threshold;
    a generator needs `min_cases` cases and `min_items` randomly sampled human labels (the
    interval's validity rests on the sample, not on the judge's count). The judge is the one
    named (`judge`), else the only judge with debiased figures; none, or two without a name: the
    gate passes nobody and says why."""
    rule = gens.get("release_gate")
    if not rule:
        return
    thresholds, min_cases, min_items = rule["thresholds"], rule["min_cases"], rule["min_items"]
    judges = {j: d for j, d in (debiased.get("judges") or {}).items() if d.get("by_generator")}
    why = None
    if not debiased.get("recorded"):
        why = "no random human sample recorded: no debiased figures to gate on"
    elif judge is not None and judge not in judges:
        why = f"the judge '{judge}' named by the release gate has no debiased figures"
    elif judge is None and len(judges) != 1:
        why = (
            "no judge has debiased figures"
            if not judges
            else f"{len(judges)} judges have debiased figures ({', '.join(sorted(judges))}): "
            "name one in the release_gate setting ('judge')"
        )
    if judge is None and len(judges) == 1:
        judge = next(iter(judges))
    rule.update(
        source="debiased",
        judge=judge if not why else None,
        rule=f"at least {min_cases} cases and {min_items} randomly sampled human labels; every "
        "figure's lower 95% debiased bound (PPI++: the judge on every item, corrected by the "
        "random human sample) reaches its threshold",
    )
    by_judge = (judges.get(judge or "") or {}).get("by_generator") or {}
    for g, entry in (gens.get("by_generator") or {}).items():
        figs = by_judge.get(g) or {}
        checks, few = {}, why
        for name, t in thresholds.items():
            fig = figs.get(name) or {}
            low = (fig.get("ppi") or {}).get("low")
            n_cases, n_sampled = int(fig.get("n_cases") or 0), int(fig.get("n_sampled") or 0)
            if few is None and fig and (n_cases < min_cases or n_sampled < min_items):
                few = (
                    f"{n_cases} cases and {n_sampled} sampled human labels on {name}: a release "
                    f"gate needs at least {min_cases} cases and {min_items} labels"
                )
            checks[name] = (
                {"threshold": float(t), "low": low, "bound": "debiased", "pass": low >= float(t)}
                | ({"approximate": True} if (fig.get("ppi") or {}).get("approximate") else {})
                if low is not None
                else {
                    "threshold": float(t),
                    "low": None,
                    "pass": False,
                    "note": "no debiased interval for this figure" if fig else "no debiased figure",
                }
            )
        out: dict[str, Any] = {
            "pass": bool(checks) and few is None and all(c["pass"] for c in checks.values()),
            "checks": checks,
            "source": "debiased",
        }
        if few:
            out["note"] = few
            for c in checks.values():
                c["pass"] = False
        entry["release_gate"] = out


def generator_gate(
    entry: dict[str, Any], thresholds: dict[str, float], min_cases: int, min_items: int
) -> dict[str, Any]:
    overall = entry["overall"]
    checks = {}
    few = entry["n_cases"] < min_cases or entry["n_items"] < min_items
    for name, t in thresholds.items():
        fig = overall.get(name)
        low = fig.get("low") if fig else None
        method = "bootstrap"
        if fig and fig.get("wilson_low") is not None:
            if low is None or fig["wilson_low"] < low:
                low, method = fig["wilson_low"], "Wilson"
        if low is None:
            checks[name] = {
                "threshold": float(t),
                "low": None,
                "pass": False,
                "note": "no interval for this figure" if fig else "no such figure",
            }
        else:
            checks[name] = {
                "threshold": float(t),
                "low": low,
                "bound": method,
                "pass": bool(low >= float(t)) and not few,
            }
            if method == "bootstrap" and fig.get("approximate"):  # a live estimate's, carried
                checks[name]["approximate"] = True
    out: dict[str, Any] = {
        "pass": bool(checks) and not few and all(c["pass"] for c in checks.values()),
        "checks": checks,
    }
    if few:
        out["note"] = (
            f"rated on {entry['n_cases']} cases and {entry['n_items']} items: a release "
            f"gate needs at least {min_cases} cases and {min_items} items"
        )
    return out
