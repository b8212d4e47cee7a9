"""Attacks on the inputs a hostile rater or a stray file can hand the app: each test performs one attack and checks it ends in one line (exit 2) or is harmless,
with nothing landed. Named after the attack."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from factories import basic_rows, write_manifest

from annotator.cli import main
from annotator.domain.errors import DamagedStudy, InputError
from annotator.services.export_hf import export_hf
from annotator.services.exports import TABLES, export_table
from annotator.services.labeling import LabelSession
from annotator.services.study import DB_NAME, Study

REPO = Path(__file__).resolve().parents[2]
RUBRIC = REPO / "rubrics" / "ui_mockup.toml"
INTEROP = REPO / "tests" / "data" / "interop"
ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "ok",
}


def _env() -> dict[str, str]:
    """The environment of a child `annotator` (PYTHONPATH, if set, names the code under test)."""
    return dict(os.environ)


def _one_line(capsys, argv: list[str], needle: str) -> str:
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and "internal error" not in err, err
    assert needle in err, err
    return err


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as c:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# ---- 9. the remaining crashes ----------------------------------------------------------------


@pytest.fixture
def lead_and_package(tmp_path) -> tuple[Path, Path]:
    """A lead's study with one rater, and that rater's package holding three answers."""
    folder = tmp_path / "lead"
    study = Study.create(folder, RUBRIC)
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src)))
    study.add_rater("ana")
    study.close()
    assert main(["assign", "--study", str(folder), "--raters", "ana", "--overlap", "1"]) == 0
    pkg = tmp_path / "ana.annot"
    assert (
        main(["package", "export", "--study", str(folder), "--rater", "ana", "--out", str(pkg)])
        == 0
    )
    rater = Study.open(pkg)
    session = LabelSession(rater, "ana")
    for _ in range(3):
        session.submit(session.next(), ALL, 1000)
    rater.close()
    return folder, pkg


@pytest.mark.parametrize(
    "as_text",
    ["CAST(data AS TEXT)", "'not an image'"],
    ids=["png_bytes_as_text", "plain_text"],
)
def test_media_blob_stored_as_text(lead_and_package, capsys, as_text):
    """A package whose image blob was rewritten as TEXT is refused in one line on merge and open."""
    folder, pkg = lead_and_package
    with sqlite3.connect(pkg) as c:
        sha = c.execute("SELECT sha256 FROM media_blobs ORDER BY sha256 LIMIT 1").fetchone()[0]
        c.execute(f"UPDATE media_blobs SET data = {as_text} WHERE sha256 = ?", (sha,))
    capsys.readouterr()
    _one_line(
        capsys,
        ["package", "merge", str(pkg), "--study", str(folder)],
        f"media blob {sha[:12]}… is stored as text",
    )
    assert _count(folder / DB_NAME, "judgements") == 0
    rater = Study.open(pkg)  # the rater's own app shows the item: one line, not a TypeError
    try:
        with pytest.raises(DamagedStudy, match="stored as text"):
            rater.media.read(sha)
    finally:
        rater.close()


def test_answer_pointing_at_a_missing_item(lead_and_package, capsys):
    """A package answer whose item_pk names no item is refused in one line and nothing merges."""
    folder, pkg = lead_and_package
    with sqlite3.connect(pkg) as c:
        c.execute(
            "UPDATE judgements SET item_pk = 9999 WHERE id = (SELECT min(id) FROM judgements)"
        )
    capsys.readouterr()
    _one_line(
        capsys,
        ["package", "merge", str(pkg), "--study", str(folder)],
        "judgements row 1, field 'item_pk', points at a row of items that the file does not hold",
    )
    assert _count(folder / DB_NAME, "judgements") == 0 and _count(folder / DB_NAME, "merges") == 0


def test_label_studio_lead_time_1e300_is_stored_at_the_cap(tmp_path, capsys):
    """A Label Studio annotation with lead_time 1e300 seconds lands with its time at the one-day
    cap (domain/time_spent.py: a time is capped, never refused), not as a raw overflow."""
    from annotator.domain.time_spent import MAX_TIME_MS

    ls = INTEROP / "label_studio"
    tasks = json.loads((ls / "export.json").read_text())
    tasks[0]["annotations"][0]["lead_time"] = 1e300
    shutil.copytree(ls / "media", tmp_path / "media")
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks))
    folder = tmp_path / "st"
    Study.create(folder, INTEROP / "rubric.toml").close()
    argv = ["import", "label-studio", str(export), "--study", str(folder)]
    assert main([*argv, "--map", str(ls / "map.toml")]) == 0, capsys.readouterr().err
    with sqlite3.connect(folder / DB_NAME) as c:
        assert c.execute("SELECT max(time_ms) FROM judgements").fetchone() == (MAX_TIME_MS,)


@pytest.mark.parametrize("stamp", [1e20, -1e15, float("nan"), 10**30], ids=str)
def test_prodigy_timestamp_out_of_range(tmp_path, capsys, stamp):
    """A Prodigy task whose _timestamp no calendar holds (1e20, -1e15, NaN) is one line."""
    pr = INTEROP / "prodigy"
    lines = [json.loads(x) for x in (pr / "db-out.jsonl").read_text().splitlines()]
    lines[2]["_timestamp"] = stamp
    path = tmp_path / "db-out.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))  # NaN as Python writes it
    folder = tmp_path / "st"
    study = Study.create(folder, INTEROP / "rubric.toml")
    study.import_items(INTEROP / "items.jsonl")
    study.close()
    err = _one_line(
        capsys,
        ["import", "prodigy", str(path), "--study", str(folder), "--map", str(pr / "map.toml")],
        "_timestamp",
    )
    assert f"{path}:3" in err and "Unix seconds" in err
    assert _count(folder / DB_NAME, "judgements") == 0


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_ratings_created_at_at_the_calendar_edge(populated, tmp_path, capsys, when):
    """A ratings row whose created_at overflows the calendar once converted is one line."""
    path = tmp_path / "r.csv"
    path.write_text(
        f"item_id,rater,metric,value,partial,created_at\nit-0-0,ann,layout_hierarchy,3,yes,{when}\n"
    )
    folder = populated.folder
    err = _one_line(capsys, ["import", "ratings", str(path), "--study", str(folder)], when)
    assert f"{path}:2, field 'created_at'" in err and _count(folder / DB_NAME, "judgements") == 0


def test_roles_print_into_a_closed_pipe(pg_url):
    """`annotator roles --print | head -1` ends quietly (exit 141), not as an internal error."""
    study = Study.create(pg_url, RUBRIC)
    names = [f"r{i}" for i in range(300)]  # ~1 MB of SQL: far past a pipe's buffer
    for n in names:
        study.add_rater(n)
    study.close()
    cmd = (
        f"set -o pipefail; {sys.executable} -m annotator roles --study '{pg_url}' "
        f"--raters {','.join(names)} --print | head -1"
    )
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 141, r.stderr
    assert r.stdout.strip().endswith(";") and r.stdout.count("\n") == 1  # one statement came out
    assert r.stderr == "", (
        r.stderr
    )  # no "internal error", no "Exception ignored ... BrokenPipeError"


def test_rater_list_into_a_pipe_closed_before_it_writes(populated):
    """Any command writing into a pipe its reader has closed exits 141 with nothing on stderr."""
    populated.add_rater("ann")
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the first byte: EPIPE on the first flush
    try:
        r = subprocess.run(
            [sys.executable, "-m", "annotator", "rater", "list", "--study", str(populated.folder)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            timeout=120,
        )
    finally:
        os.close(write)
    assert r.returncode == 141 and r.stderr == "", r.stderr


# ---- 9. a bad keys.toml or settings file: the app starts on its defaults --------------------

KEYS_ATTACKS = {
    "keys_as_a_list": "keys = ['Y']\n",
    "keys_as_a_string": "keys = 'Y'\n",
    "keys_nested_5000_deep": "[keys]\npass = " + "[" * 5000 + "]" * 5000 + "\n",
    "inline_tables_5000_deep": "[keys]\npass = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
}
SETTINGS_ATTACKS = {
    "recent_studies_a_string": ('recent_studies="5"', "recent_studies"),
    "recent_studies_a_number": ("recent_studies=5", "recent_studies"),
    "last_rater_a_list": ('last_rater="[1, 2]"', "last_rater"),
    "language_nested_100000_deep": ("language=" + "[" * 100_000 + "]" * 100_000, "language"),
    "dashboard_n_boot_not_json": ("dashboard_n_boot=lots", "dashboard_n_boot"),
}


def _settings_file(tmp_path: Path, ini: str = "", keys: str | None = None) -> Path:
    folder = tmp_path / "profile"
    folder.mkdir(exist_ok=True)
    path = folder / "annotator.ini"
    path.write_text(f"[General]\n{ini}\n", encoding="utf-8")
    if keys is not None:
        (folder / "keys.toml").write_text(keys, encoding="utf-8")
    return path


@pytest.mark.parametrize("text", KEYS_ATTACKS.values(), ids=KEYS_ATTACKS.keys())
def test_bad_keys_file(tmp_path, text):
    """A keys.toml of the wrong shape or nested past any use: defaults kept, one phrase why."""
    pytest.importorskip("PySide6")
    from annotator.ui.keymap import Keymap
    from annotator.ui.settings import AppSettings

    settings = AppSettings(_settings_file(tmp_path, keys=text))
    overrides, problems = settings.key_overrides_checked()
    assert overrides == {} and len(problems) == 1, problems
    km = Keymap.from_settings(settings)
    assert km.hint("pass") == "P"  # the default binding
    line = km.problem_line()
    assert line is not None and "\n" not in line and "keys.toml" in line


@pytest.mark.parametrize("ini,key", SETTINGS_ATTACKS.values(), ids=SETTINGS_ATTACKS.keys())
def test_bad_settings_file(tmp_path, ini, key):
    """A settings value of the wrong shape, not JSON, or nested 100000 deep: default used, named."""
    pytest.importorskip("PySide6")
    from annotator.ui.settings import AppSettings

    settings = AppSettings(_settings_file(tmp_path, ini))
    assert settings.recent_studies() == [] and settings.language() == ""
    assert settings.last_rater(tmp_path) is None
    line = settings.problem_line()
    assert line is not None and "\n" not in line and f"{key} (" in line
    settings.add_recent_study(tmp_path)  # and the app can write over it
    assert AppSettings(settings.path).recent_studies() == [tmp_path.resolve()]


def test_app_starts_on_a_bad_settings_file_and_keys_file(tmp_path):
    """`annotator gui` on keys = ['Y'] and recent_studies="5" starts and says so in one line."""
    pytest.importorskip("PySide6")
    path = _settings_file(tmp_path, 'recent_studies="5"', "keys = ['Y']\n")
    env = {
        **_env(),
        "ANNOTATOR_SETTINGS": str(path),
        "QT_QPA_PLATFORM": "offscreen",
        "ANNOTATOR_QUIT_WHEN_READY": "1",
    }
    r = subprocess.run(
        [sys.executable, "-m", "annotator", "gui"],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    ours = [x for x in r.stderr.splitlines() if x.startswith("annotator:")]
    assert len(ours) == 1, r.stderr  # (Qt's own warnings may be there too)
    assert "recent_studies (not a list of study locations)" in ours[0]
    assert "'keys' must be a table" in ours[0] and "internal error" not in r.stderr


# ---- 10. CSV quoted by the standard; the formula guard reversible ------------------------------

TRICKY = [
    "ok\r=1+1",  # a bare CR: split the record, and the next physical line ran as a formula
    '=HYPERLINK("http://x","y")',
    "+1 looks fine",
    "-bad contrast",
    "@SUM(A1:A2)",
    "'=already quoted",
    "two\r\nlines, with a comma",
    'say "hi", then go',
    "\ttabbed",
]
FORMULA_RUBRIC = """\
id = "formula_demo"
title = "Formula demo"
instructions = "Judge."

