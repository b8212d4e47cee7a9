"""adjudications; anchor set versions (what calibrations and showings drew from); promoted anchors

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 18:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=True),
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("metric", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("category", sa.String(), nullable=True),
        sa.Column("by", sa.String(), nullable=False),
        sa.Column("supersedes", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["supersedes"],
            ["adjudications.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("supersedes"),
    )
    with op.batch_alter_table("adjudications", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_adjudications_item_pk"), ["item_pk"], unique=False)
        batch_op.create_index(batch_op.f("ix_adjudications_uuid"), ["uuid"], unique=True)
        batch_op.create_index(
            "uq_adjudication_first",
            ["item_pk", "metric"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL"),
            postgresql_where=sa.text("supersedes IS NULL"),
        )
    op.create_table(
        "anchor_set_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("anchor_set", sa.String(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("anchor_set", "version"),
    )
    with op.batch_alter_table("anchor_set_versions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_anchor_set_versions_anchor_set"), ["anchor_set"], unique=False
        )
    with op.batch_alter_table("anchors", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("set_version", sa.Integer(), server_default="1", nullable=False)
        )
        batch_op.add_column(sa.Column("promoted_from", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_anchors_promoted_from_items", "items", ["promoted_from"], ["id"]
        )
    with op.batch_alter_table("anchor_showings", schema=None) as batch_op:
        batch_op.add_column(sa.Column("anchor_set_version", sa.Integer(), nullable=True))
    with op.batch_alter_table("calibrations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("anchor_set_version", sa.Integer(), nullable=True))
    # every set already in the study is its version 1
    conn = op.get_bind()
    for (name,) in conn.execute(sa.text("SELECT DISTINCT anchor_set FROM anchors")).all():
        conn.execute(
            sa.text(
                "INSERT INTO anchor_set_versions (anchor_set, version, note, created_at) "
                "VALUES (:s, 1, 'imported', CURRENT_TIMESTAMP)"
            ),
            {"s": name},
        )


def downgrade() -> None:
    with op.batch_alter_table("calibrations", schema=None) as batch_op:
        batch_op.drop_column("anchor_set_version")
    with op.batch_alter_table("anchor_showings", schema=None) as batch_op:
        batch_op.drop_column("anchor_set_version")
    with op.batch_alter_table("anchors", schema=None) as batch_op:
        batch_op.drop_constraint("fk_anchors_promoted_from_items", type_="foreignkey")
        batch_op.drop_column("promoted_from")
        batch_op.drop_column("set_version")
    op.drop_table("anchor_set_versions")
    op.drop_table("adjudications")
