"""A study on a PostgreSQL server: dropped connections lose and double nothing; dealing on
demand never gives the last open slot of an item to two raters."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from factories import basic_rows, write_manifest

from annotator.domain.errors import StudyBusy
from annotator.services.labeling import LabelSession
from annotator.services.study import Study
from annotator.store.faults import ConnectionLost

ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "ok",
}


def _admin(pg_server):
    import psycopg

    return psycopg.connect(pg_server.admin_url, autocommit=True)


def _retrying(fn, *args, deadline: float):
    """What the app does with a write that failed on a dropped connection: keep it, re-send it."""
    while True:
        try:
            return fn(*args)
        except (ConnectionLost, StudyBusy):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_killed_connections_mid_submit_lose_nothing_and_double_nothing(pg_server, pg_url, tmp_path):
    study = Study.create(pg_url, "ui_mockup")
    src = tmp_path / "src"
    # items enough to go on answering until the killer has cut a few writes (a fast machine
    # finished 30 answers once before it caught a single connection at work)
    study.import_items(write_manifest(src, basic_rows(src, n_cases=50, gens=("a", "b", "c", "d"))))
    study.add_rater("ann")
    session = LabelSession(study, "ann")
    db_name = pg_url.rsplit("/", 1)[1]
    stop = threading.Event()
    killed = [0]

    def killer() -> None:
        with _admin(pg_server) as conn:
            while not stop.is_set():
                n = conn.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s "
                    "AND application_name = 'annotator' AND state <> 'idle'",
                    (db_name,),
                ).fetchone()[0]
                killed[0] += n
                # often enough to catch a write of a few ms at work; a cut write is re-sent, so
                # writes still get through on a busy machine
                time.sleep(0.05)

    t = threading.Thread(target=killer, daemon=True)
    t.start()
    acked: list[int] = []
    deadline = time.monotonic() + 240
    try:
        while (item := _retrying(session.next, deadline=deadline)) is not None and (
            len(acked) < 30 or killed[0] < 3
        ):
            acked.append(_retrying(session.submit, item, ALL, 5, deadline=deadline))
    finally:
        stop.set()
        t.join(5)
    assert killed[0] >= 3, f"the test cut {killed[0]} connections at work in {len(acked)} answers"
    from sqlalchemy import text

    with study.db.read() as s:
        rows = s.execute(text("SELECT id, item_pk FROM judgements")).all()
    study.close()
    assert sorted(r[0] for r in rows) == sorted(
        acked
    )  # every acknowledged answer, once; nothing else
    assert len({r[1] for r in rows}) == len(rows)  # no item answered twice


def test_a_lost_connection_is_one_line(pg_server, pg_url):
    study = Study.create(pg_url, "ui_mockup")
    study.add_rater("ann")
    db_name = pg_url.rsplit("/", 1)[1]
    with _admin(pg_server) as conn:  # the server goes away for this database's sessions
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (db_name,)
        )
    # the pool's pre-ping replaces the dead connection: the next call simply works
    assert [r.name for r in study.raters()] == ["ann"]
    study.close()


def test_offline_outbox_keeps_answers_and_syncs_them_once(pg_url, tmp_path):
    from annotator.services.outbox import Outbox
    from annotator.services.team import assign

    server = Study.create(pg_url, "ui_mockup")
    src = tmp_path / "src"
    server.import_items(write_manifest(src, basic_rows(src, n_cases=4, gens=("a", "b", "c"))))
    assign(server, ["ann", "bob"], overlap=1, pair_overlap=None, seed=1)
    box = Outbox(server, "ann", tmp_path / "outbox")
    local_path = box.prepare()
    assert box.pending() == 0
    local = Study.open(local_path)  # the network is gone: the rater works on the local copy
    session = LabelSession(local, "ann")
    for _ in range(3):
        session.submit(session.next(), ALL, 5)
    local.close()
    assert box.pending() == 3
    result = box.sync()
    assert result.added["judgements"] == 3 and box.pending() == 0
    assert box.sync().added["judgements"] == 0  # again: nothing doubled
    box.prepare()  # the next connect: a fresh copy that already holds the synced answers
    assert box.pending() == 0
    server.close()


def _claimer(location: str, rater: str, n: int, out) -> None:
    try:
        study = Study.open(location)
        session = LabelSession(study, rater)
        got = []
        for _ in range(n):
            item = session.next()
            if item is None:
                break
            session.submit(item, ALL, 3)
            got.append(item.item_pk)
        study.close()
        out.put(got)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        out.put(f"{type(exc).__name__}: {exc}")


def test_dealing_on_demand_never_gives_the_last_slot_twice(study_location, tmp_path):
    """Six raters in six processes take items needing 2 raters each, all at once: every item ends
    with at most 2, and together they cover every slot."""
    import multiprocessing

    from annotator.services.team import deal_on_demand

    study = Study.create(study_location, "ui_mockup")
    src = tmp_path / "src"
    study.import_items(write_manifest(src, basic_rows(src, n_cases=5, gens=("a", "b", "c"))))
    deal_on_demand(study, overlap=2)
    raters = [f"rater{i}" for i in range(6)]
    for r in raters:
        study.add_rater(r)
    study.close()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_claimer, args=(str(study_location), r, 15, out)) for r in raters]
    for p in procs:
        p.start()
    results = [out.get(timeout=180) for _ in procs]
    for p in procs:
        p.join(30)
    assert all(isinstance(r, list) for r in results), results
    from collections import Counter

    per_item = Counter(pk for got in results for pk in got)
    assert max(per_item.values()) <= 2 and sum(per_item.values()) == 15 * 2  # every slot taken once


def test_study_copy_folder_to_server_and_back_gives_the_same_report(
    demo_study_dir, pg_url, tmp_path, capsys
):
    import json

    from annotator.cli import main
    from annotator.services.reporting import build_study_report

    assert main(["study", "copy", str(demo_study_dir), pg_url]) == 0
    back = tmp_path / "back"
    assert main(["study", "copy", pg_url, str(back)]) == 0
    with sqlite3.connect(demo_study_dir / "study.sqlite") as c:
        n_items, n_judgements = (
            c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("items", "judgements")
        )
    assert f"copied {n_items} items, {n_judgements} judgements" in capsys.readouterr().out
    reports = []
    for where in (demo_study_dir, pg_url, back):
        study = Study.open(where, mode="read")
        try:
            reports.append(
                json.dumps(build_study_report(study, n_boot=200, seed=3), sort_keys=True)
            )
        finally:
            study.close()
    assert reports[0] == reports[1] == reports[2]
    assert sorted(p.name for p in (back / "media").rglob("*.png")) == sorted(
        p.name for p in (demo_study_dir / "media").rglob("*.png")
    )
    assert (
        main(["study", "copy", str(demo_study_dir), str(back)]) == 2
    )  # never over an existing study


def test_a_rater_role_labels_but_reads_no_generator_and_no_other_answers(
    pg_server, pg_url, tmp_path
):
    """Least privilege, checked with a real rater role connected as itself."""
    import secrets

    import psycopg
    from sqlalchemy import text

    from annotator.store.roles import apply_roles, drop_roles, logins_of

    database = pg_url.rsplit("/", 1)[1]
    rita, other = f"rita_{secrets.token_hex(3)}", f"otto_{secrets.token_hex(3)}"
    lead = Study.create(pg_url, "ui_mockup")
    src = tmp_path / "src"
    lead.import_items(write_manifest(src, basic_rows(src, n_cases=3, gens=("gen-a", "gen-b"))))
    lead.add_rater(rita)
    lead.add_rater(other)
    theirs = LabelSession(lead, other)
    for _ in range(2):
        theirs.submit(theirs.next(), ALL, 4)
    apply_roles(lead.db, database, [rita, other])
    role = logins_of(lead.db)[rita]  # a role named for the study, not for the rater
    with lead.db.read() as s:
        otto_pk = s.execute(text("SELECT id FROM raters WHERE name = :n"), {"n": other}).scalar()
    version = lead.rubric.version
    as_rita = pg_url.replace("postgres@", f"{role}@", 1)
    try:
        study = Study.open(as_rita)
        session = LabelSession(study, rita)
        for _ in range(3):
            session.submit(session.next(), ALL, 4)
        assert session.progress().done == 3
        with study.db.read() as s:
            assert s.execute(text("SELECT count(*) FROM judgements")).scalar() == 3  # only her own
            assert [r[0] for r in s.execute(text("SELECT name FROM raters"))] == [rita]
        study.close()
        with psycopg.connect(
            as_rita.replace("postgresql+psycopg", "postgresql"), autocommit=True
        ) as conn:
            for forbidden in (
                "SELECT generator FROM items",
                "SELECT item_id FROM items",
                "SELECT case_id FROM cases",
                "SELECT original_sha256 FROM media",
                "SELECT * FROM judge_scores",
                "SELECT source_name FROM item_media",
                "UPDATE judgements SET reason = 'x'",
                "DELETE FROM judgements",
                "UPDATE items SET display_code = 'x'",
            ):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(forbidden)
            # her rows only: an answer in another rater's name breaks the row rule
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
                conn.execute(
                    "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, context, answers, "
                    "source, created_at) VALUES ('x', %s, 6, %s, 'live', '{}', 'app', now())",
                    (otto_pk, version),
                )
    finally:
        drop_roles(lead.db, database)
        lead.close()
        with _admin(pg_server) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def test_the_dashboard_reads_a_server_study_and_sees_its_changes(pg_url, tmp_path):
    """The dashboard's data version (and so its figures and its following of the study) works on
    PostgreSQL as on a folder: it read SQLite's own catalogue before."""
    from annotator.services import dashboard

    server = Study.create(pg_url, "ui_mockup")
    src = tmp_path / "src"
    server.import_items(write_manifest(src, basic_rows(src, n_cases=4, gens=("a", "b", "c"))))
    server.add_rater("ann")
    dashboard.CACHE.clear()
    first = dashboard.compute(dashboard.read_inputs(server, n_boot=20, seed=1))
    assert first.data_version == dashboard.data_version(server.db)
    again = dashboard.read_inputs(server, n_boot=20, seed=1)
    assert again.cached is not None  # unchanged data: shown at once
    session = LabelSession(server, "ann")
    session.submit(session.next(), ALL, 5)
    assert dashboard.data_version(server.db) != first.data_version
    later = dashboard.compute(dashboard.read_inputs(server, n_boot=20, seed=1))
    assert later.report["raters"]["ann"]["n_judgements"] == 1
    assert dashboard.read_earlier(server, n_boot=20, seed=1) is None  # no folder, nothing kept
    server.close()


