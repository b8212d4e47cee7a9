"""Attacks on a team server by a hostile rater with a real login role (the server side of test_security.py).

Each test connects to a real PostgreSQL scratch database as a rater's own login role and tries
one attack by hand (psql-style SQL); its name says the attack. At the end, the rater's own work
(label, anchors, pairs, calibration, on-demand claims) still runs through the app's code as
that role. The module drops its databases and roles at the end.

Every attack is listed by the guarantee it tests in tests/unit/test_security.py (held to this module).
What stays visible to a rater role, and why, is in docs/team.md, "Team server".
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest
from factories import basic_rows, write_manifest
from sqlalchemy import text

from annotator.services.labeling import LabelSession
from annotator.services.study import Study
from annotator.store import roles

REPO_ANCHORS = "anchors/ui_mockup/anchors.jsonl"
ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "ok",
}
WEIRD = "o'ne\"il$$; x"


def _plain(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


def _admin(pg_server) -> psycopg.Connection:
    return psycopg.connect(pg_server.admin_url, autocommit=True)


def _login(lead: Study, rater: str) -> str:
    """The rater's login role (an older server named it like the rater: such roles are migrated)."""
    logins_of = getattr(roles, "logins_of", None)
    return logins_of(lead.db)[rater] if logins_of else rater


def _cleanup(pg_server, database: str, lead: Study | None, names: list[str]) -> None:
    drop = getattr(roles, "drop_roles", None)
    if lead is not None:
        if drop is not None:
            drop(lead.db, database)
        lead.close()
    with _admin(pg_server) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        for name in [*names, f"{database}_raters"]:  # the names an older server used
            conn.execute(
                psycopg.sql.SQL("DROP ROLE IF EXISTS {}").format(psycopg.sql.Identifier(name))
            )


@dataclass
class Team:
    url: str  # the lead's (superuser) URL
    database: str
    lead: Study
    pks: dict[str, int]  # rater -> pk
    roles: dict[str, str]  # rater -> login role
    items: dict[str, list[int]]  # rater -> items dealt

    def as_(self, rater: str) -> str:
        return self.url.replace("postgres@", f"{self.roles[rater]}@", 1)

    def connect(self, rater: str) -> psycopg.Connection:
        return psycopg.connect(_plain(self.as_(rater)), autocommit=True)


@pytest.fixture(scope="module")
def team(pg_server, tmp_path_factory) -> Iterator[Team]:
    """A server study with items dealt to ana and bob (one rater each), anchors, pairs; bob has
    answered two items; roles for ana, bob and a rater with quotes and dollars in the name."""
    from annotator.services.team import assign

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    tag = secrets.token_hex(3)
    ana, bob = f"ana_{tag}", f"bob_{tag}"
    lead = Study.create(url, "ui_mockup")
    try:
        src = tmp_path_factory.mktemp("src")
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=4, gens=("a", "b"))))
        lead.import_anchors(REPO_ANCHORS)
        assign(lead, [ana, bob], overlap=1, pair_overlap=1, seed=3)
        lead.add_rater(WEIRD)
        theirs = LabelSession(lead, bob)
        for _ in range(2):
            theirs.submit(theirs.next(), ALL, 4)
        roles.apply_roles(lead.db, database, [ana, bob])
        with lead.db.read() as s:
            pks = dict(s.execute(text("SELECT name, id FROM raters")).all())
            items: dict[str, list[int]] = {}
            for name, item in s.execute(
                text(
                    "SELECT r.name, a.item_pk FROM assignments a JOIN raters r ON r.id = a.rater_pk"
                )
            ):
                items.setdefault(name, []).append(item)
        names = {r: _login(lead, r) for r in (ana, bob)}
    except BaseException:
        _cleanup(pg_server, database, lead, [ana, bob, WEIRD])
        raise
    team = Team(url, database, lead, pks, names, items)
    yield team
    _cleanup(pg_server, database, lead, [ana, bob, WEIRD])


def _ana_bob(team: Team) -> tuple[str, str]:
    ana = next(r for r in team.roles if r.startswith("ana_"))
    bob = next(r for r in team.roles if r.startswith("bob_"))
    return ana, bob


def _insert_as(conn: psycopg.Connection, team: Team, rater_pk: int, item_pk: int) -> None:
    conn.execute(
        "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, context, answers, "
        "source, created_at) VALUES (%s, %s, %s, %s, 'live', '{}', 'app', now())",
        (secrets.token_hex(8), rater_pk, item_pk, team.lead.rubric.version),
    )


# -- 1. row-level security cannot be bypassed ------------------------------------------------


def test_temp_table_named_raters_makes_a_rater_someone_else(team):
    """A temporary `raters` table shadowing the real one must not make ana bob (no TEMP at all)."""
    ana, bob = _ana_bob(team)
    with team.connect(ana) as conn:
        try:
            conn.execute("CREATE TEMP TABLE raters (id int, name text)")
        except psycopg.errors.InsufficientPrivilege:
            pass  # no TEMP on the study's database: the attack cannot even start
        else:
            conn.execute(
                "INSERT INTO raters VALUES (%s, current_user), (%s, current_user)",
                (team.pks[bob], team.pks[bob]),
            )
            pytest.fail("a rater role may create temporary tables")
        conn.execute("RESET ALL")
        assert conn.execute("SELECT count(*) FROM judgements").fetchone()[0] == 0  # bob's: 2
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # nor shadows made in public
            conn.execute("CREATE TABLE public.raters_x (id int)")


