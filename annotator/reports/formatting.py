"""Display formatting of report figures: estimates, intervals, p-values, shares.

`Est` is the one way an estimate is shown: point, 95% interval and n, or
"undefined (reason)" when the report carries null with a note, never a number.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from markupsafe import Markup

from ..domain.figures import (
    MISSING,
    as_dict,
    fmt_num,
    short_note,
    to_float,
    undefined_reason,
    undefined_text,
)

__all__ = [
    "Est",
    "as_dict",
    "est_of",
    "fmt_any",
    "fmt_num",
    "fmt_p",
    "fmt_share",
    "is_estimate",
    "kv_rows",
    "to_float",
    "with_interval",
]


def fmt_p(x: Any) -> str:
    v = to_float(x)
    if v is None:
        return MISSING
    if v < 0.001:
        return "< 0.001"
    return f"{v:.3f}"


def fmt_share(x: Any) -> str:
    v = to_float(x)
    if v is None:
        return MISSING
    return f"{100 * v:.0f}%"


@dataclass(frozen=True)
class Est:
    """A displayable estimate: point, interval, n, or 'undefined' with the reason."""

    estimate: float | None
    low: float | None = None
    high: float | None = None
    n: Any = None
    note: str | None = None
    present: bool = True  # False when the report does not carry this figure at all
    # the interval of a live estimate (stats/live_estimate.py): moved from the last full
    # computation, shown with "≈"; never in a published report
    approximate: bool = False
    # a figure a live estimate kept whole from the last full computation: when that was
    as_of: str | None = None

    @property
    def defined(self) -> bool:
        return self.estimate is not None

    @property
    def short_note(self) -> str | None:
        return short_note(self.note)

    @property
    def reason(self) -> str | None:
        """Why the figure is undefined (domain/figures.py: the one rule)."""
        return undefined_reason(self.note)

    @property
    def text(self) -> str:
        if not self.present:
            return MISSING
        if self.estimate is None:
            return undefined_text(self.note)
        return fmt_num(self.estimate)

    @property
    def ci(self) -> str:
        if self.estimate is None or self.low is None or self.high is None:
            return ""
        mark = "≈" if self.approximate else ""
        return f"{mark}[{fmt_num(self.low)}, {fmt_num(self.high)}]"

    def __str__(self) -> str:
        return f"{self.text} {self.ci}".strip() + as_of_text(self.as_of)

    def bar(self, lo: float = -0.5, hi: float = 1.0, width: int = 110) -> Markup:
        """An inline SVG interval bar on [lo, hi] (values outside are clipped to the edge).

        Built from numbers only, so marking it safe cannot let report text through.
        """
        if self.estimate is None:
            return Markup("")
        height, pad = 14, 4

        def x(v: float) -> float:
            v = min(max(v, lo), hi)
            return round(pad + (v - lo) / (hi - lo) * (width - 2 * pad), 1)

        parts = [
            f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{self.text} {self.ci}">'
        ]
        parts.append(f'<line x1="{pad}" y1="7" x2="{width - pad}" y2="7" class="axis"/>')
        if lo < 0 < hi:
            parts.append(f'<line x1="{x(0)}" y1="2" x2="{x(0)}" y2="12" class="zero"/>')
        if hi >= 1 > lo:
            parts.append(f'<line x1="{x(1)}" y1="3" x2="{x(1)}" y2="11" class="one"/>')
        if self.low is not None and self.high is not None:
            parts.append(
                f'<rect x="{x(self.low)}" y="4" width="{max(x(self.high) - x(self.low), 1.5)}" '
                f'height="6" rx="2" class="ci"/>'
            )
        parts.append(f'<circle cx="{x(self.estimate)}" cy="7" r="3.2" class="pt"/>')
        parts.append("</svg>")
        return Markup("".join(parts))


def clock_text(t: datetime) -> str:
    """A moment as the reader's clock shows it: the time today, else the date and time."""
    local = t.astimezone()
    if local.date() == datetime.now().astimezone().date():
        return local.strftime("%H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


def as_of_text(as_of: Any) -> str:
    """The mark of a figure a live estimate carried whole from the last full computation."""
    return f" (as of {as_of})" if as_of else ""


def carried_as_of(value: Any) -> str | None:
    """When the carried figures in `value` (a figure, or a dict of them) were computed."""
    if isinstance(value, Mapping):
        if value.get("as_of"):
            return str(value["as_of"])
        return next((t for v in value.values() if (t := carried_as_of(v))), None)
    return None


def _note_for(d: Mapping[str, Any], key: str) -> str | None:
    notes = d.get("notes")
    note = d.get(f"{key}_note") or (notes.get(key) if isinstance(notes, Mapping) else None)
    return str(note) if note else None


def est_of(d: Any, key: str) -> Est:
    """The estimate `d[key]`, tolerant of a missing dict, null, a bare number or a note."""
    if not (type(d) is dict or isinstance(d, Mapping)) or key not in d:
        return Est(None, present=False)
    value = d.get(key)
    outer_note = _note_for(d, key)
    if type(value) is dict or isinstance(value, Mapping):
        note = value.get("note") or outer_note
        return Est(
            to_float(value.get("estimate")),
            to_float(value.get("low")),
            to_float(value.get("high")),
            value.get("n"),
            str(note) if note else None,
            approximate=bool(value.get("approximate")),
            as_of=value.get("as_of"),
        )
    return Est(to_float(value), note=outer_note)


def figure_content(v: dict[str, Any]) -> Hashable | None:
    """A figure's content as a key, each value with its type (1, 1.0 and True print apart);
    None when a value is not hashable (a nested note list)."""
    values = tuple(v.values())
    key = (tuple(v), values, tuple(map(type, values)))
    try:
        hash(key)
    except TypeError:
        return None
    return key


# est_of by content across views; cleared whole when full (a few tables' figures fit)
_KEPT_ESTS: dict[Hashable, Est] = {}
_KEPT_ESTS_MAX = 20_000


def kept_est_of(d: Mapping[str, Any], key: str) -> Est:
    """`est_of(d, key)`, the same `Est` an earlier call made for an equal figure (and note): for
    a table laid out again at every live refresh whose figures mostly hold what they held (the
    rater pairs: a hundred answers move the pairs of the raters who gave them)."""
    value = d.get(key)
    content = figure_content(value) if type(value) is dict else None
    if content is None:
        return est_of(d, key)
    k = (content, _note_for(d, key))
    made = _KEPT_ESTS.get(k)
    if made is None:
        if len(_KEPT_ESTS) >= _KEPT_ESTS_MAX:
            _KEPT_ESTS.clear()
        made = _KEPT_ESTS[k] = est_of(d, key)
    return made


def is_estimate(v: Any) -> bool:
    return isinstance(v, Mapping) and "estimate" in v


def fmt_any(v: Any, depth: int = 0) -> str:
    """Any report value as one line of text (estimates, numbers, lists, small dicts)."""
    if is_estimate(v):
        return str(est_of({"v": v}, "v")) + (f" (n={v['n']})" if v.get("n") is not None else "")
    if v is None:
        return "—"
    if isinstance(v, (bool, int, float)):
        return fmt_num(v)
    if isinstance(v, (list, tuple)):
        if len(v) > 12:
            return ", ".join(fmt_any(x, depth + 1) for x in v[:12]) + f", … ({len(v)} in all)"
        return ", ".join(fmt_any(x, depth + 1) for x in v) if v else "none"
    if isinstance(v, Mapping):
        if depth > 2:
            return "…"
        return "; ".join(f"{k}: {fmt_any(x, depth + 1)}" for k, x in v.items()) if v else "none"
    return str(v)


def kv_rows(d: Any, skip: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Label/value pairs for the keys of `d` not already shown elsewhere."""
    if not isinstance(d, Mapping):
        return []
    return [
        (str(k).replace("_", " "), fmt_any(v))
        for k, v in d.items()
        if k not in skip and not str(k).endswith("_note")
    ]


def with_interval(d: Mapping[str, Any], key: str, interval_key: str, n: Any) -> Est:
    """A bare number plus a sibling {low, high} dict, as pairwise judges report them."""
    e = est_of(d, key)
    iv = as_dict(d.get(interval_key))
    note = e.note
    if e.estimate is None and not note:
        note = str(iv.get("note") or d.get("note") or "") or None
    if iv.get("n") is not None:
        n = iv.get("n")
    return Est(
        e.estimate,
        e.low if e.low is not None else to_float(iv.get("low")),
        e.high if e.high is not None else to_float(iv.get("high")),
        e.n if e.n is not None else n,
        note,
        e.present or bool(iv),
        e.approximate or bool(iv.get("approximate")),
    )
