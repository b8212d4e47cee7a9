"""Least-privilege database roles for a study on a PostgreSQL server.
(Over 500 lines on purpose: the roles, grants, row-level policies and the answer trigger are one
security model; each grant is read against the others.)

The lead owns the tables (an owner is not subject to row-level security). Raters
connect as their own login role, a member of the study's rater group role. Both
are named after the study, not after the rater: `ann_<tag>_raters` and
`ann_<tag>_<rater pk>`, where <tag> comes from a uuid minted for this database
the first time `annotator roles` runs (kept in the private schema
`annotator_private`, which no rater can read, with the login -> rater mapping).
So a role's name reveals no rater's name (pg_roles is readable by every role of
the cluster), and a new database of the same name gets a new tag: the raters of
an old study never reach it (nor can they connect: CONNECT is granted to the
group of this study only, and taken from PUBLIC).

What a rater role may do is in the "Team server" table of docs/team.md. In short: read
what they are shown, insert their own answers, and nothing else. Every function a
row rule calls is SECURITY DEFINER (it runs as the lead) with a fixed search_path
and schema-qualified names, so neither a temporary table nor a same-named object
in another schema changes what it answers; raters get no TEMP on the database.

Every identifier is quoted by psycopg's `sql.Identifier` and every value by
`sql.Literal`; no statement is built from a rater's name (it never reaches SQL
text at all: it is a row in `raters`).
"""

from __future__ import annotations

import hashlib
import time
import uuid as uuidlib
from dataclasses import dataclass
from typing import Any, cast

import psycopg
from psycopg import sql
from sqlalchemy import text
from sqlalchemy.orm import Session as OrmSession

from ..domain.clock import AHEAD, EARLIEST
from ..domain.errors import InputError
from ..domain.kinds import CANNOT_JUDGE, KINDS
from ..domain.settings import RATER_SETTINGS
from ..domain.time_spent import MAX_TIME_MS
from .db import StudyDB
from .server import IDLE_IN_TRANSACTION_MS

PRIVATE = "annotator_private"
STATEMENT_MS = 30_000  # a rater's statement runs at most this long
RATER_STATEMENT_TIMEOUT = f"{STATEMENT_MS}ms"
IDLE_MS = IDLE_IN_TRANSACTION_MS  # a rater's transaction left idle this long ends
RATER_CONNECTIONS = 8  # connections of one rater's role: a few apps, each 1 (3 at a peak)

# table -> (columns a rater may read, or "*" for all; columns a rater may insert, or "" for none;
# row rule). Not listed: not readable at all (judge_*, anchors, merges, adjudications, ...).
_RATER_TABLES: dict[str, tuple[str, str, str]] = {
    "alembic_version": ("*", "", "all"),
    "settings": ("*", "", "settings"),
    "rubric_versions": ("*", "", "all"),
    "raters": ("id, name, is_operator, expertise, seed, created_at", "", "self"),
    "cases": ("id, task_type", "", "all"),
    "cells": ("id, case_pk, prompt, criteria", "", "cells"),
    "media": ("sha256, width, height, n_bytes, created_at", "", "media"),
    "media_blobs": ("*", "", "media"),
    "items": ("id, cell_pk, display_code, text, created_at", "", "items"),  # no is_anchor
    "item_media": ("item_pk, role, ordinal, media_sha256", "", "item_media"),
    "anchor_set_versions": ("*", "", "all"),
    "pairs": ("id, item_a, item_b", "", "pairs"),
    "queue": ("*", "*", "queue"),
    "pair_queue": ("*", "*", "pair_queue"),
    "sessions": ("*", "*", "own"),
    "anchor_showings": ("*", "", "showings"),  # inserted by annotator_seed_anchor()
    "judgements": ("*", "*", "answers"),
    "pair_votes": ("*", "*", "votes"),
    # no `qualified`: a trigger sets it false; the lead's code computes the verdict
    "calibrations": (
        "*",
        "uuid, rater_pk, session_pk, anchor_set, anchor_set_version, rubric_version, result, "
        "created_at",
        "calibrations",
    ),
    "assignments": ("*", "", "own"),  # claims go through annotator_claim()
    "pair_assignments": ("*", "", "own"),
    "rater_codes": ("*", "", "codes"),
}
# the sequences behind the ids of the rows a rater inserts (nextval only: no SELECT of last_value;
# anchor showings are inserted by annotator_seed_anchor, as the lead)
_RATER_SEQUENCES = ("sessions", "judgements", "pair_votes", "calibrations")

# characters of one free-text answer or reason (the cap of an imported table's cell)
_MAX_TEXT = 1 << 20
_DEFINER = "SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp"
_ME = "(SELECT public.annotator_me())"  # an InitPlan: evaluated once per statement


# The functions row rules and the rater's code call. Static text (no identifiers of this study in
# them: the study's objects are in `public`), run as the lead.
def _value_checks() -> str:
    """The trigger's check of each stored value, one branch per metric kind, each the kind's own
    rule (domain/kinds.py `server_check`): a value the app would refuse is refused here; a kind
    with no branch is refused whole rather than stored unchecked."""
    # check_stored also takes an imported "cannot judge" of a multi kind (tags: every tag unknown)
    can = ", ".join(f"'{n}'" for n, k in KINDS.items() if k.accepts_cannot_judge or k.multi)
    out = [f"""    IF v = '"{CANNOT_JUDGE}"'::jsonb AND t IN ({can}) THEN CONTINUE;\n    END IF;"""]
    for i, (name, spec) in enumerate(KINDS.items()):
        cond, message = spec.server_check()
        out.append(
            f"    {'IF' if i == 0 else 'ELSIF'} t = '{name}' THEN\n"
            f"      IF ({cond}) THEN\n"
            f"        RAISE EXCEPTION 'judgements: {message}', k USING ERRCODE = 'check_violation';\n"
            f"      END IF;"
        )
    out.append(
        "    ELSE\n      RAISE EXCEPTION 'judgements: % is of a kind this server does not check',"
        " k\n        USING ERRCODE = 'check_violation';\n    END IF;"
    )
    return "\n".join(out)


