"""The report as one self-contained HTML file.

No external resource of any kind: CSS is inline, charts and thumbnails are data
URIs, so the file can be mailed, archived or opened offline and still looks the
same. Jinja2 autoescapes everything, so a rater's reason or a judge's reply that
contains markup is shown as text, never run.

The report dict (docs/design.md 5.5) is turned into a small "view" of plain rows
first; the template only lays rows out. Keys the view does not know are still
shown (under "other figures"), so a figure added to the report model is never
silently dropped.
"""

from __future__ import annotations

import datetime as _dt
import functools
import io
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup, escape

from ..base.atomic import atomic_write_text
from . import charts as _charts
from .formatting import Est, as_dict, fmt_any, fmt_num, fmt_p, fmt_share, kv_rows
from .report_sections import SECTIONS, mark_charts_as_of, report_sections, section_views
from .sections import Bullets, Chart, ItemCard, Note, Table
from .view_agreement import judge_order, report_metrics

__all__ = ["render_html", "write_html", "build_view", "Est", "shrink_thumbnail", "TEMPLATE_DIR"]

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"
THUMB_MAX_SIDE = 320  # pixels; shown at 160 CSS px, so sharp on high-density screens


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


def _n_boot(report: Mapping[str, Any]) -> Any:
    holders = (
        report,
        as_dict(report.get("settings")),
        as_dict(report.get("meta")),
        as_dict(as_dict(report.get("pairwise")).get("settings")),
    )
    for holder in holders:
        for key in ("n_boot", "bootstrap", "n_bootstrap"):
            if holder.get(key) is not None:
                return holder.get(key)
    return None


DEFINITIONS: tuple[tuple[str, str], ...] = (
    (
        "alpha",
        "Krippendorff's alpha: 1 is perfect agreement, 0 is what chance alone gives, below 0 is "
        'systematic disagreement. 0.667 and 0.8 are the customary "tentative" and "reliable" marks.',
    ),
    (
        "[low, high]",
        "95% bootstrap interval over items. Decisions should use the conservative end. It "
        "holds the raters fixed: it says how far these raters agree, not raters in general.",
    ),
    ("n", "How many items (or judgements, or votes) a figure rests on. Read it first."),
    (
        "consensus",
        "The humans' pooled answer per item; a judge is compared with it, never with a single rater.",
    ),
    (
        "judge as rater",
        "Alpha when the judge is added as one more rater, beside alpha of the humans alone: "
        "if it barely moves, the judge sits inside the human spread. Read this gain first; alpha "
        "against the consensus flatters a judge.",
    ),
    (
        "permutation baseline",
        "Alpha after shuffling the judge's scores across items. It should sit near 0; "
        "the p-value says how often shuffling matched the real agreement.",
    ),
    (
        "undefined",
        "A statistic the data cannot give (for example everyone answered the same); the reason "
        "is shown instead of a number.",
    ),
    (
        "finding",
        "A disagreement between humans and a judge (or among humans) on one item and one metric, "
        "listed rather than averaged away.",
    ),
)


def _definitions(report_defs: Any) -> list[tuple[str, str]]:
    """The built-in glossary, with the report model's own wording where it defines the same term."""
    given = {str(k).replace("_", " "): fmt_any(v) for k, v in as_dict(report_defs).items()}
    aliases = {"permutation": "permutation baseline", "intervals": "[low, high]"}
    given = {aliases.get(k, k): v for k, v in given.items()}

    def sentence(text: str) -> str:
        text = text.strip()
        return (text[:1].upper() + text[1:]).rstrip(".") + "." if text else ""

    out = [(k, f"{v} {sentence(given.pop(k))}" if k in given else v) for k, v in DEFINITIONS]
    return out + [(k, sentence(v)) for k, v in given.items()]


_TOP_KNOWN = (
    "study",
    "rubric",
    "metrics",
    "verdict",
    "n_boot",
    "settings",
    "generated_at",
    "schema",
    "schema_version",
    "definitions",
    "seed",
    "n_perm",
    *(key for s in SECTIONS for key in s.reads),
)


