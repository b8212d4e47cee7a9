"""Exports out and back: a study holding every kind of answer (tool imports with lead times
and a relabel, CSV ratings with "cannot judge", likert labels, tags, a partial judgement,
sessions and a two-line reason, judge scores on the judge's own scale, pair votes seen
from both sides, ties) goes out as Label Studio tasks, CSV / JSON Lines / Parquet tables
and a Hugging Face layout, and comes back identical."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from annotator.cli import main
from annotator.services.export_hf import export_hf
from annotator.services.export_label_studio import export_label_studio
from annotator.services.exports import TABLES, read_rows, write_rows
from annotator.services.importers import run_import
from annotator.services.outputs import default_output
from annotator.services.study import Study
from annotator.store.exports import item_records

DATA = Path(__file__).resolve().parents[1] / "data" / "interop"
CSV = DATA / "csv"
ALL = ("judgements", "pairs", "judge-pairs", "judge-scores", "items")


def _build(folder: Path) -> Study:
    st = Study.create(folder, DATA / "rubric.toml")
    st.import_items(DATA / "items.jsonl")
    run_import(
        st,
        "label-studio",
        DATA / "label_studio" / "export.json",
        map_path=str(DATA / "label_studio" / "map.toml"),
    )
    st.import_ratings(CSV / "ratings.csv")
    st.import_judge(CSV / "judge.csv")
    st.import_pairs(CSV / "pairs.csv")
    st.import_pairs(CSV / "judge_pairs.csv", judges=True)
    return st


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    st = _build(tmp_path_factory.mktemp("src") / "source")
    yield st
    st.close()


def _tables(st: Study, drop: dict[str, tuple[str, ...]] | None = None) -> dict[str, list]:
    drop = drop or {}
    return {
        n: sorted(
            json.dumps({k: v for k, v in r.items() if k not in drop.get(n, ())}, sort_keys=True)
            for r in TABLES[n].rows(st)
        )
        for n in ALL
    }


def test_the_source_study_holds_every_awkward_answer(source):
    t = TABLES["judgements"].rows(source)
    values = {(r["item_id"], r["rater"], r["metric"]): r["value"] for r in t}
    assert (
        values[("it-1", "carol", "quality")] == "cannot_judge"
        and values[("it-1", "carol", "clarity")] == "3"
    )
    assert values[("it-2", "carol", "failure_tags")] == "cannot_judge"
    assert "\n" in values[("it-1", "carol", "reason")]
    assert {r["partial"] for r in t if r["rater"] == "dave"} == {"yes"}
    assert {
        (r["item_left"], r["rater"]) for r in TABLES["pairs"].rows(source) if r["pair_id"] == "p1"
    } == {("it-1", "carol"), ("it-2", "dave")}  # both sides of one pair
    assert {r["value"] for r in TABLES["judge-scores"].rows(source) if r["judge"] == "gpt-j"} >= {
        "0.73",
        "3",
    }


def test_label_studio_round_trip_gives_identical_judgements(source, tmp_path):
    paths = export_label_studio(source, tmp_path / "ls" / "tasks.json", with_annotations=True)
    names = {p.name for p in paths}
    assert {
        "tasks.json",
        "tasks-pairs.json",
        "tasks.config.xml",
        "tasks-pairs.config.xml",
        "tasks.map.toml",
    } <= names
    assert sum(p.suffix == ".png" for p in paths) == 4  # images beside the JSON, named by content
    tasks = json.loads((tmp_path / "ls" / "tasks.json").read_text())
    assert all(
        "generator" not in t["data"] and "item_id" not in t["data"] for t in tasks
    )  # blind data, lead's meta
    assert any(p["model_version"] == "gpt-j" for t in tasks for p in t["predictions"])
    # no completed_by (Label Studio takes only its own users' ids or emails: 1..N was refused or
    # credited to another user); the rater rides in each result's meta, which Label Studio keeps
    assert all("completed_by" not in a for t in tasks for a in t["annotations"])
    assert {
        r["meta"]["annotator"]["rater"]
        for t in tasks
        for a in t["annotations"]
        for r in a["result"]
    } == {"alice", "bob", "carol", "dave"}
    back = Study.create(tmp_path / "back", DATA / "rubric.toml")
    try:
        m = str(tmp_path / "ls" / "tasks.map.toml")
        run_import(back, "label-studio", tmp_path / "ls" / "tasks.json", map_path=m)
        run_import(back, "label-studio", tmp_path / "ls" / "tasks-pairs.json", map_path=m)
        # Label Studio has no sessions and a prediction no per-metric reason: those two stay behind
        drop = {"judgements": ("session",), "judge-scores": ("reason",)}
        assert _tables(back, drop) == _tables(source, drop)
        assert {r.item_id: r.outputs for r in item_records(back.db)} == {
            r.item_id: r.outputs for r in item_records(source.db)
        }  # the very same stripped images
    finally:
        back.close()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_open_formats_hold_the_table_exactly(source, tmp_path, fmt):
    for name in ALL:
        table = TABLES[name]
        rows = table.rows(source)
        path = write_rows(table, rows, tmp_path / f"{name}.{fmt}")
        assert read_rows(table, path) == rows, (name, fmt)


def test_csv_exports_are_the_contract_files_and_import_back(source, tmp_path):
    out = {}
    for name in ("judgements", "judge-scores", "pairs", "judge-pairs"):
        assert (
            main(
                [
                    "export",
                    name,
                    "--study",
                    str(source.location),
                    "--out",
                    str(tmp_path / f"{name}.csv"),
                ]
            )
            == 0
        )
        out[name] = tmp_path / f"{name}.csv"
    header = out["judgements"].read_text().splitlines()[0]
    assert header == "item_id,rater,metric,value,created_at,session,time_ms,partial"
    items_only = tmp_path / "items" / "tasks.json"
    export_label_studio(source, items_only)  # the items (with their images), no human answers...
    tasks = json.loads(items_only.read_text())
    items_only.write_text(
        json.dumps([{**t, "predictions": []} for t in tasks])
    )  # ...and no judge scores
    back = Study.create(tmp_path / "back", DATA / "rubric.toml")
    try:
        run_import(
            back, "label-studio", items_only, map_path=str(items_only.with_name("tasks.map.toml"))
        )
        back.import_ratings(out["judgements"])
        back.import_judge(out["judge-scores"])
        back.import_pairs(out["pairs"])
        back.import_pairs(out["judge-pairs"], judges=True)
        drop = {
            k: ("time_ms",) for k in ("judgements", "pairs", "judge-pairs")
        }  # not a column of contract 5.3
        assert _tables(back, drop) == _tables(source, drop)
    finally:
        back.close()


def test_hugging_face_layout_loads_without_annotator(source, tmp_path):
    import pandas as pd
    import pyarrow.parquet as pq

    out = tmp_path / "hf"
    paths = export_hf(source, out, n_boot=20)
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "configs:\n- config_name: judgements" in card
    assert "path: data/judge_scores.parquet" in card and "default: true" in card
    assert "| `quality` | scale | Overall quality | 1..5 | yes |" in card  # the rubric
    assert (
        "| `instruction_following` | nominal |" in card and "| `quality` | `gpt-j` |" in card
    )  # agreement figures
    for name in ALL:
        table = TABLES[name]
        f = out / "data" / f"{name.replace('-', '_')}.parquet"
        assert f in paths
        assert list(pd.read_parquet(f).columns) == table.names
        assert pq.read_table(f).num_rows == len(table.rows(source))
    # times are UTC and say so; every column is typed, one with no value in the study too
    for f in (out / "data").glob("*.parquet"):
        schema = pq.read_table(f).schema
        for col in schema:
            assert str(col.type) != "null", (f.name, col.name)
            if col.name == "created_at":
                assert str(col.type) == "timestamp[us, tz=UTC]", f.name
    jp = pq.read_table(out / "data" / "judge_pairs.parquet")
    assert jp.column("time_ms").null_count == jp.num_rows  # judges take no time: typed int64
    assert str(jp.schema.field("time_ms").type) == "int64"


@pytest.mark.slow  # importing `datasets` alone takes seconds
def test_hugging_face_layout_loads_with_datasets(source, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv(
        "HF_DATASETS_OFFLINE", "1"
    )  # a local folder: nothing to fetch, and nothing may be
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # its cache stays in the test's folder
    out = tmp_path / "hf"
    export_hf(source, out, n_boot=20)
    ds = datasets.load_dataset(
        str(out), "judgements", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert (
        ds.num_rows == len(TABLES["judgements"].rows(source))
        and ds.column_names == TABLES["judgements"].names
    )
    pairs = datasets.load_dataset(
        str(out), "pairs", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert set(pairs["choice"]) == {"left", "right", "both", "neither"}
    default = datasets.load_dataset(
        str(out), split="train", cache_dir=str(tmp_path / "cache")
    )  # the default config
    assert default.column_names == TABLES["judgements"].names
    t = ds.features["created_at"]
    assert (t.dtype, getattr(t, "pa_type", None) and str(t.pa_type)) == (
        "timestamp[us, tz=UTC]",
        "timestamp[us, tz=UTC]",
    )
    assert ds[0]["created_at"].tzinfo is not None  # an aware time, as the card says: UTC
    jp = datasets.load_dataset(
        str(out), "judge_pairs", split="train", cache_dir=str(tmp_path / "cache")
    )
    assert jp.features["time_ms"].dtype == "int64"  # no judge time at all, still typed


def test_default_output_folder(source, tmp_path, monkeypatch, capsys):
    assert (
        default_output("my study/../x", "a.csv", today=date(2024, 5, 1), base=tmp_path)
        == tmp_path / "exports" / "my study_.._x" / "2024-05-01" / "a.csv"
    )
    monkeypatch.chdir(tmp_path)
    st = str(source.location)
    day = date.today().isoformat()
    assert main(["export", "judgements", "--study", st]) == 0
    assert main(["export", "pairs", "--study", st, "--format", "parquet"]) == 0
    assert main(["export", "label-studio", "--study", st]) == 0
    here = tmp_path / "exports" / "source" / day
    assert (here / "judgements.csv").is_file() and (here / "pairs.parquet").is_file()
    assert (here / "label-studio.json").is_file() and (here / "label-studio.map.toml").is_file()
    assert "Use predictions to pre-label tasks" in capsys.readouterr().err  # the blinding warning


def test_export_refusals_are_one_line(source, tmp_path, capsys):
    st = str(source.location)
    for args, expect in (
        (
            ["export", "judgements", "--study", st, "--out", str(tmp_path / "j.xlsx")],
            "cannot tell the format",
        ),
        (
            ["export", "pairs", "--study", st, "--out", str(tmp_path / "p.csv"), "--format", "csv"],
            "not both",
        ),
        (
            ["export", "label-studio", "--study", st, "--out", str(tmp_path / "t.csv")],
            "is a .json file",
        ),
        (
            ["export", "hf", "--study", st, "--out", str(tmp_path / "j.xlsx"), "--boot", "0"],
            "at least 1",
        ),
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and expect in err, err