def _time_checks(table: str) -> str:
    """The trigger's checks of an answer's times, the same for both answer logs: a negative
    time is refused, a long one stored at the app's cap (domain/time_spent.capped), and a
    creation time outside the study's possible window (domain/clock) refused."""
    return f"""  IF NEW.time_ms < 0 THEN
    RAISE EXCEPTION '{table}: time_ms is negative' USING ERRCODE = 'check_violation';
  END IF;
  NEW.time_ms := least(NEW.time_ms, {MAX_TIME_MS});  -- stored at the cap, never refused
  IF NEW.created_at IS NULL OR NEW.created_at < timestamp '{EARLIEST.isoformat(sep=" ")}'
     OR NEW.created_at > (now() AT TIME ZONE 'utc') + interval '{AHEAD.total_seconds():.0f} seconds' THEN
    RAISE EXCEPTION '{table}: created_at is not a time of this study'
      USING ERRCODE = 'check_violation';
  END IF;"""


_FUNCTIONS = [
    f"""CREATE OR REPLACE FUNCTION public.annotator_me() RETURNS integer LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT l.rater_pk FROM {PRIVATE}.logins l WHERE l.role_name = session_user::text $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_lock_me() RETURNS void LANGUAGE plpgsql {_DEFINER}
AS $$ BEGIN PERFORM 1 FROM public.raters r WHERE r.id = public.annotator_me() FOR NO KEY UPDATE;
END $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_has_anchors() RETURNS boolean LANGUAGE sql
STABLE {_DEFINER}
AS $$ SELECT public.annotator_me() IS NOT NULL AND EXISTS (SELECT 1 FROM public.anchors) $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_calibrating() RETURNS boolean LANGUAGE sql
STABLE {_DEFINER}
AS $$ SELECT EXISTS (SELECT 1 FROM public.sessions s WHERE s.rater_pk = public.annotator_me()
                     AND s.mode = 'calibration') $$""",
    # The calibration set: the anchors with their references (the calibration screen shows them),
    # but never one this rater was shown as a silent drift anchor (its reference would let the
    # rater correct that answer to it, and the drift check would measure nothing), as a rater
    # package's calibration set holds only the anchors it does not deal silently.
    f"""CREATE OR REPLACE FUNCTION public.annotator_calibration_anchors()
RETURNS TABLE(item_pk integer, anchor_set text, reference text, rationale text)
LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT a.item_pk, a.anchor_set::text, a.reference::text, a.rationale::text
      FROM public.anchors a WHERE public.annotator_calibrating()
        AND a.item_pk NOT IN (SELECT s.item_pk FROM public.anchor_showings s
                              WHERE s.rater_pk = public.annotator_me())
      ORDER BY a.item_pk $$""",
    # A silent drift anchor is chosen and recorded by the server, at the rater's frontier only
    # (the first queue position still unanswered, one per block of anchor_every - 1 positions, none
    # while another waits for its answer): a rater's role lists no anchor pool and inserts no
    # showing of its own, so it learns which item is an anchor no sooner than the app shows it.
    # The choice: an anchor not shown in this session, one the rater never calibrated on first
    # (its reference was shown then), the least shown to this rater, then by the slot's seed.
    f"""CREATE OR REPLACE FUNCTION public.annotator_seed_anchor(p_session integer,
  p_position integer, p_slot bigint, p_code text, p_uuid text, p_every integer) RETURNS integer
LANGUAGE plpgsql VOLATILE {_DEFINER}
AS $$
DECLARE me integer := public.annotator_me(); every integer; ver text; pick integer; sv integer;
  sid integer;
BEGIN
  IF me IS NULL OR p_position IS NULL OR p_position < 0 THEN RETURN NULL; END IF;
  PERFORM 1 FROM public.sessions s WHERE s.id = p_session AND s.rater_pk = me AND s.mode = 'label';
  IF NOT FOUND THEN RETURN NULL; END IF;
  SELECT (st.value::jsonb #>> '{{}}')::integer INTO every FROM public.settings st
   WHERE st.key = 'anchor_every';
  every := coalesce(every, p_every);
  IF every IS NULL OR every < 2 THEN RETURN NULL; END IF;
  SELECT r.version INTO ver FROM public.rubric_versions r WHERE r.is_active LIMIT 1;
  IF EXISTS (SELECT 1 FROM public.anchor_showings s WHERE s.rater_pk = me
             AND NOT EXISTS (SELECT 1 FROM public.judgements j WHERE j.showing_pk = s.id))
     OR EXISTS (SELECT 1 FROM public.anchor_showings s WHERE s.rater_pk = me
                AND s.before_position >= 0
                AND s.before_position / (every - 1) = p_position / (every - 1)) THEN
    RETURN NULL;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM public.queue q WHERE q.rater_pk = me AND q.rubric_version = ver
                   AND q.position = p_position
                   AND NOT EXISTS (SELECT 1 FROM public.judgements j WHERE j.rater_pk = me
                                   AND j.item_pk = q.item_pk AND j.rubric_version = ver
                                   AND j.supersedes IS NULL AND j.context = 'live'))
     OR EXISTS (SELECT 1 FROM public.queue q WHERE q.rater_pk = me AND q.rubric_version = ver
                AND q.position < p_position
                AND NOT EXISTS (SELECT 1 FROM public.judgements j WHERE j.rater_pk = me
                                AND j.item_pk = q.item_pk AND j.rubric_version = ver
                                AND j.supersedes IS NULL AND j.context = 'live')) THEN
    RETURN NULL;
  END IF;
  SELECT a.item_pk, (SELECT max(v.version) FROM public.anchor_set_versions v
                     WHERE v.anchor_set = a.anchor_set)
    INTO pick, sv
    FROM public.anchors a
   WHERE a.item_pk NOT IN (SELECT s.item_pk FROM public.anchor_showings s
                           WHERE s.rater_pk = me AND s.session_pk = p_session)
   ORDER BY EXISTS (SELECT 1 FROM public.judgements j WHERE j.rater_pk = me
                    AND j.item_pk = a.item_pk AND j.context = 'calibration'),
            (SELECT count(*) FROM public.anchor_showings s
              WHERE s.rater_pk = me AND s.item_pk = a.item_pk),
            md5(p_slot::text || ':' || a.item_pk::text)
   LIMIT 1;
  IF pick IS NULL THEN RETURN NULL; END IF;
  INSERT INTO public.anchor_showings (uuid, rater_pk, session_pk, item_pk, before_position, seed,
                                      display_code, created_at, anchor_set_version)
  VALUES (p_uuid, me, p_session, pick, p_position, (p_slot & 2147483647)::integer, p_code,
          (now() AT TIME ZONE 'utc'), sv)
  RETURNING id INTO sid;
  RETURN sid;
END $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_live_items()
RETURNS TABLE(item_pk integer, case_pk integer) LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT i.id, c.case_pk FROM public.items i JOIN public.cells c ON c.id = i.cell_pk
      WHERE NOT i.is_anchor AND public.annotator_me() IS NOT NULL
        AND (NOT EXISTS (SELECT 1 FROM public.assignments)
             OR i.id IN (SELECT a.item_pk FROM public.assignments a
                         WHERE a.rater_pk = public.annotator_me()))
      ORDER BY i.id $$""",
    # Point checks, one row at a time (a row rule calls them per row: an item shown costs a few
    # index lookups, however large the study)
    f"""CREATE OR REPLACE FUNCTION public.annotator_sees_item(p_item integer) RETURNS boolean
LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT EXISTS (SELECT 1 FROM public.queue q
                     WHERE q.rater_pk = public.annotator_me() AND q.item_pk = p_item)
          OR EXISTS (SELECT 1 FROM public.assignments a
                     WHERE a.rater_pk = public.annotator_me() AND a.item_pk = p_item)
          OR EXISTS (SELECT 1 FROM public.anchor_showings s
                     WHERE s.rater_pk = public.annotator_me() AND s.item_pk = p_item)
          OR EXISTS (SELECT 1 FROM public.pair_queue q JOIN public.pairs p ON p.id = q.pair_pk
                     WHERE q.rater_pk = public.annotator_me()
                       AND (p.item_a = p_item OR p.item_b = p_item))
          OR (EXISTS (SELECT 1 FROM public.anchors a WHERE a.item_pk = p_item)
              AND public.annotator_calibrating()) $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_sees_cell(p_cell integer) RETURNS boolean
LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT EXISTS (SELECT 1 FROM public.items i
                     WHERE i.cell_pk = p_cell AND public.annotator_sees_item(i.id)) $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_sees_media(p_sha text) RETURNS boolean
LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT EXISTS (SELECT 1 FROM public.item_media m
                     WHERE m.media_sha256 = p_sha AND public.annotator_sees_item(m.item_pk)) $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_sees_pair(p_pair integer) RETURNS boolean
LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT public.annotator_me() IS NOT NULL AND (
        NOT EXISTS (SELECT 1 FROM public.pair_assignments)
        OR EXISTS (SELECT 1 FROM public.pair_assignments a
                   WHERE a.rater_pk = public.annotator_me() AND a.pair_pk = p_pair)
        OR EXISTS (SELECT 1 FROM public.pair_queue q
                   WHERE q.rater_pk = public.annotator_me() AND q.pair_pk = p_pair)) $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_may_queue(p_item integer) RETURNS boolean
LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT public.annotator_me() IS NOT NULL
         AND EXISTS (SELECT 1 FROM public.items i WHERE i.id = p_item AND NOT i.is_anchor)
         AND (NOT EXISTS (SELECT 1 FROM public.assignments)
              OR EXISTS (SELECT 1 FROM public.assignments a
                         WHERE a.rater_pk = public.annotator_me() AND a.item_pk = p_item)) $$""",
    f"""CREATE OR REPLACE FUNCTION public.annotator_code_taken(code text) RETURNS boolean
LANGUAGE sql STABLE {_DEFINER}
AS $$ SELECT EXISTS (SELECT 1 FROM public.items i WHERE i.display_code = code)
          OR EXISTS (SELECT 1 FROM public.anchor_showings s WHERE s.display_code = code) $$""",
    # On-demand dealing, as store/assignments.claim_next does it for the lead: the least covered
    # item first, then the rater's seeded order; a candidate is taken under a row lock tried without
    # waiting (only this function, running as the lead, can take it) and counted again under it.
    f"""CREATE OR REPLACE FUNCTION public.annotator_claim(p_k integer, p_seed bigint) RETURNS integer
LANGUAGE plpgsql VOLATILE {_DEFINER}
AS $$
DECLARE me integer := public.annotator_me(); c integer; taken integer; n integer;
BEGIN
  IF me IS NULL OR p_k IS NULL OR p_k < 1 THEN RETURN NULL; END IF;
  -- A claim locks its item until the claiming transaction ends: one claim a transaction (rows
  -- this transaction inserted carry its id), and only from a session that keeps the server's
  -- timeouts, so a rater's role holds at most one open claim per connection, for a while.
  IF EXISTS (SELECT 1 FROM public.assignments a WHERE a.rater_pk = me
             AND a.xmin::text::bigint = txid_current() % 4294967296) THEN
    RAISE EXCEPTION 'one claim a transaction: commit this one first'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  IF (SELECT setting::bigint FROM pg_catalog.pg_settings
       WHERE name = 'idle_in_transaction_session_timeout') NOT BETWEEN 1 AND {IDLE_MS}
     OR (SELECT setting::bigint FROM pg_catalog.pg_settings WHERE name = 'statement_timeout')
        NOT BETWEEN 1 AND {STATEMENT_MS} THEN
    RAISE EXCEPTION 'this session lifted the server''s timeouts: claims need them'
      USING ERRCODE = 'insufficient_privilege';
  END IF;
  FOR r IN 1..10 LOOP
    n := 0;
    FOR c IN SELECT i.id FROM public.items i
        WHERE NOT i.is_anchor
          AND i.id NOT IN (SELECT a.item_pk FROM public.assignments a WHERE a.rater_pk = me)
          AND (SELECT count(*) FROM public.assignments a WHERE a.item_pk = i.id) < p_k
        ORDER BY (SELECT count(*) FROM public.assignments a WHERE a.item_pk = i.id),
                 (i.id::bigint * 2654435761 + p_seed) % 4294967291
        LIMIT 32 LOOP
      n := n + 1;
      PERFORM 1 FROM public.items i WHERE i.id = c FOR NO KEY UPDATE SKIP LOCKED;
      IF NOT FOUND THEN CONTINUE; END IF;
      SELECT count(*) INTO taken FROM public.assignments a WHERE a.item_pk = c;
      IF taken < p_k THEN
        INSERT INTO public.assignments (rater_pk, item_pk, seed, created_at)
        VALUES (me, c, p_seed, (now() AT TIME ZONE 'utc'));
        RETURN c;
      END IF;
    END LOOP;
    IF n = 0 THEN RETURN NULL; END IF;
  END LOOP;
  RETURN NULL;
END $$""",
    # A rater's calibration never carries its own verdict: the lead's code computes it.
    f"""CREATE OR REPLACE FUNCTION public.annotator_calibration_guard() RETURNS trigger
LANGUAGE plpgsql {_DEFINER}
AS $$ BEGIN
  IF EXISTS (SELECT 1 FROM {PRIVATE}.logins l WHERE l.role_name = session_user::text) THEN
    NEW.qualified := false;
  END IF;
  RETURN NEW;
END $$""",
    # What a rater's role inserts by hand passes the checks an answer given in the app passes
    # (domain/answers.normalise, domain/pairs.CHOICES); the lead's own rows are not checked here.
    f"""CREATE OR REPLACE FUNCTION public.annotator_check_judgement() RETURNS trigger
LANGUAGE plpgsql {_DEFINER}
AS $$
DECLARE a jsonb; rubric jsonb; m jsonb; k text; v jsonb; t text; n numeric;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM {PRIVATE}.logins l WHERE l.role_name = session_user::text) THEN
    RETURN NEW;
  END IF;
  IF NEW.context IS NULL OR NEW.context NOT IN ('live', 'anchor', 'calibration') THEN
    RAISE EXCEPTION 'judgements: context must be live, anchor or calibration'
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.source IS DISTINCT FROM 'app' THEN
    RAISE EXCEPTION 'judgements: source must be app' USING ERRCODE = 'check_violation';
  END IF;
  IF length(NEW.answers) > {4 * _MAX_TEXT} OR length(NEW.reason) > {_MAX_TEXT} THEN
    RAISE EXCEPTION 'judgements: answers or reason longer than the app allows'
      USING ERRCODE = 'check_violation';
  END IF;
{_time_checks("judgements")}
  SELECT r.canonical::jsonb INTO rubric FROM public.rubric_versions r
   WHERE r.version = NEW.rubric_version AND r.is_active;
  IF rubric IS NULL THEN
    RAISE EXCEPTION 'judgements: rubric_version is not the study''s active rubric'
      USING ERRCODE = 'check_violation';
  END IF;
  BEGIN
    a := NEW.answers::jsonb;
  EXCEPTION WHEN others THEN
    RAISE EXCEPTION 'judgements: answers are not valid JSON' USING ERRCODE = 'check_violation';
  END;
  IF jsonb_typeof(a) IS DISTINCT FROM 'object' THEN
    RAISE EXCEPTION 'judgements: answers are not a JSON object' USING ERRCODE = 'check_violation';
  END IF;
  FOR k, v IN SELECT e.key, e.value FROM jsonb_each(a) e LOOP
    SELECT x INTO m FROM jsonb_array_elements(rubric->'metrics') x WHERE x->>'key' = k;
    IF m IS NULL THEN
      RAISE EXCEPTION 'judgements: unknown metric %', left(k, 60) USING ERRCODE = 'check_violation';
    END IF;
    t := m->>'kind';
{_value_checks()}
  END LOOP;
  RETURN NEW;
END $$""",
    "DROP TRIGGER IF EXISTS annotator_check_judgement ON public.judgements",
    "CREATE TRIGGER annotator_check_judgement BEFORE INSERT ON public.judgements "
    "FOR EACH ROW EXECUTE FUNCTION public.annotator_check_judgement()",
    f"""CREATE OR REPLACE FUNCTION public.annotator_check_vote() RETURNS trigger
LANGUAGE plpgsql {_DEFINER}
AS $$
DECLARE a integer; b integer;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM {PRIVATE}.logins l WHERE l.role_name = session_user::text) THEN
    RETURN NEW;
  END IF;
  IF NEW.choice IS NULL OR NEW.choice NOT IN ('left', 'right', 'both', 'neither') THEN
    RAISE EXCEPTION 'pair_votes: choice must be left, right, both or neither'
      USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.judge IS NOT NULL OR NEW.source IS DISTINCT FROM 'app' THEN
    RAISE EXCEPTION 'pair_votes: a rater''s vote has no judge and source app'
      USING ERRCODE = 'check_violation';
  END IF;
  SELECT p.item_a, p.item_b INTO a, b FROM public.pairs p WHERE p.id = NEW.pair_pk;
  IF NOT ((NEW.item_left = a AND NEW.item_right = b) OR (NEW.item_left = b AND NEW.item_right = a))
  THEN
    RAISE EXCEPTION 'pair_votes: item_left and item_right are not the pair''s items'
      USING ERRCODE = 'check_violation';
  END IF;
  IF length(NEW.reason) > {_MAX_TEXT} THEN
    RAISE EXCEPTION 'pair_votes: reason longer than the app allows'
      USING ERRCODE = 'check_violation';
  END IF;
{_time_checks("pair_votes")}
  RETURN NEW;
END $$""",
    "DROP TRIGGER IF EXISTS annotator_check_vote ON public.pair_votes",
    "CREATE TRIGGER annotator_check_vote BEFORE INSERT ON public.pair_votes "
    "FOR EACH ROW EXECUTE FUNCTION public.annotator_check_vote()",
    "DROP TRIGGER IF EXISTS annotator_calibration_guard ON public.calibrations",
    "CREATE TRIGGER annotator_calibration_guard BEFORE INSERT ON public.calibrations "
    "FOR EACH ROW EXECUTE FUNCTION public.annotator_calibration_guard()",
]
_FUNCTION_NAMES = (
    "annotator_me()",
    "annotator_lock_me()",
    "annotator_has_anchors()",
    "annotator_calibrating()",
    "annotator_calibration_anchors()",
    "annotator_seed_anchor(integer, integer, bigint, text, text, integer)",
    "annotator_live_items()",
    "annotator_sees_item(integer)",
    "annotator_sees_cell(integer)",
    "annotator_sees_media(text)",
    "annotator_sees_pair(integer)",
    "annotator_may_queue(integer)",
    "annotator_code_taken(text)",
    "annotator_claim(integer, bigint)",
)

