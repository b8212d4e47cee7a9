"""Prodigy `db-out` JSONL in: tests/data/interop/prodigy/db-out.jsonl follows Prodigy's task
format (https://prodi.gy/docs/api-interfaces: `answer` accept/reject/ignore, choice tasks'
`options` and `accept`, text_input's field) and its A/B recipes (compare.py, ner_eval_ab.py
in github.com/explosion/prodigy-recipes: `mapping` says where system A and B were shown):
binary tasks one label each, a rater changing an answer later, an ignored then answered
task, a rejected choice task, and A/B tasks in the compare and the choice interface."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotator.domain.errors import InputError
from annotator.services.exports import TABLES
from annotator.services.importers import run_import
from annotator.services.study import Study
from annotator.store.answers import history_of
from annotator.store.items import item_pks

DATA = Path(__file__).resolve().parents[1] / "data" / "interop"
PR = DATA / "prodigy"


@pytest.fixture(scope="module")
def landed(tmp_path_factory):
    st = Study.create(tmp_path_factory.mktemp("pr") / "st", DATA / "rubric.toml")
    st.import_items(DATA / "items.jsonl")
    line = run_import(st, "prodigy", PR / "db-out.jsonl", map_path=str(PR / "map.toml"))
    yield st, line
    st.close()


def test_binary_and_choice_tasks_make_one_judgement_per_rater_and_item(landed):
    st, line = landed
    assert "4 judgements + 1 corrections" in line and "2 pair votes" in line
    assert (
        "1 ignored tasks" in line
        and "1 rejected tasks" in line
        and "1 A/B tasks with no choice" in line
    )
    got: dict = {}
    for r in TABLES["judgements"].rows(st):
        got.setdefault((r["item_id"], r["rater"]), {})[r["metric"]] = r["value"]
        assert r["session"] == f"eval-{r['rater']}"  # _session_id kept as the session
    assert got[("it-1", "alice")] == {
        "instruction_following": "PASS",
        "quality": "4",
        "style": "photo",
        "failure_tags": "",
        "reason": "fine",
    }
    assert got[("it-2", "alice")]["instruction_following"] == "FAIL"  # reject on a binary task
    assert got[("it-3", "bob")]["instruction_following"] == "PASS"  # ignored first, answered later
    assert ("it-4", "bob") not in got  # a rejected choice task picked nothing


def test_a_later_answer_is_a_correction_keeping_the_other_metrics(landed):
    st, _ = landed
    with st.db.read() as s:
        pk = item_pks(s, ["it-2"])["it-2"]
    chain = history_of(st.db, "alice", pk)
    assert [c["answers"]["quality"] for c in chain] == [2, 3] and chain[1]["supersedes"] == chain[
        0
    ]["id"]
    assert chain[1]["answers"]["style"] == "illustration" and chain[1]["answers"][
        "failure_tags"
    ] == ["wrong_count"]


def test_ab_tasks_give_pair_votes_with_the_sides_shown(landed):
    st, _ = landed
    votes = [
        (r["item_left"], r["item_right"], r["rater"], r["choice"]) for r in TABLES["pairs"].rows(st)
    ]
    # compare: B (it-2) was in `accept`, shown first; answer reject prefers the second (it-1)
    # choice: options B (it-4) then A (it-3); A picked, so the right side won
    assert votes == [("it-2", "it-1", "alice", "right"), ("it-4", "it-3", "bob", "right")]


def _edited(tmp_path: Path, n: int, change) -> Path:
    lines = [json.loads(x) for x in (PR / "db-out.jsonl").read_text().splitlines()]
    change(lines[n])
    p = tmp_path / "db-out.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return p


@pytest.mark.parametrize(
    "n,change,expect",
    [
        (0, lambda t: t.update(label="STYLE_OK"), "label 'STYLE_OK' is not in the mapping"),
        (0, lambda t: t.update(answer="maybe"), "answer 'maybe' is not accept, reject or ignore"),
        (1, lambda t: t.update(accept=[7]), r"7 is outside quality's scale 1..5"),
        (
            3,
            lambda t: t.update(accept=["blurry"]),
            r"'blurry' is not a tag .*\[metrics.failure_tags.values\]",
        ),
        (0, lambda t: (t.pop("_annotator_id"), t.pop("_session_id")), "names no annotator"),
        (0, lambda t: t["meta"].update(item_id="it-9"), "unknown item_id 'it-9'"),
        (
            20,
            lambda t: t.update(mapping={"A": "accept", "C": "reject"}),
            "'mapping' must say which of A and B",
        ),
        (
            21,
            lambda t: t["meta"].pop("item_b"),
            r"the item_id of output B is missing \(nothing at 'meta.item_b'\)",
        ),
        (
            0,
            lambda t: t.update(_timestamp="yesterday"),
            "_timestamp 'yesterday' is not an ISO 8601 time",
        ),
    ],
)
def test_bad_tasks_are_one_line_naming_file_and_line(landed, tmp_path, n, change, expect):
    st, _ = landed
    before = st.counts()
    with pytest.raises(InputError, match=expect) as exc:
        run_import(st, "prodigy", _edited(tmp_path, n, change), map_path=str(PR / "map.toml"))
    assert "\n" not in str(exc.value) and "db-out.jsonl:" in str(exc.value)
    assert st.counts() == before


def test_ab_tasks_need_a_pairs_table(landed, tmp_path):
    st, _ = landed
    m = tmp_path / "map.toml"
    m.write_text(
        (PR / "map.toml").read_text().split("[pairs]")[0] + '[raters]\neval-alice = "alice"\n'
        'eval-bob = "bob"\n'
    )
    with pytest.raises(InputError, match=r"an A/B task .* has no \[pairs\]"):
        run_import(st, "prodigy", PR / "db-out.jsonl", map_path=str(m))


def test_init_map_reads_labels_and_fields(landed, tmp_path):
    st, _ = landed
    m = tmp_path / "start.toml"
    run_import(st, "prodigy", PR / "db-out.jsonl", map_path=str(m), init_map=True)
    text = m.read_text()
    assert 'item_id = "meta.item_id"' in text and 'from = "accept"\nlabel = "QUALITY"' in text
    assert 'from = "user_input"\nlabel = "NOTES"' in text and 'item_a = "meta.item_a"' in text
    assert (
        "FOLLOWS_PROMPT" in text and "TODO" in text
    )  # a label no metric is named after: left to the lead