[[metrics]]
key = "verdict"
kind = "gate"
label = "Verdict"

[[metrics]]
key = "delta"
kind = "scale"
label = "Change"
min = -2
max = 2

[[metrics]]
key = "direction"
kind = "choice"
label = "Direction"
options = ["-1 worse", "+1 better", "=same", "@other"]

[[metrics]]
key = "flags"
kind = "tags"
label = "Flags"
options = ["-x", "=y", "ok"]
required = false

[[metrics]]
key = "reason"
kind = "text"
required = false
"""


def _answered(
    tmp_path: Path,
    rubric: Path,
    reasons: list[str],
    answers: list[dict] | None = None,
    name: str = "st",
) -> Study:
    """A study (named as its folder) whose rater 'ann' answered one item per reason, through
    the app's path."""
    study = Study.create(tmp_path / name, rubric)
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src)))
    study.add_rater("ann")
    session = LabelSession(study, "ann")
    for i, reason in enumerate(reasons):
        given = dict(answers[i % len(answers)] if answers else ALL)
        session.submit(session.next(), {**given, "reason": reason}, 1000)
    return study


def test_bare_carriage_return_in_a_reason(tmp_path, capsys):
    """A reason holding a bare CR stays in its record of the report's and the export's CSV."""
    study = _answered(tmp_path, RUBRIC, TRICKY)
    folder = study.folder
    study.close()
    out = tmp_path / "tables"
    assert main(["report", "--study", str(folder), "--csv", str(out), "--boot", "20"]) == 0
    exported = tmp_path / "judgements.csv"
    assert main(["export", "judgements", "--study", str(folder), "--out", str(exported)]) == 0
    for path in (out / "judgements.csv", exported):
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        header, body = rows[0], rows[1:]
        assert all(len(r) == len(header) for r in body), path
        assert not any(r[0].startswith(("=", "+", "-", "@")) for r in body), path
        assert "ok\r=1+1" in {c for r in body for c in r}, path  # the reason whole, in its cell