# row rules: (USING, WITH CHECK); None = no rule of that kind
_RULES: dict[str, tuple[str, str | None]] = {
    "self": (f"id = {_ME}", None),
    "settings": ("key IN (" + ", ".join(f"'{k}'" for k in RATER_SETTINGS) + ")", None),
    "own": (f"rater_pk = {_ME}", f"rater_pk = {_ME}"),
    # a package's codes for its silent anchors name them (kind 'silent'): the lead's, for merge
    "codes": (f"rater_pk = {_ME} AND kind <> 'silent'", None),
    "items": ("public.annotator_sees_item(id)", None),
    "item_media": ("public.annotator_sees_item(item_pk)", None),
    "cells": ("public.annotator_sees_cell(id)", None),
    "media": ("public.annotator_sees_media(sha256)", None),
    "pairs": ("public.annotator_sees_pair(id)", None),
    "queue": (f"rater_pk = {_ME}", f"rater_pk = {_ME} AND public.annotator_may_queue(item_pk)"),
    "pair_queue": (
        f"rater_pk = {_ME}",
        f"rater_pk = {_ME} AND public.annotator_sees_pair(pair_pk)",
    ),
    "showings": (f"rater_pk = {_ME}", None),
    "answers": (
        f"rater_pk = {_ME}",
        f"rater_pk = {_ME} AND public.annotator_sees_item(item_pk) "
        "AND (session_pk IS NULL OR session_pk IN (SELECT s.id FROM public.sessions s)) "
        "AND (showing_pk IS NULL OR showing_pk IN (SELECT a.id FROM public.anchor_showings a))",
    ),
    "votes": (
        f"rater_pk = {_ME}",
        f"rater_pk = {_ME} AND public.annotator_sees_pair(pair_pk) "
        "AND (session_pk IS NULL OR session_pk IN (SELECT s.id FROM public.sessions s))",
    ),
    "calibrations": (
        f"rater_pk = {_ME}",
        f"rater_pk = {_ME} AND session_pk IN (SELECT s.id FROM public.sessions s)",
    ),
}


