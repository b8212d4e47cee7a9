"""View rows of the raters section (reports/section_raters.py lays them out): one row per rater
(answers, anchors, accuracy on anchors, the drift flag and any standing offset, agreement with
the others' consensus, competence, calibrations), the rater x metric figures (accuracy,
test-retest, agreement, competence: MACE or Dawid-Skene, each with its interval), fatigue,
answer times and the calibration history, and the drift charts drawn apart (`rater_charts`).

A live estimate carries each rater's competence whole from the last full computation: its
cells say "(as of HH:MM)", and a rater new since then says that their competence follows with
the next full computation (the report's `competence_note`).
Tested in tests/unit/test_report_sections.py, tests/unit/test_reports_render.py,
tests/unit/test_stats_summary.py, tests/unit/test_next_steps.py and
tests/gui/test_dashboard_view.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..domain.figures import MISSING
from ..domain.rater_medians import median_agreement, median_competence
from .formatting import (
    Est,
    as_dict,
    as_of_text,
    carried_as_of,
    est_of,
    fmt_any,
    fmt_num,
    fmt_share,
    is_estimate,
    kv_rows,
    to_float,
)

RATER_KNOWN = (
    "n_judgements",
    "anchors",
    "drift",
    "accuracy",
    "test_retest",
    "series",
    "agreement_with_consensus",
    "fatigue",
    "calibrations",
    "calibration_accuracy",
    "calibration_offset",
    "detectability",
    # shown in the competence column and matrix
    "competence",
    "competence_note",
)

RATER_MATRICES = (
    ("accuracy", "Anchor accuracy (live work)"),
    ("calibration_accuracy", "Anchor accuracy (calibration sessions)"),
    ("test_retest", "Test-retest: the same anchor in consecutive sessions"),
    ("agreement_with_consensus", "Agreement with the human consensus"),
    (
        "competence",
        "Competence (MACE): how often the rater knows the answer rather than guesses",
    ),
)


def _label(labels: Mapping[str, str], key: str) -> str:
    """A metric key as the reader knows it (Rubric.key_label's rule: the report's label, else
    the key in words)."""
    return labels.get(key) or key.replace("_", " ")


def _per_metric_cell(v: Any) -> dict[str, Any]:
    """One rater x metric figure: an estimate, or an {agreement, n_pairs} record, or anything."""
    if is_estimate(v):
        e = est_of({"v": v}, "v")
        extra = []
        if isinstance(v, Mapping):
            if v.get("rule"):
                extra.append(str(v["rule"]))
            if to_float(v.get("exact")) is not None:
                extra.append(f"exact {fmt_share(v['exact'])}")
        return {"est": e, "text": None, "sub": " · ".join(extra)}
    if isinstance(v, Mapping) and any(is_estimate(x) for x in v.values()):
        # several estimates of one rater on one metric, e.g. {n, exact_agreement, alpha}
        parts = [(str(k).replace("_", " "), est_of(v, k)) for k, x in v.items() if is_estimate(x)]
        sub = f"n={v['n']}" if v.get("n") is not None else ""
        return {"est": None, "text": None, "sub": sub, "parts": parts}
    if isinstance(v, Mapping) and "agreement" in v:
        n = v.get("n_pairs", v.get("n"))
        e = Est(to_float(v.get("agreement")), n=n, note=str(v["note"]) if v.get("note") else None)
        extra = [str(v["rule"])] if v.get("rule") else []
        if to_float(v.get("exact")) is not None:
            extra.append(f"exact {fmt_share(v['exact'])}")
        return {"est": e, "text": None, "sub": " · ".join(extra)}
    return {"est": None, "text": fmt_any(v), "sub": ""}


def rater_matrix(
    raters: Mapping[str, Any], key: str, title: str, labels: Mapping[str, str] | None = None
) -> dict[str, Any] | None:
    """A raters x metrics table for a per-metric rater figure (accuracy, test-retest...);
    metrics shown by `labels` where given."""
    lab = labels or {}
    names = [n for n in sorted(raters, key=str) if key in as_dict(raters[n])]
    if not names:
        return None
    per_metric = all(
        isinstance(as_dict(raters[n]).get(key), Mapping)
        and all(isinstance(x, Mapping) for x in as_dict(raters[n])[key].values())
        for n in names
    )
    if not per_metric:
        return {
            "key": key,
            "title": title,
            "corner": "rater",
            "columns": [title],
            "rows": [
                (str(n), [{"est": None, "text": fmt_any(as_dict(raters[n]).get(key)), "sub": ""}])
                for n in names
            ],
        }
    cols: list[str] = []
    for n in names:
        for m in as_dict(as_dict(raters[n]).get(key)):
            if m not in cols:
                cols.append(m)
    if not cols:
        return None
    blank = {"est": None, "text": MISSING, "sub": ""}
    if len(cols) > len(names):
        # more metrics than raters: metrics down the side keeps the table inside the page
        rows = [
            (
                _label(lab, m),
                [
                    _per_metric_cell(as_dict(as_dict(raters[n]).get(key))[m])
                    if m in as_dict(as_dict(raters[n]).get(key))
                    else blank
                    for n in names
                ],
            )
            for m in cols
        ]
        return {
            "key": key,
            "title": title,
            "corner": "metric",
            "columns": [str(n) for n in names],
            "rows": rows,
        }
    rows = []
    for n in names:
        d = as_dict(as_dict(raters[n]).get(key))
        rows.append((str(n), [_per_metric_cell(d[m]) if m in d else blank for m in cols]))
    return {
        "key": key,
        "title": title,
        "corner": "rater",
        "columns": [_label(lab, m) for m in cols],
        "rows": rows,
    }


def fatigue_table(raters: Mapping[str, Any]) -> dict[str, Any] | None:
    """Agreement with the others early vs late in a session, per rater."""
    rows: list[dict[str, Any]] = []
    notes: set[str] = set()
    for name in sorted(raters, key=str):
        f = as_dict(as_dict(raters[name]).get("fatigue"))
        if not f:
            continue
        if not any(k in f for k in ("early", "late", "change")):
            rows.append(
                {
                    "name": str(name),
                    "early": None,
                    "late": None,
                    "change": None,
                    "quarters": [],
                    "n": MISSING,
                    "sessions": MISSING,
                    "note": str(f.get("note") or ""),
                }
            )
            continue
        quarters = [est_of({"q": q}, "q") for q in (f.get("by_position_quarter") or [])]
        rows.append(
            {
                "name": str(name),
                "early": est_of(f, "early"),
                "late": est_of(f, "late"),
                "change": est_of(f, "change"),
                "quarters": quarters,
                "n": fmt_num(f.get("n_answers")),
                "sessions": fmt_num(f.get("n_sessions")),
                "note": "",
            }
        )
        if f.get("note"):
            notes.add(str(f["note"]))
    if not rows or all(r["early"] is None for r in rows):
        # nothing measured for anyone: one line, not a table of dashes
        return (
            {"rows": [], "note": "; ".join(sorted({r["note"] for r in rows if r["note"]}))}
            if rows
            else None
        )
    return {"rows": rows, "note": "; ".join(sorted(notes))}


def answer_times_view(block: Any) -> dict[str, Any] | None:
    """Per rater: answers stored faster than the study's minimum exposure, and at the time cap."""
    b = as_dict(block)
    raters = as_dict(b.get("raters"))
    if not raters:
        return None
    rows = [
        {
            "name": str(name),
            "answers": fmt_num(r.get("answers")),
            "timed": fmt_num(r.get("timed")),
            "below": fmt_num(r.get("below_min_exposure")),
            "at_cap": fmt_num(r.get("at_time_cap")),
            "flagged": bool(r.get("below_min_exposure")),
        }
        for name, r in sorted(raters.items(), key=lambda kv: str(kv[0]))
        for r in [as_dict(r)]
    ]
    return {"rows": rows, "minimum": fmt_num(b.get("min_exposure_ms")), "note": b.get("note")}


