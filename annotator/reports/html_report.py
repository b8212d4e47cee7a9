"""The report as one self-contained HTML file.

No external resource of any kind: CSS is inline, charts and thumbnails are data
URIs, so the file can be mailed, archived or opened offline and still looks the
same. Jinja2 autoescapes everything, so a rater's reason or a judge's reply that
contains markup is shown as text, never run.

The report dict (DESIGN.md 5.5) is turned into a small "view" of plain rows
first; the template only lays rows out. Keys the view does not know are still
shown (under "other figures"), so a figure added to the report model is never
silently dropped.
"""

from __future__ import annotations

import datetime as _dt
import functools
import io
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from . import charts as _charts
from .atomic import atomic_write_text

__all__ = ["render_html", "write_html", "build_view", "Est", "shrink_thumbnail", "TEMPLATE_DIR"]

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
THUMB_MAX_SIDE = 320  # pixels; shown at 160 CSS px, so sharp on high-density screens


# --- number formatting ----------------------------------------------------------------

def _num(x: Any) -> float | None:
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def fmt_num(x: Any, digits: int = 2) -> str:
    """A number for display; integers without decimals; '-' for missing."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    v = _num(x)
    if v is None:
        return "—" if x is None else str(x)
    if v == int(v) and abs(v) >= 1000:
        return f"{int(v):,}"
    text = f"{v:.{digits}f}"
    # -0.004 rounds to "-0.00": a sign on zero suggests a direction that is not there
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def fmt_p(x: Any) -> str:
    v = _num(x)
    if v is None:
        return "—"
    if v < 0.001:
        return "< 0.001"
    return f"{v:.3f}"


def fmt_share(x: Any) -> str:
    v = _num(x)
    if v is None:
        return "—"
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

    @property
    def defined(self) -> bool:
        return self.estimate is not None

    @property
    def short_note(self) -> str | None:
        """The reason without its explanation: notes read "<reason>: <why>"; the full
        note stays in the JSON and in the tooltip."""
        if not self.note:
            return None
        if len(self.note) > 48 and ": " in self.note:
            return self.note.split(": ", 1)[0]
        return self.note

    @property
    def text(self) -> str:
        if not self.present:
            return "—"
        if self.estimate is None:
            return f"undefined ({self.short_note})" if self.note else "undefined"
        return fmt_num(self.estimate)

    @property
    def ci(self) -> str:
        if self.estimate is None or self.low is None or self.high is None:
            return ""
        return f"[{fmt_num(self.low)}, {fmt_num(self.high)}]"

    def __str__(self) -> str:
        return f"{self.text} {self.ci}".strip()

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

        parts = [f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
                 f'role="img" aria-label="{self.text} {self.ci}">']
        parts.append(f'<line x1="{pad}" y1="7" x2="{width - pad}" y2="7" class="axis"/>')
        if lo < 0 < hi:
            parts.append(f'<line x1="{x(0)}" y1="2" x2="{x(0)}" y2="12" class="zero"/>')
        if hi >= 1 > lo:
            parts.append(f'<line x1="{x(1)}" y1="3" x2="{x(1)}" y2="11" class="one"/>')
        if self.low is not None and self.high is not None:
            parts.append(f'<rect x="{x(self.low)}" y="4" width="{max(x(self.high) - x(self.low), 1.5)}" '
                         f'height="6" rx="2" class="ci"/>')
        parts.append(f'<circle cx="{x(self.estimate)}" cy="7" r="3.2" class="pt"/>')
        parts.append("</svg>")
        return Markup("".join(parts))


def _note_for(d: Mapping[str, Any], key: str) -> str | None:
    notes = d.get("notes")
    note = d.get(f"{key}_note") or (notes.get(key) if isinstance(notes, Mapping) else None)
    return str(note) if note else None


def est_of(d: Any, key: str) -> Est:
    """The estimate `d[key]`, tolerant of a missing dict, null, a bare number or a note."""
    if not isinstance(d, Mapping) or key not in d:
        return Est(None, present=False)
    value = d.get(key)
    outer_note = _note_for(d, key)
    if isinstance(value, Mapping):
        note = value.get("note") or outer_note
        return Est(_num(value.get("estimate")), _num(value.get("low")), _num(value.get("high")),
                   value.get("n"), str(note) if note else None)
    return Est(_num(value), note=outer_note)


def _is_est_dict(v: Any) -> bool:
    return isinstance(v, Mapping) and "estimate" in v


def fmt_any(v: Any, depth: int = 0) -> str:
    """Any report value as one line of text (estimates, numbers, lists, small dicts)."""
    if _is_est_dict(v):
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
    return [(str(k).replace("_", " "), fmt_any(v)) for k, v in d.items()
            if k not in skip and not str(k).endswith("_note")]


# --- thumbnails -----------------------------------------------------------------------

def _sniff_mime(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    return None


def shrink_thumbnail(data: bytes, max_side: int = THUMB_MAX_SIDE) -> tuple[bytes, str] | None:
    """Image bytes -> (small image bytes, mime), or None if the bytes are not an image.

    Re-encoding also drops any metadata the original carried. Without Pillow the
    bytes are passed through if their type is recognisable.
    """
    try:
        from PIL import Image
    except ImportError:  # pragma: no cover - Pillow is a dependency of the app
        mime = _sniff_mime(data)
        return (data, mime) if mime else None
    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
            im.thumbnail((max_side, max_side))
            has_alpha = im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info)
            out = io.BytesIO()
            if has_alpha:
                im.convert("RGBA").save(out, format="PNG", optimize=True)
                return out.getvalue(), "image/png"
            im.convert("RGB").save(out, format="JPEG", quality=85, optimize=True)
            return out.getvalue(), "image/jpeg"
    except Exception:  # noqa: BLE001 - any undecodable image just gets no thumbnail
        return None


# --- the view -------------------------------------------------------------------------

_JUDGE_KNOWN = ("n_items", "alpha_vs_consensus", "alpha_with_judge_as_rater", "permutation_alpha",
                "exact_agreement", "exact_agreement_ci", "mean_difference", "pearson", "spearman",
                "kendall_tau_b", "cohen_kappa", "confusion", "human_range", "slices", "n_cannot_judge",
                "notes", "alpha_humans_same_items", "alpha_gain", "permutation_pearson", "same_scale")
_METRIC_KNOWN = ("kind", "level", "n_items", "n_raters", "n_judgements", "human_alpha",
                 "human_alpha_interval", "judges", "percent_agreement", "fleiss_kappa", "gwet_ac1",
                 "n_cannot_judge", "notes", "label", "human_alpha_nominal", "rater_pairs", "n_ties")
_RATER_KNOWN = ("n_judgements", "anchors", "drift", "accuracy", "test_retest", "series",
                "agreement_with_consensus", "fatigue", "calibrations", "calibration_accuracy")
_FINDING_KNOWN = ("item_id", "display_code", "case_id", "generator", "metric", "kind", "humans",
                  "judge", "human_answers", "human_reasons", "judge_value", "judge_reason", "judge_name")


def _d(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


@dataclass
class Confusion:
    labels: list[str]
    row_labels: list[str]
    rows: list[list[tuple[str, float]]]  # (count text, shade 0..1)
    total: Any
    row_title: str = "humans"
    col_title: str = "judge"


def _confusion(c: Any) -> Confusion | None:
    c = _d(c)
    labels = [str(x) for x in (c.get("labels") or [])]
    matrix = c.get("matrix") or []
    if not labels or not isinstance(matrix, (list, tuple)):
        return None
    nums = [_num(v) or 0.0 for row in matrix if isinstance(row, (list, tuple)) for v in row]
    top = max(nums) if nums else 0.0
    rows = []
    for row in matrix:
        cells = []
        for v in row if isinstance(row, (list, tuple)) else []:
            n = _num(v) or 0.0
            cells.append((fmt_num(v), n / top if top else 0.0))
        rows.append(cells)
    row_labels = [str(x) for x in (c.get("row_labels") or labels)]
    col_labels = [str(x) for x in (c.get("col_labels") or labels)]
    total = sum(nums)
    return Confusion(labels=col_labels, row_labels=row_labels, rows=rows,
                     total=fmt_num(int(total) if total == int(total) else total),
                     row_title=str(c.get("rows") or "humans"),
                     col_title=str(c.get("columns") or "judge"))


def _cell(v: Any) -> Est | str:
    """A table cell: an Est for an estimate dict, else display text."""
    return est_of({"v": v}, "v") if _is_est_dict(v) else fmt_any(v)


def _slices(s: Any) -> list[dict[str, Any]]:
    """{by_case: {case: {...}}, by_generator: {...}} -> tables; rows alphabetical."""
    out = []
    for dim, groups in _d(s).items():
        groups = _d(groups)
        if not groups:
            continue
        keys: list[str] = []
        for g in groups.values():
            for k in _d(g):
                if k not in keys and not str(k).endswith("_note"):
                    keys.append(k)
        rows = []
        for name in sorted(groups, key=str):
            g = groups[name]
            if isinstance(g, Mapping):
                rows.append((str(name), [_cell(g[k]) if k in g else "—" for k in keys]))
            else:
                rows.append((str(name), [fmt_any(g)] if not keys else [fmt_any(g)] + [""] * (len(keys) - 1)))
        # a column undefined everywhere for one reason says so once, under the table
        dropped: dict[str, list[str]] = {}
        for ci in reversed(range(len(keys))):
            cells = [r[1][ci] for r in rows if ci < len(r[1])]
            notes = {c.short_note for c in cells if isinstance(c, Est) and not c.defined}
            if cells and len(notes) == 1 and all(isinstance(c, Est) and not c.defined for c in cells):
                dropped.setdefault(next(iter(notes)) or "", []).insert(0, keys[ci].replace("_", " "))
                del keys[ci]
                for r in rows:
                    del r[1][ci]
        captions = [f"{', '.join(cols)}: undefined" + (f" ({note})" if note else "")
                    for note, cols in dropped.items()]
        out.append({"title": str(dim).replace("_", " "), "columns": [k.replace("_", " ") for k in keys] or ["value"],
                    "rows": rows, "captions": captions})
    return out


def _pair_kappa_rows(pairs: Any) -> tuple[list[str], list[tuple[str, Any, list[Est | str]]]]:
    """{"a vs b": {n, unweighted, linear, quadratic | note}} -> (weights, rows)."""
    pairs = _d(pairs)
    weights: list[str] = []
    for v in pairs.values():
        for k in _d(v):
            if k not in ("n", "note") and k not in weights:
                weights.append(k)
    rows = []
    for name in sorted(pairs, key=str):
        v = _d(pairs[name])
        if not any(w in v for w in weights):
            cells: list[Est | str] = [Est(None, n=v.get("n"), note=str(v.get("note") or "") or None)]
            cells += [""] * (len(weights) - 1)
        else:
            cells = [est_of(v, w) for w in weights]
        rows.append((str(name), v.get("n"), cells))
    return weights, rows


def _human_range_text(hr: Any) -> str | None:
    """Where the judge's kappa with each human sits against the humans' kappas with each other."""
    hr = _d(hr)
    if not hr:
        return None
    hh = _d(hr.get("human_vs_human"))
    lo, hi, jm = _num(hh.get("min")), _num(hh.get("max")), _num(hr.get("judge_mean"))
    measure = str(hr.get("measure") or "kappa").replace("_", " ")
    if hr.get("position") and jm is not None and lo is not None and hi is not None:
        return (f"{hr['position']} the human range: judge-human {measure} {fmt_num(jm)} (mean over raters) "
                f"vs human-human {fmt_num(lo)} to {fmt_num(hi)}")
    if hr.get("note"):
        return f"undefined ({hr['note']})"
    if "inside" in hr:  # a plain share, as some report models give it
        return fmt_any(hr)
    return fmt_any(hr)


def _perm_text(perm: Any) -> str:
    perm = _d(perm)
    if _num(perm.get("mean")) is None:
        return Est(None, note=str(perm.get("note") or "") or None).text
    return f"{fmt_num(perm.get('mean'), 3)} · p {fmt_p(perm.get('p_value'))}"


def _metric_view(key: str, m: Mapping[str, Any], judge_order: list[str]) -> dict[str, Any]:
    judges = []
    for jname, j in _d(m.get("judges")).items():
        j = _d(j)
        perm = _d(j.get("permutation_alpha"))
        kappa = j.get("cohen_kappa")
        kappas: list[tuple[str, Est]] = []
        if _is_est_dict(kappa) or isinstance(kappa, (int, float)):
            kappas.append(("unweighted", est_of(j, "cohen_kappa")))
        elif isinstance(kappa, Mapping):
            kappas = [(str(w), est_of(kappa, w)) for w in kappa]
        judges.append({
            "name": str(jname),
            "colour": _charts.PALETTE[judge_order.index(jname) % len(_charts.PALETTE)]
            if jname in judge_order else _charts.PALETTE[0],
            "n_items": j.get("n_items"),
            "n_cannot_judge": j.get("n_cannot_judge"),
            "alpha_vs_consensus": est_of(j, "alpha_vs_consensus"),
            "alpha_with_judge_as_rater": est_of(j, "alpha_with_judge_as_rater"),
            "perm_present": bool(perm),
            "perm_mean": fmt_num(perm.get("mean"), 3) if _num(perm.get("mean")) is not None else None,
            "perm_p": fmt_p(perm.get("p_value")),
            "perm_note": Est(None, note=str(perm["note"])).short_note if perm.get("note") else None,
            "perm_extra": [(f"shuffles: {k}", v) for k, v in kv_rows(perm, skip=("mean", "p_value", "note"))],
            "exact_agreement": _with_interval(j, "exact_agreement", "exact_agreement_ci", j.get("n_items")),
            "mean_difference": est_of(j, "mean_difference"),
            "pearson": est_of(j, "pearson"),
            "spearman": est_of(j, "spearman"),
            "kendall_tau_b": est_of(j, "kendall_tau_b"),
            "kappas": kappas,
            "confusion": _confusion(j.get("confusion")),
            "human_range": _human_range_text(j.get("human_range")) if "human_range" in j else None,
            "alpha_humans_same_items": est_of(j, "alpha_humans_same_items"),
            "alpha_gain": est_of(j, "alpha_gain"),
            "perm_pearson": _perm_text(j.get("permutation_pearson")) if "permutation_pearson" in j else None,
            "same_scale": j.get("same_scale"),
            "off_scale": (est_of(j, "alpha_vs_consensus").short_note or "the judge answers on its own scale")
            if j.get("same_scale") is False else None,
            "slices": _slices(j.get("slices")),
            "other": kv_rows(j, skip=_JUDGE_KNOWN),
        })
    extras = [(label, est_of(m, k)) for k, label in (
        ("human_alpha_nominal", "alpha, nominal"), ("percent_agreement", "percent agreement"),
        ("fleiss_kappa", "Fleiss' kappa"), ("gwet_ac1", "Gwet's AC1")) if k in m]
    weights, pair_rows = _pair_kappa_rows(m.get("rater_pairs"))
    group, _, option = str(key).partition(":")
    return {
        "key": str(key),
        "label": str(m.get("label") or (option if option else key)),
        "group": group if option and not m.get("label") else None,
        "kind": m.get("kind") or "—",
        "level": m.get("level") or "—",
        "n_items": m.get("n_items"),
        "n_raters": m.get("n_raters"),
        "n_judgements": m.get("n_judgements"),
        "n_cannot_judge": m.get("n_cannot_judge"),
        "human_alpha": est_of(m, "human_alpha"),
        "human_alpha_interval": est_of(m, "human_alpha_interval"),
        "extras": extras,
        "n_ties": m.get("n_ties"),
        "pair_weights": weights,
        "pair_rows": pair_rows,
        "judges": judges,
        "other": kv_rows(m, skip=_METRIC_KNOWN),
    }


def _answers(f: Mapping[str, Any]) -> list[dict[str, str]]:
    """Each human's answer beside their reason, whichever shape the finding uses."""
    answers, reasons = f.get("human_answers"), f.get("human_reasons")
    rows: list[dict[str, str]] = []
    if isinstance(answers, Mapping):
        reasons_map = reasons if isinstance(reasons, Mapping) else {}
        for rater, a in answers.items():
            rows.append({"who": str(rater), "answer": fmt_any(a), "reason": str(reasons_map.get(rater) or "")})
        for rater, r in reasons_map.items():
            if rater not in answers and r:
                rows.append({"who": str(rater), "answer": "", "reason": str(r)})
        return rows
    if isinstance(answers, (list, tuple)):
        rlist = list(reasons) if isinstance(reasons, (list, tuple)) else []
        for i, a in enumerate(answers):
            if isinstance(a, Mapping):
                who = a.get("rater") or a.get("who") or ""
                rows.append({"who": str(who), "answer": fmt_any(a.get("value", a.get("answer"))),
                             "reason": str(a.get("reason") or (rlist[i] if i < len(rlist) else "") or "")})
            else:
                rows.append({"who": "", "answer": fmt_any(a),
                             "reason": str(rlist[i] or "") if i < len(rlist) else ""})
        return rows
    if isinstance(reasons, Mapping):
        return [{"who": str(k), "answer": "", "reason": str(v or "")} for k, v in reasons.items()]
    if isinstance(reasons, (list, tuple)):
        return [{"who": "", "answer": "", "reason": str(r or "")} for r in reasons if r]
    return rows