@dataclass(frozen=True)
class Login:
    rater: str
    role: str


def tag_of(study_uuid: str) -> str:
    return hashlib.sha256(study_uuid.encode()).hexdigest()[:10]


def group_role(tag: str) -> str:
    return f"ann_{tag}_raters"


def login_role(tag: str, rater_pk: int) -> str:
    return f"ann_{tag}_{rater_pk}"


def _comment(study_uuid: str, database: str) -> str:
    return f"annotator study {study_uuid} (database {database})"


def _private_schema() -> list[sql.Composable]:
    return [
        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(PRIVATE)),
        sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(sql.Identifier(PRIVATE)),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.identity (uuid text PRIMARY KEY, "
            "created_at timestamp NOT NULL DEFAULT (now() AT TIME ZONE 'utc'))"
        ).format(sql.Identifier(PRIVATE)),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.logins (role_name text PRIMARY KEY, "
            "rater_pk integer NOT NULL UNIQUE REFERENCES public.raters(id))"
        ).format(sql.Identifier(PRIVATE)),
        # the lookups the row rules make (not in the schema's migrations: only a server with
        # rater roles needs them; made again whenever `annotator roles` runs)
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS annotator_rls_queue ON public.queue (rater_pk, item_pk)"
        ),
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS annotator_rls_item_media ON public.item_media (media_sha256)"
        ),
        sql.SQL(
            "CREATE INDEX IF NOT EXISTS annotator_rls_pair_queue ON public.pair_queue "
            "(rater_pk, pair_pk)"
        ),
    ]


