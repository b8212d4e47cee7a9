"""Hints to SQLite's query planner that mean nothing to the result, as SQL constructs.

`likely(x)` tells SQLite that x holds on most rows: an index on x is then no shortcut, and the
planner reads a partial index whose WHERE clause x implies instead. PostgreSQL has no such
function and plans from its statistics, so there the expression is written as it is.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.expression import ColumnElement, FunctionElement
from sqlalchemy.types import NullType


class likely(FunctionElement[Any]):  # noqa: N801 (the SQL function's own name)
    """`likely(x)` on SQLite, `x` elsewhere."""

    # not Boolean: SQLAlchemy writes a Boolean function in a WHERE clause as `likely(x) = 1`
    # on SQLite, and the planner no longer sees x
    type = NullType()
    inherit_cache = True
    name = "likely"

    def __init__(self, clause: ColumnElement[bool]) -> None:
        super().__init__(clause)


@compiles(likely)
def _plain(element: likely, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.clauses, **kw))


@compiles(likely, "sqlite")
def _sqlite(element: likely, compiler: Any, **kw: Any) -> str:
    return f"likely({compiler.process(element.clauses, **kw)})"