def _thumbs_for(f: Mapping[str, Any], thumbs: Mapping[str, str]) -> str | None:
    for key in (f.get("item_id"), f.get("display_code")):
        if key is not None and str(key) in thumbs:
            return thumbs[str(key)]
    return None


def _finding_view(f: Any, thumbs: Mapping[str, str]) -> dict[str, Any] | None:
    if not isinstance(f, Mapping):
        return {"title": str(f), "other": []} if f is not None else None
    judge_value = f.get("judge_value", f.get("judge"))
    return {
        "title": str(f.get("display_code") or f.get("item_id") or "item"),
        "item_id": f.get("item_id"),
        "display_code": f.get("display_code"),
        "case_id": f.get("case_id"),
        "generator": f.get("generator"),
        "metric": f.get("metric"),
        "kind": str(f["kind"]).replace("_", " ") if f.get("kind") else None,
        "humans": fmt_any(f.get("humans")) if "humans" in f else None,
        "answers": _answers(f),
        "judge_name": f.get("judge_name"),
        "judge_value": fmt_any(judge_value) if judge_value is not None or "judge" in f else None,
        "judge_reason": f.get("judge_reason"),
        "thumb": _thumbs_for(f, thumbs),
        "other": kv_rows(f, skip=_FINDING_KNOWN),
    }