def test_same_named_objects_in_another_schema_change_who_a_rater_is(team, pg_server):
    """A `raters` table and an `annotator_me()` in a schema first on the search_path change
    nothing: the row rules' functions have a fixed search_path and qualified names."""
    ana, bob = _ana_bob(team)
    evil = f"evil_{secrets.token_hex(3)}"
    with psycopg.connect(_plain(team.url), autocommit=True) as su:
        su.execute(f"CREATE SCHEMA {evil}")
        su.execute(f"CREATE TABLE {evil}.raters (id int, name text)")
        su.execute(f"INSERT INTO {evil}.raters VALUES (%s, %s)", (team.pks[bob], team.roles[ana]))
        su.execute(
            f"CREATE FUNCTION {evil}.annotator_me() RETURNS integer LANGUAGE sql AS "
            f"$$ SELECT {team.pks[bob]} $$"
        )
        su.execute(
            psycopg.sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
                psycopg.sql.Identifier(evil), psycopg.sql.Identifier(team.roles[ana])
            )
        )
        su.execute(f"GRANT SELECT ON {evil}.raters TO PUBLIC")
    try:
        with team.connect(ana) as conn:
            conn.execute(f"SET search_path = {evil}, public")
            assert conn.execute("SELECT count(*) FROM public.judgements").fetchone()[0] == 0
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                _insert_as(conn, team, team.pks[bob], team.items[bob][0])
    finally:
        with psycopg.connect(_plain(team.url), autocommit=True) as su:
            su.execute(f"DROP SCHEMA {evil} CASCADE")


def test_a_row_rule_function_resolves_names_through_the_callers_search_path(team):
    """Every function of the study's row rules runs as the lead with a fixed search_path."""
    with team.lead.db.read() as s:
        rows = s.execute(
            text(
                "SELECT p.proname, p.prosecdef, coalesce(array_to_string(p.proconfig, ','), '') "
                "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = 'public' AND p.proname LIKE 'annotator%'"
            )
        ).all()
    assert rows
    for name, definer, config in rows:
        assert definer and config == "search_path=pg_catalog, public, pg_temp", name


# -- 5. no side channel in what a rater can read ---------------------------------------------