def _study_uuid(s: OrmSession) -> str | None:
    if not s.execute(text("SELECT to_regclass(:t)"), {"t": f"{PRIVATE}.identity"}).scalar():
        return None
    return s.execute(text(f"SELECT uuid FROM {PRIVATE}.identity LIMIT 1")).scalar()


def _existing_role(s: OrmSession, name: str) -> tuple[bool, str | None]:
    row = s.execute(
        text(
            "SELECT r.oid, shobj_description(r.oid, 'pg_authid') FROM pg_roles r "
            "WHERE r.rolname = :n"
        ),
        {"n": name},
    ).first()
    return (row is not None, row[1] if row else None)


def _role_statements(
    s: OrmSession, database: str, study_uuid: str, logins: list[tuple[str, int]]
) -> tuple[list[sql.Composable], list[Login]]:
    tag = tag_of(study_uuid)
    group = sql.Identifier(group_role(tag))
    db = sql.Identifier(database)
    comment = sql.Literal(_comment(study_uuid, database))
    out: list[sql.Composable] = [*_private_schema()]
    out.append(
        sql.SQL("INSERT INTO {}.identity (uuid) VALUES ({}) ON CONFLICT DO NOTHING").format(
            sql.Identifier(PRIVATE), sql.Literal(study_uuid)
        )
    )
    exists, note = _existing_role(s, group_role(tag))
    _check_ours(group_role(tag), exists, note, study_uuid)
    if not exists:
        out.append(sql.SQL("CREATE ROLE {} NOLOGIN").format(group))
    out.append(sql.SQL("COMMENT ON ROLE {} IS {}").format(group, comment))
    # who may connect at all, and nobody makes temporary objects (they shadow tables by name)
    out += [
        sql.SQL("REVOKE CONNECT, TEMPORARY ON DATABASE {} FROM PUBLIC").format(db),
        sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM {}").format(db, group),
        sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(db, group),
        sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"),
        sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(group),
        sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {}").format(group),
        sql.SQL("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA public FROM {}").format(group),
        sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(group),
    ]
    # this study's functions of any earlier version go first (a changed signature cannot be
    # replaced in place); the row rules and triggers that use them are made again below. Not the
    # schema's own (migration 0008's correction triggers, `annotator_<table>_same_slot`): their
    # CASCADE took those triggers with them, and a rater role could then supersede anyone's answer
    for (proc,) in s.execute(
        text(
            "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n "
            "ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND p.proname LIKE 'annotator\\_%' "
            "AND p.proname NOT LIKE '%\\_same\\_slot'"
        )
    ):
        out.append(sql.SQL("DROP FUNCTION IF EXISTS public.{} CASCADE").format(sql.SQL(proc)))
    # the shared rater group older versions made (named after the database, so a new database of the same
    # name would have inherited its members): it loses every right here
    legacy = f"{database}_raters"
    if _existing_role(s, legacy)[0]:
        leg = sql.Identifier(legacy)
        out += [
            sql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {}").format(leg),
            sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {}").format(leg),
            sql.SQL("REVOKE ALL ON SCHEMA public FROM {}").format(leg),
            sql.SQL("REVOKE ALL ON DATABASE {} FROM {}").format(db, leg),
        ]
    out += [sql.SQL(f) for f in _FUNCTIONS]  # type: ignore[arg-type]  # static text
    for fn in _FUNCTION_NAMES:
        out.append(sql.SQL(f"REVOKE ALL ON FUNCTION public.{fn} FROM PUBLIC"))  # type: ignore[arg-type]
        out.append(sql.SQL(f"GRANT EXECUTE ON FUNCTION public.{fn} TO {{}}").format(group))  # type: ignore[arg-type]
    for seq in _RATER_SEQUENCES:
        out.append(
            sql.SQL("GRANT USAGE ON SEQUENCE {} TO {}").format(
                sql.Identifier("public", f"{seq}_id_seq"), group
            )
        )
    for table, (cols, insert_cols, rule) in _RATER_TABLES.items():
        t = sql.Identifier("public", table)
        out.append(_grant("SELECT", cols, t, group))
        if insert_cols:
            out.append(_grant("INSERT", insert_cols, t, group))
        if rule == "all":
            continue
        using, check = _RULES[rule]
        out.append(sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(t))
        for name in ("annotator_rater", "annotator_rater_insert"):
            out.append(sql.SQL("DROP POLICY IF EXISTS {} ON {}").format(sql.Identifier(name), t))
        out.append(
            sql.SQL("CREATE POLICY annotator_rater ON {} FOR SELECT TO {} USING ({})").format(
                t,
                group,
                sql.SQL(using),  # type: ignore[arg-type]  # static text
            )
        )
        if check is not None:
            out.append(
                sql.SQL(
                    "CREATE POLICY annotator_rater_insert ON {} FOR INSERT TO {} WITH CHECK ({})"
                ).format(t, group, sql.SQL(check))  # type: ignore[arg-type]  # static text
            )
    made: list[Login] = []
    for rater, pk in logins:
        role = login_role(tag, pk)
        exists, note = _existing_role(s, role)
        _check_ours(role, exists, note, study_uuid)
        r = sql.Identifier(role)
        if not exists:
            out.append(sql.SQL("CREATE ROLE {} LOGIN").format(r))
        out += [
            sql.SQL("COMMENT ON ROLE {} IS {}").format(r, comment),
            # a rater's statements are short: one that runs longer is cut (and retried), and a
            # transaction left open does not hold its locks against the lead's migrations
            sql.SQL("ALTER ROLE {} SET statement_timeout = {}").format(
                r, sql.Literal(RATER_STATEMENT_TIMEOUT)
            ),
            sql.SQL("ALTER ROLE {} SET idle_in_transaction_session_timeout = {}").format(
                r, sql.Literal(f"{IDLE_MS}ms")
            ),
            # one app keeps one connection (three at a peak: store/server.py); a few apps more
            sql.SQL("ALTER ROLE {} CONNECTION LIMIT {}").format(r, sql.Literal(RATER_CONNECTIONS)),
            sql.SQL("GRANT {} TO {}").format(group, r),
            sql.SQL(
                "INSERT INTO {}.logins (role_name, rater_pk) VALUES ({}, {}) "
                "ON CONFLICT (role_name) DO NOTHING"
            ).format(sql.Identifier(PRIVATE), sql.Literal(role), sql.Literal(pk)),
        ]
        made.append(Login(rater, role))
    return out, made