def _systematic_view(f: Any) -> dict[str, Any]:
    if not isinstance(f, Mapping):
        return {"title": str(f), "rows": []}
    title = f.get("summary") or f.get("description")
    skip: tuple[str, ...] = ("summary", "description")
    if not title and f.get("kind") and f.get("metric"):
        who = f.get("judge_name") or f.get("judge") or "the judge"
        title = f"{who} is {str(f['kind']).replace('_', ' ')} on {f['metric']}"
        skip += ("kind", "metric", "judge_name", "judge")
    return {"title": str(title or f.get("kind") or "finding"), "rows": kv_rows(f, skip=skip)}


def _gate_view(name: str, gate: Any) -> dict[str, Any]:
    """A release-gate record ({pass, checks} or a plain flag/dict) as display parts."""
    if isinstance(gate, bool):
        return {"name": name, "pass": gate, "checks": []}
    g = _d(gate)
    verdict = g.get("pass", g.get("passes"))
    checks = []
    for fig, c in _d(g.get("checks")).items():
        c = _d(c)
        low = _num(c.get("low"))
        text = (f"lower bound {fmt_num(low)} vs threshold {fmt_num(c.get('threshold'))}" if low is not None
                else f"threshold {fmt_num(c.get('threshold'))}: {c.get('note') or 'no interval'}")
        checks.append((str(fig), bool(c.get("pass")), text))
    other = kv_rows(g, skip=("pass", "passes", "checks"))
    return {"name": name, "pass": verdict if isinstance(verdict, bool) else None, "checks": checks,
            "other": other}


