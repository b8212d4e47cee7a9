"""Least-privilege database roles for a study on a PostgreSQL server.

The lead owns the tables (an owner is not subject to row-level security). Raters
connect as their own login role, named like their rater name, which is a member
of the study's rater group role. The group may read what a rater sees and insert
the rater's own answers; it can read neither the generator, the item ids and
case ids, source names and original hashes (column privileges), nor another
rater's answers, queue or sessions (row-level security), nor any judge score,
and it can update or delete nothing.
"""

from __future__ import annotations

from sqlalchemy import text

from ..domain.errors import InputError
from ..domain.text import check_name
from .db import StudyDB

# table -> (columns a rater may read, or "*" for all; may insert own rows; row rule)
# row rules: "own" = rater_pk is the rater; "all" = every row; "merge" = of the rater's own merges
_RATER_TABLES: dict[str, tuple[str, bool, str]] = {
    "alembic_version": ("*", False, "all"),
    "settings": ("*", False, "all"),
    "rubric_versions": ("*", False, "all"),
    "raters": ("*", False, "self"),
    "cases": ("id, task_type", False, "all"),
    "cells": ("*", False, "all"),
    "media": ("sha256, width, height, n_bytes, created_at", False, "all"),
    "media_blobs": ("*", False, "all"),
    "items": ("id, cell_pk, display_code, text, is_anchor, created_at", False, "all"),
    "item_media": ("item_pk, role, ordinal, media_sha256", False, "all"),
    "anchors": ("*", False, "all"),
    "anchor_set_versions": ("*", False, "all"),
    "pairs": ("id, item_a, item_b", False, "all"),
    "queue": ("*", True, "own"),
    "pair_queue": ("*", True, "own"),
    "sessions": ("*", True, "own"),
    "anchor_showings": ("*", True, "own"),
    "judgements": ("*", True, "own"),
    "pair_votes": ("*", True, "own"),
    "calibrations": ("*", True, "own"),
    "assignments": ("*", True, "read_all_insert_own"),  # others' counts: an item's open slots
    "pair_assignments": ("*", False, "own"),
    "rater_codes": ("*", True, "own"),
    "merges": ("*", True, "own"),
    "merge_conflicts": ("*", True, "merge"),
}


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def group_role(database: str) -> str:
    return f"{database}_raters"


def role_sql(database: str) -> list[str]:
    """The group role, its privileges and the row rules (idempotent: safe to run again)."""
    group = _ident(group_role(database))
    out = [
        f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {_lit(group_role(database))}) "
        f"THEN CREATE ROLE {group} NOLOGIN; END IF; END $$",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {group}",
        f"GRANT USAGE ON SCHEMA public TO {group}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {group}",
        "CREATE OR REPLACE FUNCTION annotator_me() RETURNS integer LANGUAGE sql STABLE AS "
        "$$ SELECT id FROM raters WHERE name = current_user $$",
        f"GRANT EXECUTE ON FUNCTION annotator_me() TO {group}",
    ]
    for table, (cols, can_insert, rule) in _RATER_TABLES.items():
        t = _ident(table)
        out.append(
            f"GRANT SELECT {'' if cols == '*' else '(' + cols + ')'} ON {t} TO {group}".replace(
                "  ", " "
            )
        )
        if can_insert:
            out.append(f"GRANT INSERT ON {t} TO {group}")
        if rule == "all":
            continue
        out.append(f"ALTER TABLE {t} ENABLE ROW LEVEL SECURITY")
        out.append(f"DROP POLICY IF EXISTS annotator_rater ON {t}")
        out.append(f"DROP POLICY IF EXISTS annotator_rater_insert ON {t}")
        if rule == "self":
            out.append(
                f"CREATE POLICY annotator_rater ON {t} TO {group} USING (name = current_user)"
            )
        elif rule == "own":
            out.append(
                f"CREATE POLICY annotator_rater ON {t} TO {group} USING (rater_pk = annotator_me()) "
                "WITH CHECK (rater_pk = annotator_me())"
            )
        elif rule == "read_all_insert_own":
            out.append(f"CREATE POLICY annotator_rater ON {t} FOR SELECT TO {group} USING (true)")
            out.append(
                f"CREATE POLICY annotator_rater_insert ON {t} FOR INSERT TO {group} "
                "WITH CHECK (rater_pk = annotator_me())"
            )
        elif rule == "merge":
            out.append(
                f"CREATE POLICY annotator_rater ON {t} TO {group} USING "
                "(merge_pk IN (SELECT id FROM merges)) WITH CHECK (merge_pk IN (SELECT id FROM merges))"
            )
    return out


def _lit(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def rater_login_sql(database: str, rater: str) -> list[str]:
    """A login role for one rater (its password is set by the DBA: never by annotator)."""
    name = check_name(rater, "the rater's name", field="--rater")
    role, group = _ident(name), _ident(group_role(database))
    return [
        f"DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = {_lit(name)}) "
        f"THEN CREATE ROLE {role} LOGIN; END IF; END $$",
        f"GRANT {group} TO {role}",
        f"GRANT CONNECT ON DATABASE {_ident(database)} TO {role}",
    ]


def apply_roles(db: StudyDB, database: str, raters: list[str]) -> list[str]:
    """Run the role set-up as the connected (owning) user; returns the statements run."""
    if db.engine.dialect.name != "postgresql":
        raise InputError(
            "database roles are for a study on a PostgreSQL server; a folder study has none",
            field="--study",
        )
    statements = role_sql(database) + [s for r in raters for s in rater_login_sql(database, r)]
    with db.write() as s:
        for stmt in statements:
            s.execute(text(stmt))
    return statements
