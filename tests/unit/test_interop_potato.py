"""Potato's annotation output in: tests/data/interop/potato holds `annotation_output/<user>/
annotated_instances.jsonl` as Potato writes it (https://potato-annotation.readthedocs.io;
`label_annotations` per scheme, pairwise {"selection": ...} / {"scale_value": ...}) for two
annotators, one of them on an older Potato ("scale_<n>" likert points), with an instance
opened and never answered, and pair instances whose items come from the input data file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from annotator.domain.errors import InputError
from annotator.services.exports import TABLES
from annotator.services.importers import run_import
from annotator.services.study import Study

DATA = Path(__file__).resolve().parents[1] / "data" / "interop"
PO = DATA / "potato"


@pytest.fixture(scope="module")
def landed(tmp_path_factory):
    st = Study.create(tmp_path_factory.mktemp("po") / "st", DATA / "rubric.toml")
    st.import_items(DATA / "items.jsonl")
    line = run_import(st, "potato", PO / "annotation_output", map_path=str(PO / "map.toml"))
    yield st, line
    st.close()


def test_every_scheme_type_lands_through_the_mapping(landed):
    st, line = landed
    assert (
        "4 judgements" in line
        and "3 pair votes" in line
        and "1 lines with no mapped answer" in line
    )
    got: dict = {}
    for r in TABLES["judgements"].rows(st):
        got.setdefault((r["item_id"], r["rater"]), {})[r["metric"]] = (r["value"], r["time_ms"])
    assert {k: v for k, (v, _) in got[("it-1", "alice")].items()} == {
        "instruction_following": "PASS",
        "quality": "4",
        "style": "photo",
        "failure_tags": "",  # {}: no tag ticked
        "reason": "looks right",
    }
    assert (
        got[("it-1", "alice")]["quality"][1] == 12_000
    )  # behavioral_data "Time spent: 0d 0h 0m 12s"
    assert got[("it-2", "alice")]["quality"][1] == 75_000
    assert {k: v for k, (v, _) in got[("it-1", "bob")].items()} == {
        "instruction_following": "FAIL",
        "quality": "3",
        "style": "photo",
        "failure_tags": "text_garbled;wrong_count",
    }
    assert ("it-4", "bob") not in got  # opened, never answered: no judgement made up
    votes = {
        (r["item_left"], r["item_right"], r["rater"]): r["choice"] for r in TABLES["pairs"].rows(st)
    }
    assert votes == {
        ("it-1", "it-2", "alice"): "left",
        ("it-1", "it-2", "bob"): "both",  # A, tie
        ("it-3", "it-4", "bob"): "right",
    }  # scale mode: +2 prefers B


def test_one_users_file_names_the_rater_by_its_folder_and_reimport_is_unchanged(landed):
    st, _ = landed
    again = run_import(
        st,
        "potato",
        PO / "annotation_output" / "bob" / "annotated_instances.jsonl",
        map_path=str(PO / "map.toml"),
    )
    assert (
        "0 judgements" in again
        and "0 pair votes" in again
        and "already in the study unchanged" in again
    )


def _copy(tmp_path: Path, edit) -> Path:
    out = tmp_path / "annotation_output"
    shutil.copytree(PO / "annotation_output", out)
    f = out / "alice" / "annotated_instances.jsonl"
    lines = [json.loads(x) for x in f.read_text().splitlines()]
    edit(lines)
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return out


@pytest.mark.parametrize(
    "edit,expect",
    [
        (
            lambda ls: ls[0]["label_annotations"].update(vibe={"good": "1"}),
            "scheme 'vibe' is not in the mapping",
        ),
        (
            lambda ls: ls[0]["label_annotations"].update(acceptable={"maybe": "3"}),
            r"'maybe' is not PASS or FAIL .*\[metrics.instruction_following.values\]",
        ),
        (
            lambda ls: ls[0]["label_annotations"].update(style={"photo": "1", "diagram": "3"}),
            "2 labels \\(photo, diagram\\) for 'style', which takes one",
        ),
        (lambda ls: ls[1].update(id="it-99"), "unknown item_id 'it-99'; import the items first"),
        (
            lambda ls: ls[0]["label_annotations"].update(acceptable="yes"),
            "scheme 'acceptable' must hold an object",
        ),
        (
            lambda ls: ls[2]["label_annotations"].update(preference={"selection": "C"}),
            "pair selection 'C'",
        ),
    ],
)
def test_bad_lines_are_one_line_naming_file_and_line(landed, tmp_path, edit, expect):
    st, _ = landed
    before = st.counts()
    with pytest.raises(InputError, match=expect) as exc:
        run_import(st, "potato", _copy(tmp_path, edit), map_path=str(PO / "map.toml"))
    assert "\n" not in str(exc.value) and "annotated_instances.jsonl:" in str(exc.value)
    assert st.counts() == before


def test_a_file_without_users_and_pairs_without_instance_data_are_refused(landed, tmp_path):
    st, _ = landed
    loose = tmp_path / "out.jsonl"
    shutil.copy(PO / "annotation_output" / "alice" / "annotated_instances.jsonl", loose)
    with pytest.raises(InputError, match="names no user"):
        run_import(st, "potato", loose, map_path=str(PO / "map.toml"))
    m = tmp_path / "map.toml"
    m.write_text((PO / "map.toml").read_text().replace('instances = "instances.jsonl"', ""))
    with pytest.raises(InputError, match=r"the left item_id is missing \(nothing at 'item_left'\)"):
        run_import(st, "potato", PO / "annotation_output", map_path=str(m))
    with pytest.raises(InputError, match="annotated_instances.jsonl under this folder"):
        run_import(st, "potato", tmp_path, map_path=str(PO / "map.toml"))


def test_init_map_reads_schemes_and_points(landed, tmp_path):
    st, _ = landed
    m = tmp_path / "start.toml"
    run_import(st, "potato", PO / "annotation_output", map_path=str(m), init_map=True)
    text = m.read_text()
    assert 'tool = "potato"' in text and 'item_id = "id"' in text and 'from = "quality"' in text
    assert 'from = "comments"' in text and "[pairs]" in text and 'from = "preference"' in text
    assert (
        "instances" in text and "TODO" in text and "scale_3" not in text
    )  # points read as numbers