def _generators_view(gens: Any) -> dict[str, Any] | None:
    """Generators side by side, one table per figure, cases alphabetical in rows.

    Accepts the report model's {"cases", "figures", "by_generator": {g: {overall, by_case,
    release_gate}}, "release_gate"} and the simpler {g: {overall, cases, release_gate}}.
    """
    gens = _d(gens)
    if not gens:
        return None
    if "by_generator" in gens:
        by_gen = _d(gens.get("by_generator"))
        case_key = "by_case"
        labels = {str(k): str(v) for k, v in _d(gens.get("figures")).items()}
        declared_cases = [str(c) for c in gens.get("cases") or []]
        gate_rule = _d(gens.get("release_gate"))
    else:
        by_gen, case_key, labels, declared_cases, gate_rule = gens, "cases", {}, [], {}
    if not by_gen:
        return None
    names = sorted(by_gen, key=str)
    count_keys = ("n_items", "n_cases", "n_answers")
    fig_keys: list[str] = list(labels)
    case_ids: set[str] = set(declared_cases)
    for g in names:
        gd = _d(by_gen[g])
        for k in _d(gd.get("overall")):
            if k not in fig_keys and k not in count_keys:
                fig_keys.append(k)
        for cid, c in _d(gd.get(case_key)).items():
            case_ids.add(str(cid))
            for k in _d(c):
                if k not in fig_keys and k not in count_keys and not str(k).endswith("_note"):
                    fig_keys.append(k)
    # the verdict is what a release decision reads first
    fig_keys.sort(key=lambda k: 0 if "verdict" in str(k) else 1)
    # Cases alphabetical, generators side by side: a row holds one case fixed.
    cases = sorted(case_ids)
    figures = []
    for k in fig_keys:
        overall = [_cell(_d(_d(by_gen[g]).get("overall")).get(k)) if k in _d(_d(by_gen[g]).get("overall"))
                   else "—" for g in names]
        rows = []
        for cid in cases:
            cells = []
            for g in names:
                per_case = {str(c): v for c, v in _d(_d(by_gen[g]).get(case_key)).items()}
                c = per_case.get(cid)
                cells.append(_cell(c.get(k)) if isinstance(c, Mapping) and k in c else "—")
            rows.append((cid, cells))
        label = labels.get(k)
        figures.append({"key": str(k), "label": f"{k} · {label}" if label else str(k).replace("_", " "),
                        "overall": overall, "rows": rows})
    gates = [_gate_view(str(g), _d(by_gen[g]).get("release_gate")) for g in names
             if "release_gate" in _d(by_gen[g])]
    counts = [{"name": str(g), "n_items": fmt_num(_d(by_gen[g]).get("n_items")),
               "n_cases": fmt_num(_d(by_gen[g]).get("n_cases"))} for g in names]
    rule = gate_rule.get("rule")
    thresholds = kv_rows(gate_rule.get("thresholds"))
    return {"names": [str(g) for g in names], "cases": cases, "figures": figures, "gates": gates,
            "gate_rule": str(rule) if rule else None, "gate_thresholds": thresholds, "counts": counts,
            "other": kv_rows(gens, skip=("cases", "figures", "by_generator", "release_gate"))
            if "by_generator" in gens else []}