def _grant(what: str, cols: str, table: sql.Identifier, group: sql.Identifier) -> sql.Composed:
    if cols == "*":
        return sql.SQL("GRANT " + what + " ON {} TO {}").format(table, group)  # type: ignore[operator]
    names = sql.SQL(", ").join(sql.Identifier(c.strip()) for c in cols.split(","))
    return sql.SQL("GRANT " + what + " ({}) ON {} TO {}").format(names, table, group)  # type: ignore[operator]


def _check_ours(role: str, exists: bool, note: str | None, study_uuid: str) -> None:
    """A role of this name made for another study (an older database of the same name, whose
    raters must not reach this one) is never taken over."""
    if exists and (note is None or study_uuid not in note):
        raise InputError(
            f"the database role {role} exists but was not made for this study ({note or 'no note'}); "
            "drop it (DROP ROLE) or run `annotator roles --drop` on the study it belongs to",
            field="--raters",
        )


def _require_server(db: StudyDB) -> None:
    if db.engine.dialect.name != "postgresql":
        raise InputError(
            "database roles are for a study on a PostgreSQL server; a folder study has none",
            field="--study",
        )


def _rater_pks(s: OrmSession, raters: list[str]) -> list[tuple[str, int]]:
    out = []
    for name in raters:
        pk = s.execute(text("SELECT id FROM raters WHERE name = :n"), {"n": name}).scalar()
        if pk is None:
            raise InputError(
                f"no rater named '{name}' in this study; add it with `annotator rater add`",
                field="--raters",
            )
        out.append((name, int(pk)))
    return out


