"""team work: row ids (UUIDv7), study id, assignments, per-rater codes, packages, merges

Every answer-bearing row gets a global id minted where it was made (old rows:
minted now, time-ordered by their created_at), so that merging a rater's
package inserts what is new by id, and never twice.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 17:00:00
"""

import json
import secrets
import uuid
from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

ROW_TABLES = ("sessions", "anchor_showings", "judgements", "pair_votes", "calibrations")
_TIME = {"sessions": "started_at"}


def _uuid7(ms: int) -> str:
    value = (
        ((ms & ((1 << 48) - 1)) << 80)
        | (0x7 << 76)
        | (secrets.randbits(12) << 64)
        | (0b10 << 62)
        | secrets.randbits(62)
    )
    return str(uuid.UUID(int=value))


def _ms(value) -> int:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return int(value.timestamp() * 1000) if value is not None else 0


def upgrade() -> None:
    conn = op.get_bind()
    for table in ROW_TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column("uuid", sa.String(length=36), nullable=True))
        col = _TIME.get(table, "created_at")
        rows = conn.execute(sa.text(f"SELECT id, {col} FROM {table}")).all()
        for rid, when in rows:
            conn.execute(
                sa.text(f"UPDATE {table} SET uuid = :u WHERE id = :i"),
                {"u": _uuid7(_ms(when)), "i": rid},
            )
        # a unique index, not a constraint: SQLite adds an index in place, a constraint only by
        # rebuilding the table (which foreign keys pointing at it forbid)
        op.create_index(f"ix_{table}_uuid", table, ["uuid"], unique=True)
    if conn.execute(sa.text("SELECT count(*) FROM settings WHERE key = 'study_id'")).scalar() == 0:
        conn.execute(
            sa.text("INSERT INTO settings (key, value) VALUES ('study_id', :v)"),
            {"v": json.dumps(str(uuid.uuid4()))},
        )

    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("item_pk", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["item_pk"],
            ["items.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("rater_pk", "item_pk"),
    )
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_assignments_item_pk"), ["item_pk"], unique=False)
        batch_op.create_index(batch_op.f("ix_assignments_rater_pk"), ["rater_pk"], unique=False)
    op.create_table(
        "pair_assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("pair_pk", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["pair_pk"],
            ["pairs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("rater_pk", "pair_pk"),
    )
    with op.batch_alter_table("pair_assignments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pair_assignments_pair_pk"), ["pair_pk"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_pair_assignments_rater_pk"), ["rater_pk"], unique=False
        )
    op.create_table(
        "rater_codes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("target_pk", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("rater_pk", "kind", "code"),
        sa.UniqueConstraint("rater_pk", "kind", "target_pk"),
    )
    op.create_table(
        "package_manifest",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("format_version", sa.Integer(), nullable=False),
        sa.Column("study_id", sa.String(length=36), nullable=False),
        sa.Column("rubric_id", sa.String(), nullable=False),
        sa.Column("rubric_version", sa.String(length=64), nullable=False),
        sa.Column("schema_revision", sa.String(), nullable=False),
        sa.Column("rater", sa.String(), nullable=False),
        sa.Column("counts", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "media_blobs",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("sha256"),
    )
    op.create_table(
        "merges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("package_sha256", sa.String(length=64), nullable=False),
        sa.Column("package_id", sa.String(length=36), nullable=False),
        sa.Column("rater_pk", sa.Integer(), nullable=False),
        sa.Column("counts", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rater_pk"],
            ["raters.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("merges", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_merges_package_sha256"), ["package_sha256"], unique=False
        )
    op.create_table(
        "merge_conflicts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("merge_pk", sa.Integer(), nullable=False),
        sa.Column("table_name", sa.String(), nullable=False),
        sa.Column("uuid", sa.String(length=36), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("incoming", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["merge_pk"],
            ["merges.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("merge_conflicts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_merge_conflicts_merge_pk"), ["merge_pk"], unique=False)


def downgrade() -> None:
    for table in (
        "merge_conflicts",
        "merges",
        "media_blobs",
        "package_manifest",
        "rater_codes",
        "pair_assignments",
        "assignments",
    ):
        op.drop_table(table)
    for table in reversed(ROW_TABLES):
        op.drop_index(f"ix_{table}_uuid", table_name=table)
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("uuid")