def _per_metric_cell(v: Any) -> dict[str, Any]:
    """One rater x metric figure: an estimate, or an {agreement, n_pairs} record, or anything."""
    if _is_est_dict(v):
        e = est_of({"v": v}, "v")
        extra = []
        if isinstance(v, Mapping):
            if v.get("rule"):
                extra.append(str(v["rule"]))
            if _num(v.get("exact")) is not None:
                extra.append(f"exact {fmt_share(v['exact'])}")
        return {"est": e, "text": None, "sub": " · ".join(extra)}
    if isinstance(v, Mapping) and any(_is_est_dict(x) for x in v.values()):
        # several estimates of one rater on one metric, e.g. {n, exact_agreement, alpha}
        parts = [(str(k).replace("_", " "), est_of(v, k)) for k, x in v.items() if _is_est_dict(x)]
        sub = f"n={v['n']}" if v.get("n") is not None else ""
        return {"est": None, "text": None, "sub": sub, "parts": parts}
    if isinstance(v, Mapping) and "agreement" in v:
        n = v.get("n_pairs", v.get("n"))
        e = Est(_num(v.get("agreement")), n=n, note=str(v["note"]) if v.get("note") else None)
        extra = [str(v["rule"])] if v.get("rule") else []
        if _num(v.get("exact")) is not None:
            extra.append(f"exact {fmt_share(v['exact'])}")
        return {"est": e, "text": None, "sub": " · ".join(extra)}
    return {"est": None, "text": fmt_any(v), "sub": ""}