def _raw(s: OrmSession) -> psycopg.Connection[Any]:
    """The session's own psycopg connection (same transaction), for composed SQL."""
    raw = s.connection().connection.driver_connection
    assert isinstance(raw, psycopg.Connection)
    return raw


def _render(s: OrmSession, stmts: list[sql.Composable]) -> list[str]:
    raw = _raw(s)
    return [stmt.as_string(raw) + ";" for stmt in stmts]


APPLY_ATTEMPTS = 6  # each waits the server's lock wait (4 s): about half a minute of raters
_LOCK_NOT_AVAILABLE = "55P03"


def apply_roles(
    db: StudyDB, database: str, raters: list[str], *, print_only: bool = False
) -> tuple[list[str], list[Login], str]:
    """Set up (or bring up to date) the group, its grants and row rules, and a login per rater,
    as the connected lead. Returns (the SQL, the logins, the group role); with `print_only` the
    SQL is only returned (a new study's tag is then minted in the SQL itself).

    Grants and row rules lock the tables a moment; a rater's app inside a transaction holds them:
    the whole change is tried again a few times, then the line says who holds the study."""
    for attempt in range(1, APPLY_ATTEMPTS + 1):
        try:
            return _apply_roles(db, database, raters, print_only=print_only)
        except Exception as exc:  # noqa: BLE001 - only a lock wait is retried
            if _sqlstate(exc) != _LOCK_NOT_AVAILABLE:
                raise
            if attempt == APPLY_ATTEMPTS:
                raise InputError(_holders_line(db), field="--study") from None
            time.sleep(0.5 * attempt)
    raise AssertionError("unreachable")


