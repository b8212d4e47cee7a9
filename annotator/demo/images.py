"""Synthetic UI-mockup screenshots and logo edits, drawn with Pillow only.
(Over 500 lines on purpose: one renderer of a small widget vocabulary whose layout constants belong
together.)

The demo study and the tests need images with *known* defects, so nothing here
is random at draw time: a generator turns the design a prompt asks for
(`Design`) into the exact thing it draws (`ScreenSpec`), using an RNG seeded
from (generator, screen, seed); `render_mockup` then draws that spec. The same
inputs give the same pixels and, through `png_bytes`, the same PNG bytes (no
text chunks, no timestamps). Text uses Pillow's built-in scalable font
(`ImageFont.load_default(size=...)`), so no font files or network are needed.

Return types: `render_mockup` -> `Rendered` (a PIL Image plus the boxes it drew,
so tests can look for the defects in the pixels); `mockup_png` and
`render_logo_edit` -> PNG bytes.

The three demo generators and their planted defects (`GENERATOR_DEFECTS`):
gen-alpha draws the design with small style variations; gen-beta misspells the
call to action; gen-gamma drops one required section and lays the screen out
worse (uneven gaps, a small left-aligned call to action, sometimes a faint
outline button or a section overlapping the card above).
"""

from __future__ import annotations

import io
import math
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

# Logical phone size in points; drawn at SCALE pixels per point (540 x 1140 px).
WIDTH, HEIGHT = 360, 760
SCALE = 1.5


GREEKED = False  # text drawn as grey bars (drawn_at(..., greeked=True))


@contextmanager
def drawn_at(scale: float, *, greeked: bool = False) -> Iterator[None]:
    """Render at another scale for a while, text as grey bars with `greeked` (the demo's
    judge-only items: ten times the human sample, which no human opens in the demo, drawn as
    small wireframes because rendering text is most of a mockup's cost and the build must stay
    short). Not thread-safe: the demo is built on one thread."""
    global SCALE, GREEKED
    old, SCALE, old_g, GREEKED = SCALE, scale, GREEKED, greeked
    try:
        yield
    finally:
        SCALE, GREEKED = old, old_g


GENERATORS = ("gen-alpha", "gen-beta", "gen-gamma")
GENERATOR_DEFECTS = {
    "gen-alpha": "Follows the prompt; small layout variations (spacing, accent colour, corners), "
    "now and then a section title out of line or fields drawn as bare underlines.",
    "gen-beta": "Good layout, but the call-to-action text is misspelled "
    "(for example 'Sing in', 'Place oder').",
    "gen-gamma": "Drops one required section; weaker layout: uneven gaps, a small left-aligned "
    "call to action, sometimes a faint outline button or a section overlapping the card above.",
}

BG = (244, 245, 248)
CARD = (255, 255, 255)
INK = (28, 32, 40)
MUTED = (110, 117, 130)
LINE = (226, 229, 235)
FIELD_BORDER = (196, 202, 212)
OFF = (209, 213, 220)
GOLD = (245, 158, 11)
GREEN = (22, 163, 74)
ACCENTS = (
    (37, 99, 235),
    (5, 150, 105),
    (124, 58, 237),
    (219, 39, 119),
    (234, 88, 12),
    (13, 148, 136),
)

# Misspellings a careless text renderer makes; unknown labels get two letters swapped.
MISSPELLINGS = {
    "Sign in": ("Sing in", "Sign ni", "Sigin in"),
    "Place order": ("Place oder", "Plcae order", "Place ordre"),
    "Checkout": ("Chekout", "Checkuot", "Chcekout"),
    "Create account": ("Create acount", "Craete account", "Create accuont"),
    "Save changes": ("Save chnages", "Svae changes", "Save chages"),
    "New report": ("New reprot", "New raport", "Nwe report"),
    "Add to cart": ("Add to crat", "Add ot cart", "Add to carr"),
}


# ---- what a prompt asks for, and what a generator draws --------------------------