def test_formula_texts_round_trip_through_import_ratings(tmp_path):
    """Texts and rubric values starting with = + - @ (and CR, LF, quotes) export guarded and read
    back by `annotator import ratings` as they were."""
    rubric = tmp_path / "formula.toml"
    rubric.write_text(FORMULA_RUBRIC, encoding="utf-8")
    answers = [
        {"verdict": "PASS", "delta": -1, "direction": "-1 worse", "flags": ["-x", "=y"]},
        {"verdict": "FAIL", "delta": 2, "direction": "=same", "flags": []},
        {"verdict": "PASS", "delta": -2, "direction": "@other", "flags": ["ok"]},
        {"verdict": "FAIL", "delta": 0, "direction": "+1 better", "flags": ["=y"]},
    ]
    source = _answered(tmp_path / "a", rubric, TRICKY, answers)
    out = tmp_path / "judgements.csv"
    export_table(source, "judgements", out)
    text = out.read_text(encoding="utf-8")
    assert "'=HYPERLINK" in text and "'-1 worse" in text and "''=already quoted" in text
    copy = Study.create(tmp_path / "b" / "st", rubric)
    src = tmp_path / "a" / "src"
    copy.import_items(src / "manifest.jsonl")
    assert main(["import", "ratings", str(out), "--study", str(copy.folder)]) == 0

    def values(study: Study) -> list[tuple]:
        return sorted(
            (r["item_id"], r["rater"], r["metric"], r["value"])
            for r in TABLES["judgements"].rows(study)
        )

    assert values(copy) == values(source)
    reasons = {r["value"] for r in TABLES["judgements"].rows(copy) if r["metric"] == "reason"}
    assert reasons == set(TRICKY)
    source.close()
    copy.close()