def _rater_matrix(raters: Mapping[str, Any], key: str, title: str) -> dict[str, Any] | None:
    """A raters x metrics table for a per-metric rater figure (accuracy, test-retest...)."""
    names = [n for n in sorted(raters, key=str) if key in _d(raters[n])]
    if not names:
        return None
    per_metric = all(isinstance(_d(raters[n]).get(key), Mapping) and
                     all(isinstance(x, Mapping) for x in _d(raters[n])[key].values()) for n in names)
    if not per_metric:
        return {"title": title, "corner": "rater", "columns": [title], "rows": [
            (str(n), [{"est": None, "text": fmt_any(_d(raters[n]).get(key)), "sub": ""}]) for n in names]}
    cols: list[str] = []
    for n in names:
        for m in _d(_d(raters[n]).get(key)):
            if m not in cols:
                cols.append(m)
    if not cols:
        return None
    blank = {"est": None, "text": "—", "sub": ""}
    if len(cols) > len(names):
        # more metrics than raters: metrics down the side keeps the table inside the page
        rows = [(m, [_per_metric_cell(_d(_d(raters[n]).get(key))[m]) if m in _d(_d(raters[n]).get(key))
                     else blank for n in names]) for m in cols]
        return {"title": title, "corner": "metric", "columns": [str(n) for n in names], "rows": rows}
    rows = []
    for n in names:
        d = _d(_d(raters[n]).get(key))
        rows.append((str(n), [_per_metric_cell(d[m]) if m in d else blank for m in cols]))
    return {"title": title, "corner": "rater", "columns": cols, "rows": rows}


def _fatigue_table(raters: Mapping[str, Any]) -> dict[str, Any] | None:
    """Agreement with the others early vs late in a session, per rater."""
    rows, notes = [], set()
    for name in sorted(raters, key=str):
        f = _d(_d(raters[name]).get("fatigue"))
        if not f:
            continue
        if not any(k in f for k in ("early", "late", "change")):
            rows.append({"name": str(name), "early": None, "late": None, "change": None, "quarters": [],
                         "n": "—", "sessions": "—", "note": str(f.get("note") or "")})
            continue
        quarters = [est_of({"q": q}, "q") for q in (f.get("by_position_quarter") or [])]
        rows.append({"name": str(name), "early": est_of(f, "early"), "late": est_of(f, "late"),
                     "change": est_of(f, "change"), "quarters": quarters,
                     "n": fmt_num(f.get("n_answers")), "sessions": fmt_num(f.get("n_sessions")), "note": ""})
        if f.get("note"):
            notes.add(str(f["note"]))
    if not rows or all(r["early"] is None for r in rows):
        # nothing measured for anyone: one line, not a table of dashes
        return {"rows": [], "note": "; ".join(sorted({r["note"] for r in rows if r["note"]}))} if rows else None
    return {"rows": rows, "note": "; ".join(sorted(notes))}


_RATER_MATRICES = (("accuracy", "Anchor accuracy (live work)"),
                   ("calibration_accuracy", "Anchor accuracy (calibration sessions)"),
                   ("test_retest", "Test-retest: the same anchor in consecutive sessions"),
                   ("agreement_with_consensus", "Agreement with the human consensus"))


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


def _rater_view(name: str, r: Any, drift_charts: Mapping[str, Any]) -> dict[str, Any]:
    r = _d(r)
    drift = _d(r.get("drift"))
    flagged = bool(drift.get("flagged"))
    if flagged:
        bits = [str(drift.get("metric") or "a metric")]
        if drift.get("direction"):
            bits.append(str(drift.get("direction")))
        if drift.get("first_flag_at") is not None:
            bits.append(f"from anchor answer {drift.get('first_flag_at')}")
        drift_text = "drift: " + ", ".join(bits)
    else:
        drift_text = "no drift flag" if drift else "—"
    return {
        "name": str(name),
        "n_judgements": r.get("n_judgements"),
        "anchors": r.get("anchors"),
        "flagged": flagged,
        "drift_text": drift_text,
        "calibrations": _calibrations_text(r.get("calibrations")) if "calibrations" in r else None,
        "drift_chart": drift_charts.get(str(name)),
        "other": kv_rows(r, skip=_RATER_KNOWN) + kv_rows(drift, skip=("flagged", "metric", "direction",
                                                                          "first_flag_at")),
    }


def _tally_row(c: Mapping[str, Any], pair: str) -> dict[str, Any]:
    """One tally: wins per generator, ties, sides shown, and the share only if the report gives one."""
    wins = _d(c.get("wins"))
    gens = list(wins) or [g.strip() for g in pair.split(" vs ", 1)]
    share = _d(c.get("share"))
    share_text = " · ".join(f"{k} {fmt_share(v)}" for k, v in share.items()) if share else ""
    return {
        "n": fmt_num(c.get("n")),
        "wins": [(str(g), fmt_num(wins.get(g)) if g in wins else "—") for g in gens],
        "both": fmt_num(c.get("both")),
        "neither": fmt_num(c.get("neither")),
        "left": fmt_num(c.get("left")),
        "right": fmt_num(c.get("right")),
        "share": share_text,
        "note": str(c.get("note") or ""),
        "other": kv_rows(c, skip=("n", "wins", "both", "neither", "left", "right", "share", "note")),
    }


def _with_interval(d: Mapping[str, Any], key: str, interval_key: str, n: Any) -> Est:
    """A bare number plus a sibling {low, high} dict, as pairwise judges report them."""
    e = est_of(d, key)
    iv = _d(d.get(interval_key))
    note = e.note
    if e.estimate is None and not note:
        note = str(iv.get("note") or d.get("note") or "") or None
    if iv.get("n") is not None:
        n = iv.get("n")
    return Est(e.estimate, e.low if e.low is not None else _num(iv.get("low")),
               e.high if e.high is not None else _num(iv.get("high")), e.n if e.n is not None else n,
               note, e.present or bool(iv))