def _calibrations_text(c: Any) -> str:
    """Calibration sessions as 'n sessions; last: qualified (date)'."""
    if not isinstance(c, (list, tuple)):
        return fmt_any(c)
    sessions = [x for x in c if isinstance(x, Mapping)]
    if not sessions:
        return fmt_any(c) if c else "none"
    last = sessions[-1]
    verdict = last.get("qualified")
    word = "qualified" if verdict is True else "not yet" if verdict is False else fmt_any(verdict)
    when = str(last.get("created_at") or "")[:10]
    n = len(sessions)
    return f"{n} session{'s' if n != 1 else ''}; last: {word}" + (f" ({when})" if when else "")


def calibration_history(
    raters: Mapping[str, Any], labels: Mapping[str, str]
) -> dict[str, Any] | None:
    """Every calibration session of every rater: the share of anchors met per metric against
    its rule, and the verdict; None when no session was run."""
    keys: list[str] = []
    rows: list[dict[str, Any]] = []
    for name in sorted(raters, key=str):
        for c in as_dict(raters[name]).get("calibrations") or []:
            if isinstance(c, Mapping):
                rows.append({"name": str(name), "record": c})
                keys.extend(k for k in as_dict(c.get("metrics")) if k not in keys)
    if not rows:
        return None
    for r in rows:
        c = r.pop("record")
        cells = []
        for k in keys:
            m = as_dict(as_dict(c.get("metrics")).get(k))
            share = to_float(m.get("share"))
            cells.append(
                MISSING
                if share is None
                else f"{share:.0%} of {m.get('n')} (need {to_float(m.get('threshold')) or 0:.0%})"
                + ("" if m.get("passed") else " ✗")
            )
        r.update(
            when=str(c.get("created_at") or ""), qualified=bool(c.get("qualified")), cells=cells
        )
    return {"metrics": [_label(labels, k) for k in keys], "rows": rows}