@dataclass(frozen=True)
class Field:
    """One control or content row inside a section card.

    kind: input | password | toggle | checkbox | row | total | stats | chart |
    photo | rating | link | item | text. `value` holds the kind's content
    (placeholder text, "on"/"off", a price, "3,5,4" bar heights, ...).
    """

    kind: str
    label: str = ""
    value: str = ""


@dataclass(frozen=True)
class Section:
    title: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Design:
    """The screen a prompt asks for: type, title, required sections, call to action."""

    screen: str
    title: str
    sections: tuple[Section, ...]
    cta: str
    nav: str = "back"  # back | menu: the app-bar icon


@dataclass(frozen=True)
class Style:
    accent: tuple[int, int, int] = ACCENTS[0]
    radius: int = 12
    margin: int = 18
    gaps: tuple[int, ...] = (16,)  # gap before section i+1 (cycled)
    title_offset: int = 0  # >0: one section title out of line with its card (minor issue)
    offset_section: int = 0
    flat_fields: bool = False  # inputs drawn as bare underlines (less obviously editable)
    cta_style: str = "filled"  # filled | ghost (faint outline, reads poorly as a button)
    cta_align: str = "full"  # full | left (small, off to the side)
    overlap: bool = False  # a section drawn over the bottom of the card above it


@dataclass(frozen=True)
class ScreenSpec:
    """Exactly what gets drawn: the design as one generator rendered it."""

    design: Design
    generator: str
    seed: int
    title: str
    sections: tuple[Section, ...]
    cta: str
    style: Style = field(default_factory=Style)

    @property
    def dropped_sections(self) -> tuple[str, ...]:
        drawn = {s.title for s in self.sections}
        return tuple(s.title for s in self.design.sections if s.title not in drawn)

    @property
    def cta_misspelled(self) -> bool:
        return self.cta != self.design.cta


def misspell(text: str, rng: random.Random) -> str:
    """A near-miss spelling of `text` (never `text` itself)."""
    options = MISSPELLINGS.get(text)
    if options:
        return rng.choice(options)
    letters = [
        i
        for i in range(len(text) - 1)
        if text[i].isalpha() and text[i + 1].isalpha() and text[i] != text[i + 1]
    ]
    if not letters:
        return text + text[-1]
    i = rng.choice(letters)
    return text[:i] + text[i + 1] + text[i] + text[i + 2 :]


def _has_inputs(sections: tuple[Section, ...]) -> bool:
    return any(f.kind in ("input", "password") for s in sections for f in s.fields)


def generate_spec(design: Design, generator: str, seed: int) -> ScreenSpec:
    """What `generator` draws for `design` with `seed` (deterministic)."""
    if generator not in GENERATORS:
        raise ValueError(f"unknown generator '{generator}'; use one of {', '.join(GENERATORS)}")
    # A string seed is hashed with SHA-512 by `random`, so it does not depend on PYTHONHASHSEED.
    rng = random.Random(f"{generator}|{design.screen}|{seed}")
    gap = rng.choice((14, 16, 18, 20))
    style = Style(
        accent=rng.choice(ACCENTS),
        radius=rng.choice((8, 10, 12, 14)),
        margin=rng.choice((16, 18, 20)),
        gaps=(gap,),
    )
    sections = design.sections
    cta = design.cta
    if generator in ("gen-alpha", "gen-beta"):
        if rng.random() < 0.25:
            style = replace(style, title_offset=12, offset_section=rng.randrange(len(sections)))
        # Underline-only fields are a (minor) affordance issue only where there are fields.
        style = replace(style, flat_fields=rng.random() < 0.25 and _has_inputs(sections))
        if generator == "gen-beta":
            cta = misspell(design.cta, rng)
    else:
        drop = rng.randrange(len(sections))
        sections = sections[:drop] + sections[drop + 1 :]
        style = replace(
            style,
            gaps=(rng.choice((4, 6)), rng.choice((28, 34))),
            cta_align="left",
            cta_style="ghost" if rng.random() < 0.5 else "filled",
            overlap=len(sections) > 1 and rng.random() < 0.35,
            flat_fields=rng.random() < 0.25 and _has_inputs(sections),
        )
    return ScreenSpec(design, generator, seed, design.title, sections, cta, style)