def _side_row(name: str, d: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": name, "left": fmt_num(d.get("left")), "right": fmt_num(d.get("right")),
            "n": fmt_num(d.get("n") if d.get("n") is not None else
                         (d.get("left") or 0) + (d.get("right") or 0) if "left" in d else None),
            "share_left": fmt_share(d.get("share_left")) if d.get("share_left") is not None else "",
            "p": fmt_p(d.get("p_value")),
            "p_adjusted": fmt_p(d.get("p_adjusted")) if "p_adjusted" in d else "",
            "flagged": bool(d.get("flagged")), "note": str(d.get("note") or "")}


_PAIRWISE_KNOWN = ("cells", "generator_pairs", "bradley_terry", "bradley_terry_by_case", "position_bias",
                   "rater_alpha", "rater_kappas", "rater_kappas_detail", "flagged_raters", "judges",
                   "settings", "majority_counts", "bradley_terry_note")


def _pairwise_view(p: Any) -> dict[str, Any] | None:
    p = _d(p)
    if not p:
        return None
    cells = _d(p.get("cells"))
    rows = []
    for cid in sorted(cells, key=str):  # cases alphabetical, never by a score
        for pair in sorted(_d(cells[cid]), key=str):
            rows.append({"case_id": str(cid), "pair": str(pair), **_tally_row(_d(_d(cells[cid])[pair]), str(pair))})
    gp = _d(p.get("generator_pairs"))
    gen_pairs = [{"pair": str(k), "n_cells": fmt_num(_d(v).get("n_cells")), **_tally_row(_d(v), str(k))}
                 for k, v in sorted(gp.items(), key=lambda kv: str(kv[0]))]
    bt = _d(p.get("bradley_terry"))
    bt_rows = [{"name": str(g), "est": est_of(bt, g)} for g in sorted(bt, key=str)]
    by_case = _d(p.get("bradley_terry_by_case"))
    bt_gens = sorted({str(g) for c in by_case.values() for g in _d(c)} | {str(g) for g in bt})
    bt_cases = [{"case_id": str(cid), "cells": [est_of(_d(by_case[cid]), g) for g in bt_gens]}
                for cid in sorted(by_case, key=str)]
    pb = _d(p.get("position_bias"))
    by_rater = [_side_row(str(k), _d(v)) for k, v in sorted(_d(pb.get("by_rater")).items(), key=lambda kv: str(kv[0]))]
    judges = []
    for jname, j in _d(p.get("judges")).items():
        j = _d(j)
        jpb = _d(j.get("position_bias"))
        judges.append({
            "name": str(jname), "n": j.get("n"),
            "agreement": _with_interval(j, "agreement_with_majority", "agreement_interval", j.get("n")),
            "kappa": _with_interval(j, "kappa_vs_majority", "kappa_interval", j.get("n")),
            "macro_f1": fmt_num(j.get("macro_f1")) if "macro_f1" in j else "—",
            "n_no_majority": fmt_num(j.get("n_no_majority")) if "n_no_majority" in j else "—",
            "n_without_humans": fmt_num(j.get("n_without_humans")) if "n_without_humans" in j else "—",
            "position_bias": _side_row(str(jname), jpb) if jpb else None,
            "other": kv_rows(j, skip=("n", "agreement_with_majority", "kappa_vs_majority", "agreement_interval",
                                      "kappa_interval", "n_no_majority", "n_without_humans", "position_bias",
                                      "macro_f1", "note")),
        })
    detail = _d(p.get("rater_kappas_detail"))
    kappas = _d(p.get("rater_kappas"))
    rater_kappas = []
    for key in sorted(set(detail) | set(kappas), key=str):
        a, _, b = str(key).partition("|")
        e = est_of(detail, key) if key in detail else est_of(kappas, key)
        rater_kappas.append({"a": a, "b": b, "est": e})
    flagged = p.get("flagged_raters", pb.get("flagged_raters")) or []
    ra = _d(p.get("rater_alpha"))
    settings = _d(p.get("settings"))
    return {
        "cells": rows,
        "generator_pairs": gen_pairs,
        "bradley_terry": bt_rows,
        "bradley_terry_note": p.get("bradley_terry_note"),
        "bt_gens": bt_gens,
        "bt_pooled": [est_of(bt, g) for g in bt_gens],
        "bt_cases": bt_cases,
        "position_bias": {"present": bool(pb), **_side_row("all raters", pb)},
        "multiplicity": pb.get("multiplicity"),
        "by_rater": by_rater,
        "rater_alpha": est_of(p, "rater_alpha"),
        "rater_alpha_meta": kv_rows(ra, skip=("estimate", "low", "high", "n", "note")),
        "rater_kappas": rater_kappas,
        "flagged_raters": [str(x) for x in flagged] if isinstance(flagged, (list, tuple)) else [fmt_any(flagged)],
        "majority_counts": kv_rows(p.get("majority_counts")),
        "judges": judges,
        "min_count": settings.get("min_count"),
        "settings": kv_rows(settings),
        "note": str(p.get("note")) if p.get("note") else None,
        "other": kv_rows(p, skip=_PAIRWISE_KNOWN + ("note",)),
    }


