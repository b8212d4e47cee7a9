"""The team server in operation: on-demand claims that expire or are released,
and the operators' backup and restore of a server study with its rater roles."""

from __future__ import annotations

import time
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
    """Rater login roles on PostgreSQL: one claims and quits, the lead runs
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


def test_an_app_holds_one_connection_and_the_setting_says_how_many(
    pg_server, tmp_path, monkeypatch
):
    """A rater's app keeps one connection (100 raters: 100 of max_connections);
    ANNOTATOR_PG_POOL changes it; a bad value is one line naming the variable."""
    import pytest

    from annotator.domain.errors import InputError
    from annotator.store.server import POOL_ENV, make_server_engine, server_url

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    study = _on_demand_study(url, tmp_path)
    study.close()
    study = Study.open(url)
    try:
        session = LabelSession(study, "keeper")
        for _ in range(3):
            session.submit(session.next(), ALL, 3)
        assert study.db.engine.pool.size() == 1
        with study.db.read() as s:
            n = s.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = :d "
                    "AND application_name = 'annotator'"
                ),
                {"d": database},
            ).scalar()
        assert n == 1
    finally:
        study.close()
    monkeypatch.setenv(POOL_ENV, "3")
    assert make_server_engine(server_url(url)).pool.size() == 3
    monkeypatch.setenv(POOL_ENV, "lots")
    with pytest.raises(InputError, match="ANNOTATOR_PG_POOL"):
        make_server_engine(server_url(url))


def test_a_migration_on_a_live_server_waits_for_raters_and_never_deadlocks(pg_server, tmp_path):
    """A rater's transaction holds one table the migration alters and then takes another it
    already altered: the migration gives way (short lock waits, retried) and lands; the rater's
    transaction is never aborted."""
    import threading

    import psycopg

    from annotator.store.engine import downgrade, head_revision
    from annotator.store.server import make_server_engine, server_url

    url = pg_server.new_database()
    Study.create(url, "ui_mockup").close()
    engine = make_server_engine(server_url(url))
    downgrade(engine, "0007")  # 0008 puts triggers on judgements and pair_votes, in that order
    engine.dispose()
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    holding, errors, seen = threading.Event(), [], []

    def migration_waiting(watch: psycopg.Connection) -> bool:
        """Whether another backend waits on a table lock (the migration's LOCK TABLE)."""
        row = watch.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND query ILIKE 'LOCK TABLE%ACCESS EXCLUSIVE%'"
        ).fetchone()
        return bool(row and row[0])

    def rater() -> None:
        try:
            with (
                psycopg.connect(plain, autocommit=True) as watch,
                psycopg.connect(plain) as conn,  # one transaction, as a rater's write
            ):
                conn.execute("LOCK TABLE pair_votes IN ROW EXCLUSIVE MODE")
                holding.set()
                deadline, saw = time.monotonic() + 30, False
                while not saw and time.monotonic() < deadline:
                    saw = migration_waiting(watch)  # until the migration waits on this lock
                    time.sleep(0.005)
                seen.append(saw)
                # the migration holds judgements and waits for pair_votes: a lock cycle
                conn.execute("LOCK TABLE judgements IN ROW EXCLUSIVE MODE")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t = threading.Thread(target=rater)
    t.start()
    assert holding.wait(10)
    study = Study.open(url)  # opened to work in: migrates
    try:
        t.join(30)
        assert errors == []
        assert seen and seen[0] is True  # the migration began while the rater held its lock
        with study.db.read() as s:
            assert s.execute(text("SELECT version_num FROM alembic_version")).scalar() == (
                head_revision()
            )
    finally:
        study.close()


def _grants(study: Study, group: str) -> set[tuple[str, ...]]:
    with study.db.read() as s:
        tables = s.execute(
            text(
                "SELECT table_name, privilege_type, '' FROM information_schema.role_table_grants "
                "WHERE grantee = :g"
            ),
            {"g": group},
        ).all()
        columns = s.execute(
            text(
                "SELECT table_name, privilege_type, column_name "
                "FROM information_schema.column_privileges WHERE grantee = :g"
            ),
            {"g": group},
        ).all()
    return {tuple(r) for r in [*tables, *columns]}


def test_a_migration_grants_the_rater_roles_again(pg_server, tmp_path):
    """A study whose rater roles were set up, migrated later (here: brought down to 0005 and
    opened by the lead, which migrates it): the columns and tables the migration made get their
    grants again without the lead running `annotator roles`, and a rater role labels."""
    from annotator.store import roles
    from annotator.store.engine import downgrade
    from annotator.store.server import make_server_engine, server_url

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    lead = _on_demand_study(url, tmp_path)
    rater = "keeper"
    try:
        _, _, group = roles.apply_roles(lead.db, database, [rater, "quitter"])
        login = roles.logins_of(lead.db)[rater]
        granted = _grants(lead, group)
    finally:
        lead.close()
    engine = make_server_engine(server_url(url))
    downgrade(engine, "0005")
    engine.dispose()
    lead = Study.open(url)  # the lead opens it to work in: migrated, roles granted again
    try:
        assert _grants(lead, group) == granted
        study = Study.open(url.replace("postgres@", f"{login}@", 1))
        try:
            session = LabelSession(study, rater)
            served = session.next()
            session.submit(served, ALL, 3)
            assert session.next() is not None
        finally:
            study.close()
    finally:
        roles.drop_roles(lead.db, database)
        lead.close()


