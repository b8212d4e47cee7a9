"""Imported judge scores can be corrected (`annotator import judge FILE --replace`): the file's
scores become the judge's new version, the earlier ones stay beside them for `judge compare`, and
the refusal of a plain re-import says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from factories import basic_rows, write_manifest

from annotator.cli import main
from annotator.services.reporting import study_frames
from annotator.services.study import Study

REPO = Path(__file__).resolve().parents[2]


def _study(tmp_path: Path) -> Path:
    folder = tmp_path / "st"
    assert main(["new", str(folder), "--rubric", str(REPO / "rubrics" / "ui_mockup.toml")]) == 0
    src = tmp_path / "src"
    man = write_manifest(src, basic_rows(src))
    assert main(["import", "items", str(man), "--study", str(folder)]) == 0
    return folder


def _scores(path: Path, values: dict[str, int]) -> Path:
    path.write_text(
        "item_id,judge,metric,value\n"
        + "".join(f"{item},gpt,layout_hierarchy,{v}\n" for item, v in values.items())
    )
    return path


def _versions(folder: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(folder / "study.sqlite") as c:
        return c.execute(
            "SELECT version, count(*) FROM judge_scores GROUP BY version ORDER BY min(id)"
        ).fetchall()


def test_a_corrected_judge_file_replaces_the_scores_and_keeps_the_old(tmp_path, capsys):
    folder = _study(tmp_path)
    first = _scores(tmp_path / "judge.csv", {"it-0-0": 5, "it-0-1": 4, "it-1-0": 1})
    assert main(["import", "judge", str(first), "--study", str(folder)]) == 0
    fixed = _scores(tmp_path / "judge-fixed.csv", {"it-0-0": 5, "it-0-1": 2, "it-1-0": 1})
    capsys.readouterr()

    # a plain re-import is refused whole, and the refusal names the way out
    assert main(["import", "judge", str(fixed), "--study", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "already in the study" in err and "--replace" in err
    assert _versions(folder) == [("import", 3)]

    assert main(["import", "judge", str(fixed), "--replace", "--study", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "gpt@import-2" in out and "earlier scores stay" in out
    assert _versions(folder) == [("import", 3), ("import-2", 3)]
    study = Study.open(folder)
    try:
        frames = study_frames(study)
    finally:
        study.close()
    now = frames.judge_scores.set_index("item_id")["value"].to_dict()
    assert now == {"it-0-0": 5, "it-0-1": 2, "it-1-0": 1}  # the figures read the correction
    assert len(frames.judge_score_versions) == 6

    # the two versions compare on the same items: one changed answer
    assert (
        main(
            [
                "judge",
                "compare",
                "--study",
                str(folder),
                "--judge",
                "gpt@import",
                "--judge",
                "gpt@import-2",
            ]
        )
        == 0
    )
    assert "import-2" in capsys.readouterr().out

    # the same file again with --replace adds nothing
    assert main(["import", "judge", str(fixed), "--replace", "--study", str(folder)]) == 0
    assert "nothing new" in capsys.readouterr().out
    assert _versions(folder) == [("import", 3), ("import-2", 3)]

    # a second correction is the third version
    again = _scores(tmp_path / "judge-3.csv", {"it-0-0": 3, "it-0-1": 2, "it-1-0": 1})
    assert main(["import", "judge", str(again), "--replace", "--study", str(folder)]) == 0
    assert [v for v, _n in _versions(folder)] == ["import", "import-2", "import-3"]


def test_replace_on_a_judge_never_imported_is_a_plain_import(tmp_path, capsys):
    folder = _study(tmp_path)
    f = _scores(tmp_path / "judge.csv", {"it-0-0": 5})
    assert main(["import", "judge", str(f), "--replace", "--study", str(folder)]) == 0
    assert "gpt@import" in capsys.readouterr().out
    assert _versions(folder) == [("import", 1)]
