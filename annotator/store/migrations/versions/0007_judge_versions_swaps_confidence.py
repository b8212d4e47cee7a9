"""judge versions (runs and scores), judge confidence per score, judge pair votes in both orders

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-30 19:00:00
"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

IMPORTED = "import"
_OLD_COLUMNS = ["judge", "item_pk", "metric"]
# SQLite keeps the old unique constraint unnamed: batch mode names it by this convention to drop it
_SQLITE_UQ = {"uq": "uq_%(table_name)s_%(column_0_name)s"}


def _version(model, prompt_sha256, schema) -> str:
    # the same recipe as annotator.judge.versions.judge_version for a run without settings
    text = json.dumps([model, prompt_sha256, schema, None], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _old_unique_name(conn) -> str | None:
    for uc in sa.inspect(conn).get_unique_constraints("judge_scores"):
        if list(uc["column_names"]) == _OLD_COLUMNS:
            return uc["name"]
    return None


def upgrade() -> None:
    conn = op.get_bind()
    sqlite = conn.dialect.name == "sqlite"
    with op.batch_alter_table("judge_runs", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("version", sa.String(length=64), server_default=IMPORTED, nullable=False)
        )
        batch_op.add_column(sa.Column("settings", sa.Text(), nullable=True))
    # an LLM run made before versions existed gets the version its model, prompt and schema give
    runs = conn.execute(
        sa.text("SELECT id, model, prompt_sha256, schema FROM judge_runs WHERE kind = 'llm'")
    ).all()
    for rid, model, prompt, schema in runs:
        conn.execute(
            sa.text("UPDATE judge_runs SET version = :v WHERE id = :id"),
            {"v": _version(model, prompt, schema), "id": rid},
        )
    old = _old_unique_name(conn)
    with op.batch_alter_table(
        "judge_scores", schema=None, naming_convention=_SQLITE_UQ if sqlite else None
    ) as batch_op:
        batch_op.add_column(
            sa.Column("version", sa.String(length=64), server_default=IMPORTED, nullable=False)
        )
        batch_op.add_column(sa.Column("confidence", sa.Float(), nullable=True))
        batch_op.drop_constraint(old or "uq_judge_scores_judge", type_="unique")
        batch_op.create_unique_constraint(
            "uq_judge_score_version", ["judge", "version", "item_pk", "metric"]
        )
    conn.execute(
        sa.text(
            "UPDATE judge_scores SET version = (SELECT r.version FROM judge_runs r "
            "WHERE r.id = judge_scores.run_pk)"
        )
    )
    with op.batch_alter_table("pair_votes", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_pair_vote_judge",
            sqlite_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
        )
        batch_op.create_index(
            "uq_pair_vote_judge",
            ["judge", "pair_pk", "item_left"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
        )


def downgrade() -> None:
    conn = op.get_bind()
    # going back loses no row: a judge's second order of a pair and its older versions' scores
    # are kept under their own judge names ("name@swapped", "name@version")
    conn.execute(
        sa.text(
            "UPDATE pair_votes SET judge = judge || '@swapped' WHERE judge IS NOT NULL AND "
            "supersedes IS NULL AND id NOT IN (SELECT min(id) FROM pair_votes WHERE judge IS "
            "NOT NULL AND supersedes IS NULL GROUP BY judge, pair_pk)"
        )
    )
    with op.batch_alter_table("pair_votes", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_pair_vote_judge",
            sqlite_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
        )
        batch_op.create_index(
            "uq_pair_vote_judge",
            ["judge", "pair_pk"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
        )
    conn.execute(
        sa.text(
            "UPDATE judge_scores SET judge = judge || '@' || version WHERE version <> (SELECT "
            "s2.version FROM judge_scores s2 WHERE s2.judge = judge_scores.judge ORDER BY "
            "s2.run_pk DESC LIMIT 1)"
        )
    )
    with op.batch_alter_table("judge_scores", schema=None) as batch_op:
        batch_op.drop_constraint("uq_judge_score_version", type_="unique")
        # PostgreSQL's own name for the constraint 0001 made; SQLite's was unnamed
        batch_op.create_unique_constraint(
            "judge_scores_judge_item_pk_metric_key"
            if conn.dialect.name == "postgresql"
            else "uq_judge_scores_judge",
            _OLD_COLUMNS,
        )
        batch_op.drop_column("confidence")
        batch_op.drop_column("version")
    with op.batch_alter_table("judge_runs", schema=None) as batch_op:
        batch_op.drop_column("settings")
        batch_op.drop_column("version")