def _share(v: Mapping[str, Any]) -> str:
    """An accuracy as '92% [62%, 100%] n=12' (undefined: the missing mark)."""
    est = to_float(v.get("estimate"))
    if est is None:
        return MISSING
    lo, hi = to_float(v.get("low")), to_float(v.get("high"))
    ci = f" [{lo:.0%}, {hi:.0%}]" if lo is not None and hi is not None else ""
    return f"{est:.0%}{ci} n={v.get('n')}"


def _accuracy_summary(acc: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """A rater's accuracy on anchors in one cell, as the agreement beside it: the median over
    metrics, and the metric where it is lowest with its interval ('100% (median of 4 metrics);
    lowest Layout 0% [0%, 23%] n=14'); every metric's figure is in the table below."""
    figs = {
        str(k): est
        for k, v in acc.items()
        if isinstance(v, Mapping) and (est := to_float(v.get("estimate"))) is not None
    }
    if not figs:
        return MISSING
    values = sorted(figs.values())
    mid = len(values) // 2
    median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    if len(figs) == 1:
        (key,) = figs
        return f"{_label(labels, key)} {_share(acc[key])}"
    text = f"{median:.0%} (median of {len(figs)} metrics)"
    low = min(figs, key=lambda k: (figs[k], k))
    if figs[low] < median:
        text += f"; lowest {_label(labels, low)} {_share(acc[low])}"
    return text


def drift_words(d: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    """The CUSUM flag on anchors: 'drift: <metric>, <direction>, from anchor answer N, against
    the reference', 'no drift flag', or the missing mark without a drift record."""
    if not d:
        return MISSING
    if not d.get("flagged"):
        return "no drift flag"
    bits = [_label(labels, str(d.get("metric") or "a metric"))]
    if d.get("direction"):
        bits.append(str(d["direction"]))
    if d.get("first_flag_at") is not None:
        bits.append(f"from anchor answer {d['first_flag_at']}")
    if d.get("chart"):
        bits.append(
            "against the rater's own baseline"
            if d["chart"] == "calibrated"
            else "against the reference"
        )
    return "drift: " + ", ".join(bits)


def _offsets(offsets: Mapping[str, Any], labels: Mapping[str, str]) -> list[str]:
    """A standing distance from the reference, per metric (a calibration finding, not drift:
    stats/drift.calibration_offset), in the report's words with its interval."""
    out = []
    for k, o in offsets.items():
        o = as_dict(o)
        if not o.get("flagged"):
            continue
        if o.get("text"):
            out.append(str(o["text"]))
        elif to_float(o.get("estimate")) is not None:
            out.append(
                f"consistently {o.get('direction')} by {abs(float(o['estimate'])):.2f} "
                f"on {_label(labels, str(k))}"
            )
    return out


def competence_text(
    labels: Mapping[str, str],
    name: str,
    raters: Mapping[str, Any],
    low_by_rater: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The rater's median competence, and the metrics where it is clearly below the others'
    (`low_by_rater`: the report summary's verdict, stats/competence.low_competence); a figure a
    live estimate carried from the last full computation says when that was, and a rater new
    since then says their competence follows with the next one."""
    rep = as_dict(raters.get(name))
    comp = as_dict(rep.get("competence"))
    mine = median_competence(rep)
    pending = rep.get("competence_note")
    if mine is None and not comp and pending:
        return str(pending)
    return _competence_line(labels, comp, mine, as_dict((low_by_rater or {}).get(name))) + (
        as_of_text(carried_as_of(comp))
    )


def _competence_line(
    labels: Mapping[str, str],
    comp: Mapping[str, Any],
    mine: float | None,
    low: Mapping[str, Any],
) -> str:
    if mine is None:
        # a degenerate fit is said as such, never as a number (report: "not estimable")
        notes = [str(as_dict(f).get("note") or "") for f in comp.values()]
        return (
            "not estimable: too little overlap"
            if any(n.startswith("not estimable") for n in notes)
            else MISSING
        )
    text = f"{mine:.2f} (median)"
    if low:
        text += "; low on " + ", ".join(
            f"{_label(labels, str(k))} {float(as_dict(f)['estimate']):.2f}" for k, f in low.items()
        )
    return text


def _agreement_text(rep: Mapping[str, Any]) -> str:
    """Median over metrics of the rater's exact agreement with the others' consensus."""
    med = median_agreement(rep)
    return f"{med[0]:.0%} (median of {med[1]} metrics)" if med else MISSING


def rater_view(
    name: str,
    r: Any,
    raters: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    low_by_rater: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """One rater's row: counts, accuracy on anchors, the drift flag with any standing offset
    (`flagged`: either), agreement, competence and calibrations, then what else the report
    holds for the rater (`other`)."""
    lab = labels or {}
    r = as_dict(r)
    drift = as_dict(r.get("drift"))
    words = drift_words(drift, lab)
    offsets = _offsets(as_dict(r.get("calibration_offset")), lab)
    drift_text = words
    if offsets:
        standing = "calibration: " + "; ".join(offsets)
        drift_text = standing if words == MISSING else f"{words}; {standing}"
    accuracy = _accuracy_summary(as_dict(r.get("accuracy")), lab)
    return {
        "name": str(name),
        "n_judgements": r.get("n_judgements"),
        "anchors": r.get("anchors"),
        "flagged": bool(drift.get("flagged")) or bool(offsets),
        "drift_flagged": bool(drift.get("flagged")),
        "drift_words": words,
        "drift_text": drift_text,
        "accuracy": accuracy or MISSING,
        "agreement": _agreement_text(r),
        "competence": competence_text(lab, str(name), raters or {str(name): r}, low_by_rater),
        "calibrations": _calibrations_text(r.get("calibrations")) if "calibrations" in r else None,
        "series": [_label(lab, str(k)) for k in as_dict(r.get("series"))],
        "other": kv_rows(r, skip=RATER_KNOWN)
        + kv_rows(drift, skip=("flagged", "metric", "direction", "first_flag_at", "chart")),
    }


def raters_section_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The raters section's rows from the report dict; None when the report has no rater
    figures at all (a report with an empty `raters` still says that no rater has answered)."""
    from .view_summary import metric_labels

    if "raters" not in report and not as_dict(report.get("answer_times")):
        return None
    raters = as_dict(report.get("raters"))
    labels = metric_labels(report)
    attention = as_dict(report.get("summary")).get("raters_needing_attention")
    low_by_rater = {
        str(a.get("rater")): as_dict(a.get("low_competence"))
        for a in (attention if isinstance(attention, list) else [])
        if isinstance(a, Mapping)
    }
    return {
        "rows": [
            rater_view(n, r, raters, labels, low_by_rater)
            for n, r in sorted(raters.items(), key=lambda kv: str(kv[0]))
        ],
        "matrices": [
            t
            for t in (rater_matrix(raters, k, title, labels=labels) for k, title in RATER_MATRICES)
            if t
        ],
        "fatigue": fatigue_table(raters),
        "answer_times": answer_times_view(report.get("answer_times")),
        "calibrations": calibration_history(raters, labels),
    }


def rater_charts(report: Mapping[str, Any]) -> dict[str, bytes]:
    """{rater: their drift chart on anchors as PNG} (matplotlib: only for outputs that show
    charts)."""
    from .charts import drift_charts, png_bytes

    return {name: png for name, chart in drift_charts(report).items() if (png := png_bytes(chart))}


__all__ = [
    "RATER_MATRICES",
    "answer_times_view",
    "competence_text",
    "rater_charts",
    "rater_matrix",
    "raters_section_view",
]