def test_backup_restore_with_roles_and_the_dump_before_a_migration(
    pg_server, tmp_path, monkeypatch
):
    """The backup of docs/team.md ("Team server", Backups): `pg_dump` of the study (and the roles, which pg_dump leaves out:
    `pg_dumpall --roles-only` / `annotator roles --print`), restored into a new database, roles
    applied there, a rater role labels in it. And a migration dumps the study first."""
    import subprocess

    import psycopg

    from annotator.store import roles
    from annotator.store.engine import downgrade
    from annotator.store.server import make_server_engine, server_url
    from annotator.store.server_migrate import BACKUP_ENV

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    lead = _on_demand_study(url, tmp_path)
    try:
        roles.apply_roles(lead.db, database, ["keeper"])
        session = LabelSession(lead, "quitter")
        for _ in range(2):
            session.submit(session.next(), ALL, 3)
        n_before, n_items = lead.counts()["judgements"], lead.counts()["items"]
    finally:
        lead.close()
    dump = tmp_path / "study.dump"
    subprocess.run(["pg_dump", "--format=custom", "--file", str(dump), plain], check=True)
    roles_sql = subprocess.run(
        ["pg_dumpall", "--roles-only", "--dbname", plain], check=True, capture_output=True
    ).stdout
    assert b"CREATE ROLE" in roles_sql
    restored = pg_server.new_database()
    new_db = restored.rsplit("/", 1)[1]
    subprocess.run(
        ["pg_restore", "--no-owner", "--dbname", restored.replace("+psycopg", ""), str(dump)],
        check=True,
    )
    copy = Study.open(restored)
    try:
        assert copy.counts()["judgements"] == n_before
        # `annotator roles` on the restored study (on another cluster, after the roles' SQL)
        _, _, group = roles.apply_roles(copy.db, new_db, ["keeper"])
        login = roles.logins_of(copy.db)["keeper"]
        rater = Study.open(restored.replace("postgres@", f"{login}@", 1))
        try:
            assert len(_take_all(rater, "keeper")) == n_items - 2  # the items still open
        finally:
            rater.close()
    finally:
        copy.close()
    # same cluster here: the restored study shares the roles; its grants go before they are dropped
    with psycopg.connect(restored.replace("+psycopg", ""), autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("DROP OWNED BY {}, {}").format(
                psycopg.sql.Identifier(group), psycopg.sql.Identifier(login)
            )
        )
    # a migration dumps the study first, into ANNOTATOR_PG_BACKUP_DIR
    monkeypatch.setenv(BACKUP_ENV, str(tmp_path / "backups"))
    engine = make_server_engine(server_url(url))
    downgrade(engine, "0007")
    engine.dispose()
    Study.open(url).close()
    (made,) = (tmp_path / "backups").glob(f"{database}.bak-0007-*.dump")
    listing = subprocess.run(["pg_restore", "--list", str(made)], capture_output=True, text=True)
    assert listing.returncode == 0 and "TABLE DATA public judgements" in listing.stdout
    lead = Study.open(url)
    try:
        roles.drop_roles(lead.db, database)
    finally:
        lead.close()


def test_an_answer_committed_but_never_acknowledged_syncs_once_from_the_package(
    pg_server, tmp_path
):
    """The server committed an answer whose acknowledgement was lost; the app stored
    it again offline, under the same UUID (the carried answer keeps its id): the sync finds it
    there, nothing clashes, nothing waits."""
    from sqlalchemy import text as sql_text

    from annotator.services.outbox import Outbox

    url = pg_server.new_database()
    server = _on_demand_study(url, tmp_path)
    server.db.set_setting("deal_on_demand", None)  # back to dealt lists
    try:
        box = Outbox(server, "keeper", tmp_path / "outbox")
        box.prepare()
        local_items = box.local_items
        online = LabelSession(server, "keeper")
        served = online.next()
        uid = "0190a0a0-0000-7000-8000-000000000001"
        online.submit(served, ALL, 3, uid)  # committed; the app never heard back
        package = Study.open(box.path)
        try:
            offline = LabelSession(package, "keeper")
            again = offline.next()
            assert again.item_pk == local_items[served.item_pk]  # the same item, not yet known here
            offline.submit(again, ALL, 3, uid)  # the carried answer, same UUID
        finally:
            package.close()
        result = box.sync()
        assert result is not None and not result.conflicts
        assert box.pending() == 0
        with server.db.read() as s:
            n = s.execute(sql_text("SELECT count(*) FROM judgements")).scalar()
            clashes = s.execute(sql_text("SELECT count(*) FROM merge_conflicts")).scalar()
        assert n == 1 and clashes == 0
    finally:
        server.close()