def test_the_data_version_sees_an_answer_committed_after_a_later_one(pg_url, tmp_path):
    """A server hands out ids before commit: an answer whose id is lower than one already
    committed must still move the data version (max(id) alone stayed where it was)."""
    import psycopg

    from annotator.services import dashboard

    server = Study.create(pg_url, "ui_mockup")
    src = tmp_path / "src"
    server.import_items(write_manifest(src, basic_rows(src, n_cases=2, gens=("a",))))
    server.add_rater("ann")
    plain = pg_url.replace("postgresql+psycopg://", "postgresql://")
    insert = (
        "INSERT INTO judgements (rater_pk, item_pk, rubric_version, context, answers, source, "
        "created_at) SELECT (SELECT id FROM raters WHERE name = 'ann'), (SELECT {} (id) FROM "
        "items), (SELECT max(version) FROM rubric_versions), 'live', '{{}}', 'import', now()"
    )
    with psycopg.connect(plain) as slow, psycopg.connect(plain) as quick:
        # two items: one answer per rater and item is a unique index, which would make the
        # second writer wait for the first
        slow.execute(insert.format("min"))  # the lower id, not committed yet
        quick.execute(insert.format("max"))
        quick.commit()  # the higher id, committed first
        seen = dashboard.data_version(server.db)
        slow.commit()
        assert dashboard.data_version(server.db) != seen
    server.close()


