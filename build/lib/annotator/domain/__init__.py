"""Dataclasses and rules. Standard library only: no I/O, no Qt, no SQLAlchemy."""