# ---- drawing ----------------------------------------------------------------------

# pixel bounds (Pillow types textbbox's as floats)
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Rendered:
    """A drawn screen and where things went (pixel boxes, x0 y0 x1 y1)."""

    image: Image.Image
    cta_box: Box
    cta_text_box: Box
    section_boxes: tuple[Box, ...]  # title + card of each drawn section
    marker_boxes: tuple[Box, ...]  # the accent bar left of each section title


@lru_cache(maxsize=64)
def font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled scalable font at `px` pixels (cached: loading it is not free)."""
    return ImageFont.load_default(size=px)


FIELD_HEIGHT = {
    "input": 64,
    "password": 64,
    "toggle": 44,
    "checkbox": 40,
    "row": 34,
    "total": 40,
    "stats": 80,
    "chart": 132,
    "photo": 150,
    "rating": 40,
    "link": 44,
    "item": 52,
    "text": 40,
}
STATUS_H, APPBAR_H, TOP_GAP, TITLE_H, CARD_PAD = 24, 52, 16, 30, 8
CTA_H, CTA_BOTTOM = 52, 46


class _Painter:
    """Draws in logical points; converts to pixels in one place."""

    def __init__(self, spec: ScreenSpec) -> None:
        self.spec = spec
        self.st = spec.style
        self.img = Image.new("RGB", (px(WIDTH), px(HEIGHT)), BG)
        self.d = ImageDraw.Draw(self.img)

    def box(self, x0: float, y0: float, x1: float, y1: float) -> Box:
        return (px(x0), px(y0), px(x1), px(y1))

    def rect(self, x0, y0, x1, y1, fill=None, outline=None, radius=0, width=1.0) -> None:
        self.d.rounded_rectangle(
            self.box(x0, y0, x1, y1),
            radius=px(radius),
            fill=fill,
            outline=outline,
            width=max(1, px(width)),
        )

    def text(self, x, y, s, size, fill=INK, anchor="lm", bold=False) -> Box:
        if GREEKED:  # a bar as long as the text would be, placed by the same anchor
            w, h = 0.5 * size * len(s), 0.7 * size
            x0 = x - (w / 2 if anchor[0] == "m" else w if anchor[0] == "r" else 0)
            y0 = y - (h / 2 if anchor[1] == "m" else h if anchor[1] in "bds" else 0)
            box = self.box(x0, y0, x0 + w, y0 + h)
            self.d.rectangle(box, fill=LINE if fill == INK else fill)
            return box
        f = font(px(size))
        stroke = 0.45 * SCALE if bold else 0
        self.d.text(
            (px(x), px(y)),
            s,
            font=f,
            fill=fill,
            anchor=anchor,
            stroke_width=stroke,
            stroke_fill=fill,
        )
        return self.d.textbbox((px(x), px(y)), s, font=f, anchor=anchor, stroke_width=stroke)

    def line(self, pts, fill, width=1.0) -> None:
        self.d.line(
            [(px(x), px(y)) for x, y in pts], fill=fill, width=max(1, px(width)), joint="curve"
        )

    def circle(self, cx, cy, r, fill=None, outline=None, width=1.0) -> None:
        self.d.ellipse(
            self.box(cx - r, cy - r, cx + r, cy + r),
            fill=fill,
            outline=outline,
            width=max(1, px(width)),
        )


def px(v: float) -> int:
    return round(v * SCALE)


def _tint(c: tuple[int, int, int], amount: float) -> tuple[int, int, int]:
    """Mix colour `c` with white: amount 0 -> c, 1 -> white."""
    return tuple(round(v + (255 - v) * amount) for v in c)  # type: ignore[return-value]


def _chrome(p: _Painter) -> None:
    d = p.spec.design
    p.text(18, STATUS_H / 2 + 1, "9:41", 12, bold=True)
    for i in range(4):  # signal bars
        h = 4 + i * 2
        p.rect(WIDTH - 74 + i * 5, 17 - h, WIDTH - 71 + i * 5, 17, fill=INK)
    p.rect(WIDTH - 46, 8, WIDTH - 24, 18, outline=INK, radius=3, width=1)
    p.rect(WIDTH - 44, 10, WIDTH - 30, 16, fill=INK, radius=1)
    p.rect(WIDTH - 23, 11, WIDTH - 21, 15, fill=INK)
    top = STATUS_H
    p.rect(0, top, WIDTH, top + APPBAR_H, fill=CARD)
    p.line([(0, top + APPBAR_H), (WIDTH, top + APPBAR_H)], LINE)
    mid = top + APPBAR_H / 2
    if d.nav == "menu":
        for dy in (-6, 0, 6):
            p.line([(18, mid + dy), (36, mid + dy)], INK, 2)
    else:
        p.line([(28, mid - 8), (20, mid), (28, mid + 8)], INK, 2)
    p.text(WIDTH / 2, mid, p.spec.title, 17, anchor="mm", bold=True)
    p.rect(WIDTH / 2 - 67, HEIGHT - 10, WIDTH / 2 + 67, HEIGHT - 5, fill=INK, radius=3)


def _chevron(p: _Painter, x: float, y: float, colour=MUTED) -> None:
    p.line([(x - 4, y - 6), (x + 2, y), (x - 4, y + 6)], colour, 1.6)


def _field(p: _Painter, f: Field, x0: float, x1: float, y: float) -> None:
    """Draw one field in the strip x0..x1 starting at y (height FIELD_HEIGHT[f.kind])."""
    st, acc = p.st, p.st.accent
    h = FIELD_HEIGHT[f.kind]
    mid = y + h / 2
    if f.kind in ("input", "password"):
        p.text(x0, y + 10, f.label, 11, MUTED)
        by0, by1 = y + 20, y + 58
        if st.flat_fields:
            p.line([(x0, by1), (x1, by1)], FIELD_BORDER, 1.2)
        else:
            p.rect(x0, by0, x1, by1, fill=CARD, outline=FIELD_BORDER, radius=min(st.radius, 10))
        ty = (by0 + by1) / 2
        if f.kind == "password":
            for i in range(8):
                p.circle(x0 + 14 + i * 11, ty, 3.2, fill=INK)
        else:
            placeholder = f.value.startswith("~")
            p.text(x0 + 12, ty, f.value.lstrip("~"), 14, MUTED if placeholder else INK)
    elif f.kind == "toggle":
        p.text(x0, mid, f.label, 14)
        on = f.value == "on"
        p.rect(x1 - 42, mid - 12, x1, mid + 12, fill=acc if on else OFF, radius=12)
        p.circle(x1 - 12 if on else x1 - 30, mid, 9.5, fill=CARD)
    elif f.kind == "checkbox":
        on = f.value == "on"
        if on:
            p.rect(x0, mid - 10, x0 + 20, mid + 10, fill=acc, radius=5)
            p.line([(x0 + 5, mid), (x0 + 9, mid + 4), (x0 + 15, mid - 5)], CARD, 2)
        else:
            p.rect(x0, mid - 10, x0 + 20, mid + 10, outline=FIELD_BORDER, radius=5, width=1.5)
        p.text(x0 + 30, mid, f.label, 14)
    elif f.kind in ("row", "total"):
        big = f.kind == "total"
        if big:
            p.line([(x0, y + 2), (x1, y + 2)], LINE)
        p.text(x0, mid, f.label, 15 if big else 14, INK if big else MUTED, bold=big)
        p.text(x1, mid, f.value, 15 if big else 14, INK, anchor="rm", bold=big)
    elif f.kind == "link":
        label, _, value = f.label.partition("|")
        p.text(x0, mid, label, 14, acc if not value else INK)
        if value:
            p.text(x1 - 16, mid, value, 13, MUTED, anchor="rm")
        _chevron(p, x1 - 4, mid)
    elif f.kind == "stats":
        cells = [c.split("=") for c in f.value.split(";")]
        w = (x1 - x0 - 10) / len(cells)
        for i, (label, value, delta) in enumerate(cells):
            cx0 = x0 + i * (w + 10)
            p.rect(cx0, y + 4, cx0 + w, y + h - 4, fill=_tint(acc, 0.9), radius=st.radius - 2)
            p.text(cx0 + 12, y + 20, label, 11, MUTED)
            p.text(cx0 + 12, y + 44, value, 21, INK, bold=True)
            p.text(cx0 + 12, y + 64, delta, 11, GREEN if delta.startswith("+") else MUTED)
    elif f.kind == "chart":
        bars = [int(v) for v in f.value.split(",")]
        days = "MTWTFSS"
        n = len(bars)
        step = (x1 - x0) / n
        base = y + h - 22
        for i, v in enumerate(bars):
            bx = x0 + i * step + step * 0.22
            top = base - v * 9.5
            colour = acc if i == n - 1 else _tint(acc, 0.6)
            p.rect(bx, top, bx + step * 0.56, base, fill=colour, radius=4)
            p.text(bx + step * 0.28, base + 11, days[i % 7], 10, MUTED, anchor="mm")
        p.line([(x0, base), (x1, base)], LINE)
    elif f.kind == "photo":
        p.rect(x0, y + 2, x1, y + h - 4, fill=_tint(acc, 0.88), radius=st.radius - 2)
        cx, cy = (x0 + x1) / 2, y + h / 2
        p.d.ellipse(p.box(cx - 52, cy + 38, cx + 52, cy + 50), fill=_tint(acc, 0.7))
        p.circle(cx + 34, cy + 4, 17, outline=_tint(acc, 0.15), width=7)  # mug handle
        p.rect(cx - 38, cy - 34, cx + 30, cy + 44, fill=_tint(acc, 0.15), radius=10)
        p.rect(cx - 38, cy - 34, cx + 30, cy - 24, fill=_tint(acc, 0.35), radius=5)
    elif f.kind == "rating":
        stars = float(f.label)
        for i in range(5):
            sx = x0 + 9 + i * 21
            pts = []
            for k in range(10):
                r = 9 if k % 2 == 0 else 4
                a = -math.pi / 2 + k * math.pi / 5
                pts.append((px(sx + r * math.cos(a)), px(mid + r * math.sin(a))))
            p.d.polygon(pts, fill=GOLD if i < round(stars) else OFF)
        p.text(x0 + 116, mid, f"{f.label}  ·  {f.value}", 13, MUTED)
    elif f.kind == "item":
        initial = f.label[:1]
        p.circle(x0 + 18, mid, 18, fill=_tint(acc, 0.82))
        p.text(x0 + 18, mid, initial, 15, acc, anchor="mm", bold=True)
        name, _, sub = f.label.partition("|")
        p.text(x0 + 46, mid - 8, name, 14)
        p.text(x0 + 46, mid + 10, sub, 11, MUTED)
        p.text(x1, mid, f.value, 14, anchor="rm", bold=True)
    elif f.kind == "text":
        p.text(x0, mid, f.value, 13, MUTED)
    else:
        raise ValueError(f"unknown field kind '{f.kind}'")


def section_height(section: Section) -> int:
    return TITLE_H + 2 * CARD_PAD + sum(FIELD_HEIGHT[f.kind] for f in section.fields)


def render_mockup(spec: ScreenSpec) -> Rendered:
    """Draw `spec` as a portrait phone screenshot (WIDTH x HEIGHT points at SCALE)."""
    p = _Painter(spec)
    st = spec.style
    _chrome(p)
    left, right = st.margin, WIDTH - st.margin
    y = STATUS_H + APPBAR_H + TOP_GAP
    sections, markers = [], []
    for i, sec in enumerate(spec.sections):
        if i:
            y += st.gaps[(i - 1) % len(st.gaps)]
            if st.overlap and i == 1:
                y -= 26  # pulls this section's title over the card above
        indent = st.title_offset if i == st.offset_section else 0
        card_top = y + TITLE_H
        card_bottom = y + section_height(sec)
        p.rect(left, card_top, right, card_bottom, fill=CARD, outline=LINE, radius=st.radius)
        markers.append(p.box(left, y + 6, left + 3, y + 20))
        p.rect(left, y + 6, left + 3, y + 20, fill=st.accent)
        p.text(left + 10 + indent, y + 13, sec.title.upper(), 12, INK, bold=True)
        fy = card_top + CARD_PAD
        for j, f in enumerate(sec.fields):
            same_as_previous = j and sec.fields[j - 1].kind == f.kind
            if same_as_previous and f.kind in ("row", "toggle", "link", "item"):
                p.line([(left + 14, fy), (right - 14, fy)], LINE)
            _field(p, f, left + 14, right - 14, fy)
            fy += FIELD_HEIGHT[f.kind]
        sections.append(p.box(left, y, right, card_bottom))
        y = card_bottom
    cta_top = HEIGHT - CTA_BOTTOM - CTA_H
    cta_right = right if st.cta_align == "full" else left + (right - left) * 0.45
    if st.cta_style == "filled":
        p.rect(left, cta_top, cta_right, cta_top + CTA_H, fill=st.accent, radius=st.radius)
        tcolour = CARD
    else:
        faint = _tint(st.accent, 0.55)
        p.rect(left, cta_top, cta_right, cta_top + CTA_H, outline=faint, radius=st.radius, width=1)
        tcolour = faint
    tbox = p.text(
        (left + cta_right) / 2, cta_top + CTA_H / 2, spec.cta, 16, tcolour, anchor="mm", bold=True
    )
    return Rendered(
        p.img,
        p.box(left, cta_top, cta_right, cta_top + CTA_H),
        tbox,
        tuple(sections),
        tuple(markers),
    )


def png_bytes(img: Image.Image) -> bytes:
    """Encode without metadata chunks: identical pixels give identical bytes."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


