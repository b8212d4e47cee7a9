"""The command line of docs/design.md 5.4 on real files: folder and harness imports,
raters and operators, status, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from factories import basic_rows, make_png, write_manifest

from annotator.cli import main

REPO = Path(__file__).resolve().parents[2]


def _study(tmp_path) -> str:
    st = str(tmp_path / "st")
    assert main(["new", st, "--rubric", str(REPO / "rubrics" / "ui_mockup.toml")]) == 0
    return st


def test_import_folder_of_images(tmp_path, capsys):
    st = _study(tmp_path)
    root = tmp_path / "shots"
    for case in ("login", "checkout"):
        (root / case).mkdir(parents=True)
        (root / case / "prompt.txt").write_text(f"A {case} screen")
        for g, colour in (("gen-a", (10, 10, 10)), ("gen-b", (200, 10, 10))):
            make_png(root / case / f"{g}.png", colour=colour)
    assert main(["import", "folder", str(root), "--study", st]) == 0
    assert "imported 4 items" in capsys.readouterr().out
    assert main(["status", "--study", st]) == 0
    out = capsys.readouterr().out
    assert "items           4" in out and "cases           2" in out
    (root / "empty_case").mkdir()
    assert main(["import", "folder", str(root), "--study", st]) == 2
    assert "missing prompt.txt" in capsys.readouterr().err


def test_import_harness_via_cli_and_missing_cases_flag(tmp_path, capsys):
    st = _study(tmp_path)
    h = tmp_path / "h"
    make_png(h / "a.png")
    (h / "cases.jsonl").write_text(
        json.dumps(
            {
                "id": "t1",
                "task_type": "ui",
                "prompt": "Login screen",
                "criteria": "Has a sign-in button",
            }
        )
        + "\n"
    )
    (h / "results.json").write_text(
        json.dumps(
            {
                "results": [
                    {
                        "test_id": "t1",
                        "model_label": "m1",
                        "task_type": "ui",
                        "artifact_paths": ["a.png"],
                        "scores": {"text_rendering": "PASS"},
                        "reasons": {"text_rendering": "spelled right"},
                        "run_params": {},
                    }
                ]
            }
        )
    )
    assert main(["import", "harness", str(h / "results.json"), "--study", st]) == 2
    assert "--cases" in capsys.readouterr().err
    assert (
        main(
            [
                "import",
                "harness",
                str(h / "results.json"),
                "--cases",
                str(h / "cases.jsonl"),
                "--study",
                st,
            ]
        )
        == 0
    )
    assert "imported 1 item and 1 judge score" in capsys.readouterr().out
    (h / "results.json").write_text("[{]")
    assert (
        main(
            [
                "import",
                "harness",
                str(h / "results.json"),
                "--cases",
                str(h / "cases.jsonl"),
                "--study",
                st,
            ]
        )
        == 2
    )
    assert "results.json:1: not valid JSON" in capsys.readouterr().err


def test_raters_and_operators(tmp_path, capsys):
    st = _study(tmp_path)
    assert main(["rater", "add", "alice", "--study", st, "--expertise", "UI designer"]) == 0
    assert main(["rater", "add", "ops", "--study", st, "--operator"]) == 0
    assert main(["rater", "add", "alice", "--study", st]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["rater", "list", "--study", st]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.rstrip("\t") for line in lines] == ["alice\trater\tUI designer", "ops\toperator"]


def test_report_without_a_destination_goes_to_exports_and_module_entry_point(
    tmp_path, capsys, monkeypatch
):
    st = _study(tmp_path)
    monkeypatch.chdir(tmp_path)  # the default folder is relative to where the command runs
    assert main(["report", "--study", st, "--boot", "50"]) == 0
    written = sorted(
        p.relative_to(tmp_path).as_posix() for p in (tmp_path / "exports").rglob("report.*")
    )
    assert len(written) == 2 and all(p.startswith("exports/st/") for p in written)
    done = subprocess.run(
        [sys.executable, "-m", "annotator", "status", "--study", st], capture_output=True, text=True
    )
    assert done.returncode == 0 and "rubric ui_mockup" in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "annotator", "status", "--study", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_import_formats_and_options_come_from_one_table():
    """The CLI's `import` choices and flags are the importers' table: a format or option named
    in one place only fails here (and importing services.importers fails on a format without code)."""
    import argparse
    import inspect

    from annotator.cli import build_parser
    from annotator.services.import_kinds import KINDS, OPTIONS
    from annotator.services.importers import IMPORTERS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    imp = sub.choices["import"]
    kind = next(a for a in imp._actions if a.dest == "kind")
    assert tuple(kind.choices) == tuple(IMPORTERS) == tuple(KINDS)
    flags = {a.dest: a.option_strings for a in imp._actions}
    for option in OPTIONS.values():
        assert flags[option.name] == [option.flag]
    for importer in IMPORTERS.values():
        takes = set(inspect.signature(importer.run).parameters) - {"study", "path"}
        assert takes == set(importer.options), importer.name
        assert importer.name in (imp.epilog or "")


def test_export_kinds_are_the_exports_tables_and_building_the_parser_loads_none():
    """`annotator export KIND` takes each table of services/exports.TABLES and the two layouts,
    read from there (a table added there is a kind here), and only when the kind is checked."""
    code = (
        "import sys, argparse\n"
        "from annotator.cli import build_parser\n"
        "p = build_parser()\n"
        "assert 'annotator.services.exports' not in sys.modules\n"
        "sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))\n"
        "kind = next(a for a in sub.choices['export']._actions if a.dest == 'kind')\n"
        "print(','.join(kind.choices))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout.strip()
    from annotator.services.exports import TABLES

    assert out.split(",") == [*TABLES, "label-studio", "hf"]


def test_an_unknown_export_kind_is_refused_naming_the_kinds(tmp_path, capsys):
    st = _study(tmp_path)
    assert main(["export", "nothing", "--study", st]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nothing'" in err and "judge-scores" in err and "hf" in err


def test_an_import_says_what_it_added_and_nothing_new_when_nothing_was(tmp_path, capsys):
    st = _study(tmp_path)
    src = tmp_path / "src"
    man = write_manifest(src, basic_rows(src, n_cases=2, gens=("a", "b")))
    assert main(["import", "items", str(man), "--study", st]) == 0
    assert "imported 4 items" in capsys.readouterr().out
    assert main(["import", "items", str(man), "--study", st]) == 0
    out = capsys.readouterr().out
    assert "nothing new" in out and "imported" not in out
    bigger = write_manifest(src, basic_rows(src, n_cases=3, gens=("a", "b")), "more.jsonl")
    assert main(["import", "items", str(bigger), "--study", st]) == 0
    assert "imported 2 items" in capsys.readouterr().out  # the two of the third case only
    one = write_manifest(src, basic_rows(src, n_cases=4, gens=("a", "b"))[-1:], "one.jsonl")
    assert main(["import", "items", str(one), "--study", st]) == 0
    assert "imported 1 item from" in capsys.readouterr().out


def test_a_seed_or_a_width_out_of_range_is_one_line(tmp_path, capsys):
    """`assign --seed 2**70` ("int too large to convert to SQLite INTEGER") and `plan --width
    1e-300` (OverflowError) were internal errors: each is one line naming the argument."""
    st = _study(tmp_path)
    for args, needle in (
        (["assign", "--study", st, "--seed", str(2**70)], "argument --seed"),
        (["assign", "--study", st, "--seed", "-1"], "argument --seed"),
        (["report", "--study", st, "--seed", str(2**40)], "argument --seed"),
        (["plan", "--study", st, "--width", "1e-300"], "argument --width"),
        (["plan", "--study", st, "--width", "nan"], "argument --width"),
    ):
        try:
            rc = main(args)
        except SystemExit as exc:
            rc = exc.code
        err = capsys.readouterr().err.strip()
        assert rc == 2 and "\n" not in err and needle in err, (args, err)
