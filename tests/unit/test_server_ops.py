"""The team server in operation (issue 29.5, 29.6): on-demand claims that expire or are released,
and the operators' backup and restore of a server study with its rater roles."""

from __future__ import annotations

from datetime import timedelta

from factories import basic_rows, write_manifest
from sqlalchemy import text

from annotator.cli import main
from annotator.services.labeling import LabelSession
from annotator.services.study import Study
from annotator.services.team import deal_on_demand
from annotator.store.models import utcnow

ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 4,
    "failure_tags": [],
}


def _on_demand_study(location, tmp_path, raters=("quitter", "keeper")):  # noqa: ANN001
    study = Study.create(location, "ui_mockup")
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src, n_cases=2, gens=("a", "b"))))
    study.set_setting("anchor_every", 0)
    deal_on_demand(study, overlap=1)
    for r in raters:
        study.add_rater(r)
    return study


def _take_all(study: Study, rater: str) -> list[int]:
    session = LabelSession(study, rater)
    got = []
    while (item := session.next()) is not None:
        session.submit(item, ALL, 3)
        got.append(item.item_pk)
    return got


def test_an_unanswered_claim_expires_after_the_setting(study_location, tmp_path):
    """A rater is shown an item and quits: 31 minutes on (default 30), another rater takes it."""
    study = _on_demand_study(study_location, tmp_path)
    try:
        n_items = study.counts()["items"]
        left = LabelSession(study, "quitter").next()
        assert left is not None  # claimed, never answered
        with study.db.write() as s:  # the claim is 31 minutes old
            s.execute(
                text("UPDATE assignments SET created_at = :t"),
                {"t": utcnow() - timedelta(minutes=31)},
            )
        got = _take_all(study, "keeper")
        assert left.item_pk in got and len(got) == n_items  # no slot left dead
    finally:
        study.close()


def test_a_claim_younger_than_the_setting_stays(study_location, tmp_path):
    study = _on_demand_study(study_location, tmp_path)
    try:
        study.set_setting("claim_expiry_minutes", 60)
        left = LabelSession(study, "quitter").next()
        with study.db.write() as s:
            s.execute(
                text("UPDATE assignments SET created_at = :t"),
                {"t": utcnow() - timedelta(minutes=31)},
            )
        got = _take_all(study, "keeper")
        assert left.item_pk not in got and len(got) == study.counts()["items"] - 1
    finally:
        study.close()


def test_assign_release_frees_a_raters_claims(study_location, tmp_path, capsys):
    study = _on_demand_study(study_location, tmp_path)
    where = str(study_location)
    try:
        left = LabelSession(study, "quitter").next()
    finally:
        study.close()
    assert main(["assign", "--study", where, "--release", "quitter"]) == 0
    assert "released 1 unanswered claim of quitter" in capsys.readouterr().out
    study = Study.open(where)
    try:
        got = _take_all(study, "keeper")
        assert left.item_pk in got and len(got) == study.counts()["items"]
    finally:
        study.close()


def test_release_on_a_dealt_study_says_there_is_nothing_to_release(tmp_path, capsys):
    study = Study.create(tmp_path / "s", "ui_mockup")
    study.add_rater("quitter")
    study.close()
    assert main(["assign", "--study", str(tmp_path / "s"), "--release", "quitter"]) == 2
    assert "deals fixed lists" in capsys.readouterr().err


def test_a_rater_roles_claim_released_by_the_lead_goes_to_another_rater_role(pg_server, tmp_path):
    """Rater login roles (issue 22) on PostgreSQL: one claims and quits, the lead runs
    `annotator assign --release`, the other takes every item."""
    import secrets

    from annotator.store import roles

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    quitter, keeper = (f"{n}_{secrets.token_hex(2)}" for n in ("quit", "keep"))
    lead = _on_demand_study(url, tmp_path, raters=(quitter, keeper))
    try:
        roles.apply_roles(lead.db, database, [quitter, keeper])
        login = roles.logins_of(lead.db)

        def as_rater(name: str) -> Study:
            return Study.open(url.replace("postgres@", f"{login[name]}@", 1))

        q = as_rater(quitter)
        try:
            left = LabelSession(q, quitter).next()
        finally:
            q.close()
        assert main(["assign", "--study", url, "--release", quitter]) == 0
        k = as_rater(keeper)
        try:
            got = _take_all(k, keeper)
        finally:
            k.close()
        assert left.item_pk in got and len(got) == lead.counts()["items"]
    finally:
        roles.drop_roles(lead.db, database)
        lead.close()
