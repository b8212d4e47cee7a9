"""A metric kind is one class: for every kind registered in `KINDS`, its row
of the answer form, its part of the judge's schema and reply check, its Label Studio control and
result, the import of another tool's labels and the dataset card's list of values are found, and
an answer goes out and comes back unchanged through each."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from annotator.domain.kinds import CANNOT_JUDGE, KINDS, KindSpec
from annotator.domain.rubric import Metric, Rubric, parse_rubric
from annotator.ingest.mapping import convert
from annotator.judge.prompt import system_prompt
from annotator.judge.schema import (
    ReplyError,
    judge_schema,
    schema_json,
    validate_reply,
    version_schema_text,
)
from annotator.reports.label_studio_config import item_config, metric_result
from annotator.ui.metric_rows import ROWS, MetricRow

# one metric of each kind; a kind added to KINDS without a line here fails the first test
FIELDS = {
    "gate": "",
    "scale": 'min = 0\nmax = 4\nlevels = { 4 = "Clear", 0 = "Unusable" }',
    "likert": 'points = ["Poor", "Fair", "Good"]',
    "choice": 'options = ["red", "green", "blue"]',
    "tags": 'options = ["blurry", "cropped", "garbled_text"]',
    "text": "required = false",
}


def _rubric() -> Rubric:
    metrics = "\n".join(
        f'[[metrics]]\nkey = "m_{kind}"\nkind = "{kind}"\nlabel = "The {kind}"\n{fields}\n'
        for kind, fields in FIELDS.items()
    )
    return parse_rubric(f'id = "every_kind"\ntitle = "Every kind"\n{metrics}')


RUBRIC = _rubric()


def _answers(m: Metric) -> list:
    """Typed answers of the metric: every value, for tags none, one and two, cannot judge where
    the kind takes it."""
    if not m.judgeable:
        return ["The layout is fine, the text is not."]
    if m.spec.multi:
        return [(), (m.options[0],), tuple(sorted(m.options[:2]))]
    return [*m.values(), *([CANNOT_JUDGE] if m.accepts_cannot_judge else [])]


def test_every_kind_has_a_metric_here_and_a_row_of_the_answer_form():
    assert set(FIELDS) == set(CARDS) == set(KINDS)
    assert set(ROWS) == set(KINDS)
    assert all(issubclass(ROWS[k], MetricRow) for k in KINDS)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kinds_answers_round_trip_through_label_studio_and_the_import_mapping(kind):
    m = RUBRIC.metric(f"m_{kind}")
    assert isinstance(m.spec, KindSpec) and m.spec is KINDS[kind]
    view = ET.fromstring(
        item_config(RUBRIC, images="image", text=False, criteria=False, inputs=False, mask=False)
    )
    control = next(e for e in view if e.get("name") == m.key)
    offered = [c.get("value") for c in control.findall("Choice")]
    if m.judgeable:
        assert control.tag == "Choices"
        assert offered == [t for t, _ in m.spec.choices(m)] + (
            [CANNOT_JUDGE] if m.accepts_cannot_judge else []
        )
        assert control.get("choice") == ("multiple" if m.spec.multi else "single-radio")
    else:
        assert control.tag == "TextArea" and not offered
    for answer in _answers(m):
        result = metric_result(m, m.spec.to_json(answer))
        assert result["from_name"] == m.key
        labels = result["value"]["choices" if m.judgeable else "text"]
        assert all(lab in offered for lab in labels) if m.judgeable else labels
        assert convert(m, labels, {}, "task 1") == answer, (kind, answer, labels)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kinds_part_of_the_judge_schema_takes_its_answers_and_refuses_others(kind):
    m = RUBRIC.metric(f"m_{kind}")
    schema = judge_schema(RUBRIC)
    assert json.loads(schema_json(RUBRIC)) == json.loads(version_schema_text(RUBRIC)) == schema
    if not m.judgeable:
        assert m.key not in schema["properties"]
        with pytest.raises(NotImplementedError):
            m.spec.reply_schema(m, "")
        return
    prop = dict(schema["properties"][m.key])
    assert prop.pop("description").startswith(f"The {kind}.")
    assert prop == {k: v for k, v in m.spec.reply_schema(m, "").items() if k != "description"}
    assert f"- {m.key} ({m.spec.reply_how(m)})" in system_prompt(RUBRIC)
    base = {x.key: x.spec.to_json(_answers(x)[0]) for x in RUBRIC.judged_metrics}
    for answer in _answers(m):
        reply = {"reason": "r", **base, m.key: m.spec.to_json(answer), "verdict": "PASS"}
        jsonschema.validate(reply, schema)  # what a strict server would send
        assert validate_reply(RUBRIC, json.dumps(reply)).values[m.key] == answer
    bad = {"reason": "r", **base, m.key: "not an answer", "verdict": "PASS"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    with pytest.raises(ReplyError, match=f"field '{m.key}'"):
        validate_reply(RUBRIC, json.dumps(bad))


# the dataset card's values column: the rubric's texts escaped by the card (here <...>), our ranges
CARDS = {
    "gate": "<FAIL>, <PASS>",
    "scale": "0..4",
    "likert": "<Poor>, <Fair>, <Good>",
    "choice": "<red>, <green>, <blue>",
    "tags": "<blurry>, <cropped>, <garbled_text>",
    "text": "free text",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_kinds_values_on_the_dataset_card(kind):
    m = RUBRIC.metric(f"m_{kind}")
    assert m.spec.describe_values(m, lambda t: f"<{t}>") == CARDS[kind]