def mockup_png(design: Design, generator: str, seed: int) -> bytes:
    return png_bytes(render_mockup(generate_spec(design, generator, seed)).image)


# ---- logo edits -------------------------------------------------------------------

LOGO_W, LOGO_H = 512, 256
LOGO_DEFECTS = ("none", "changes_outside_mask", "glyph_corrupted")
BRANDS = ("NORTHWIND", "Lumen", "KESTREL", "Brightly", "ATLAS")
INKS = ((23, 37, 84), (17, 24, 39), (30, 64, 175))
TARGETS = {
    "orange": (234, 88, 12),
    "teal": (13, 148, 136),
    "crimson": (190, 18, 60),
    "violet": (109, 40, 217),
}


@dataclass(frozen=True)
class LogoSpec:
    brand: str
    ink: tuple[int, int, int]
    emblem: tuple[int, int, int]
    target_name: str
    shape: str  # circle | square | diamond


def logo_spec(seed: int) -> LogoSpec:
    rng = random.Random(f"logo|{seed}")
    ink = rng.choice(INKS)
    target = rng.choice(sorted(TARGETS))
    # The emblem must stay clearly distinct from the new wordmark colour.
    t = TARGETS[target]
    emblem = rng.choice(
        [a for a in ACCENTS if sum(abs(x - y) for x, y in zip(a, t, strict=True)) > 150]
    )
    shape = rng.choice(("circle", "square", "diamond"))
    return LogoSpec(rng.choice(BRANDS), ink, emblem, target, shape)


