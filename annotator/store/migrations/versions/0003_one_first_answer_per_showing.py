"""one first answer per anchor showing and per calibration anchor

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 15:10:00
"""
import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('judgements', schema=None) as batch_op:
        batch_op.create_index('uq_judgement_showing', ['showing_pk'], unique=True,
                              sqlite_where=sa.text('supersedes IS NULL AND showing_pk IS NOT NULL'))
        batch_op.create_index('uq_judgement_calibration', ['session_pk', 'item_pk'], unique=True,
                              sqlite_where=sa.text("supersedes IS NULL AND context = 'calibration'"))


def downgrade() -> None:
    with op.batch_alter_table('judgements', schema=None) as batch_op:
        batch_op.drop_index('uq_judgement_calibration')
        batch_op.drop_index('uq_judgement_showing')
