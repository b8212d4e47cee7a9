"""SQLite persistence: SQLAlchemy 2.x models, engine, repositories, Alembic
migrations. The only package that imports SQLAlchemy; it hands out domain
objects and plain values, never ORM sessions."""
