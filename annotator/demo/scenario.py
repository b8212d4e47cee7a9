"""The demo study's content: cases, generator truths, two judges, and file writers.
(Over 500 lines on purpose: the demo's cases, truths and judge are one story; its writers read the
same tables.)

Everything is deterministic given a seed. Truths follow from what was drawn
(`images.ScreenSpec`), not from a table, so a truth and its picture cannot
drift apart. The demo's image file names reveal the generator on purpose
(`out/gen-beta_ui_checkout_1.png`): the app's blinding tests check that such
names never reach a rater. The shipped anchor set uses neutral names.

Values use the typed forms of `annotator.domain.rubric.parse_value`: "PASS" /
"FAIL" for gates, int for scales, a sorted tuple of options for tags.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.task import TaskState
from ..domain.rubric import FAIL, PASS
from .images import (
    GENERATOR_DEFECTS,
    GENERATORS,
    LOGO_DEFECTS,
    TARGETS,
    Design,
    Field,
    ScreenSpec,
    Section,
    drawn_at,
    generate_spec,
    logo_spec,
    png_bytes,
    render_logo_edit,
    render_mockup,
)

__all__ = [
    "ANCHOR_SEED",
    "ANCHOR_PICKS",
    "DEMO_CASES",
    "DEMO_SEED",
    "GENERATORS",
    "GENERATOR_DEFECTS",
    "JUDGE_NAME",
    "LENIENT_FALSE_PASS",
    "STAMP_JUDGE_NAME",
    "LOGO_GENERATORS",
    "UI_METRICS",
    "DemoCase",
    "DemoFiles",
    "case_by_id",
    "item_seed",
    "lenient_confidence",
    "lenient_judge",
    "careful_judge",
    "rubber_stamp_judge",
    "logo_truth",
    "rationale",
    "spec_for",
    "truth",
    "truth_from_spec",
    "write_anchor_set",
    "write_demo_inputs",
    "write_logo_edit_inputs",
]

DEMO_SEED = 7
ANCHOR_SEED = 501
JUDGE_NAME = "demo-lenient-judge"
MOCKUPS = "mockups"  # the demo build's first stage (services/demo.py STAGES): drawing them
LENIENT_FALSE_PASS = 0.30  # share of truly failing gates the lenient judge calls PASS
UI_METRICS = (
    "instruction_following",
    "layout_hierarchy",
    "text_rendering",
    "ui_affordance",
    "failure_tags",
)
GATES = ("instruction_following", "text_rendering")
SCALES = ("layout_hierarchy", "ui_affordance")
# The ui_mockup rubric's English option labels (its options_en; a test keeps them equal): an
# anchor's rationale is read by a rater, who sees words, not option ids.
TAG_WORDS = {
    "wrong_screen_type": "wrong screen type",
    "missing_required_section": "missing required section",
    "text_unreadable_or_garbled": "text unreadable or garbled",
    "misspelled_text": "misspelled text",
    "broken_layout": "broken layout",
    "inconsistent_style": "inconsistent style",
    "non_ui_artifacts": "artefacts that are not UI",
}
# Tags that a PASS on the gate contradicts: a judge that passes the gate drops them.
GATE_TAGS = {
    "instruction_following": ("missing_required_section", "wrong_screen_type"),
    "text_rendering": ("misspelled_text", "text_unreadable_or_garbled"),
}


@dataclass(frozen=True)
class DemoCase:
    case_id: str
    design: Design
    slice: str = "mobile"

    @property
    def prompt(self) -> str:
        d = self.design
        names = [f"'{s.title}'" for s in d.sections]
        listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        return (
            f"A mobile {d.screen} screen titled '{d.title}' with the sections {listed}, "
            f"and a primary call-to-action button labelled '{d.cta}'."
        )

    @property
    def criteria(self) -> str:
        d = self.design
        return (
            f"It is a {d.screen} screen. Required sections: "
            f"{'; '.join(s.title for s in d.sections)}. "
            f"The call to action reads exactly '{d.cta}' and is the one obvious primary action. "
            "Fields look editable and buttons look pressable."
        )


def _f(kind: str, label: str = "", value: str = "") -> Field:
    return Field(kind, label, value)


DEMO_CASES: tuple[DemoCase, ...] = (
    DemoCase(
        "ui_login",
        Design(
            "login",
            "Sign in",
            (
                Section(
                    "Account",
                    (
                        _f("input", "Email", "~name@example.com"),
                        _f("password", "Password"),
                        _f("link", "Forgot password?"),
                    ),
                ),
                Section(
                    "Other options",
                    (_f("link", "Continue with Google"), _f("link", "Continue with Apple")),
                ),
            ),
            "Sign in",
            nav="menu",
        ),
    ),
    DemoCase(
        "ui_checkout",
        Design(
            "checkout",
            "Checkout",
            (
                Section(
                    "Order summary",
                    (
                        _f("row", "Ceramic mug x2", "$24.00"),
                        _f("row", "Linen napkins", "$12.50"),
                        _f("row", "Shipping", "$4.90"),
                        _f("total", "Total", "$41.40"),
                    ),
                ),
                Section(
                    "Shipping",
                    (
                        _f("input", "Address", "12 Harbour Street, Leeds"),
                        _f("link", "Delivery|Standard, 3-5 days"),
                    ),
                ),
                Section(
                    "Payment",
                    (
                        _f("input", "Card number", "~1234 5678 9012 3456"),
                        _f("checkbox", "Save card for next time", "on"),
                    ),
                ),
            ),
            "Place order",
        ),
    ),
    DemoCase(
        "ui_signup",
        Design(
            "signup",
            "Create account",
            (
                Section(
                    "Profile",
                    (
                        _f("input", "Full name", "~Ada Lovelace"),
                        _f("input", "Email", "~ada@example.com"),
                    ),
                ),
                Section(
                    "Security", (_f("password", "Password"), _f("password", "Confirm password"))
                ),
                Section(
                    "Preferences",
                    (
                        _f("checkbox", "Email me product news", "off"),
                        _f("checkbox", "I accept the terms", "on"),
                    ),
                ),
            ),
            "Create account",
        ),
    ),
    DemoCase(
        "ui_settings",
        Design(
            "settings",
            "Settings",
            (
                Section(
                    "Notifications",
                    (
                        _f("toggle", "Push notifications", "on"),
                        _f("toggle", "Email digest", "on"),
                        _f("toggle", "SMS alerts", "off"),
                    ),
                ),
                Section(
                    "Privacy",
                    (_f("toggle", "Private profile", "off"), _f("link", "Blocked accounts|3")),
                ),
                Section("Account", (_f("link", "Change password"), _f("link", "Language|English"))),
            ),
            "Save changes",
        ),
    ),
    DemoCase(
        "ui_dashboard",
        Design(
            "dashboard",
            "Dashboard",
            (
                Section(
                    "Overview",
                    (
                        _f(
                            "stats",
                            "",
                            "Revenue=$12.4k=+12% vs last week;Orders=318=+4% vs last week",
                        ),
                    ),
                ),
                Section("Sales this week", (_f("chart", "", "5,7,4,8,6,9,11"),)),
                Section(
                    "Recent orders",
                    (
                        _f("item", "Maya Chen|2 items · today", "$58.00"),
                        _f("item", "Tom Okafor|1 item · today", "$19.90"),
                        _f("item", "Lena Roth|4 items · yesterday", "$112.30"),
                    ),
                ),
            ),
            "New report",
            nav="menu",
        ),
    ),
    DemoCase(
        "ui_product",
        Design(
            "product page",
            "Ceramic mug",
            (
                Section("Product details", (_f("photo"), _f("row", "Stoneware, 350 ml", "$12.00"))),
                Section(
                    "Delivery",
                    (_f("row", "Free delivery", "Fri 14 Jun"), _f("row", "Returns", "30 days")),
                ),
                Section(
                    "Reviews",
                    (
                        _f("rating", "4.6", "128 reviews"),
                        _f("text", "", "\u201cKeeps coffee hot, lovely glaze.\u201d"),
                    ),
                ),
            ),
            "Add to cart",
        ),
    ),
)


def case_by_id(case_id: str) -> DemoCase:
    for c in DEMO_CASES:
        if c.case_id == case_id:
            return c
    raise KeyError(case_id)


# ---- truth --------------------------------------------------------------------------


def item_seed(seed: int, variant: int) -> int:
    """The render seed of variant `variant` in a study seeded with `seed`."""
    return seed * 100 + variant


def spec_for(case: DemoCase, generator: str, variant: int, *, seed: int = DEMO_SEED) -> ScreenSpec:
    return generate_spec(case.design, generator, item_seed(seed, variant))


def truth_from_spec(spec: ScreenSpec) -> dict[str, Any]:
    """The ui_mockup answers an expert gives this drawing (the demo's ground truth).

    layout: 5, minus 1 for a title out of line; a gamma layout (uneven gaps,
    small off-side call to action) is 3, and 2 with an overlapping section.
    affordance: 5, minus 1 for underline-only fields, minus 2 for a faint
    outline button.
    """
    st = spec.style
    tags: set[str] = set()
    instruction = PASS
    if spec.dropped_sections:
        instruction = FAIL
        tags.add("missing_required_section")
    text = PASS
    if spec.cta_misspelled:
        text = FAIL
        tags.add("misspelled_text")
    if st.cta_align != "full" or len(set(st.gaps)) > 1:
        layout = 2 if st.overlap else 3
        if st.overlap:
            tags.add("broken_layout")
    else:
        layout = 4 if st.title_offset else 5
    affordance = 5 - (1 if st.flat_fields else 0) - (2 if st.cta_style == "ghost" else 0)
    return {
        "instruction_following": instruction,
        "layout_hierarchy": layout,
        "text_rendering": text,
        "ui_affordance": affordance,
        "failure_tags": tuple(sorted(tags)),
    }


def truth(case: DemoCase, generator: str, variant: int, *, seed: int = DEMO_SEED) -> dict[str, Any]:
    """ui_mockup ground truth of `generator`'s render `variant` of `case`."""
    return truth_from_spec(spec_for(case, generator, variant, seed=seed))


def rationale(spec: ScreenSpec) -> dict[str, str]:
    """One sentence per metric saying why `truth_from_spec(spec)` holds."""
    t = truth_from_spec(spec)
    d, st = spec.design, spec.style
    out: dict[str, str] = {}
    if spec.dropped_sections:
        out["instruction_following"] = (
            f"The required section '{spec.dropped_sections[0]}' is missing from the screen."
        )
    else:
        out["instruction_following"] = (
            f"It is a {d.screen} screen with every required section "
            f"({', '.join(s.title for s in d.sections)})."
        )
    layout = t["layout_hierarchy"]
    if layout >= 4:
        out["layout_hierarchy"] = (
            "Evenly spaced section cards and a full-width primary button at the bottom make the "
            "flow obvious."
            if layout == 5
            else "Clear structure and primary action, but one section title is out of line with its "
            "card."
        )
    else:
        issues = ["the call to action is a small button off to the left"]
        if len(spec.sections) == 2:
            issues.append("the gap between the two sections is cramped")
        elif len(spec.sections) > 2:
            issues.append("the gaps between sections are cramped and uneven")
        if st.overlap:
            issues.append("a section title overlaps the card above it")
        text = ", ".join(issues[:-1]) + " and " + issues[-1] if len(issues) > 1 else issues[0]
        out["layout_hierarchy"] = text[0].upper() + text[1:] + "."
    if spec.cta_misspelled:
        out["text_rendering"] = f"The call to action reads '{spec.cta}' instead of '{d.cta}'."
    else:
        out["text_rendering"] = (
            f"Every label and the call to action '{spec.cta}' are spelled correctly and legible."
        )
    parts = []
    if st.cta_style == "ghost":
        parts.append("the call to action is a faint outline that barely reads as a button")
    else:
        parts.append("the call to action is a filled, clearly pressable button")
    if st.flat_fields:
        parts.append("the input fields are bare underlines rather than boxes")
    elif any(f.kind in ("input", "password") for s in spec.sections for f in s.fields):
        parts.append("the input fields are outlined boxes")
    sentence = "; ".join(parts)
    out["ui_affordance"] = sentence[0].upper() + sentence[1:] + "."
    if t["failure_tags"]:
        words = ", ".join(TAG_WORDS.get(tag, tag.replace("_", " ")) for tag in t["failure_tags"])
        out["failure_tags"] = f"Tagged: {words}, as described above."
    else:
        out["failure_tags"] = "No failure tag applies."
    return out


# ---- the lenient judge ------------------------------------------------------------------


def lenient_judge(truth: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
    """Answers of the synthetic lenient judge for an item with this truth.

    A truly failing gate is called PASS with probability LENIENT_FALSE_PASS
    (a passing gate stays PASS); scales are raised by 0, 1 or 2 (1 on average)
    and clipped to 0..5; tags contradicted by a gate it passed are dropped.
    Returns the metric values plus "reason", a short sentence.
    """
    out: dict[str, Any] = {}
    passed_anyway: list[str] = []
    for g in GATES:
        v = truth[g]
        if v == FAIL and rng.random() < LENIENT_FALSE_PASS:
            v = PASS
            passed_anyway.append(g)
        out[g] = v
    for s in SCALES:
        bump = rng.choices((0, 1, 2), weights=(1, 2, 1))[0]
        out[s] = max(0, min(5, int(truth[s]) + bump))
    dropped = {t for g in passed_anyway for t in GATE_TAGS[g]}
    kept = (t for t in truth.get("failure_tags", ()) if t not in dropped)
    out["failure_tags"] = tuple(sorted(kept))
    if out["instruction_following"] == FAIL:
        reason = "A required section appears to be missing."
    elif out["text_rendering"] == FAIL:
        reason = "The button label looks misspelled."
    elif out["layout_hierarchy"] >= 4:
        reason = "All requested sections are present and the screen looks polished."
    else:
        reason = "All requested sections are present, though the spacing is a little uneven."
    out["reason"] = reason
    return out


def lenient_confidence(
    truth: Mapping[str, Any], answers: Mapping[str, Any], rng: random.Random
) -> dict[str, float]:
    """The lenient judge's stated confidence in each gate and scale answer: high where it is
    right, lower (and overlapping) where it is wrong, so a threshold can separate some of its
    right answers from its wrong ones, never all."""
    conf: dict[str, float] = {}
    for g in GATES:
        right = answers[g] == truth[g]
        conf[g] = round(rng.uniform(0.8, 0.995) if right else rng.uniform(0.55, 0.9), 3)
    for sc in SCALES:
        off = abs(int(answers[sc]) - int(truth[sc]))
        lo, hi = ((0.7, 0.97), (0.45, 0.85), (0.3, 0.7))[min(off, 2)]
        conf[sc] = round(rng.uniform(lo, hi), 3)
    return conf


# The same judge under an earlier prompt (its other version): stricter on gates, nearer on
# scales, and asked for its confidence in each answer. Its latest version, the lenient one,
# is a regression the version comparison shows item by item.
CAREFUL_FALSE_PASS = 0.08
CAREFUL_MODEL = "demo-judge-model"
CAREFUL_PROMPT = "ui_mockup judge prompt, revision 1: check every required section first"


def careful_judge(
    truth: Mapping[str, Any], rng: random.Random
) -> tuple[dict[str, Any], str, dict[str, float]]:
    """(values, reason, confidences) of the judge's earlier version for an item with this truth."""
    values: dict[str, Any] = {}
    conf: dict[str, float] = {}
    passed_anyway: list[str] = []
    for g in GATES:
        v = truth[g]
        wrong = v == FAIL and rng.random() < CAREFUL_FALSE_PASS
        if wrong:
            v = PASS
            passed_anyway.append(g)
        values[g] = v
        conf[g] = round(rng.uniform(0.6, 0.95) if wrong else rng.uniform(0.7, 0.99), 3)
    for sc in SCALES:
        bump = rng.choices((0, 1), weights=(3, 1))[0]
        values[sc] = max(0, min(5, int(truth[sc]) + bump))
        conf[sc] = round(rng.uniform(0.45, 0.85) if bump else rng.uniform(0.5, 0.9), 3)
    dropped = {t for g in passed_anyway for t in GATE_TAGS[g]}
    values["failure_tags"] = tuple(
        sorted(t for t in truth.get("failure_tags", ()) if t not in dropped)
    )
    if values["instruction_following"] == FAIL:
        reason = "A required section is missing."
    elif values["text_rendering"] == FAIL:
        reason = "A label is misspelled."
    else:
        reason = "Every required section is present."
    return values, reason, conf


# A second judge, one that adds nothing: a rubber stamp. It passes every gate and gives every
# scale its top score whatever the screen shows, always equally sure. Its scores do not vary, so
# the debiased figures give it no weight (lambda 0: "the judge added nothing here: humans only")
# on every figure, where the lenient judge adds labels' worth on some. A coin would be as useless,
# but on 24 labels its correlation with the humans comes out above 0 on some figures by chance
# (6 of the 15 gate, scale and verdict figures when tried), which the report reads as "cannot
# help yet", not as adding nothing. One confidence for every answer, as such a judge states it:
# it separates no right answer from a wrong one, so certified selective judging abstains (a
# confidence drawn at random let conformal alignment accept 32 items on UI affordance by chance).
# Named to sort after JUDGE_NAME: where the report reads one judge (the summary's ranking,
# conformal alignment, the certified cascade's first stage) it takes the first by name.
STAMP_JUDGE_NAME = "demo-rubber-stamp-judge"
STAMP_CONFIDENCE = 0.95
STAMP_MODEL = "demo-stamp-model"
STAMP_PROMPT = "ui_mockup judge prompt, baseline: is this a good screen?"


def rubber_stamp_judge() -> tuple[dict[str, Any], str, dict[str, float]]:
    """(values, reason, confidences) of the rubber-stamp judge, the same for every item: PASS on
    the gates, 5 on the scales; no failure tag (it never sees a failure)."""
    values: dict[str, Any] = {g: PASS for g in GATES} | {sc: 5 for sc in SCALES}
    conf = dict.fromkeys(values, STAMP_CONFIDENCE)
    return values, "Looks good: a clean, complete screen.", conf


# ---- writers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DemoFiles:
    manifest: Path
    judge_csv: Path
    truths: dict[str, dict[str, Any]]  # item_id -> ui_mockup truth
    items: dict[str, dict[str, Any]] = field(default_factory=dict)  # item_id -> manifest record


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def _manifest_record(
    item_id: str,
    case: DemoCase,
    generator: str,
    images: list[str],
    seed: int,
    *,
    inputs: list[str] | None = None,
    mask: str | None = None,
    prompt: str | None = None,
    criteria: str | None = None,
    case_id: str | None = None,
    slice_: str | None = None,
) -> dict[str, Any]:
    return {
        "item_id": item_id,
        "case_id": case_id or case.case_id,
        "prompt": prompt or case.prompt,
        "criteria": criteria or case.criteria,
        "generator": generator,
        "images": images,
        "inputs": inputs or [],
        "mask": mask,
        "seed": seed,
        "slice": slice_ or case.slice,
        "text": None,
    }


def _format(value: Any) -> str:
    return ";".join(value) if isinstance(value, (tuple, list)) else str(value)


def write_demo_inputs(
    folder: Path,
    *,
    seed: int = DEMO_SEED,
    variants_per_case: int = 2,
    task: TaskState | None = None,
) -> DemoFiles:
    """Write the demo's PNGs (folder/out/), manifest.jsonl (5.2) and judge.csv (5.3), counting
    each PNG to `task` as MOCKUPS.

    Items are case x generator x variant, listed in a seeded shuffled order
    with neutral ids (demo-001 ...). The judge CSV has one row per item and
    metric; a failure_tags row only when the judge picked a tag, because an
    empty cell means "no answer" in 5.3.
    """
    combos = [
        (c, g, v) for c in DEMO_CASES for g in GENERATORS for v in range(1, variants_per_case + 1)
    ]
    return _write_inputs(Path(folder), combos, seed, "demo-order", 1, task)


# per case and generator: 270 items, with the 36 rated first four times the human sample
# (services/demo.py DEMO_SAMPLE: 24 of each generator's 102)
JUDGE_ONLY_VARIANTS = 15
JUDGE_ONLY_SCALE = 0.5  # pixels per point (180 x 380 px): small, with their text


def write_judge_only_inputs(
    folder: Path,
    *,
    seed: int = DEMO_SEED,
    first_variant: int = 3,
    variants: int = JUDGE_ONLY_VARIANTS,
    first_number: int = 1001,
) -> DemoFiles:
    """The demo's judge-only set: further variants of every case and generator (made as the
    human-rated ones are), scored by the same lenient judge and rated by no human, so the
    debiased figures have what a real study has: a judge on many more outputs than the humans
    rate. Drawn small (JUDGE_ONLY_SCALE: images.drawn_at) with their text, since a rater dealt one
    from the random human sample is asked about its text rendering, which needs real text; ids
    demo-1001 ... in their own seeded order; each variant a cell of its own (its prompt names
    it), so the judge votes on 3 pairs per variant."""
    combos = [
        (c, g, v)
        for c in DEMO_CASES
        for g in GENERATORS
        for v in range(first_variant, first_variant + variants)
    ]
    with drawn_at(JUDGE_ONLY_SCALE, greeked=False):
        return _write_inputs(
            Path(folder), combos, seed, "demo-judge-only-order", first_number, own_cells=True
        )


def _write_inputs(
    folder: Path,
    combos: list[tuple[DemoCase, str, int]],
    seed: int,
    order_salt: str,
    first_number: int,
    task: TaskState | None = None,
    *,
    own_cells: bool = False,
) -> DemoFiles:
    """`own_cells`: each variant's prompt names it, so a case's variants are cells of their own
    and pairs form within a variant (3 per cell), not across all of a case's variants (the
    judge-only set's 15 variants would give 675 pairs per case)."""
    out_dir = folder / "out"
    out_dir.mkdir(parents=True, exist_ok=True)
    order = random.Random(f"{order_salt}|{seed}")
    order.shuffle(combos)
    judge_rng = random.Random(f"demo-judge|{seed}" + ("" if first_number == 1 else "|extra"))
    records, truths, rows = [], {}, []
    for n, (case, gen, variant) in enumerate(combos, start=first_number):
        item_id = f"demo-{n:03d}"
        spec = spec_for(case, gen, variant, seed=seed)
        rel = f"out/{gen}_{case.case_id}_{variant}.png"
        (folder / rel).write_bytes(png_bytes(render_mockup(spec).image))
        if task is not None:
            task.count(n - first_number + 1, len(combos), MOCKUPS)
        prompt = f"{case.prompt} (variant {variant})" if own_cells else None
        records.append(
            _manifest_record(item_id, case, gen, [rel], item_seed(seed, variant), prompt=prompt)
        )
        t = truth_from_spec(spec)
        truths[item_id] = t
        j = lenient_judge(t, judge_rng)
        # its own generator: the answers stay those of the judge without confidences
        conf = lenient_confidence(t, j, random.Random(f"demo-judge-confidence|{seed}|{item_id}"))
        for metric in UI_METRICS:
            value = j[metric]
            if metric == "failure_tags" and not value:
                continue
            c = conf.get(metric)
            rows.append(
                (item_id, JUDGE_NAME, metric, _format(value), j["reason"], "" if c is None else c)
            )
    manifest = folder / "manifest.jsonl"
    _write_jsonl(manifest, records)
    judge_csv = folder / "judge.csv"
    with judge_csv.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(("item_id", "judge", "metric", "value", "reason", "confidence"))
        w.writerows(rows)
    return DemoFiles(manifest, judge_csv, truths, {r["item_id"]: r for r in records})


# ---- logo edits -----------------------------------------------------------------------------

LOGO_GENERATORS = {
    "edit-alpha": "none",
    "edit-beta": "changes_outside_mask",
    "edit-gamma": "glyph_corrupted",
}


def logo_truth(defect: str | None) -> dict[str, Any]:
    """logo_edit rubric answers for an edit with `defect` (see images.LOGO_DEFECTS)."""
    defect = defect or "none"
    if defect not in LOGO_DEFECTS:
        raise ValueError(f"unknown logo defect '{defect}'")
    return {
        "none": {
            "edit_intent_correctness": 5,
            "non_target_invariance": 5,
            "character_style_integrity": 5,
            "failure_tags": (),
        },
        "changes_outside_mask": {
            "edit_intent_correctness": 3,
            "non_target_invariance": 1,
            "character_style_integrity": 5,
            "failure_tags": ("changes_outside_mask", "colour_shift"),
        },
        "glyph_corrupted": {
            "edit_intent_correctness": 4,
            "non_target_invariance": 5,
            "character_style_integrity": 2,
            "failure_tags": ("glyph_corrupted",),
        },
    }[defect]


def write_logo_edit_inputs(folder: Path, *, seeds: tuple[int, ...] = (3, 4)) -> Path:
    """Write logo_edit items (input, mask, one output per edit generator); returns the manifest.

    Files: folder/in/logo_<seed>.png, folder/in/logo_<seed>_mask.png,
    folder/out/<generator>_logo_<seed>.png and folder/logo_manifest.jsonl.
    """
    folder = Path(folder)
    (folder / "in").mkdir(parents=True, exist_ok=True)
    (folder / "out").mkdir(parents=True, exist_ok=True)
    records = []
    n = 0
    for s in seeds:
        spec = logo_spec(s)
        case_id = f"logo_recolour_{s}"
        prompt = (
            f"Recolour the wordmark '{spec.brand}' to {spec.target_name} "
            f"(RGB {TARGETS[spec.target_name]}). Change nothing outside the mask."
        )
        criteria = (
            "Only the masked wordmark changes colour; the emblem, the background and the "
            "letterforms stay exactly as in the input."
        )
        src_rel, mask_rel = f"in/logo_{s}.png", f"in/logo_{s}_mask.png"
        for gen, defect in LOGO_GENERATORS.items():
            src, mask, out = render_logo_edit(s, defect)
            if gen == "edit-alpha":
                (folder / src_rel).write_bytes(src)
                (folder / mask_rel).write_bytes(mask)
            rel = f"out/{gen}_logo_{s}.png"
            (folder / rel).write_bytes(out)
            n += 1
            records.append(
                {
                    "item_id": f"logo-{n:03d}",
                    "case_id": case_id,
                    "prompt": prompt,
                    "criteria": criteria,
                    "generator": gen,
                    "images": [rel],
                    "inputs": [src_rel],
                    "mask": mask_rel,
                    "seed": s,
                    "slice": "logo",
                    "text": None,
                }
            )
    manifest = folder / "logo_manifest.jsonl"
    _write_jsonl(manifest, records)
    return manifest


# ---- the shipped anchor set ------------------------------------------------------------------

# (case_id, generator, variant) rendered with ANCHOR_SEED; chosen to cover every
# gate value, layout 2-5, affordance 2-5 and each planted tag.
ANCHOR_PICKS: tuple[tuple[str, str, int], ...] = (
    ("ui_login", "gen-alpha", 1),
    ("ui_checkout", "gen-beta", 1),
    ("ui_signup", "gen-gamma", 1),
    ("ui_settings", "gen-alpha", 1),
    ("ui_dashboard", "gen-beta", 1),
    ("ui_product", "gen-gamma", 1),
    ("ui_checkout", "gen-alpha", 2),
    ("ui_login", "gen-gamma", 2),
    ("ui_signup", "gen-beta", 2),
    ("ui_dashboard", "gen-alpha", 2),
    ("ui_settings", "gen-gamma", 2),
    ("ui_product", "gen-beta", 2),
    ("ui_product", "gen-alpha", 3),
    ("ui_checkout", "gen-gamma", 3),
)


def write_anchor_set(folder: Path) -> Path:
    """Write anchors.jsonl and images/anchor-ui-NN.png under `folder`; returns the JSONL path.

    This is what produced anchors/ui_mockup/ (see its README for the format).
    """
    folder = Path(folder)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    records = []
    for n, (case_id, gen, variant) in enumerate(ANCHOR_PICKS, start=1):
        case = case_by_id(case_id)
        spec = spec_for(case, gen, variant, seed=ANCHOR_SEED)
        item_id = f"anchor-ui-{n:02d}"
        rel = f"images/{item_id}.png"
        (folder / rel).write_bytes(png_bytes(render_mockup(spec).image))
        rec = _manifest_record(item_id, case, gen, [rel], item_seed(ANCHOR_SEED, variant))
        ref = truth_from_spec(spec)
        rec["reference"] = {k: list(v) if isinstance(v, tuple) else v for k, v in ref.items()}
        rec["rationale"] = rationale(spec)
        records.append(rec)
    path = folder / "anchors.jsonl"
    _write_jsonl(path, records)
    return path