def build_view(
    report: Mapping[str, Any],
    *,
    thumbnails: Mapping[str, bytes] | None = None,
    generated_at: str | None = None,
    with_charts: bool = True,
    charts_from: Mapping[str, Any] | None = None,
    charts_as_of: str | None = None,
) -> dict[str, Any]:
    """The report dict as the rows the template lays out (also handy for tests).

    A live estimate's view (the dashboard's) passes the last full report as `charts_from` and
    its time as `charts_as_of`: its charts are that report's, each marked with the time."""
    rubric = as_dict(report.get("rubric"))
    metrics = report_metrics(report)[0]
    thumbs: dict[str, str] = {}
    for key, data in (thumbnails or {}).items():
        if not data:
            continue
        small = shrink_thumbnail(bytes(data))
        if small is not None:
            thumbs[str(key)] = _charts.png_data_uri(small[0], small[1])
    version = str(rubric.get("version") or "")
    view: dict[str, Any] = {
        "study": str(report.get("study") or "study"),
        "rubric_id": str(rubric.get("id") or "—"),
        "rubric_title": rubric.get("title"),
        "rubric_version": version,
        "rubric_version_short": version[:12] if version else "—",
        "n_boot": _n_boot(report),
        "generated_at": generated_at
        or str(report.get("generated_at") or "")
        or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "seed": report.get("seed"),
        "n_perm": report.get("n_perm"),
        # the dashboard's live estimate (stats/live_estimate.py; never in a published report):
        # how many intervals it carries from the exact figures, and with how many resamples
        "live_estimate": as_dict(report.get("live_estimate")) or None,
        "definitions": _definitions(report.get("definitions")),
        "judge_names": [str(j) for j in judge_order(metrics)],
        "any_off_scale": any(
            isinstance(j, Mapping) and j.get("same_scale") is False
            for m in metrics.values()
            for j in as_dict(as_dict(m).get("judges")).values()
        ),
        "n_findings": len(report.get("findings") or []),
        # the items' pictures as data: URIs, by item id or display code (the findings' cards)
        "thumbnails": thumbs,
        # the sections of the one model (report_sections.py): their rows, then their Sections
        **section_views(report, with_charts=with_charts, charts_from=charts_from),
        "other": kv_rows(report, skip=_TOP_KNOWN),
    }
    sections = report_sections(view)
    if charts_from is not None and charts_as_of:
        sections = [mark_charts_as_of(s, charts_as_of) for s in sections]
    top = {s.key for s in SECTIONS if s.top}
    # the summary heads the page in a card; the others follow the contents in report order
    view["top_sections"] = [s for s in sections if s.key in top]
    view["sections"] = [s for s in sections if s.key not in top]
    view["section_links"] = [(s.key, s.toc) for s in SECTIONS if view.get(s.key)]
    return view


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
    env.filters["code_spans"] = _code_spans
    env.filters["png_uri"] = _charts.png_data_uri
    env.filters["css_width"] = _charts.png_css_width
    # what a Section's block is, for templates/_section.html.j2
    env.tests["table"] = lambda b: isinstance(b, Table)
    env.tests["chart"] = lambda b: isinstance(b, Chart)
    env.tests["note"] = lambda b: isinstance(b, Note)
    env.tests["bullets"] = lambda b: isinstance(b, Bullets)
    env.tests["card"] = lambda b: isinstance(b, ItemCard)
    env.filters["image_uri"] = _image_uri
    return env


_IMAGE_URI = re.compile(r"data:image/(?:png|jpeg);base64,[A-Za-z0-9+/=]+")


def _image_uri(image: bytes | str | None) -> str:
    """An item card's picture as a data: URI, or "" (the card says "no image"): bytes of a PNG or
    a JPEG, or a data: URI of one; anything else (a link, another type) is dropped, so the page
    never loads from elsewhere."""
    if isinstance(image, (bytes, bytearray)):
        mime = _sniff_mime(bytes(image))
        return _charts.png_data_uri(bytes(image), mime) if mime in _CARD_MIMES else ""
    if isinstance(image, str) and _IMAGE_URI.fullmatch(image):
        return image
    return ""


_CARD_MIMES = ("image/png", "image/jpeg")


_CODE_SPAN = re.compile(r"`([^`]+)`")


def _code_spans(text: str) -> Markup:
    """A Section's text with its `command` spans set as code: escaped first, so the only markup
    is the <code> this adds."""
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", str(escape(text))))


def render_html(
    report: Mapping[str, Any],
    *,
    thumbnails: Mapping[str, bytes] | None = None,
    generated_at: str | None = None,
) -> str:
    """The full report as one self-contained HTML page.

    `thumbnails` maps item_id (or display code) to image bytes; they are shrunk,
    stripped of metadata and embedded beside the findings for that item.
    """
    view = build_view(report, thumbnails=thumbnails, generated_at=generated_at)
    return _environment().get_template("report.html.j2").render(v=view)


def write_html(
    report: Mapping[str, Any],
    path: str | os.PathLike[str],
    thumbnails: Mapping[str, bytes] | None = None,
    *,
    generated_at: str | None = None,
) -> Path:
    """Render and write atomically; the old file stays if rendering fails."""
    html = render_html(report, thumbnails=thumbnails, generated_at=generated_at)
    return atomic_write_text(path, html, encoding="utf-8")