def test_rater_picks_out_anchors_by_is_anchor_or_reads_their_references(team):
    """Neither items.is_anchor nor the anchors table (reference answers) is readable."""
    ana, _ = _ana_bob(team)
    with team.connect(ana) as conn:
        for attack in (
            "SELECT id FROM items WHERE is_anchor",
            "SELECT reference FROM anchors",
            "SELECT count(*) FROM anchors",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(attack)


def _anchor_pks(team: Team) -> list[int]:
    with team.lead.db.read() as s:
        return [r[0] for r in s.execute(text("SELECT item_pk FROM anchors ORDER BY 1"))]


def test_rater_lists_the_anchor_pool_and_picks_out_silent_anchors(team):
    """No function lists the anchors (their ids would pick out each silent drift anchor as it is
    shown): a rater's role learns whether the study has anchors, nothing more."""
    ana, _ = _ana_bob(team)
    with team.connect(ana) as conn:
        try:
            rows = conn.execute("SELECT item_pk FROM public.annotator_anchor_pool()").fetchall()
        except (psycopg.errors.UndefinedFunction, psycopg.errors.InsufficientPrivilege):
            rows = []
        assert not {r[0] for r in rows} & set(_anchor_pks(team))
        assert conn.execute("SELECT public.annotator_has_anchors()").fetchone()[0] is True


def test_rater_tells_anchors_apart_by_a_showing_inserted_and_rolled_back(team):
    """An anchor showing inserted by hand (and rolled back) must not tell an anchor from a live
    item by being accepted: a rater's role inserts no showing, the server records them."""
    ana, _ = _ana_bob(team)
    anchor, live = _anchor_pks(team)[0], team.items[ana][0]
    with team.connect(ana) as conn:
        session = conn.execute(
            "INSERT INTO sessions (uuid, rater_pk, mode, started_at) VALUES "
            "(%s, %s, 'label', now()) RETURNING id",
            (secrets.token_hex(8), team.pks[ana]),
        ).fetchone()[0]
        for item in (anchor, live):
            with pytest.raises(psycopg.errors.InsufficientPrivilege), conn.transaction():
                conn.execute(
                    "INSERT INTO anchor_showings (uuid, rater_pk, session_pk, item_pk, "
                    "before_position, seed, display_code, created_at) VALUES "
                    "(%s, %s, %s, %s, 9000, 0, %s, now())",
                    (secrets.token_hex(8), team.pks[ana], session, item, secrets.token_hex(4)),
                )
        # nor by asking the server to seed one far ahead of the rater's place in the queue
        assert (
            conn.execute(
                "SELECT public.annotator_seed_anchor(%s, 3, 1, %s, %s, 2)",
                (session, secrets.token_hex(4), secrets.token_hex(8)),
            ).fetchone()[0]
            is None
        )


def test_rater_reads_the_reference_of_a_silent_anchor_it_answered(team):
    """A silent drift anchor answered through the app: its reference is not readable (the rater
    would correct the answer to it), neither by the drift check's function nor by starting a
    calibration session by hand (the calibration set leaves out the anchors shown silently)."""
    from annotator.services.prefetch import upcoming

    _, bob = _ana_bob(team)
    every = team.lead.setting("anchor_every")
    team.lead.set_setting("anchor_every", 2)
    study = Study.open(team.as_(bob))
    try:
        session = LabelSession(study, bob)
        assert not session.checks_drift  # the lead's dashboard checks a rater role's drift
        upcoming(session, 4)  # the app decodes ahead (it read the anchors table: refused)
        contexts = []
        while (served := session.next()) is not None:
            contexts.append(served.context)
            session.submit(served, ALL, 4)
        assert "anchor" in contexts
    finally:
        study.close()
        team.lead.set_setting("anchor_every", every)
    with team.lead.db.read() as s:
        shown = {
            r[0]
            for r in s.execute(
                text("SELECT item_pk FROM anchor_showings WHERE rater_pk = :r"),
                {"r": team.pks[bob]},
            )
        }
    assert shown
    with team.connect(bob) as conn:
        try:
            refs = conn.execute(
                "SELECT item_pk FROM public.annotator_my_anchor_references()"
            ).fetchall()
        except (psycopg.errors.UndefinedFunction, psycopg.errors.InsufficientPrivilege):
            refs = []
        assert not {r[0] for r in refs} & shown
        conn.execute(
            "INSERT INTO sessions (uuid, rater_pk, mode, started_at) VALUES "
            "(%s, %s, 'calibration', now())",
            (secrets.token_hex(8), team.pks[bob]),
        )
        calibration = {
            r[0] for r in conn.execute("SELECT item_pk FROM public.annotator_calibration_anchors()")
        }
        assert calibration and not calibration & shown


def test_rater_reads_items_and_images_dealt_to_another(team):
    """Items, their cells, media and image bytes dealt only to bob are invisible to ana."""
    ana, bob = _ana_bob(team)
    theirs = sorted(set(team.items[bob]) - set(team.items[ana]))
    assert theirs
    with team.lead.db.read() as s:
        shas = [
            r[0]
            for r in s.execute(
                text("SELECT media_sha256 FROM item_media WHERE item_pk = ANY(:p)"), {"p": theirs}
            )
        ]
    with team.connect(ana) as conn:
        for attack, arg in (
            ("SELECT count(*) FROM items WHERE id = ANY(%s)", theirs),
            ("SELECT count(*) FROM item_media WHERE item_pk = ANY(%s)", theirs),
            ("SELECT count(*) FROM media WHERE sha256 = ANY(%s)", shas),
            ("SELECT count(*) FROM media_blobs WHERE sha256 = ANY(%s)", shas),
        ):
            assert conn.execute(attack, (arg,)).fetchone()[0] == 0, attack
        # nor by queueing one of bob's items for herself (the queue is what shows an item)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO queue (rater_pk, rubric_version, position, item_pk, seed) "
                "VALUES (%s, %s, 9999, %s, 1)",
                (team.pks[_ana_bob(team)[0]], team.lead.rubric.version, theirs[0]),
            )
        # nor by recording a silent-anchor showing of it
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO anchor_showings (uuid, rater_pk, session_pk, item_pk, "
                "before_position, seed, display_code, created_at) VALUES "
                "(%s, %s, NULL, %s, 0, 0, 'ZZZ-ZZZ', now())",
                (secrets.token_hex(8), team.pks[ana], theirs[0]),
            )


def test_rater_counts_hidden_rows_through_sequences(team):
    """No last_value of any sequence, and no nextval but of the rows a rater's role inserts
    itself (sessions, answers, votes, calibrations): judge scores, merges, assignments and anchor
    showings (the server records those) are not counted through their sequences."""
    ana, _ = _ana_bob(team)
    with team.lead.db.read() as s:
        sequences = [
            r[0]
            for r in s.execute(
                text(
                    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE c.relkind = 'S' AND n.nspname = 'public' ORDER BY 1"
                )
            )
        ]
    inserted = {f"{t}_id_seq" for t in ("sessions", "judgements", "pair_votes", "calibrations")}
    assert {"judge_scores_id_seq", "anchor_showings_id_seq", "merges_id_seq"} <= set(sequences)
    with team.connect(ana) as conn:
        for seq in sequences:
            attacks = [f"SELECT last_value FROM {seq}"]
            if seq not in inserted:
                attacks.append(f"SELECT nextval('{seq}')")
            for attack in attacks:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(attack)


def test_rater_lists_other_raters_names_through_pg_roles_and_pg_auth_members(team):
    """Role names carry no rater's name: pg_roles and pg_auth_members (readable by every role
    of the cluster) name none of the study's raters."""
    ana, bob = _ana_bob(team)
    with team.connect(ana) as conn:
        names = [r[0] for r in conn.execute("SELECT rolname FROM pg_roles")]
        members = [
            r[0]
            for r in conn.execute(
                "SELECT m.rolname FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member"
            )
        ]
        notes = [r[0] or "" for r in conn.execute("SELECT description FROM pg_shdescription")]
    for rater in (ana, bob):
        assert not any(rater in n for n in names + members + notes), rater


# -- 6. roles belong to one study ------------------------------------------------------------


