"""Files written by the real tools (tests/data/interop/peers/, recorded by tests/peers/record.py
from Label Studio 1.23.2 and Potato 2.12.1 servers driven through their HTTP APIs) import with
every value as the raters gave it; each defect a tool's export can carry, on what the tool really writes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from annotator.services.exports import TABLES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))
from roundtrip import POTATO_WANT, check_label_studio, seed_items, source_study  # noqa: E402

from annotator.services.importers import run_import
from annotator.services.study import Study

DATA = Path(__file__).resolve().parents[1] / "data" / "interop"
PO = DATA / "peers" / "potato-2.12.1"
LS = DATA / "peers" / "label-studio-1.23.2"


@pytest.fixture
def peer_study(tmp_path):
    st = Study.create(tmp_path / "st", DATA / "rubric.toml")
    st.import_items(DATA / "items.jsonl")
    yield st
    st.close()


def _answers(st: Study) -> dict[tuple[str, str], dict[str, str]]:
    out: dict[tuple[str, str], dict[str, str]] = {}
    for r in TABLES["judgements"].rows(st):
        out.setdefault((r["item_id"], r["rater"]), {})[r["metric"]] = r["value"]
    return out


def test_potato_2_annotation_output_imports_every_answer(peer_study):
    line = run_import(peer_study, "potato", PO / "annotation_output", map_path=str(PO / "map.toml"))
    assert "(Potato 2 user_state.json)" in line and "4 judgements" in line
    assert _answers(peer_study) == POTATO_WANT
    # the time of each answer is its last save in annotation_history.jsonl
    times = {
        (r["item_id"], r["rater"]): r["created_at"] for r in TABLES["judgements"].rows(peer_study)
    }
    assert all(t and t.startswith("2026-") for t in times.values())


def test_potato_2_history_alone_replays_to_the_same_answers(peer_study, tmp_path):
    out = tmp_path / "annotation_output"
    for user in ("alice", "bob"):
        (out / user).mkdir(parents=True)
        shutil.copy(PO / "annotation_output" / user / "annotation_history.jsonl", out / user)
    line = run_import(peer_study, "potato", out, map_path=str(PO / "map.toml"))
    assert "(Potato 2 annotation_history.jsonl)" in line
    assert _answers(peer_study) == POTATO_WANT


def test_potato_export_jsonl_labels_are_read(peer_study):
    line = run_import(
        peer_study, "potato", PO / "potato-2.12.1-export.jsonl", map_path=str(PO / "map.toml")
    )
    assert "(Potato export" in line and "4 judgements" in line
    assert _answers(peer_study) == POTATO_WANT


def test_potato_survey_of_a_2x_folder_proposes_every_scheme(peer_study, tmp_path):
    m = tmp_path / "m.toml"
    run_import(peer_study, "potato", PO / "annotation_output", map_path=str(m), init_map=True)
    text = m.read_text()
    for key in ("instruction_following", "quality", "style", "failure_tags", "reason", "clarity"):
        assert f'from = "{key}"' in text, key


def test_a_potato_number_of_20_digits_is_stored_at_the_cap(peer_study, tmp_path):
    """A time spent of 20 digits of days is no raw overflow: the answer lands, its time at the
    one-day cap every stored time has (domain/time_spent.py)."""
    from sqlalchemy import text

    from annotator.domain.time_spent import MAX_TIME_MS

    bad = tmp_path / "u" / "annotated_instances.jsonl"
    bad.parent.mkdir()
    line = {
        "id": "it-1",
        "label_annotations": {"instruction_following": {"PASS": "PASS"}},
        "behavioral_data": {"time_string": "Time spent: 12345678901234567890d 0h 0m 5s"},
    }
    bad.write_text(json.dumps(line) + "\n")
    m = tmp_path / "m.toml"
    m.write_text((PO / "map.toml").read_text())
    run_import(peer_study, "potato", bad.parent, map_path=str(m))
    with peer_study.db.read() as s:
        assert s.execute(text("SELECT max(time_ms) FROM judgements")).scalar() == MAX_TIME_MS


def test_judge_votes_in_both_orders_survive_label_studio_and_judge_pairs(peer_study, tmp_path):
    from annotator.services.export_label_studio import export_label_studio
    from annotator.services.exports import export_table

    both = tmp_path / "both.csv"
    both.write_text(
        "pair_id,item_left,item_right,rater,choice\np2,it-4,it-3,gpt-j,left\np2,it-3,it-4,gpt-j,right\n"
    )
    peer_study.import_pairs(both, judges=True)
    assert len(TABLES["judge-pairs"].rows(peer_study)) == 2
    export_label_studio(peer_study, tmp_path / "ls" / "tasks.json")
    back = Study.create(tmp_path / "back", DATA / "rubric.toml")
    try:
        back.import_items(DATA / "items.jsonl")
        m = str(tmp_path / "ls" / "tasks.map.toml")
        line = run_import(back, "label-studio", tmp_path / "ls" / "tasks-pairs.json", map_path=m)
        assert "2 judge pair votes" in line
        assert sorted(map(str, TABLES["judge-pairs"].rows(back))) == sorted(
            map(str, TABLES["judge-pairs"].rows(peer_study))
        )
    finally:
        back.close()
    out, n = export_table(peer_study, "judge-pairs", tmp_path / "jp.csv")
    assert n == 2
    again = Study.create(tmp_path / "again", DATA / "rubric.toml")
    try:
        again.import_items(DATA / "items.jsonl")
        again.import_pairs(out, judges=True)  # its own file, both orders
        assert len(TABLES["judge-pairs"].rows(again)) == 2
    finally:
        again.close()


def test_a_nul_byte_in_a_local_files_path_is_one_line(tmp_path):
    st = Study.create(tmp_path / "st", DATA / "rubric.toml")
    try:
        tasks = json.loads((DATA / "label_studio" / "export.json").read_text())
        tasks[0]["data"]["image"] = "/data/local-files/?d=media/apples%00_a.png"
        bad = tmp_path / "export.json"
        bad.write_text(json.dumps(tasks))
        shutil.copytree(DATA / "label_studio" / "media", tmp_path / "media")
        with pytest.raises(Exception) as exc:
            run_import(st, "label-studio", bad, map_path=str(DATA / "label_studio" / "map.toml"))
        assert type(exc.value).__name__ == "InputError" and "NUL byte" in str(exc.value)
    finally:
        st.close()


@pytest.mark.parametrize(
    "deep",
    ["a = " + "[" * 5000 + "]" * 5000, "a = " + "{b = " * 5000 + "1" + "}" * 5000],
    ids=["arrays", "tables"],
)
def test_a_mapping_nested_5000_deep_is_one_line(peer_study, tmp_path, deep):
    m = tmp_path / "deep.toml"
    m.write_text(deep + "\n")
    with pytest.raises(Exception) as exc:
        run_import(
            peer_study, "label-studio", DATA / "label_studio" / "export.json", map_path=str(m)
        )
    assert type(exc.value).__name__ == "InputError" and "too deep" in str(exc.value)


# ---- Label Studio 1.23.2: what its server exported -------------------------------------------


def test_init_map_on_our_own_pair_tasks_proposes_the_pair_paths(tmp_path):
    st = Study.create(tmp_path / "st", DATA / "rubric.toml")
    try:
        m = tmp_path / "pairs.toml"
        f = LS / "label-studio-1.23.2-pairs-default.json"
        run_import(st, "label-studio", f, map_path=str(m), init_map=True)
        text = m.read_text()
        for line in (
            'from = "preference"',
            'tie_from = "preference_tie"',
            'left = "meta.annotator.item_left"',
            'right = "meta.annotator.item_right"',
            'pair_id = "meta.annotator.pair_id"',
        ):
            assert line in text, line
        assert "[metrics." not in text and "not mapped yet" not in text
        # the written mapping imports the file as the exporter's own mapping does
        seed_items(st, LS / "annotator-export-tasks.json", LS / "map.toml", tmp_path)
        line = run_import(st, "label-studio", f, map_path=str(m))
        assert "pair votes" in line and "0 pair votes" not in line
    finally:
        st.close()


def test_init_map_on_a_generic_project_writes_every_item_path_and_asks_every_shifted_point(
    peer_study, tmp_path
):
    f = LS / "label-studio-1.23.2-generic-default.json"
    m = tmp_path / "generic.toml"
    run_import(peer_study, "label-studio", f, map_path=str(m), init_map=True)
    text = m.read_text()
    assert 'prompt = "data.prompt"' in text and 'images = ["data.image"]' in text
    for fld in ("item_id", "case_id", "generator"):
        assert f'{fld} = "TODO"' in text, fld
    # a 1..6 Rating for our 1..5 quality: every point asked, the ranges named, none kept as ours
    assert "their points 1..6, ours 1..5" in text
    for point in ("1", "2", "5", "6"):
        assert f'"{point}" = "TODO"' in text, point
    with pytest.raises(Exception, match=r"\[item\] item_id, case_id, generator still TODO"):
        run_import(peer_study, "label-studio", f, map_path=str(m), media_root=LS)


def test_a_generic_project_missing_item_paths_names_them_all_at_once(peer_study, tmp_path):
    f = LS / "label-studio-1.23.2-generic-default.json"
    m = tmp_path / "m.toml"
    m.write_text(
        'tool = "label-studio"\nrubric = "interop_demo"\npartial = true\nignore = ["problems"]\n'
        '[item]\nprompt = "data.prompt"\nimages = ["data.image"]\n'
        '[metrics.instruction_following]\nfrom = "if_ok"\nvalues = { "Yes" = "PASS", "No" = "FAIL" }\n'
    )
    with pytest.raises(Exception, match=r"gives no item_id, case_id, generator"):
        run_import(peer_study, "label-studio", f, map_path=str(m), media_root=LS)


@pytest.fixture(scope="module")
def ls_source(tmp_path_factory):
    st = source_study(tmp_path_factory.mktemp("ls-src") / "source")
    yield st
    st.close()


@pytest.mark.parametrize("kind", ["default", "snapshot"])
def test_label_studio_exports_of_our_tasks_come_back_with_every_value(ls_source, tmp_path, kind):
    """Our export with annotations went into Label Studio (accepted: it refused completed_by 1..N
    with HTTP 400 before), two raters annotated and one relabelled there; its default export
    (predictions as ids) and a snapshot (predictions and users expanded) hold every value."""
    back = Study.create(tmp_path / "back", DATA / "rubric.toml")
    try:
        if kind == "default":  # it leaves out the tasks nobody annotated: the study holds them
            seed_items(back, LS / "annotator-export-tasks.json", LS / "map.toml", tmp_path)
        lines = [
            run_import(
                back,
                "label-studio",
                LS / f"label-studio-1.23.2-{part}-{kind}.json",
                map_path=str(LS / "map.toml"),
            )
            for part in ("items", "pairs")
        ]
        check_label_studio(ls_source, back, snapshot=kind == "snapshot", lines=lines)
    finally:
        back.close()
