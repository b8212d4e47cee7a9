"""Alembic environment: migrations run on the connection the app hands over."""

from alembic import context

from annotator.store import models_pairs, models_team  # noqa: F401  (registers their tables)
from annotator.store.models import Base

target_metadata = Base.metadata
config = context.config


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        from sqlalchemy import create_engine

        url = config.get_main_option("sqlalchemy.url")
        if not url:
            raise RuntimeError("alembic: no connection given and no sqlalchemy.url set")
        engine = create_engine(url)
        with engine.begin() as connection:
            _migrate(connection)
    else:
        _migrate(connection)


def _migrate(connection) -> None:
    # batch mode: SQLite cannot ALTER most things in place
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