def _sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of a driver error, however it was wrapped (SQLAlchemy, the study's faults)."""
    seen: BaseException | None = exc
    while seen is not None:
        state = getattr(seen, "sqlstate", None) or getattr(
            getattr(seen, "orig", None), "sqlstate", None
        )
        if state:
            return str(state)
        seen = seen.__cause__ or seen.__context__
    return None


def _holders_line(db: StudyDB) -> str:
    """Who keeps a transaction open on the study, by rater where a login is one, and what to do."""
    by_login = {login: rater for rater, login in logins_of(db).items()}
    with db.read() as s:
        rows = s.execute(
            text(
                "SELECT usename, xact_start FROM pg_stat_activity WHERE datname = "
                "current_database() AND pid <> pg_backend_pid() AND xact_start IS NOT NULL "
                "ORDER BY xact_start"
            )
        ).all()
    who = [
        f"rater {by_login[u]}" if u in by_login else f"the login {u}"
        for u, _start in rows
        if u is not None
    ]
    held = ", ".join(dict.fromkeys(who)) or "another session"
    return (
        f"the study's tables are held by an open transaction ({held}): a rater's app waiting "
        "mid-answer ends it within 10 minutes, or ask them to close the app; then run "
        "`annotator roles` again"
    )


def _apply_roles(
    db: StudyDB, database: str, raters: list[str], *, print_only: bool
) -> tuple[list[str], list[Login], str]:
    _require_server(db)
    with db.write() as s:
        owner = s.execute(
            text(
                "SELECT pg_get_userbyid(datdba) = current_user OR "
                "(SELECT rolsuper FROM pg_roles WHERE rolname = current_user) "
                "FROM pg_database WHERE datname = current_database()"
            )
        ).scalar()
        if not owner:
            raise InputError(
                "run `annotator roles` as the owner of the study's database (it changes who may "
                "connect to it)",
                field="--study",
            )
        study_uuid = _study_uuid(s) or str(uuidlib.uuid4())
        stmts, logins = _role_statements(s, database, study_uuid, _rater_pks(s, raters))
        rendered = _render(s, stmts)
        if print_only:
            s.rollback()
            return rendered, logins, group_role(tag_of(study_uuid))
        _restore_correction_triggers(s)
        raw = _raw(s)
        for stmt in stmts:
            raw.execute(cast(sql.Composed, stmt))  # in the session's transaction: all or none
    return rendered, logins, group_role(tag_of(study_uuid))


_CORRECTION_TRIGGERS = ("judgements", "pair_votes")


def _restore_correction_triggers(s: OrmSession) -> None:
    """Migration 0008's correction triggers made again where an `annotator roles` of before this
    fix dropped them (with their functions, by CASCADE): the migration's own code, once."""
    have = set(
        s.scalars(
            text(
                "SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
                "AND t.tgname = c.relname || '_correction_same_slot_insert'"
            )
        )
    )
    if not have >= set(_CORRECTION_TRIGGERS):
        _rerun_migration_0008(s)
    for table in _CORRECTION_TRIGGERS:  # pg_temp last, as every function a rater's rows meet
        s.execute(
            text(
                f"ALTER FUNCTION public.annotator_{table}_same_slot() "
                "SET search_path = pg_catalog, public, pg_temp"
            )
        )


def _rerun_migration_0008(s: OrmSession) -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parent / "migrations" / "versions" / "0008_corrections_keep_their_slot.py"
    spec = importlib.util.spec_from_file_location("annotator_migration_0008", path)
    assert spec is not None and spec.loader is not None
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    conn = s.connection()
    for table in _CORRECTION_TRIGGERS:
        for name in migration.TRIGGERS[table]:
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name} ON public.{table}")
        conn.exec_driver_sql(f"DROP FUNCTION IF EXISTS public.annotator_{table}_same_slot()")
    conn.exec_driver_sql("SET LOCAL search_path = public")  # the migration's current_schema()
    migration._pg_up(conn)
    conn.exec_driver_sql("RESET search_path")


def drop_roles(db: StudyDB, database: str) -> list[str]:
    """Remove this study's rater roles (their grants, row rules and logins); returns their names.
    The study's data stays; raters can no longer connect."""
    _require_server(db)
    with db.write() as s:
        study_uuid = _study_uuid(s)
        if study_uuid is None:
            return []
        group = group_role(tag_of(study_uuid))
        names = [
            r[0] for r in s.execute(text(f"SELECT role_name FROM {PRIVATE}.logins ORDER BY 1"))
        ]
        raw = _raw(s)
        gone = []
        for name in [*names, group]:
            exists, note = _existing_role(s, name)
            if not exists or note is None or study_uuid not in note:
                continue
            raw.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            raw.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))
            gone.append(name)
        s.execute(text(f"DELETE FROM {PRIVATE}.logins"))
    return gone


def logins_of(db: StudyDB) -> dict[str, str]:
    """rater name -> login role, of the roles made for this study (for the lead)."""
    with db.read() as s:
        if _study_uuid(s) is None:
            return {}
        return dict(
            s.execute(
                text(
                    f"SELECT r.name, l.role_name FROM {PRIVATE}.logins l "
                    "JOIN raters r ON r.id = l.rater_pk"
                )
            ).all()
        )


def is_rater_session(s: OrmSession) -> bool:
    """Whether this connection is a rater's login role (which reads the study through the
    functions above); cached per database connection."""
    if s.get_bind().dialect.name != "postgresql":
        return False
    info = s.connection().info
    if "annotator_rater" not in info:
        info["annotator_rater"] = bool(
            s.execute(
                text(
                    "SELECT to_regprocedure('public.annotator_me()') IS NOT NULL AND "
                    "NOT has_table_privilege('public.anchors', 'SELECT')"
                )
            ).scalar()
        )
    return bool(info["annotator_rater"])
