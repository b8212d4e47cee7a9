"""SQLite persistence: SQLAlchemy 2.x models, engine, repositories, Alembic
migrations. The only package that imports SQLAlchemy; it hands out domain
objects and plain values, never ORM sessions."""

from . import models_pairs, models_team  # noqa: E402,F401  (every table registered with the metadata)