# ---- 11. Unicode in names ---------------------------------------------------------------------

HIDDEN = {
    "right_to_left_override": "\u202e",
    "left_to_right_embedding": "\u202a",
    "first_strong_isolate": "\u2068",
    "right_to_left_mark": "\u200f",
    "arabic_letter_mark": "\u061c",
    "zero_width_space": "\u200b",
    "zero_width_joiner": "\u200d",
    "word_joiner": "\u2060",
    "byte_order_mark": "\ufeff",
    "hangul_filler": "\u3164",
}


@pytest.mark.parametrize("ch", HIDDEN.values(), ids=HIDDEN.keys())
def test_bidi_and_zero_width_characters_in_a_rater_name(populated, tmp_path, capsys, ch):
    """A rater name with a bidi control or zero-width character is refused in one line."""
    name = f"ana{ch}gpj.exe"
    folder = str(populated.folder)
    err = _one_line(capsys, ["rater", "add", name, "--study", folder], f"U+{ord(ch):04X}")
    assert ch not in err  # the line shows the character escaped, never obeys it
    ratings = tmp_path / "r.csv"
    ratings.write_text(
        f"item_id,rater,metric,value,partial\nit-0-0,{name},layout_hierarchy,3,yes\n",
        encoding="utf-8",
    )
    _one_line(capsys, ["import", "ratings", str(ratings), "--study", folder], "invisible character")
    assert [r.name for r in populated.raters()] == []


