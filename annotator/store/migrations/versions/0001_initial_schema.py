"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 14:21:21.180057
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "cases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.String(), nullable=False),
        sa.Column("task_type", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("case_id"),
    )
    op.create_table(
        "judge_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("judge", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=True),
        sa.Column("schema", sa.Text(), nullable=True),
        sa.Column("base_url", sa.Text(), nullable=True),
        sa.Column("rubric_version", sa.String(length=64), nullable=True),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("judge_runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_judge_runs_judge"), ["judge"], unique=False)

    op.create_table(
        "media",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("original_sha256", sa.String(length=64), nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("n_bytes", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )
    with op.batch_alter_table("media", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_media_original_sha256"), ["original_sha256"], unique=False
        )

    op.create_table(
        "raters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("is_operator", sa.Boolean(), nullable=False),
        sa.Column("expertise", sa.Text(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "rubric_versions",
        sa.Column("version", sa.String(length=64), nullable=False),
        sa.Column("rubric_id", sa.String(), nullable=False),
        sa.Column("canonical", sa.Text(), nullable=False),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("version"),
    )
    op.create_table(
        "settings",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "cells",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_pk", sa.Integer(), nullable=False),
        sa.Column("prompt_sha256", sa.String(length=64), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("criteria", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["case_pk"],
            ["cases.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("case_pk", "prompt_sha256", "criteria"),
    )
    op.create_table(
        "sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_sessions_rater_pk"), ["rater_pk"], unique=False)

    op.create_table(
        "items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.String(), nullable=False),
        sa.Column("cell_pk", sa.Integer(), nullable=False),
        sa.Column("generator", sa.String(), nullable=False),
        sa.Column("display_code", sa.String(), nullable=False),
        sa.Column("slice", sa.String(), nullable=True),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("is_anchor", sa.Boolean(), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["cell_pk"],
            ["cells.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("display_code"),
        sa.UniqueConstraint("item_id"),
    )
    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_items_cell_pk"), ["cell_pk"], unique=False)
        batch_op.create_index(batch_op.f("ix_items_generator"), ["generator"], unique=False)

    op.create_table(
        "anchor_showings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("before_position", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("display_code", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("display_code"),
    )
    with op.batch_alter_table("anchor_showings", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_anchor_showings_rater_pk"), ["rater_pk"], unique=False)

    op.create_table(
        "anchors",
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("anchor_set", sa.String(), nullable=False),
        sa.Column("reference", sa.Text(), nullable=False),
        sa.Column("rationale", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.PrimaryKeyConstraint("item_pk"),
    )
    with op.batch_alter_table("anchors", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_anchors_anchor_set"), ["anchor_set"], unique=False)

    op.create_table(
        "item_media",
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("media_sha256", sa.String(length=64), nullable=False),
        sa.Column("source_name", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["media_sha256"],
            ["media.sha256"],
        ),
        sa.PrimaryKeyConstraint("item_pk", "role", "ordinal"),
    )
    op.create_table(
        "judge_errors",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_pk", sa.Integer(), nullable=False),
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("raw", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_pk"],
            ["judge_runs.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("judge_errors", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_judge_errors_run_pk"), ["run_pk"], unique=False)

    op.create_table(
        "judge_scores",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_pk", sa.Integer(), nullable=False),
        sa.Column("judge", sa.String(), nullable=False),
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("raw", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["run_pk"],
            ["judge_runs.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("judge", "item_pk", "metric"),
    )
    with op.batch_alter_table("judge_scores", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_judge_scores_item_pk"), ["item_pk"], unique=False)
        batch_op.create_index(batch_op.f("ix_judge_scores_run_pk"), ["run_pk"], unique=False)

    op.create_table(
        "queue",
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("rubric_version", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rubric_version"],
            ["rubric_versions.version"],
        ),
        sa.PrimaryKeyConstraint("rater_pk", "rubric_version", "position"),
    )
    op.create_table(
        "judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("rubric_version", sa.String(length=64), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=True),
        sa.Column("context", sa.String(), nullable=False),
        sa.Column("showing_pk", sa.Integer(), nullable=True),
        sa.Column("queue_position", sa.Integer(), nullable=True),
        sa.Column("answers", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("time_ms", sa.Integer(), nullable=True),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("supersedes", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rubric_version"],
            ["rubric_versions.version"],
        ),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["sessions.id"],
        ),
        sa.ForeignKeyConstraint(
            ["showing_pk"],
            ["anchor_showings.id"],
        ),
        sa.ForeignKeyConstraint(
            ["supersedes"],
            ["judgements.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("supersedes"),
    )
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_judgements_item_pk"), ["item_pk"], unique=False)
        batch_op.create_index(batch_op.f("ix_judgements_rater_pk"), ["rater_pk"], unique=False)
        batch_op.create_index(
            "uq_judgement_live",
            ["rater_pk", "item_pk", "rubric_version"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL AND context = 'live'"),
            postgresql_where=sa.text("supersedes IS NULL AND context = 'live'"),
        )


def downgrade() -> None:

    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_judgement_live",
            sqlite_where=sa.text("supersedes IS NULL AND context = 'live'"),
            postgresql_where=sa.text("supersedes IS NULL AND context = 'live'"),
        )
        batch_op.drop_index(batch_op.f("ix_judgements_rater_pk"))
        batch_op.drop_index(batch_op.f("ix_judgements_item_pk"))

    op.drop_table("judgements")
    op.drop_table("queue")
    with op.batch_alter_table("judge_scores", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_judge_scores_run_pk"))
        batch_op.drop_index(batch_op.f("ix_judge_scores_item_pk"))

    op.drop_table("judge_scores")
    with op.batch_alter_table("judge_errors", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_judge_errors_run_pk"))

    op.drop_table("judge_errors")
    op.drop_table("item_media")
    with op.batch_alter_table("anchors", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_anchors_anchor_set"))

    op.drop_table("anchors")
    with op.batch_alter_table("anchor_showings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_anchor_showings_rater_pk"))

    op.drop_table("anchor_showings")
    with op.batch_alter_table("items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_items_generator"))
        batch_op.drop_index(batch_op.f("ix_items_cell_pk"))

    op.drop_table("items")
    with op.batch_alter_table("sessions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sessions_rater_pk"))

    op.drop_table("sessions")
    op.drop_table("cells")
    op.drop_table("settings")
    op.drop_table("rubric_versions")
    op.drop_table("raters")
    with op.batch_alter_table("media", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_media_original_sha256"))

    op.drop_table("media")
    with op.batch_alter_table("judge_runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_judge_runs_judge"))

    op.drop_table("judge_runs")
    op.drop_table("cases")