def test_raters_of_an_old_database_reach_a_new_one_of_the_same_name(pg_server, tmp_path):
    """A study database dropped and made again under its name: the old raters cannot connect."""
    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    old = f"old_{secrets.token_hex(3)}"
    lead = Study.create(url, "ui_mockup")
    lead.add_rater(old)
    roles.apply_roles(lead.db, database, [old])
    old_role = _login(lead, old)
    lead.close()  # the lead drops the database by hand, not with `annotator roles --drop`
    with _admin(pg_server) as conn:
        conn.execute(f'DROP DATABASE "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')
    new = f"new_{secrets.token_hex(3)}"
    lead = Study.create(url, "ui_mockup")
    try:
        src = tmp_path / "src"
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=2, gens=("a", "b"))))
        lead.add_rater(new)
        lead.add_rater(old)  # even a rater of the same name: a new role, not the old one
        roles.apply_roles(lead.db, database, [new])
        with pytest.raises(psycopg.OperationalError, match="permission denied|not permitted"):
            with psycopg.connect(_plain(url.replace("postgres@", f"{old_role}@", 1))) as conn:
                conn.execute("SELECT count(*) FROM items")
    finally:
        with _admin(pg_server) as conn:
            conn.execute(
                psycopg.sql.SQL("DROP OWNED BY {}").format(psycopg.sql.Identifier(old_role))
            )
        _cleanup(pg_server, database, lead, [old, new, old_role])
        with _admin(pg_server) as conn:  # the old study's group, left behind by the hand drop
            for (name,) in conn.execute(
                "SELECT rolname FROM pg_roles WHERE shobj_description(oid, 'pg_authid') LIKE %s",
                (f"%(database {database})%",),
            ).fetchall():
                conn.execute(psycopg.sql.SQL("DROP ROLE {}").format(psycopg.sql.Identifier(name)))


def test_rater_named_with_quotes_and_dollars_breaks_the_role_sql(team):
    """A rater named o'ne"il$$; x gets a login role and works as it (nothing string-built)."""
    roles.apply_roles(team.lead.db, team.database, [WEIRD])
    role = _login(team.lead, WEIRD)
    study = Study.open(team.url.replace("postgres@", f"{role}@", 1))
    try:
        session = LabelSession(study, WEIRD)  # no items dealt to this rater yet
        assert session.next() is None and session.progress().done == 0
        with study.db.read() as s:
            assert [r[0] for r in s.execute(text("SELECT name FROM raters"))] == [WEIRD]
    finally:
        study.close()


def test_roles_drop_leaves_the_studys_roles_behind(pg_server, capsys):
    """`annotator roles --drop` removes the study's group and login roles."""
    from annotator.cli import main

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    rater = f"gone_{secrets.token_hex(3)}"
    lead = Study.create(url, "ui_mockup")
    lead.add_rater(rater)
    lead.close()
    try:
        assert main(["roles", "--study", url, "--raters", rater]) == 0
        capsys.readouterr()
        assert main(["roles", "--study", url, "--drop"]) == 0
        out = capsys.readouterr().out
        assert out.count("dropped role") == 2
        with _admin(pg_server) as conn:
            left = conn.execute(
                "SELECT count(*) FROM pg_roles WHERE shobj_description(oid, 'pg_authid') LIKE %s",
                (f"%(database {database})%",),
            ).fetchone()[0]
        assert left == 0
    finally:
        _cleanup(pg_server, database, None, [rater])


# -- 7. raters cannot stop the lead ----------------------------------------------------------


def test_rater_holds_the_study_lock_and_stops_the_leads_imports(team):
    """A rater holding the advisory keys the app once used blocks neither the lead's imports nor
    another rater's submits; the lock the lead takes is one a rater role cannot take."""
    from annotator.store.locks import lock_imports, lock_rater

    ana, bob = _ana_bob(team)
    with team.connect(ana) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (0x616E6E6F,))  # the old import key
        conn.execute("SELECT pg_advisory_lock(%s, %s)", (0x72617472, team.pks[bob]))  # bob's key
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("BEGIN")
            try:
                conn.execute("LOCK TABLE alembic_version IN SHARE ROW EXCLUSIVE MODE")
            finally:
                conn.execute("ROLLBACK")
        done = threading.Event()

        def lead_work() -> None:
            with team.lead.db.write() as s:
                s.execute(text("SET LOCAL lock_timeout = '3s'"))
                lock_imports(s)
                lock_rater(s, team.pks[bob])
            done.set()

        t = threading.Thread(target=lead_work)
        t.start()
        t.join(10)
        assert done.is_set(), "the lead waited on a rater's lock"


def test_rater_inserts_merges_and_assignments(team):
    """No INSERT into merges or assignments (on-demand claims go through the server)."""
    ana, bob = _ana_bob(team)
    with team.connect(ana) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO merges (package_sha256, package_id, rater_pk, counts, created_at) "
                "VALUES ('x', 'y', %s, '{}', now())",
                (team.pks[ana],),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO assignments (rater_pk, item_pk, seed, created_at) "
                "VALUES (%s, %s, 1, now())",
                (team.pks[ana], team.items[bob][0]),
            )


# -- 4. sessions, calibrations and qualifications are the rater's own ------------------------