@pytest.mark.parametrize("ch", ["\u202e", "\u200b", "\u2066"], ids=["rlo", "zwsp", "lri"])
def test_bidi_and_zero_width_characters_in_a_generator_name(tmp_path, capsys, ch):
    """A generator (and case) name with a bidi control or zero-width character is refused."""
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    src = tmp_path / "src"
    rows = basic_rows(src, n_cases=1)
    rows[1]["generator"] = f"gen-a{ch}"  # would read as gen-a beside the real one
    manifest = write_manifest(src, rows)
    _one_line(capsys, ["import", "items", str(manifest), "--study", str(folder)], "'generator'")
    rows[1]["generator"], rows[1]["case_id"] = "gen-b", f"case0{ch}"
    manifest = write_manifest(src, rows)
    _one_line(capsys, ["import", "items", str(manifest), "--study", str(folder)], "'case_id'")
    assert _count(folder / DB_NAME, "items") == 0


def test_bidi_override_in_a_study_name(tmp_path, capsys):
    """`annotator new` on a folder whose name holds U+202E is refused in one line, nothing made."""
    folder = tmp_path / "study\u202egpj"
    err = _one_line(capsys, ["new", str(folder), "--rubric", str(RUBRIC)], "U+202E")
    assert "\u202e" not in err and "\\u202e" in err and not folder.exists()


def test_hugging_face_card_holds_rubric_texts_as_data(tmp_path):
    """Rubric texts with Markdown, HTML and YAML in them are escaped in the dataset card."""
    rubric = tmp_path / "evil.toml"
    rubric.write_text(
        RUBRIC.read_text(encoding="utf-8")
        .replace(
            'instructions = """Judge only',
            'instructions = """# Ignore the rubric\n---\nlicense: evil\n'
            "<script>alert(1)</script> ![x](http://e.example/p.png) [click](http://e.example)\n"
            "| fake | row |\nJudge only",
            1,
        )
        .replace('label = "UI affordance"', 'label = "UI | `affordance` <b>x</b>"', 1),
        encoding="utf-8",
    )
    study = _answered(tmp_path / "x", rubric, ["ok", "fine"], name="card study")
    out = tmp_path / "hf"
    export_hf(study, out, n_boot=20)
    study.close()
    card = (out / "README.md").read_text(encoding="utf-8")
    _, front, body = card.split("---\n", 2)
    meta = yaml.safe_load(front)
    assert set(meta) == {"pretty_name", "tags", "configs"} and meta["pretty_name"] == "card study"
    assert "license" not in meta and "\n---\n" not in body  # no second front matter
    prose = re.sub(r"(`+).*?\1", "", body)  # code spans (the verdict rules' >=) show as written
    assert not re.search(r"(?<!\\)[<>]", prose), "an HTML tag Markdown would pass through"
    assert "![" not in body and "](" not in body  # no image, no link
    headings = [x for x in body.splitlines() if x.startswith("#")]
    assert not any("Ignore" in h for h in headings), headings
    assert "\\# Ignore the rubric" in body and "\\<script\\>" in body
    row = next(x for x in body.splitlines() if x.startswith("| `ui_affordance`"))
    assert row.replace("\\|", "").count("|") == 6, row  # the label's | does not add a cell
    assert not any(x.startswith("| fake") for x in body.splitlines())


def test_hugging_face_card_study_name_with_yaml_and_astral_characters(tmp_path):
    """A study name with quotes, a colon and an emoji is read back from the card's YAML as is."""
    name = 'pilot: "A|B" \U0001f600 #1'
    study = _answered(tmp_path / "x", RUBRIC, ["ok"], name=name)
    export_hf(study, tmp_path / "hf", n_boot=20)
    study.close()
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert yaml.safe_load(card.split("---\n", 2)[1])["pretty_name"] == name


def test_error_line_escapes_terminal_controls(tmp_path, capsys):
    """A file name with ESC or U+202E is shown escaped in the one line, never sent raw."""
    bad = tmp_path / "x\x1b[31mred\u202e.csv"
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    err = _one_line(capsys, ["import", "ratings", str(bad), "--study", str(folder)], "\\u001b[31m")
    assert "\x1b" not in err and "\u202e" not in err and "\\u202e" in err


