"""one first answer per anchor showing and per calibration anchor

Before the unique indexes can exist, a study written at 0002 may hold two
first answers for one showing (or one calibration anchor), from a double
submission: the later one is the rater's newer answer. Every such group's
rows (the duplicates and their corrections) are re-linked into one chain in
the order they were written, so the newest row stays current and nothing is
deleted.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 15:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

_GROUPS = (
    ("showing_pk", "showing_pk IS NOT NULL"),
    ("session_pk, item_pk", "context = 'calibration'"),
)


def _relink_duplicate_firsts(conn) -> None:
    for cols, where in _GROUPS:
        dupes = conn.execute(
            sa.text(
                f"SELECT {cols} FROM judgements WHERE supersedes IS NULL AND {where} "
                f"GROUP BY {cols} HAVING COUNT(*) > 1"
            )
        ).all()
        for key in dupes:
            match = " AND ".join(f"{c.strip()} = :k{i}" for i, c in enumerate(cols.split(",")))
            params = {f"k{i}": v for i, v in enumerate(key)}
            firsts = [
                r[0]
                for r in conn.execute(
                    sa.text(
                        f"SELECT id FROM judgements WHERE supersedes IS NULL AND {where} AND {match} ORDER BY id"
                    ),
                    params,
                )
            ]
            rows: list[int] = []
            for first in firsts:  # each duplicate's own chain
                rid = first
                while rid is not None:
                    rows.append(rid)
                    rid = conn.execute(
                        sa.text("SELECT id FROM judgements WHERE supersedes = :r"), {"r": rid}
                    ).scalar()
            rows.sort()
            # unlink first (supersedes is unique), then chain in write order
            conn.execute(
                sa.text(
                    f"UPDATE judgements SET supersedes = NULL WHERE id IN ({','.join(map(str, rows))})"
                )
            )
            for prev, cur in zip(rows[:-1], rows[1:], strict=True):
                conn.execute(
                    sa.text("UPDATE judgements SET supersedes = :p WHERE id = :c"),
                    {"p": prev, "c": cur},
                )


def upgrade() -> None:
    _relink_duplicate_firsts(op.get_bind())
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.create_index(
            "uq_judgement_showing",
            ["showing_pk"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL AND showing_pk IS NOT NULL"),
            postgresql_where=sa.text("supersedes IS NULL AND showing_pk IS NOT NULL"),
        )
        batch_op.create_index(
            "uq_judgement_calibration",
            ["session_pk", "item_pk"],
            unique=True,
            sqlite_where=sa.text("supersedes IS NULL AND context = 'calibration'"),
            postgresql_where=sa.text("supersedes IS NULL AND context = 'calibration'"),
        )


def downgrade() -> None:
    with op.batch_alter_table("judgements", schema=None) as batch_op:
        batch_op.drop_index("uq_judgement_calibration")
        batch_op.drop_index("uq_judgement_showing")