def _n_boot(report: Mapping[str, Any]) -> Any:
    holders = (report, _d(report.get("settings")), _d(report.get("meta")),
               _d(_d(report.get("pairwise")).get("settings")))
    for holder in holders:
        for key in ("n_boot", "bootstrap", "n_bootstrap"):
            if holder.get(key) is not None:
                return holder.get(key)
    return None


_TOP_KNOWN = ("study", "rubric", "metrics", "findings", "raters", "pairwise", "verdict", "generators",
              "systematic_findings", "n_boot", "settings", "generated_at", "schema", "schema_version",
              "definitions", "seed", "n_perm")


def build_view(report: Mapping[str, Any], *, thumbnails: Mapping[str, bytes] | None = None,
               generated_at: str | None = None, with_charts: bool = True) -> dict[str, Any]:
    """The report dict as the rows the template lays out (also handy for tests)."""
    rubric = _d(report.get("rubric"))
    metrics = dict(_d(report.get("metrics")))
    verdict = report.get("verdict")
    verdict_rows: list[tuple[str, str]] = []
    if isinstance(verdict, Mapping) and ("human_alpha" in verdict or "judges" in verdict):
        # the report model gives the verdict the figures of a metric: show it as one
        key = "verdict" if "verdict" not in metrics else "verdict (all rules)"
        metrics[key] = {"label": "verdict (all rules)", **verdict}
    elif isinstance(verdict, Mapping):
        verdict_rows = kv_rows(verdict)
    elif verdict is not None:
        verdict_rows = [("verdict", fmt_any(verdict))]
    judge_order: list[str] = []
    for m in metrics.values():
        for j in _d(_d(m).get("judges")):
            if j not in judge_order:
                judge_order.append(j)
    thumbs: dict[str, str] = {}
    for key, data in (thumbnails or {}).items():
        if not data:
            continue
        small = shrink_thumbnail(bytes(data))
        if small is not None:
            thumbs[str(key)] = _charts.png_data_uri(small[0], small[1])
    chart_set = _charts.render_all(report, metrics) if with_charts else {"agreement": None, "bradley_terry": None,
                                                                "drift": {}}
    raters = _d(report.get("raters"))
    findings = [v for v in (_finding_view(f, thumbs) for f in (report.get("findings") or [])) if v]
    version = str(rubric.get("version") or "")
    return {
        "study": str(report.get("study") or "study"),
        "rubric_id": str(rubric.get("id") or "—"),
        "rubric_title": rubric.get("title"),
        "rubric_version": version,
        "rubric_version_short": version[:12] if version else "—",
        "n_boot": _n_boot(report),
        "generated_at": generated_at or str(report.get("generated_at") or "")
        or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "verdict": verdict_rows,
        "seed": report.get("seed"),
        "n_perm": report.get("n_perm"),
        "definitions": [(str(k).replace("_", " "), fmt_any(v)) for k, v in _d(report.get("definitions")).items()],
        "judge_names": [str(j) for j in judge_order],
        "metrics": [_metric_view(k, _d(m), judge_order) for k, m in metrics.items()],
        "findings": findings,
        "n_findings_with_thumb": sum(1 for f in findings if f.get("thumb")),
        "systematic": [_systematic_view(f) for f in (report.get("systematic_findings") or [])],
        "generators": _generators_view(report.get("generators")),
        "raters": [_rater_view(n, r, chart_set["drift"]) for n, r in sorted(raters.items(), key=lambda kv: str(kv[0]))],
        "rater_tables": [t for t in (_rater_matrix(raters, k, title) for k, title in _RATER_MATRICES) if t],
        "fatigue": _fatigue_table(raters),
        "pairwise": _pairwise_view(report.get("pairwise")),
        "charts": chart_set,
        "other": kv_rows(report, skip=_TOP_KNOWN),
    }


# --- rendering ------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATE_DIR)),
        autoescape=True,  # every template, whatever its file name: rater and judge text is untrusted
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = fmt_num
    env.filters["p"] = fmt_p
    env.filters["share"] = fmt_share
    return env


def render_html(report: Mapping[str, Any], *, thumbnails: Mapping[str, bytes] | None = None,
                generated_at: str | None = None) -> str:
    """The full report as one self-contained HTML page.

    `thumbnails` maps item_id (or display code) to image bytes; they are shrunk,
    stripped of metadata and embedded beside the findings for that item.
    """
    view = build_view(report, thumbnails=thumbnails, generated_at=generated_at)
    return _environment().get_template("report.html.j2").render(v=view)


def write_html(report: Mapping[str, Any], path: str | os.PathLike[str], thumbnails: Mapping[str, bytes] | None = None,
               *, generated_at: str | None = None) -> Path:
    """Render and write atomically; the old file stays if rendering fails."""
    html = render_html(report, thumbnails=thumbnails, generated_at=generated_at)
    return atomic_write_text(path, html, encoding="utf-8")