def test_a_mistyped_database_an_unknown_login_and_a_full_server_each_say_what_to_do(
    pg_server, pg_url
):
    """Each refusal at connect time has its own line, not "the connection was lost"."""
    import secrets

    from annotator.store.faults import ServerRefused

    base = pg_url.rsplit("/", 1)[0]
    with pytest.raises(ServerRefused, match='no database "no_such_db_x".*end of the URL'):
        Study.open(f"{base}/no_such_db_x")
    nobody = f"nobody_{secrets.token_hex(3)}"
    with pytest.raises(ServerRefused, match=f'no login "{nobody}".*annotator roles'):
        Study.open(pg_url.replace("postgres@", f"{nobody}@", 1))
    Study.create(pg_url, "ui_mockup").close()
    full = f"full_{secrets.token_hex(3)}"
    with _admin(pg_server) as conn:  # a login with no connection left, as a full server has none
        conn.execute(f'CREATE ROLE "{full}" LOGIN CONNECTION LIMIT 0')
    try:
        with pytest.raises(ConnectionLost, match="no free connection.*max_connections"):
            Study.open(pg_url.replace("postgres@", f"{full}@", 1))
    finally:
        with _admin(pg_server) as conn:
            conn.execute(f'DROP ROLE "{full}"')


def test_a_server_that_stops_answering_ends_the_wait_as_a_lost_write(pg_url):
    """Keepalives and a TCP user timeout are on every server connection, and a statement that
    outlives its timeout ends as a lost (retried) write, not as a hang or a crash."""
    from sqlalchemy import text

    study = Study.create(pg_url, "ui_mockup")
    try:
        with study.db.read() as s:
            params = s.connection().connection.driver_connection.info.get_parameters()
        assert params["keepalives"] == "1" and int(params["tcp_user_timeout"]) > 0
        with pytest.raises(ConnectionLost, match="did not answer in time"):
            with study.db.write() as s:
                s.execute(text("SET LOCAL statement_timeout = '200ms'"))
                s.execute(text("SELECT pg_sleep(2)"))
    finally:
        study.close()


def test_what_a_rater_role_may_not_do_says_so_not_read_only_file(pg_server, pg_url, tmp_path):
    """A refused privilege on a server is named as one (never "read-only file or folder")."""
    import secrets

    from annotator.services.reporting import build_study_report
    from annotator.store.faults import ServerRefused
    from annotator.store.roles import apply_roles, drop_roles, logins_of

    database = pg_url.rsplit("/", 1)[1]
    rater = f"rae_{secrets.token_hex(3)}"
    lead = Study.create(pg_url, "ui_mockup")
    try:
        lead.add_rater(rater)
        apply_roles(lead.db, database, [rater])
        study = Study.open(pg_url.replace("postgres@", f"{logins_of(lead.db)[rater]}@", 1))
        try:
            with pytest.raises(ServerRefused, match="may not do that on the study server"):
                build_study_report(study, n_boot=10)
        finally:
            study.close()
    finally:
        drop_roles(lead.db, database)
        lead.close()