def test_rater_inserts_a_qualified_calibration(team):
    """A hand-made `qualified = true` calibration is not a qualification: the server stores
    false and the lead's code, judging the session's answers, says not qualified."""
    ana, _ = _ana_bob(team)
    with team.connect(ana) as conn:
        session = conn.execute(
            "INSERT INTO sessions (uuid, rater_pk, mode, started_at) VALUES "
            "(%s, %s, 'calibration', now()) RETURNING id",
            (secrets.token_hex(8), team.pks[ana]),
        ).fetchone()[0]
        forged = json.dumps({"qualified": True, "verdict": "qualified", "metrics": {}})
        try:
            conn.execute(
                "INSERT INTO calibrations (uuid, rater_pk, session_pk, anchor_set, "
                "rubric_version, result, qualified, created_at) "
                "VALUES (%s, %s, %s, 'x', %s, %s, true, now())",
                (secrets.token_hex(8), team.pks[ana], session, team.lead.rubric.version, forged),
            )
        except psycopg.errors.InsufficientPrivilege:
            conn.execute(
                "INSERT INTO calibrations (uuid, rater_pk, session_pk, anchor_set, "
                "rubric_version, result, created_at) VALUES (%s, %s, %s, 'x', %s, %s, now())",
                (secrets.token_hex(8), team.pks[ana], session, team.lead.rubric.version, forged),
            )
    with team.lead.db.read() as s:
        stored = s.execute(
            text("SELECT bool_or(qualified) FROM calibrations WHERE rater_pk = :r"),
            {"r": team.pks[ana]},
        ).scalar()
    assert stored is False
    from annotator.services.calibration import verified_calibrations

    assert not any(r["qualified"] for r in verified_calibrations(team.lead, ana))


def test_rater_answers_in_another_raters_session(team):
    """An answer in ana's name but inside bob's session (or bob's anchor showing) is refused."""
    ana, bob = _ana_bob(team)
    with team.lead.db.read() as s:
        bob_session = s.execute(
            text("SELECT id FROM sessions WHERE rater_pk = :r LIMIT 1"), {"r": team.pks[bob]}
        ).scalar()
    assert bob_session is not None
    with team.connect(ana) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, session_pk, "
                "context, answers, source, created_at) "
                "VALUES (%s, %s, %s, %s, %s, 'live', '{}', 'app', now())",
                (
                    secrets.token_hex(8),
                    team.pks[ana],
                    team.items[ana][0],
                    team.lead.rubric.version,
                    bob_session,
                ),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # an item never dealt to her
            _insert_as(conn, team, team.pks[ana], sorted(set(team.items[bob]))[0])


# -- 2. a correction supersedes only the same rater's answer --------------------------------


def test_rater_supersedes_another_raters_answer(team):
    """A correction inserted by hand that points at bob's answer (on one of ana's own items, or
    on bob's item) is refused: bob's answers stay current, in every figure."""
    ana, bob = _ana_bob(team)
    with team.lead.db.read() as s:
        theirs = s.execute(
            text("SELECT id, item_pk FROM judgements WHERE rater_pk = :r AND supersedes IS NULL"),
            {"r": team.pks[bob]},
        ).all()
    assert theirs
    with team.connect(ana) as conn:
        for target, item in theirs:
            for on_item in (team.items[ana][0], item):
                with pytest.raises(psycopg.Error), conn.transaction():
                    conn.execute(
                        "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, "
                        "context, answers, source, supersedes, created_at) "
                        "VALUES (%s, %s, %s, %s, 'live', %s, 'app', %s, now())",
                        (
                            secrets.token_hex(8),
                            team.pks[ana],
                            on_item,
                            team.lead.rubric.version,
                            json.dumps(ALL),
                            target,
                        ),
                    )
    with team.lead.db.read() as s:
        assert not s.execute(
            text("SELECT count(*) FROM judgements WHERE supersedes = ANY(:ids)"),
            {"ids": [i for i, _ in theirs]},
        ).scalar()


def test_roles_run_again_restores_correction_triggers_an_earlier_run_dropped(team):
    """`annotator roles` of before this fix dropped migration 0008's correction triggers (their
    functions matched its `annotator_%` clean-up, CASCADE): running it again makes them again."""
    with psycopg.connect(_plain(team.url), autocommit=True) as su:
        for table in ("judgements", "pair_votes"):
            su.execute(f"DROP FUNCTION public.annotator_{table}_same_slot() CASCADE")
    roles.apply_roles(team.lead.db, team.database, list(team.roles))
    with team.lead.db.read() as s:
        names = set(
            s.scalars(text("SELECT tgname FROM pg_trigger WHERE tgname LIKE '%same_slot%'"))
        )
    assert names == {
        f"{t}_correction_same_slot_{op}"
        for t in ("judgements", "pair_votes")
        for op in ("insert", "update")
    }
    test_rater_supersedes_another_raters_answer(team)


# -- 3. what a rater inserts by hand passes the app's checks ---------------------------------


def _good_answer(**change) -> str:
    return json.dumps({**ALL, **change})


@pytest.mark.parametrize(
    "answers, reason",
    [
        (_good_answer(instruction_following="MAYBE"), None),
        (_good_answer(layout_hierarchy=99), None),
        (_good_answer(layout_hierarchy=2.5), None),
        (_good_answer(failure_tags=["banana"]), None),
        (_good_answer(no_such_metric=1), None),
        ('{"instruction_following": "PASS"', None),  # not JSON: every later report would die
        ("[1, 2]", None),
        (_good_answer(), "x" * (2 << 20)),  # 2 MB reason
    ],
    ids=["gate", "scale", "fraction", "tag", "metric", "json", "array", "size"],
)
def test_rater_inserts_an_answer_the_app_would_refuse(team, answers, reason):
    """A judgement with a value off the rubric, bad JSON or a huge reason is refused."""
    ana, _ = _ana_bob(team)
    with team.connect(ana) as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "INSERT INTO judgements (uuid, rater_pk, item_pk, rubric_version, context, answers, "
            "reason, source, created_at) VALUES (%s, %s, %s, %s, 'live', %s, %s, 'app', now())",
            (
                secrets.token_hex(8),
                team.pks[ana],
                team.items[ana][0],
                team.lead.rubric.version,
                answers,
                reason,
            ),
        )


