"""pairwise votes and calibrations

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 14:21:21.260768
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "calibrations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("session_pk", sa.Integer(), nullable=False),
        sa.Column("anchor_set", sa.String(), nullable=False),
        sa.Column("rubric_version", sa.String(length=64), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("qualified", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["sessions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("calibrations", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_calibrations_rater_pk"), ["rater_pk"], unique=False)

    op.create_table(
        "pairs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pair_id", sa.String(), nullable=False),
        sa.Column("item_a", sa.Integer(), nullable=False),
        sa.Column("item_b", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_a"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["item_b"],
            ["items.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("pair_id"),
    )
    with op.batch_alter_table("pairs", schema=None) as batch_op:
        batch_op.create_index("uq_pair_items", ["item_a", "item_b"], unique=True)

    op.create_table(
        "pair_queue",
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("pair_pk", sa.Integer(), nullable=False),
        sa.Column("left_item", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["left_item"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["pair_pk"],
            ["pairs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.PrimaryKeyConstraint("rater_pk", "position"),
    )
    op.create_table(
        "pair_votes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pair_pk", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=True),
        sa.Column("judge", sa.String(), nullable=True),
        sa.Column("item_left", sa.Integer(), nullable=False),
        sa.Column("item_right", sa.Integer(), nullable=False),
        sa.Column("choice", sa.String(), nullable=False),
        sa.Column("side_seed", sa.Integer(), nullable=True),
        sa.Column("session_pk", sa.Integer(), nullable=True),
        sa.Column("queue_position", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("time_ms", sa.Integer(), nullable=True),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("supersedes", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_left"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["item_right"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["pair_pk"],
            ["pairs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.ForeignKeyConstraint(
            ["session_pk"],
            ["sessions.id"],
        ),
        sa.ForeignKeyConstraint(
            ["supersedes"],
            ["pair_votes.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("supersedes"),
    )
    with op.batch_alter_table("pair_votes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pair_votes_pair_pk"), ["pair_pk"], unique=False)
        batch_op.create_index(
            "uq_pair_vote_judge",
            ["judge", "pair_pk"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
        )
        batch_op.create_index(
            "uq_pair_vote_rater",
            ["rater_pk", "pair_pk"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL AND rater_pk IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND rater_pk IS NOT NULL"),
        )


def downgrade() -> None:

    with op.batch_alter_table("pair_votes", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_pair_vote_rater",
            sqlite_where=sa.text("supersedes IS NULL AND rater_pk IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND rater_pk IS NOT NULL"),
        )
        batch_op.drop_index(
            "uq_pair_vote_judge",
            sqlite_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND judge IS NOT NULL"),
        )
        batch_op.drop_index(batch_op.f("ix_pair_votes_pair_pk"))

    op.drop_table("pair_votes")
    op.drop_table("pair_queue")
    with op.batch_alter_table("pairs", schema=None) as batch_op:
        batch_op.drop_index("uq_pair_items")

    op.drop_table("pairs")
    with op.batch_alter_table("calibrations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_calibrations_rater_pk"))

    op.drop_table("calibrations")