def _logo_font_px(brand: str) -> int:
    return 58 if len(brand) <= 7 else 48


def _draw_logo(
    spec: LogoSpec,
    word_colour: tuple[int, int, int],
    emblem_colour: tuple[int, int, int],
    bg: tuple[int, int, int] = (255, 255, 255),
) -> tuple[Image.Image, Box]:
    img = Image.new("RGB", (LOGO_W, LOGO_H), bg)
    d = ImageDraw.Draw(img)
    cx, cy, r = 92, LOGO_H // 2, 52
    if spec.shape == "circle":
        d.ellipse((cx - r, cy - r, cx + r, cy + r), fill=emblem_colour)
    elif spec.shape == "square":
        d.rounded_rectangle((cx - r, cy - r, cx + r, cy + r), radius=18, fill=emblem_colour)
    else:
        d.polygon(
            [(cx, cy - r - 6), (cx + r + 6, cy), (cx, cy + r + 6), (cx - r - 6, cy)],
            fill=emblem_colour,
        )
    # A mountain mark cut out of the emblem, so it reads as a logo rather than a dot.
    d.polygon(
        [
            (cx - 30, cy + 22),
            (cx - 6, cy - 20),
            (cx + 8, cy + 2),
            (cx + 16, cy - 8),
            (cx + 32, cy + 22),
        ],
        fill=bg,
    )
    f = font(_logo_font_px(spec.brand))
    pos = (170, cy)
    d.text(
        pos,
        spec.brand,
        font=f,
        fill=word_colour,
        anchor="lm",
        stroke_width=1.2,
        stroke_fill=word_colour,
    )
    bbox = d.textbbox(pos, spec.brand, font=f, anchor="lm", stroke_width=1.2)
    return img, bbox


