"""index for pending anchor showings; one anchor per rater and slot

A race between two windows of one rater (before writes began with BEGIN
IMMEDIATE) could seed two showings for one slot. The later duplicates keep
their rows and answers but move to a negative position (-id), outside the
unique rule, so the rule can hold from now on.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 16:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    conn = op.get_bind()
    dupes = conn.execute(
        sa.text(
            "SELECT a.id FROM anchor_showings a WHERE EXISTS (SELECT 1 FROM anchor_showings b "
            "WHERE b.rater_pk = a.rater_pk AND b.before_position = a.before_position AND b.id < a.id)"
        )
    ).all()
    for (sid,) in dupes:
        conn.execute(
            sa.text("UPDATE anchor_showings SET before_position = -id WHERE id = :i"), {"i": sid}
        )
    with op.batch_alter_table("anchor_showings", schema=None) as batch_op:
        batch_op.create_index(
            "uq_anchor_slot",
            ["rater_pk", "before_position"],
            unique=True,
            sqlite_where=sa.text("before_position >= 0"),
            postgresql_where=sa.text("before_position >= 0"),
        )
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.create_index("ix_judgements_showing_pk", ["showing_pk"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.drop_index("ix_judgements_showing_pk")
    with op.batch_alter_table("anchor_showings", schema=None) as batch_op:
        batch_op.drop_index("uq_anchor_slot")