@pytest.mark.parametrize("attack", ["banana", "foreign sides", "as a judge"])
def test_rater_inserts_a_pair_vote_the_app_would_refuse(team, attack):
    """A vote whose choice is not left/right/both/neither, whose sides are not the pair's items,
    or that poses as a judge's is refused."""
    from annotator.services.pairing import PairSession

    ana, _ = _ana_bob(team)
    study = Study.open(team.as_(ana))
    try:
        PairSession(study, ana)  # her pair queue, as the app makes it
    finally:
        study.close()
    with team.connect(ana) as conn:
        pair, a, b = conn.execute(
            "SELECT p.id, p.item_a, p.item_b FROM pair_queue q JOIN pairs p ON p.id = q.pair_pk "
            "ORDER BY q.position LIMIT 1"
        ).fetchone()
        other = next(i for i in team.items[ana] if i not in (a, b))
        choice, left, right, judge = {
            "banana": ("banana", a, b, None),
            "foreign sides": ("left", a, other, None),
            "as a judge": ("left", a, b, "gpt-judge"),
        }[attack]
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO pair_votes (uuid, pair_pk, rater_pk, judge, item_left, item_right, "
                "choice, source, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, 'app', now())",
                (secrets.token_hex(8), pair, team.pks[ana], judge, left, right, choice),
            )


# -- the rater's own work still runs as a rater role -------------------------------------------


def test_a_rater_role_labels_sees_silent_anchors_votes_on_pairs_and_calibrates(team):
    """Every code path a rater runs on a server works connected as that rater's own role."""
    from annotator.services.calibration import CalibrationSession, verified_calibrations
    from annotator.services.pairing import PairSession
    from annotator.services.prefetch import upcoming
    from annotator.store.anchors import anchors

    ana, _ = _ana_bob(team)
    refs = {pk: ref for pk, _s, ref, _r in anchors(team.lead.db)}
    every = team.lead.setting("anchor_every")
    team.lead.set_setting("anchor_every", 2)
    study = Study.open(team.as_(ana))
    try:
        with study.db.read() as s:  # a rater's statements are cut (and retried) when they hang
            assert s.execute(text("SHOW statement_timeout")).scalar() == "30s"
        session = LabelSession(study, ana)
        contexts = []
        while (served := session.next()) is not None:
            upcoming(session, 3, skip=(served.item_pk,))  # what the app decodes ahead
            contexts.append(served.context)
            session.submit(served, ALL, 4)
        assert contexts.count("live") == len(team.items[ana]) and "anchor" in contexts
        back = session.back()  # the rater goes back and corrects the last answer
        assert back is not None
        session.submit(back, {**ALL, "layout_hierarchy": 2}, 4)
        pairs = PairSession(study, ana)
        pair = pairs.next()
        assert pair is not None
        pairs.peek(pair)
        pairs.vote(pair, "left", None, 900)
        again = pairs.back()
        assert again is not None and again.previous_choice == "left"
        pairs.vote(again, "right", "on second look", 900)
        assert pairs.progress().done == 1
        calib = CalibrationSession(study, ana)
        while (item := calib.next()) is not None:
            calib.submit(item, dict(refs[item.item_pk]), 800)
        assert calib.finish()["qualified"]  # what the rater's app shows
    finally:
        study.close()
        team.lead.set_setting("anchor_every", every)
    # the server stored no verdict of the rater's; the lead's code finds the pass in the answers
    assert any(r["qualified"] for r in verified_calibrations(team.lead, ana))
    with team.lead.db.read() as s:  # the re-vote superseded the vote: one current vote, "right"
        assert s.execute(
            text(
                "SELECT v.choice FROM pair_votes v WHERE v.rater_pk = :r AND NOT EXISTS "
                "(SELECT 1 FROM pair_votes w WHERE w.supersedes = v.id)"
            ),
            {"r": team.pks[ana]},
        ).scalars().all() == ["right"]


def test_a_rater_role_takes_items_on_demand(pg_server, tmp_path):
    """Dealing on demand as rater roles: each claim goes through the server, K raters per item."""
    from annotator.store.assignments import ON_DEMAND

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    raters = [f"od{i}_{secrets.token_hex(2)}" for i in range(3)]
    lead = Study.create(url, "ui_mockup")
    try:
        src = tmp_path / "src"
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=2, gens=("a", "b"))))
        for r in raters:
            lead.add_rater(r)
        lead.db.set_setting(ON_DEMAND, 2)  # what `assign --on-demand` stores
        roles.apply_roles(lead.db, database, raters)
        for r in raters:
            study = Study.open(url.replace("postgres@", f"{_login(lead, r)}@", 1))
            try:
                session = LabelSession(study, r)
                while (served := session.next()) is not None:
                    session.submit(served, ALL, 2)
            finally:
                study.close()
        with lead.db.read() as s:
            per_item = [
                n
                for (n,) in s.execute(
                    text(
                        "SELECT count(*) FROM items i LEFT JOIN assignments a ON a.item_pk = i.id "
                        "WHERE NOT i.is_anchor GROUP BY i.id"
                    )
                )
            ]
            answered = s.execute(text("SELECT count(*) FROM judgements")).scalar()
        assert per_item and all(n == 2 for n in per_item) and answered == 2 * len(per_item)
    finally:
        _cleanup(pg_server, database, lead, raters)


