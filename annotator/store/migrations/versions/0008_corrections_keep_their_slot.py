"""a correction supersedes only the same rater's answer on the same item and metric set: triggers

A judgement may supersede only a judgement of the same rater, item, rubric version and context; a
pair vote only a vote of the same rater (or judge) on the same pair. Python checks this on every
write path it has (app, import, merge), but a rater role on a server writes SQL directly, and a
package is a file anyone can edit: the rule is the database's, on both engines. An UPDATE that
would break a chain is refused too (nothing updates answers; the server denies it to raters).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 23:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

MESSAGE = {
    "judgements": "a correction must supersede the same rater's answer on the same item, "
    "rubric version and context",
    "pair_votes": "a correction must supersede the same rater's vote on the same pair",
}
# (old row o, new row n): the columns that must agree, as SQL on each engine
_SAME_SQLITE = {
    "judgements": "o.rater_pk = n.rater_pk AND o.item_pk = n.item_pk AND "
    "o.rubric_version = n.rubric_version AND o.context = n.context",
    "pair_votes": "o.pair_pk = n.pair_pk AND o.rater_pk IS n.rater_pk AND o.judge IS n.judge",
}
_SAME_PG = {
    "judgements": _SAME_SQLITE["judgements"],
    "pair_votes": "o.pair_pk = n.pair_pk AND o.rater_pk IS NOT DISTINCT FROM n.rater_pk AND "
    "o.judge IS NOT DISTINCT FROM n.judge",
}
_COLUMNS = {
    "judgements": "supersedes, rater_pk, item_pk, rubric_version, context",
    "pair_votes": "supersedes, pair_pk, rater_pk, judge",
}
TRIGGERS = {
    t: (f"{t}_correction_same_slot_insert", f"{t}_correction_same_slot_update") for t in MESSAGE
}


def _sqlite_broken(table: str) -> tuple[str, str]:
    """(NEW supersedes a row of another slot, a row superseding NEW is of another slot: an
    update that moved NEW out of its chain's slot), as SQL conditions."""
    same = _SAME_SQLITE[table]
    as_new = same.replace("n.", "NEW.")
    as_child = same.replace("o.", "c.").replace("n.", "NEW.")
    return (
        f"(NEW.supersedes IS NOT NULL AND NOT EXISTS (SELECT 1 FROM {table} o "
        f"WHERE o.id = NEW.supersedes AND {as_new}))",
        f"EXISTS (SELECT 1 FROM {table} c WHERE c.supersedes = NEW.id AND NOT ({as_child}))",
    )


def _sqlite_up(conn) -> None:
    for table, (on_insert, on_update) in TRIGGERS.items():
        correction, children = _sqlite_broken(table)
        msg = MESSAGE[table].replace("'", "''")
        conn.exec_driver_sql(
            f"CREATE TRIGGER {on_insert} BEFORE INSERT ON {table} FOR EACH ROW "
            f"WHEN {correction} BEGIN SELECT RAISE(ABORT, '{msg}'); END"
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER {on_update} BEFORE UPDATE OF {_COLUMNS[table]} ON {table} "
            f"FOR EACH ROW WHEN {correction} OR {children} "
            f"BEGIN SELECT RAISE(ABORT, '{msg}'); END"
        )


def _pg_up(conn) -> None:
    # SECURITY DEFINER: the check sees every row whoever inserts (a rater role's row-level
    # security hides other raters' rows from it), with a fixed search_path and qualified names so
    # that no object a caller creates (a temp table, a function in another schema) stands in
    schema = conn.execute(sa.text("SELECT current_schema()")).scalar()
    q = '"' + schema.replace('"', '""') + '"'
    for table, (on_insert, on_update) in TRIGGERS.items():
        same = _SAME_PG[table]
        msg = MESSAGE[table].replace("'", "''")
        fn = f"{q}.annotator_{table}_same_slot"
        conn.exec_driver_sql(
            f"""CREATE FUNCTION {fn}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, {q} AS $body$
DECLARE n {q}.{table};
BEGIN
  n := NEW;
  IF n.supersedes IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM {q}.{table} o WHERE o.id = n.supersedes AND {same}) THEN
    RAISE EXCEPTION USING ERRCODE = 'integrity_constraint_violation', MESSAGE = '{msg}';
  END IF;
  IF TG_OP = 'UPDATE' AND EXISTS (
      SELECT 1 FROM {q}.{table} c WHERE c.supersedes = n.id
      AND NOT ({same.replace("o.", "c.")})) THEN
    RAISE EXCEPTION USING ERRCODE = 'integrity_constraint_violation', MESSAGE = '{msg}';
  END IF;
  RETURN NEW;
END
$body$"""
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER {on_insert} BEFORE INSERT ON {q}.{table} "
            f"FOR EACH ROW EXECUTE FUNCTION {fn}()"
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER {on_update} BEFORE UPDATE OF {_COLUMNS[table]} ON {q}.{table} "
            f"FOR EACH ROW EXECUTE FUNCTION {fn}()"
        )


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name == "postgresql":
        _pg_up(conn)
    else:
        _sqlite_up(conn)


def downgrade() -> None:
    conn = op.get_bind()
    pg = conn.dialect.name == "postgresql"
    for table, names in TRIGGERS.items():
        for name in names:
            conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if pg else ""))
        if pg:
            conn.exec_driver_sql(f"DROP FUNCTION IF EXISTS annotator_{table}_same_slot()")
