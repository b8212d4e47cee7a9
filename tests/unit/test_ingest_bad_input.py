"""Every bad input an import can meet: a one-line error naming the file, line or field,
exit status 2, and nothing written to the study (a half-written import would leave a study
no one can trust)."""

from __future__ import annotations

import json
import sqlite3
import struct
import zlib
from pathlib import Path

import pytest
from factories import basic_rows, make_png, write_manifest
from PIL import Image

from annotator.cli import main

REPO = Path(__file__).resolve().parents[2]


def _study(tmp_path) -> Path:
    folder = tmp_path / "st"
    assert main(["new", str(folder), "--rubric", str(REPO / "rubrics" / "ui_mockup.toml")]) == 0
    return folder


def _rows_in(folder: Path, table: str) -> int:
    with sqlite3.connect(folder / "study.sqlite") as c:
        return c.execute(f"select count(*) from {table}").fetchone()[0]


def _media_files(folder: Path) -> list[Path]:
    return [p for p in (folder / "media").rglob("*") if p.is_file()]


def _run_bad(capsys, args, needle) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert needle in err, err
    return err


def _bomb_png(path: Path) -> Path:
    """A valid PNG header claiming 20000x20000 pixels (over Pillow's bomb limit) with a tiny body."""
    w = h = 20000

    def chunk(kind, data):
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    raw = zlib.compress(b"\x00" * (w // 8 + 1) * 2)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 0))
        + chunk(b"IDAT", raw)
        + chunk(b"IEND", b"")
    )
    return path


@pytest.mark.parametrize("case", ["truncated", "zero", "text", "bomb", "outside"])
def test_bad_images_write_nothing(tmp_path, capsys, case):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    rows = basic_rows(src)
    bad = src / "out" / "bad.png"
    if case == "truncated":
        full = make_png(tmp_path / "full.png", size=(300, 300)).read_bytes()
        Image.effect_noise((300, 300), 60).save(tmp_path / "noise.png")
        full = (tmp_path / "noise.png").read_bytes()
        bad.write_bytes(full[: len(full) // 2])
        needle = "truncated or corrupt"
    elif case == "zero":
        bad.write_bytes(b"")
        needle = "empty (0 bytes)"
    elif case == "text":
        bad.write_text("this is not an image\n")
        needle = "not an image file"
    elif case == "bomb":
        _bomb_png(bad)
        needle = "decompression-bomb"
    else:
        (tmp_path / "etc").mkdir()
        make_png(tmp_path / "etc" / "passwd.png")
        bad = None
        needle = "outside the manifest's folder"
    rows[-1]["images"] = ["../etc/passwd.png" if bad is None else "out/bad.png"]
    manifest = write_manifest(src, rows)
    err = _run_bad(capsys, ["import", "items", str(manifest), "--study", str(folder)], needle)
    assert "manifest.jsonl:9" in err  # file and line of the bad item
    assert _rows_in(folder, "items") == 0
    assert _media_files(folder) == []


def test_etc_passwd_style_path_is_refused(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    rows = basic_rows(src, n_cases=1)
    rows[0]["images"] = ["../../../../../../etc/passwd"]
    _run_bad(
        capsys,
        ["import", "items", str(write_manifest(src, rows)), "--study", str(folder)],
        "outside the manifest's folder",
    )
    assert _rows_in(folder, "items") == 0


def test_duplicate_item_id_in_one_file(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    rows = basic_rows(src)
    rows[4]["item_id"] = rows[1]["item_id"]
    _run_bad(
        capsys,
        ["import", "items", str(write_manifest(src, rows)), "--study", str(folder)],
        "duplicate item_id 'it-0-1' (first on line 2)",
    )
    assert _rows_in(folder, "items") == 0


def test_item_already_in_study_with_other_content(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    rows = basic_rows(src)
    assert main(["import", "items", str(write_manifest(src, rows)), "--study", str(folder)]) == 0
    assert (
        main(["import", "items", str(write_manifest(src, rows)), "--study", str(folder)]) == 0
    )  # identical: idempotent
    n_media = len(_media_files(folder))
    rows[0]["prompt"] = "a different prompt"
    rows.append({**rows[1], "item_id": "it-new", "images": ["out/new.png"]})
    make_png(src / "out" / "new.png", colour=(1, 2, 3))
    _run_bad(
        capsys,
        ["import", "items", str(write_manifest(src, rows, "m2.jsonl")), "--study", str(folder)],
        "item_id 'it-0-0' is already in the study with other content",
    )
    assert _rows_in(folder, "items") == 9
    assert len(_media_files(folder)) == n_media  # the new image did not land either


def test_line_that_is_not_json(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    m = write_manifest(src if src.mkdir() is None else src, basic_rows(src))
    m.write_text(m.read_text() + "{not json\n")
    _run_bad(
        capsys,
        ["import", "items", str(m), "--study", str(folder)],
        "manifest.jsonl:10: not valid JSON",
    )
    assert _rows_in(folder, "items") == 0


@pytest.mark.parametrize("field", ["item_id", "case_id", "prompt", "generator"])
def test_missing_required_field(tmp_path, capsys, field):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    rows = basic_rows(src)
    del rows[2][field]
    _run_bad(
        capsys,
        ["import", "items", str(write_manifest(src, rows)), "--study", str(folder)],
        f"manifest.jsonl:3, field '{field}': missing required field '{field}'",
    )
    assert _rows_in(folder, "items") == 0


def test_images_or_text_required(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    m = write_manifest(src, [{"item_id": "x", "case_id": "c", "prompt": "p", "generator": "g"}])
    _run_bad(
        capsys,
        ["import", "items", str(m), "--study", str(folder)],
        "needs 'images' (a list) or 'text'",
    )


@pytest.mark.parametrize(
    "body, needle",
    [
        ('id = "x"\n[[metrics]]\nkey = "a"\nkind = "stars"\n', "unknown kind 'stars'"),
        (
            'id = "x"\n[[metrics]]\nkey = "a"\nkind = "gate"\n[[metrics]]\nkey = "a"\nkind = "gate"\n',
            "duplicate metric key 'a'",
        ),
        (
            'id = "x"\n[[metrics]]\nkey = "a"\nkind = "gate"\n[verdict]\nrules = ["b == PASS"]\n',
            "names no metric",
        ),
        (
            'id = "x"\n[[metrics]]\nkey = "a"\nkind = "gate"\n[verdict]\nrules = ["a >= 3"]\n',
            "gate 'a' can only be compared",
        ),
        (
            'id = "x"\n[[metrics]]\nkey = "a"\nkind = "scale"\nmin = 3\nmax = 1\n',
            "min (3) must be below max (1)",
        ),
    ],
)
def test_bad_rubric_via_cli(tmp_path, capsys, body, needle):
    rub = tmp_path / "bad.toml"
    rub.write_text(body)
    _run_bad(capsys, ["new", str(tmp_path / "st"), "--rubric", str(rub)], needle)
    assert not (tmp_path / "st" / "study.sqlite").exists()


def test_ratings_unknown_item_and_out_of_range(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    assert (
        main(["import", "items", str(write_manifest(src, basic_rows(src))), "--study", str(folder)])
        == 0
    )
    csv = tmp_path / "ratings.csv"
    csv.write_text(
        "item_id,rater,metric,value\nit-0-0,ann,layout_hierarchy,4\nnope,ann,layout_hierarchy,3\n"
    )
    _run_bad(
        capsys,
        ["import", "ratings", str(csv), "--study", str(folder)],
        "ratings.csv:3, field 'item_id': unknown item_id 'nope'",
    )
    csv.write_text(
        "item_id,rater,metric,value\nit-0-0,ann,layout_hierarchy,4\nit-0-1,ann,layout_hierarchy,7\n"
    )
    _run_bad(
        capsys,
        ["import", "ratings", str(csv), "--study", str(folder)],
        "7 is outside layout_hierarchy's scale 0..5",
    )
    csv.write_text("item_id,rater,metric,value\nit-0-0,ann,instruction_following,MAYBE\n")
    _run_bad(capsys, ["import", "ratings", str(csv), "--study", str(folder)], "is not PASS or FAIL")
    assert _rows_in(folder, "judgements") == 0
    assert _rows_in(folder, "raters") == 0  # the rater of a failed import is not created either


def test_newer_schema_is_refused(tmp_path, capsys):
    folder = _study(tmp_path)
    with sqlite3.connect(folder / "study.sqlite") as c:
        c.execute("update alembic_version set version_num = '9999_from_the_future'")
    _run_bad(capsys, ["status", "--study", str(folder)], "written by a newer annotator")


def test_unknown_import_kind_and_missing_study(tmp_path, capsys):
    _run_bad(capsys, ["import", "widgets", "x", "--study", "y"], "invalid choice")
    _run_bad(capsys, ["status", "--study", str(tmp_path / "none")], "not a study folder")


def test_judge_csv_and_pairs_errors(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    assert (
        main(["import", "items", str(write_manifest(src, basic_rows(src))), "--study", str(folder)])
        == 0
    )
    j = tmp_path / "judge.csv"
    j.write_text("item_id,judge,metric,value\nit-0-0,gpt,nonexistent,1\n")
    _run_bad(
        capsys, ["import", "judge", str(j), "--study", str(folder)], "unknown metric 'nonexistent'"
    )
    p = tmp_path / "pairs.csv"
    p.write_text("pair_id,item_left,item_right,rater,choice\np1,it-0-0,it-1-1,ann,left\n")
    _run_bad(
        capsys,
        ["import", "pairs", str(p), "--study", str(folder)],
        "joins items of different cases",
    )
    p.write_text("pair_id,item_left,item_right,rater,choice\np1,it-0-0,it-0-1,ann,maybe\n")
    _run_bad(
        capsys, ["import", "pairs", str(p), "--study", str(folder)], "choice 'maybe' is not one of"
    )
    assert _rows_in(folder, "pair_votes") == 0 and _rows_in(folder, "judge_scores") == 0
    data = json.loads(json.dumps({"ok": 1}))
    assert data == {"ok": 1}


def test_importing_the_same_answers_twice_is_refused_whole(tmp_path, capsys):
    folder = _study(tmp_path)
    src = tmp_path / "src"
    assert (
        main(["import", "items", str(write_manifest(src, basic_rows(src))), "--study", str(folder)])
        == 0
    )
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item_id,rater,metric,value,partial\nit-0-0,ann,layout_hierarchy,4,yes\n")
    judge = tmp_path / "judge.csv"
    judge.write_text("item_id,judge,metric,value,reason\nit-0-0,gpt,layout_hierarchy,5,fine\n")
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("pair_id,item_left,item_right,rater,choice\np1,it-0-0,it-0-1,ann,left\n")
    for kind, f in (("ratings", ratings), ("judge", judge), ("pairs", pairs)):
        assert main(["import", kind, str(f), "--study", str(folder)]) == 0
    counts = {t: _rows_in(folder, t) for t in ("judgements", "judge_scores", "pair_votes")}
    # a second file that repeats one answer and adds a new one: neither lands
    ratings.write_text(ratings.read_text() + "it-0-1,ann,layout_hierarchy,2,yes\n")
    judge.write_text(judge.read_text() + "it-0-1,gpt,layout_hierarchy,1,\n")
    pairs.write_text(pairs.read_text() + "p2,it-1-0,it-1-1,ann,right\n")
    for kind, f, needle in (
        ("ratings", ratings, "ratings are already in the study"),
        ("judge", judge, "judge scores are already in the study"),
        ("pairs", pairs, "already in the study (one vote per rater per pair)"),
    ):
        _run_bad(capsys, ["import", kind, str(f), "--study", str(folder)], needle)
    assert {t: _rows_in(folder, t) for t in counts} == counts


@pytest.mark.parametrize(
    ("parse", "header", "said"),
    [
        ("ratings", "item_id,rater,metric,value", "rater 'ana' rated 'text_rendering' of 'it-1'"),
        ("judge", "item_id,judge,metric,value", "judge 'ana' scored 'text_rendering' of 'it-1'"),
    ],
)
def test_a_value_given_twice_in_one_table_names_both_lines(tmp_path, parse, header, said):
    # a second row for the same answer would silently replace the first
    from annotator.domain.errors import InputError
    from annotator.ingest import tables
    from annotator.ingest.rubrics import load_rubric

    rubric = load_rubric(REPO / "rubrics" / "ui_mockup.toml")
    path = tmp_path / "t.csv"
    path.write_text(f"{header}\nit-1,ana,text_rendering,PASS\nit-1,ana,text_rendering,FAIL\n")
    reader = tables.parse_ratings if parse == "ratings" else tables.parse_judge
    with pytest.raises(InputError) as got:
        reader(path, rubric, {"it-1"})
    assert f"{said} twice (first on line 2)" in str(got.value)
    assert got.value.line == 3 and got.value.field == "metric"