def test_raters_of_the_old_role_scheme_keep_their_rights_after_roles_run_again(pg_server):
    """Roles an older server made (a group named after the database, logins named like raters)
    lose every right when `annotator roles` runs on the study again."""
    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    old = f"legacy_{secrets.token_hex(3)}"
    lead = Study.create(url, "ui_mockup")
    ident = psycopg.sql.Identifier
    try:
        lead.add_rater(old)
        with psycopg.connect(_plain(url), autocommit=True) as su:  # the roles an older server made
            for stmt in (
                psycopg.sql.SQL("CREATE ROLE {} NOLOGIN").format(ident(f"{database}_raters")),
                psycopg.sql.SQL("CREATE ROLE {} LOGIN").format(ident(old)),
                psycopg.sql.SQL("GRANT {} TO {}").format(ident(f"{database}_raters"), ident(old)),
                psycopg.sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(
                    ident(f"{database}_raters")
                ),
            ):
                su.execute(stmt)
        roles.apply_roles(lead.db, database, [old])
        try:
            with psycopg.connect(_plain(url.replace("postgres@", f"{old}@", 1))) as conn:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute("SELECT count(*) FROM settings")
        except psycopg.OperationalError as exc:
            assert "permission denied" in str(exc)  # not even a connection
    finally:
        _cleanup(pg_server, database, lead, [old])


def test_rater_reads_the_codes_its_package_gave_silent_anchors(pg_server, tmp_path):
    """A rater who also got a package from the lead: the codes it gave silent anchors (kind
    'silent' in rater_codes, the lead's to map answers back at merge) are not the rater's to read."""
    from annotator.services.packages import export_package
    from annotator.services.team import assign

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    rater = f"pk_{secrets.token_hex(3)}"
    lead = Study.create(url, "ui_mockup")
    try:
        src = tmp_path / "src"
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=4, gens=("a", "b"))))
        lead.import_anchors(REPO_ANCHORS)
        assign(lead, [rater], overlap=1, pair_overlap=None, seed=3)
        lead.set_setting("anchor_every", 2)
        export_package(lead, rater, tmp_path / "pkg.annot")
        roles.apply_roles(lead.db, database, [rater])
        with lead.db.read() as s:
            silent = set(s.scalars(text("SELECT target_pk FROM rater_codes WHERE kind = 'silent'")))
        assert silent
        with psycopg.connect(_plain(url.replace("postgres@", f"{_login(lead, rater)}@", 1))) as c:
            rows = c.execute("SELECT kind, target_pk FROM rater_codes").fetchall()
        named = [r for r in rows if r[0] == "silent" or (r[0] == "item" and r[1] in silent)]
        assert rows and not named
    finally:
        _cleanup(pg_server, database, lead, [rater])


@pytest.fixture
def on_demand_team(pg_server, tmp_path):
    """A server study dealt on demand (one rater an item) to three rater roles: (lead, url,
    {rater: login url}, database)."""
    from annotator.store.assignments import ON_DEMAND

    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    raters = [f"cl{i}_{secrets.token_hex(2)}" for i in range(3)]
    lead = Study.create(url, "ui_mockup")
    try:
        src = tmp_path / "src"
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=5, gens=("a", "b"))))
        lead.set_setting("anchor_every", 0)
        for r in raters:
            lead.add_rater(r)
        lead.db.set_setting(ON_DEMAND, 1)  # what `assign --on-demand` stores
        roles.apply_roles(lead.db, database, raters)
        logins = {r: url.replace("postgres@", f"{_login(lead, r)}@", 1) for r in raters}
        yield lead, url, logins
    finally:
        _cleanup(pg_server, database, lead, raters)


def _takes_all(login_url: str, rater: str) -> int:
    study = Study.open(login_url)
    try:
        session = LabelSession(study, rater)
        n = 0
        while (served := session.next()) is not None:
            session.submit(served, ALL, 2)
            n += 1
        return n
    finally:
        study.close()


