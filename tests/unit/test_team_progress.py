"""The team's progress (`assignments.progress`, read on every refresh of the dashboard) counts
each rater's items with a first live answer, their anchors and their last activity, on either
engine; on SQLite the items come from the partial index of first live answers, not a read of
every answer (0.16 -> 0.09 s a refresh at a million judgements)."""

from __future__ import annotations

from factories import ANSWERS, answer_items, basic_rows, write_manifest
from sqlalchemy import text

from annotator.services.study import Study
from annotator.store.assignments import done_items, progress

FROM_THE_LOG = """
SELECT r.name,
       (SELECT count(DISTINCT j.item_pk) FROM judgements j
         WHERE j.rater_pk = r.id AND j.context = 'live' AND j.supersedes IS NULL),
       (SELECT count(*) FROM judgements j
         WHERE j.rater_pk = r.id AND j.context = 'anchor' AND j.supersedes IS NULL),
       (SELECT max(j.created_at) FROM judgements j WHERE j.rater_pk = r.id)
FROM raters r ORDER BY r.name
"""


def test_progress_counts_first_live_answers_once_on_either_engine(study_location, tmp_path):
    study = Study.create(study_location, "ui_mockup")
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src, n_cases=4)))
    for name in ("ada", "bo", "cy"):
        study.add_rater(name)
    session = answer_items(study, "ada", 5)
    again = session.back()  # a correction: a second answer to an item counted once
    session.submit(again, {**ANSWERS, "layout_hierarchy": 2}, 900)
    answer_items(study, "bo", 2)
    try:
        rows = progress(study.db)
        with study.db.read() as s:
            expected = s.execute(text(FROM_THE_LOG)).all()
    finally:
        study.close()
    got = [(r.rater, r.done, r.anchors, r.last_activity) for r in rows]
    assert got == [(n, d, a, _time(t)) for n, d, a, t in expected]
    assert [r.done for r in rows] == [5, 2, 0]


def _time(value):  # noqa: ANN001, ANN202 - SQLite gives the text, the ORM the datetime
    from datetime import datetime

    return datetime.fromisoformat(value) if isinstance(value, str) else value


def test_sqlite_reads_the_done_items_from_the_partial_index(tmp_path):
    study = Study.create(tmp_path / "study", "ui_mockup")
    try:
        with study.db.read() as s:
            sql = str(done_items().compile(s.bind))
            plan = " ".join(str(r) for r in s.execute(text("EXPLAIN QUERY PLAN " + sql)).all())
    finally:
        study.close()
    assert "likely(judgements.supersedes IS NULL)" in sql and "'live'" in sql
    assert "INDEX uq_judgement_live" in plan, plan
