"""`annotator judge run` end to end: a real study, the real openai client, a
local OpenAI-compatible server; failures recorded, exit 3, a rerun scores
exactly what is missing."""

from __future__ import annotations

import sqlite3

from factories import basic_rows, write_manifest
from judge_server import JudgeServer, Raw, Status

from annotator.cli import main


def _study(tmp_path, rubric_path):
    folder = tmp_path / "st"
    assert main(["new", str(folder), "--rubric", str(rubric_path)]) == 0
    src = tmp_path / "src"
    rows = basic_rows(src, n_cases=2)
    for r in rows:
        r["prompt"] += f" [[{r['item_id']}]]"  # a marker the test server scripts by
    assert main(["import", "items", str(write_manifest(src, rows)), "--study", str(folder)]) == 0
    return folder


def test_judge_run_records_errors_exits_3_and_resumes(tmp_path, rubric_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = _study(tmp_path, rubric_path)
    with JudgeServer().start() as server:
        server.script("[[it-0-1]]", *[Status(500)] * 10)
        server.script("[[it-1-2]]", Raw("{not json"), Raw("{still not json"))
        args = [
            "judge",
            "run",
            "--study",
            str(folder),
            "--model",
            "local-judge",
            "--base-url",
            server.base_url,
            "--max-retries",
            "1",
            "--concurrency",
            "2",
            "--timeout",
            "10",
        ]
        assert main(args) == 3
        out = capsys.readouterr()
        assert "failed 2" in out.out and "run `annotator judge run` again" in out.err
        with sqlite3.connect(folder / "study.sqlite") as c:
            scored = {
                r[0]
                for r in c.execute(
                    "select distinct i.item_id from judge_scores s join items i on i.id = s.item_pk"
                )
            }
            errs = dict(
                c.execute(
                    "select i.item_id, e.kind from judge_errors e join items i on i.id = e.item_pk"
                )
            )
            raw = c.execute(
                "select raw from judge_errors where kind = 'malformed_json'"
            ).fetchone()[0]
            run = c.execute("select model, prompt_sha256, kind from judge_runs").fetchone()
        assert len(scored) == 4 and "it-0-1" not in scored and "it-1-2" not in scored
        assert errs == {"it-0-1": "server_error", "it-1-2": "malformed_json"}
        assert raw == "{still not json"
        assert run[0] == "local-judge" and len(run[1]) == 64 and run[2] == "llm"

        server.clear_scripts()
        server.reset_stats()
        assert main(args) == 0
        called = {c.marker for c in server.calls}
        assert called == {"[[it-0-1]]", "[[it-1-2]]"}  # exactly the unscored ones
    with sqlite3.connect(folder / "study.sqlite") as c:
        n_items = c.execute("select count(distinct item_pk) from judge_scores").fetchone()[0]
        bodies = c.execute(
            "select value from judge_scores where metric = 'layout_hierarchy'"
        ).fetchall()
    assert n_items == 6 and all(0 <= int(b[0]) <= 5 for b in bodies)


def test_judge_run_without_key_or_url_is_bad_input(tmp_path, rubric_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = _study(tmp_path, rubric_path)
    assert main(["judge", "run", "--study", str(folder), "--model", "gpt-x"]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_judge_run_survives_broken_bodies_and_missing_media(
    tmp_path, rubric_path, monkeypatch, capsys
):
    """A 200 with an empty, garbage, HTML or 100,000-deep body, and an item whose image file is gone:
    each is a stored per-item error with its raw text (bounded); the run goes on, exits 3, and a
    rerun retries exactly those items."""
    from judge_server import Body, Ok

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = _study(tmp_path, rubric_path)
    deep = b"[" * 100_000 + b"]" * 100_000
    bodies = {
        "[[it-0-0]]": b"",
        "[[it-0-1]]": b"\x00\xff garbage \x01",
        "[[it-0-2]]": b"<html><body>502 Bad Gateway</body></html>" * 5000,
        "[[it-1-0]]": deep,
    }
    with sqlite3.connect(folder / "study.sqlite") as c:
        sha = c.execute(
            "select m.media_sha256 from item_media m join items i on i.id = m.item_pk "
            "where i.item_id = 'it-1-1'"
        ).fetchone()[0]
    gone = folder / "media" / sha[:2] / f"{sha}.png"
    kept = gone.read_bytes()
    gone.unlink()
    with JudgeServer().start() as server:
        for marker, data in bodies.items():
            server.script(marker, Body(data), Body(data))
        args = [
            "judge",
            "run",
            "--study",
            str(folder),
            "--model",
            "local-judge",
            "--base-url",
            server.base_url,
            "--max-retries",
            "0",
            "--concurrency",
            "2",
            "--timeout",
            "10",
        ]
        assert main(args) == 3
        assert "failed 5" in capsys.readouterr().out
        with sqlite3.connect(folder / "study.sqlite") as c:
            errs = {
                iid: (kind, raw)
                for iid, kind, raw in c.execute(
                    "select i.item_id, e.kind, e.raw from judge_errors e join items i on i.id = e.item_pk"
                )
            }
        assert {k: v[0] for k, v in errs.items()} == {
            "it-0-0": "bad_reply",
            "it-0-1": "bad_reply",
            "it-0-2": "bad_reply",
            "it-1-0": "bad_reply",
            "it-1-1": "bad_input",
        }
        assert "502 Bad Gateway" in errs["it-0-2"][1] and len(errs["it-0-2"][1]) < 70_000  # bounded
        assert len(errs["it-1-0"][1]) < 70_000
        server.clear_scripts()
        server.reset_stats()
        for marker in [*bodies, "[[it-1-1]]"]:
            server.script(marker, Ok())
        gone.write_bytes(kept)
        assert main(args) == 0
        assert {c.marker for c in server.calls} == set(bodies) | {"[[it-1-1]]"}
