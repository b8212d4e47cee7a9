"""How a figure of the report is written for a reader: one rule for every caller.

The HTML report, the app's dashboard, the command line (`judge compare`) and the dataset card
each printed the same missing value their own way ("—", "n/a", "undefined"); now a figure the
report does not carry is `MISSING` ("—"), and a figure it carries as undefined (null with a note)
is "undefined (why)", everywhere. `reports/formatting.py` builds its `Est` on these.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MISSING",
    "as_dict",
    "estimate_text",
    "figure_label",
    "fmt_num",
    "metric_labels",
    "short_note",
    "to_float",
    "undefined_reason",
    "undefined_text",
]

MISSING = "—"  # a figure the report does not carry at all


def as_dict(v: Any) -> Mapping[str, Any]:
    """A report node read as a mapping: the node itself, or empty where it is absent or null (a
    report's sections are optional, and a reader must not branch on each)."""
    return v if isinstance(v, Mapping) else {}


def to_float(x: Any) -> float | None:
    if type(x) is float:  # most figures: the same as below, without its checks (a view reads
        return x if math.isfinite(x) else None  # a hundred thousand of them at scale)
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def fmt_num(x: Any, digits: int = 2) -> str:
    """A number for display; integers without decimals; `MISSING` for None."""
    if type(x) is float and math.isfinite(x) and abs(x) < 1000:  # most figures, as below
        text = f"{x:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    v = to_float(x)
    if v is None:
        return MISSING if x is None else str(x)
    if v == int(v) and abs(v) >= 1000:
        return f"{int(v):,}"
    text = f"{v:.{digits}f}"
    # -0.004 rounds to "-0.00": a sign on zero suggests a direction that is not there
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def short_note(note: str | None) -> str | None:
    """A note without its explanation: notes read "<reason>: <why>"; a long one is shown by its
    reason (the full note stays in the JSON and in the tooltip)."""
    if not note:
        return None
    return note.split(": ", 1)[0] if len(note) > 48 and ": " in note else note


def undefined_reason(note: str | None) -> str | None:
    """Why a figure is undefined, without a leading "undefined" (never "undefined (undefined)")."""
    if not note:
        return None
    for n in (short_note(note), note):
        r = (n or "").strip()
        if r.lower().startswith("undefined"):
            r = r[len("undefined") :].strip(" :;,-")
        if r and r.lower() not in ("on these data", "here"):
            return r
    return "nothing to compute it from on these data"


def undefined_text(note: str | None) -> str:
    reason = undefined_reason(note)
    return f"undefined ({reason})" if reason else "undefined"


def estimate_text(d: Any, *, digits: int = 2, with_n: bool = False) -> str:
    """A report estimate `{"estimate", "low", "high", "n", "note"}` as "0.12 [0.05, 0.19]"
    (and " n=40"); `MISSING` when there is none, "undefined (why)" when it is null."""
    if not isinstance(d, Mapping):
        return MISSING
    est = to_float(d.get("estimate"))
    if est is None:
        note = d.get("note")
        return undefined_text(str(note) if note else None)
    text = fmt_num(est, digits)
    low, high = to_float(d.get("low")), to_float(d.get("high"))
    if low is not None and high is not None:
        text += f" [{fmt_num(low, digits)}, {fmt_num(high, digits)}]"
    if with_n and d.get("n") is not None:
        text += f" n={d['n']}"
    return text


def metric_labels(report: Mapping[str, Any]) -> dict[str, str]:
    """Every report key's label (`metrics.*.label`, from Rubric.key_label), for the sentences."""
    return {k: as_dict(s).get("label") or k for k, s in as_dict(report.get("metrics")).items()}


def figure_label(name: str, labels: Mapping[str, str] | None = None) -> str:
    """A debiased figure as the reader knows it: the rubric's label of its key (`labels`, the
    report's `metrics.*.label`), "Verdict" for the rubric's verdict; a key the rubric does not
    name, in words."""
    if name == "verdict_pass_rate":
        return "Verdict"
    return (labels or {}).get(name) or name.replace("_", " ")
