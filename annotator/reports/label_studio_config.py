"""A rubric as Label Studio labeling configs (XML), and our answers as Label Studio results.

Every metric becomes one control named by its key, so the exported tasks and a mapping
that maps each metric from its own key round-trip without a values table:
- a judged metric -> `Choices`, one `Choice` per value as its kind offers them
  (`KindSpec.choices`: "PASS", "3" with the level's text as hint, the likert point's label),
  plus "cannot_judge" where the kind accepts it (a `Rating` could not say "cannot judge", and
  a 0..5 scale has no 0 star); choice="multiple" for a multi-select kind (tags), else single;
- free text -> `TextArea`.
A pair task shows the two outputs side by side with a `Pairwise` control ("preference":
left/right) and a tie `Choices` ("preference_tie": both/neither), since Pairwise alone
cannot record a tie. Tag references: https://labelstud.io/tags/ (Choices, TextArea,
Pairwise, Image, Text, Header, View).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from ..domain.kinds import CANNOT_JUDGE
from ..domain.rubric import Metric, Rubric

PAIR_CONTROL = "preference"
TIE_CONTROL = "preference_tie"
TIES = ("both", "neither")


def _xml(view: ET.Element) -> str:
    ET.indent(view, space="  ")
    return ET.tostring(view, encoding="unicode") + "\n"


def choice_values(m: Metric) -> list[tuple[str, str]]:
    """The (value, hint) of each Choice of a metric's control, in order."""
    return m.spec.choices(m) + ([(CANNOT_JUDGE, "")] if m.accepts_cannot_judge else [])


def item_config(
    rubric: Rubric, *, images: str | None, text: bool, criteria: bool, inputs: bool, mask: bool
) -> str:
    """`images`: None (no image), "image" (one per task) or "images" (a list per task)."""
    view = ET.Element("View")
    ET.SubElement(view, "Header", value=rubric.title)
    if rubric.instructions:
        ET.SubElement(view, "Text", name="instructions", value=rubric.instructions)
    ET.SubElement(view, "Text", name="prompt", value="$prompt")
    if criteria:
        ET.SubElement(view, "Text", name="criteria", value="$criteria")
    if inputs:
        ET.SubElement(view, "Image", name="inputs", valueList="$inputs")
    if mask:
        ET.SubElement(view, "Image", name="mask", value="$mask")
    if images == "images":
        ET.SubElement(view, "Image", name="image", valueList="$images")
    elif images:
        ET.SubElement(view, "Image", name="image", value="$image")
    if text:
        ET.SubElement(view, "Text", name="output", value="$text")
    for m in rubric.metrics:
        ET.SubElement(view, "Header", value=m.label + (f" ({m.help})" if m.help else ""), size="5")
        if not m.judgeable:
            ET.SubElement(
                view,
                "TextArea",
                name=m.key,
                toName="prompt",
                editable="true",
                maxSubmissions="1",
                required="true" if m.required else "false",
            )
            continue
        ctl = ET.SubElement(
            view,
            "Choices",
            name=m.key,
            toName="prompt",
            showInline="true",
            choice="multiple" if m.spec.multi else "single-radio",
            required="true" if m.required and not m.spec.multi else "false",
        )
        for v, hint in choice_values(m):
            ET.SubElement(ctl, "Choice", {"value": v, "hint": hint} if hint else {"value": v})
    return _xml(view)


def pair_config(question: str, *, images: bool) -> str:
    view = ET.Element("View")
    ET.SubElement(view, "Header", value=question)
    ET.SubElement(view, "Text", name="prompt", value="$prompt")
    row = ET.SubElement(view, "View", style="display: flex;")
    for side in ("left", "right"):
        box = ET.SubElement(row, "View", style="flex: 1; margin: 0 0.5em;")
        if images:
            ET.SubElement(box, "Image", name=side, value=f"${side}_image")
        else:
            ET.SubElement(box, "Text", name=side, value=f"${side}_text")
    ET.SubElement(view, "Pairwise", name=PAIR_CONTROL, toName="left,right")
    tie = ET.SubElement(
        view, "Choices", name=TIE_CONTROL, toName="prompt", showInline="true", choice="single"
    )
    ET.SubElement(tie, "Choice", value="both", hint="both equally good")
    ET.SubElement(tie, "Choice", value="neither", hint="both equally bad")
    return _xml(view)


def metric_result(m: Metric, value: Any) -> dict[str, Any]:
    """One of our answers (JSON form) as a Label Studio result of the metric's control."""
    if not m.judgeable:
        return {
            "id": m.key,
            "from_name": m.key,
            "to_name": "prompt",
            "type": "textarea",
            "value": {"text": [str(value)]},
        }
    return {
        "id": m.key,
        "from_name": m.key,
        "to_name": "prompt",
        "type": "choices",
        "value": {"choices": m.spec.choice_texts(m, value)},
    }


def pair_result(choice: str) -> dict[str, Any]:
    if choice in TIES:
        return {
            "id": TIE_CONTROL,
            "from_name": TIE_CONTROL,
            "to_name": "prompt",
            "type": "choices",
            "value": {"choices": [choice]},
        }
    return {
        "id": PAIR_CONTROL,
        "from_name": PAIR_CONTROL,
        "to_name": PAIR_CONTROL,
        "type": "pairwise",
        "value": {"selected": choice},
    }
