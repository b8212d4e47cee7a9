from pathlib import Path

import pytest

from annotator.domain.errors import InputError
from annotator.domain.rubric import CANNOT_JUDGE, parse_rubric, parse_value
from annotator.domain.verdict import compile_rules
from annotator.ingest.rubrics import load_rubric

REPO = Path(__file__).resolve().parents[2]
BASE = """
id = "t"
title = "T"
[[metrics]]
key = "ok"
kind = "gate"
[[metrics]]
key = "quality"
kind = "scale"
min = 0
max = 5
[[metrics]]
key = "tags"
kind = "tags"
options = ["a", "b"]
[[metrics]]
key = "style"
kind = "choice"
options = ["flat", "skeuo"]
"""


def rubric(extra: str = "", rules: str = '["ok == PASS", "quality >= 3"]'):
    return parse_rubric(BASE + extra + f"\n[verdict]\nrules = {rules}\n", source="r.toml")


@pytest.mark.parametrize("name", ["ui_mockup", "marketing_flyer", "virtual_try_on", "logo_edit"])
def test_shipped_rubrics_parse_with_tags_reason_and_rules(name):
    r = load_rubric(REPO / "rubrics" / f"{name}.toml")
    kinds = {m.kind for m in r.metrics}
    assert {"tags", "text"} <= kinds
    assert r.rules and len(r.version) == 64
    compile_rules(r)


def test_shipped_verdicts_follow_the_workflows():
    vto = load_rubric(REPO / "rubrics" / "virtual_try_on.toml")
    ok = {"facial_similarity": 3, "outfit_fidelity": 5, "body_shape_preservation": 4}
    assert compile_rules(vto).evaluate(ok) == "PASS"
    assert compile_rules(vto).evaluate({**ok, "outfit_fidelity": 2}) == "FAIL"
    logo = load_rubric(REPO / "rubrics" / "logo_edit.toml")
    good = {
        "edit_intent_correctness": 4,
        "non_target_invariance": 5,
        "character_style_integrity": 4,
    }
    assert compile_rules(logo).evaluate(good) == "PASS"
    assert compile_rules(logo).evaluate({**good, "non_target_invariance": 3}) == "FAIL"
    ui = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
    answers = {
        "instruction_following": "PASS",
        "text_rendering": "PASS",
        "layout_hierarchy": 3,
        "ui_affordance": 3,
    }
    assert compile_rules(ui).evaluate(answers) == "PASS"
    assert compile_rules(ui).evaluate({**answers, "text_rendering": "FAIL"}) == "FAIL"


def test_version_is_canonical_not_textual():
    a = rubric()
    b = parse_rubric(
        "# a comment\n"
        + BASE.replace('title = "T"', 'title   =   "T"')
        + '\n[verdict]\nrules = ["ok == PASS", "quality >= 3"]\n'
    )
    assert a.version == b.version
    c = rubric(rules='["ok == PASS", "quality >= 4"]')
    assert c.version != a.version


def test_verdict_grammar_and_unknowns():
    r = rubric(rules='["ok == PASS and (quality >= 3 or style == skeuo)", "not tags has a"]')
    v = compile_rules(r)
    assert v.evaluate({"ok": "PASS", "quality": 1, "style": "skeuo", "tags": ()}) == "PASS"
    assert v.evaluate({"ok": "PASS", "quality": 4, "style": "flat", "tags": ("a",)}) == "FAIL"
    # an unknown never becomes a pass; a known failure still decides
    assert v.evaluate({"ok": CANNOT_JUDGE, "quality": 4, "tags": ()}) is None
    assert v.evaluate({"ok": "FAIL", "quality": CANNOT_JUDGE, "tags": ()}) == "FAIL"


@pytest.mark.parametrize(
    "text, needle",
    [
        (BASE.replace('kind = "gate"', 'kind = "slider"'), "unknown kind 'slider'"),
        (BASE + '[[metrics]]\nkey = "ok"\nkind = "gate"\n', "duplicate metric key 'ok'"),
        (
            BASE + '[verdict]\nrules = ["missing == PASS"]\n',
            "names no metric of this rubric: 'missing'",
        ),
        (BASE + '[verdict]\nrules = ["ok >= 3"]\n', "gate 'ok' can only be compared"),
        (BASE.replace("min = 0\nmax = 5", "min = 5\nmax = 5"), "min (5) must be below max (5)"),
        (BASE + '[verdict]\nrules = ["quality >= 9"]\n', "outside quality's scale"),
        ("id = 1", "'id' in the rubric must be a string"),
        ("id = [", "not valid TOML"),
    ],
)
def test_bad_rubrics_get_one_line_errors(text, needle):
    with pytest.raises(InputError) as e:
        parse_rubric(text, source="bad.toml")
    msg = str(e.value)
    assert needle in msg and "bad.toml" in msg and "\n" not in msg


def test_parse_value_types_and_ranges():
    r = rubric()
    assert parse_value(r.metric("ok"), "pass") == "PASS"
    assert parse_value(r.metric("quality"), "4") == 4
    assert parse_value(r.metric("quality"), "") == CANNOT_JUDGE
    assert parse_value(r.metric("tags"), "b;a") == ("a", "b")
    assert parse_value(r.metric("tags"), "") == ()
    with pytest.raises(InputError, match="outside quality's scale 0..5"):
        parse_value(r.metric("quality"), "6", source="x.csv", line=3)
    with pytest.raises(InputError, match="not a tag"):
        parse_value(r.metric("tags"), "c")


def test_a_metric_is_required_by_its_kinds_default_unless_it_says(monkeypatch):
    """`required` defaults to the kind's `required_default` (free text: optional), read from the
    kind, so a kind added with its own default needs no branch in the rubric parser."""
    from annotator.domain import kinds

    note = '\n[[metrics]]\nkey = "note"\nkind = "text"\n'
    by_key = {m.key: m for m in rubric(note).metrics}
    assert by_key["note"].required is False and by_key["quality"].required is True
    assert {m.key: m for m in rubric(note + "required = true\n").metrics}["note"].required
    monkeypatch.setattr(kinds.KINDS["text"], "required_default", True)
    monkeypatch.setattr(kinds.KINDS["scale"], "required_default", False)
    by_key = {m.key: m for m in rubric(note).metrics}
    assert by_key["note"].required is True and by_key["quality"].required is False