def test_a_rater_holding_advisory_locks_stops_no_one_from_claiming(on_demand_team):
    """A role holds session-level advisory locks on every number claims could use: claims take
    row locks only the server's code can take, so the others still get every item."""
    lead, url, logins = on_demand_team
    hostile, other, _ = logins
    with lead.db.read() as s:
        live = s.execute(text("SELECT count(*) FROM items WHERE NOT is_anchor")).scalar()
    with psycopg.connect(_plain(logins[hostile]), autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(x'636C6D'::int, g) FROM generate_series(1, 4999) g")
        # a rater working through the lead's own connection (the lead's code path) takes half
        lead.add_rater("desk")
        desk = Study.open(url)
        try:
            session = LabelSession(desk, "desk")
            for _ in range(live // 2):
                served = session.next()
                assert served is not None, "a claim was refused: the advisory locks stopped it"
                session.submit(served, ALL, 2)
        finally:
            desk.close()
        assert _takes_all(logins[other], other) == live - live // 2  # a role takes the rest


def test_a_rater_cannot_hold_many_claims_in_one_open_transaction(on_demand_team):
    """A role claims in one transaction it keeps open: the second claim is refused, so it holds
    at most one item away from the others, and the others take every other item meanwhile."""
    lead, _url, logins = on_demand_team
    hostile, other, _ = logins
    with psycopg.connect(_plain(logins[hostile])) as conn:  # one transaction, never committed
        first = conn.execute("SELECT public.annotator_claim(1, 7)").fetchone()[0]
        assert first is not None
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="one claim a transaction"):
            conn.execute("SELECT public.annotator_claim(1, 7)")
        conn.rollback()
        conn.execute("SELECT public.annotator_claim(1, 7)")  # a new transaction: its one claim
        with lead.db.read() as s:
            live = s.execute(text("SELECT count(*) FROM items WHERE NOT is_anchor")).scalar()
        assert _takes_all(logins[other], other) == live - 1  # all but the one held


@pytest.mark.parametrize(
    "lift",
    ["idle_in_transaction_session_timeout = 0", "statement_timeout = 0"],
    ids=["idle", "statement"],
)
def test_a_rater_that_lifts_the_servers_timeouts_cannot_claim(on_demand_team, lift):
    _lead, _url, logins = on_demand_team
    hostile = next(iter(logins))
    with psycopg.connect(_plain(logins[hostile]), autocommit=True) as conn:
        conn.execute(f"SET {lift}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="lifted the server"):
            conn.execute("SELECT public.annotator_claim(1, 7)")


def test_a_rater_role_has_a_connection_limit(on_demand_team):
    lead, _url, logins = on_demand_team
    with psycopg.connect(_plain(_url), autocommit=True) as conn:
        limits = {
            r[0]
            for r in conn.execute(
                "SELECT rolconnlimit FROM pg_roles WHERE rolname = ANY(%s)",
                ([_login(lead, r) for r in logins],),
            )
        }
    assert limits == {roles.RATER_CONNECTIONS}


def test_a_rater_role_reads_only_the_settings_its_app_needs(on_demand_team):
    """The human sample (items, generators, every item's probability), the pair sample and the
    dealing seed are the lead's: a rater's role reads the settings its app reads, by name."""
    from annotator.domain.settings import RATER_SETTINGS

    lead, _url, logins = on_demand_team
    lead.db.set_setting("human_sample", {"items": {"it-0-a": 0.5}, "rates": {"a": 0.5}, "seed": 9})
    lead.db.set_setting("human_pair_sample", {"items": {"p1": 0.5}, "seed": 9})
    lead.db.set_setting("assignment", {"seed": 123, "overlap": 1})
    rater = next(iter(logins))
    with psycopg.connect(_plain(logins[rater]), autocommit=True) as conn:
        seen = {k for (k,) in conn.execute("SELECT key FROM settings")}
    with lead.db.read() as s:
        held = {k for (k,) in s.execute(text("SELECT key FROM settings"))}
    assert seen == held & set(RATER_SETTINGS)
    assert {"human_sample", "human_pair_sample", "assignment"} <= held - seen
    assert _takes_all(logins[rater], rater) > 0  # the rater's app still works on what it reads


def test_roles_while_a_rater_holds_a_transaction_open_waits_then_names_them(
    on_demand_team, capsys, monkeypatch
):
    """A rater's app sits in an open read transaction (its locks block the lead's grants):
    `annotator roles` waits a while, then says in one line who holds the study, instead of
    "LockNotAvailable" as an internal error."""
    from annotator.cli import main

    monkeypatch.setattr(roles, "APPLY_ATTEMPTS", 2)
    lead, url, logins = on_demand_team
    rater = next(iter(logins))
    with psycopg.connect(_plain(logins[rater])) as conn:
        conn.execute("SELECT count(*) FROM settings")  # a read transaction, left open
        rc = main(["roles", "--study", url, "--raters", ",".join(logins)])
        err = capsys.readouterr().err.strip()
    assert rc == 2 and "\n" not in err and "internal error" not in err, err
    assert rater in err and "run `annotator roles` again" in err, err
    assert main(["roles", "--study", url, "--raters", ",".join(logins)]) == 0  # free now


def test_a_rater_whose_clock_is_days_ahead_is_told_it_is_the_clock(on_demand_team):
    """The server refuses an answer dated more than a day ahead; the rater reads that the
    computer's clock is wrong (not "could not be read or written (IntegrityError)")."""
    from datetime import UTC, datetime, timedelta

    from annotator.domain.errors import StudyError
    from annotator.store.answers import submit
    from annotator.store.faults import ClockWrong

    _lead, _url, logins = on_demand_team
    rater = next(iter(logins))
    study = Study.open(logins[rater])
    try:
        served = LabelSession(study, rater).next()
        assert served is not None
        with pytest.raises(StudyError) as exc:
            submit(
                study.db,
                rater=rater,
                item_pk=served.item_pk,
                version=study.rubric.version,
                session_pk=None,
                answers=ALL,
                reason=None,
                time_ms=5,
                created_at=datetime.now(UTC).replace(tzinfo=None) + timedelta(days=3),
            )
        assert isinstance(exc.value, ClockWrong)
        assert "date and time are wrong" in str(exc.value)
    finally:
        study.close()