def test_input_error_one_line_is_the_escaped_message():
    """InputError keeps a plain message plain (the escape touches only invisible characters)."""
    e = InputError("rater 'zoë' unknown", source="a b.csv", line=3, field="rater")
    assert e.one_line() == "a b.csv:3, field 'rater': rater 'zoë' unknown"


# ---- the fourth pass: special files never hang the tool ------------------------------------------


def _annotator(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`annotator ARGS` in a child with a time limit: a hang fails the test instead of the run."""
    return subprocess.run(
        [sys.executable, "-m", "annotator", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**_env(), "PYTHONPATH": str(REPO)},
        cwd=cwd,
    )


@pytest.fixture
def with_items(tmp_path) -> tuple[Path, Path]:
    """(a study with items, the folder of their manifest)."""
    folder = tmp_path / "st"
    Study.create(folder, RUBRIC).close()
    src = tmp_path / "src"
    assert (
        main(["import", "items", str(write_manifest(src, basic_rows(src))), "--study", str(folder)])
        == 0
    )
    return folder, src


@pytest.mark.parametrize(
    "what",
    ["manifest", "image", "ratings", "rubric", "map", "anchors", "folder image", "study"],
)
def test_a_pipe_named_as_an_input_is_one_line_not_a_hang(with_items, tmp_path, what):
    folder, src = with_items
    fifo = tmp_path / {"study": "fifo-study"}.get(what, "pipe")
    if what == "study":
        (fifo).mkdir()
        os.mkfifo(fifo / DB_NAME)
        args, needle = ["status", "--study", str(fifo)], "is not a study file"
    else:
        os.mkfifo(fifo)
        args, needle = {
            "manifest": (["import", "items", str(fifo), "--study", str(folder)], "not a regular"),
            "image": (None, "not a regular"),
            "ratings": (["import", "ratings", str(fifo), "--study", str(folder)], "not a regular"),
            "rubric": (["new", str(tmp_path / "new"), "--rubric", str(fifo)], "not a regular"),
            "map": (
                [
                    "import",
                    "label-studio",
                    str(INTEROP / "label_studio" / "export.json"),
                    "--study",
                    str(folder),
                    "--map",
                    str(fifo),
                ],
                "not a regular",
            ),
            "anchors": (["import", "anchors", str(fifo), "--study", str(folder)], "not a regular"),
            "folder image": (None, "not a regular"),
        }[what]
        if what == "image":
            man = src / "fifo.jsonl"
            man.write_text(
                '{"item_id": "p1", "case_id": "c9", "prompt": "x", "generator": "g", '
                '"images": ["pipe.png"]}\n'
            )
            os.mkfifo(src / "pipe.png")
            args = ["import", "items", str(man), "--study", str(folder)]
        if what == "folder image":
            shots = tmp_path / "shots" / "case1"
            shots.mkdir(parents=True)
            (shots / "prompt.txt").write_text("a login screen")
            os.mkfifo(shots / "gen-a.png")
            args = ["import", "folder", str(shots.parent), "--study", str(folder)]
    r = _annotator(args, tmp_path)
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip()
    assert "\n" not in err and "Traceback" not in err and needle in err, err


def test_dev_zero_as_a_manifest_and_a_huge_sparse_image_are_refused_by_size(with_items, tmp_path):
    folder, src = with_items
    r = _annotator(["import", "items", "/dev/zero", "--study", str(folder)], tmp_path)
    assert r.returncode == 2 and "not a regular file" in r.stderr, r.stderr
    big = src / "huge.png"
    with open(big, "wb") as fh:  # 5 GB on paper, nothing on disk
        fh.truncate(5 * 1024**3)
    man = src / "huge.jsonl"
    man.write_text(
        '{"item_id": "h1", "case_id": "c9", "prompt": "x", "generator": "g", "images": ["huge.png"]}\n'
    )
    r = _annotator(["import", "items", str(man), "--study", str(folder)], tmp_path)
    assert r.returncode == 2, r.stderr
    assert "5.0 GiB, more than the 1.0 GiB annotator reads" in r.stderr


def test_a_pipe_named_keys_toml_is_ignored_with_a_word(tmp_path, monkeypatch):
    from annotator.ui.settings import AppSettings

    monkeypatch.setenv("ANNOTATOR_SETTINGS", str(tmp_path / "annotator.ini"))
    os.mkfifo(tmp_path / "keys.toml")
    overrides, problems = AppSettings().key_overrides_checked()
    assert overrides == {} and problems and "not a regular file" in problems[0]


def test_ratings_dated_in_2099_are_refused_by_the_rule_of_every_answers_time(
    populated, tmp_path, capsys
):
    folder = populated.folder
    populated.close()
    path = tmp_path / "r.csv"
    path.write_text(
        "item_id,rater,metric,value,partial,created_at\n"
        "it-0-0,ann,layout_hierarchy,3,yes,2099-05-01T10:00:00\n"
    )
    err = _one_line(
        capsys,
        ["import", "ratings", str(path), "--study", str(folder)],
        "more than a day after now",
    )
    assert f"{path}:2, field 'created_at'" in err


@pytest.mark.parametrize(
    "second, needle",
    [
        ("Jose\u0301", "already exists"),  # NFD of the NFC name: one name
        ("\u0430na", "reads like the rater 'ana'"),  # Cyrillic а
        ("\uff21\uff2e\uff21", "reads like the rater 'ana'"),  # fullwidth ＡＮＡ
        ("Ana", "reads like the rater 'ana'"),
        ("../../x", "path separator"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", "only dots"),
    ],
    ids=["nfd", "cyrillic", "fullwidth", "case", "dotdot", "slash", "backslash", "dots"],
)
def test_a_raters_name_that_reads_like_another_or_holds_a_path_is_refused(
    populated, capsys, second, needle
):
    folder = str(populated.folder)
    populated.close()
    for first in ("José", "ana"):
        assert main(["rater", "add", first, "--study", folder]) == 0
    _one_line(capsys, ["rater", "add", second, "--study", folder], needle)
    with sqlite3.connect(Path(folder) / DB_NAME) as c:
        names = sorted(n for (n,) in c.execute("SELECT name FROM raters"))
    assert names == sorted(["José", "ana"])


def test_an_import_naming_a_look_alike_rater_is_refused_whole(populated, tmp_path, capsys):
    folder = str(populated.folder)
    populated.close()
    assert main(["rater", "add", "ana", "--study", folder]) == 0
    path = tmp_path / "r.csv"
    path.write_text("item_id,rater,metric,value,partial\nit-0-0,\u0430na,layout_hierarchy,3,yes\n")
    _one_line(capsys, ["import", "ratings", str(path), "--study", folder], "reads like the rater")
    assert _count(Path(folder) / DB_NAME, "judgements") == 0


def test_an_import_killed_midway_leaves_no_folder_the_next_one_keeps(with_items, tmp_path):
    """The scratch folder of an import killed by a timeout is removed by the next import; a
    living process's is left alone."""
    import tempfile

    folder, src = with_items
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead = int(gone.stdout)
    stale = Path(tempfile.gettempdir()) / f"annotator-import-{dead}-killed"
    stale.mkdir()
    (stale / "half.png").write_bytes(b"x" * 100)
    living = Path(tempfile.gettempdir()) / f"annotator-import-{os.getppid()}-working"
    living.mkdir(exist_ok=True)
    try:
        rows = basic_rows(src, n_cases=4)
        assert (
            main(
                [
                    "import",
                    "items",
                    str(write_manifest(src, rows, "more.jsonl")),
                    "--study",
                    str(folder),
                ]
            )
            == 0
        )
        assert not stale.exists() and living.exists()
    finally:
        shutil.rmtree(stale, ignore_errors=True)
        shutil.rmtree(living, ignore_errors=True)


def test_assign_on_demand_adds_the_raters_it_names(populated, capsys):
    folder = str(populated.folder)
    populated.close()
    assert (
        main(["assign", "--study", folder, "--on-demand", "--overlap", "2", "--raters", "ana,ben"])
        == 0
    )
    assert "added 2 raters: ana, ben" in capsys.readouterr().out
    with sqlite3.connect(Path(folder) / DB_NAME) as c:
        assert sorted(n for (n,) in c.execute("SELECT name FROM raters")) == ["ana", "ben"]