def logo_mask_box(spec: LogoSpec) -> Box:
    _, (x0, y0, x1, y1) = _draw_logo(spec, spec.ink, spec.emblem)
    pad = 10
    return (x0 - pad, y0 - pad, min(LOGO_W, x1 + pad), y1 + pad)


def render_logo_images(
    seed: int, defect: str | None = None
) -> tuple[Image.Image, Image.Image, Image.Image]:
    """(input logo, mask "L" image 255 = edit here, edited output) as PIL Images.

    The edit recolours the wordmark to `logo_spec(seed).target_name`. defect:
    "none" applies it exactly inside the mask; "changes_outside_mask" also
    shifts the emblem colour and tints the background; "glyph_corrupted"
    applies the recolour but damages one letter (inside the mask).
    """
    defect = defect or "none"
    if defect not in LOGO_DEFECTS:
        raise ValueError(f"unknown logo defect '{defect}'; use one of {', '.join(LOGO_DEFECTS)}")
    spec = logo_spec(seed)
    source, _ = _draw_logo(spec, spec.ink, spec.emblem)
    box = logo_mask_box(spec)
    mask = Image.new("L", source.size, 0)
    ImageDraw.Draw(mask).rectangle(box, fill=255)
    target = TARGETS[spec.target_name]
    recoloured, word_box = _draw_logo(spec, target, spec.emblem)
    # Inside the mask take the recoloured pixels, outside keep the source exactly.
    out = Image.composite(recoloured, source, mask)
    if defect == "changes_outside_mask":
        drifted = tuple(min(255, c + 60) for c in spec.emblem)
        whole, _ = _draw_logo(spec, target, drifted, bg=(250, 246, 236))  # type: ignore[arg-type]
        out = whole
    elif defect == "glyph_corrupted":
        rng = random.Random(f"glyph|{seed}")
        x0, y0, x1, y1 = word_box
        n = max(1, len(spec.brand))
        k = rng.randrange(n)
        gx0 = x0 + (x1 - x0) * k / n
        gx1 = gx0 + (x1 - x0) / n
        gy = y0 + (y1 - y0) * rng.uniform(0.3, 0.55)
        d = ImageDraw.Draw(out)
        # Erase a band through one letter and smear a slanted stroke across it.
        d.rectangle(
            (round(gx0), round(gy), round(gx1), round(gy + (y1 - y0) * 0.22)), fill=(255, 255, 255)
        )
        d.line([(gx0 + 2, y1 - 4), (gx1 + 6, y0 + 6)], fill=target, width=5)
    return source, mask, out


def render_logo_edit(seed: int, defect: str | None = None) -> tuple[bytes, bytes, bytes]:
    """PNG bytes of (input logo, mask, edited output); see `render_logo_images`."""
    src, mask, out = render_logo_images(seed, defect)
    return png_bytes(src), png_bytes(mask), png_bytes(out)
