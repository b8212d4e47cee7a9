"""Reports: the report dict (docs/design.md 5.5) -> JSON, CSV/Parquet tables, charts, HTML.

Nothing here computes a statistic: every figure comes from the report dict built
by `annotator.stats.report_model`. Every file is written atomically (`annotator.base.atomic`).

Names are imported lazily, so `annotator report --json` does not pay for
matplotlib and pandas it does not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "agreement_table": "csv_report",
    "findings_table": "csv_report",
    "neutralise_cell": "csv_report",
    "neutralise_frame": "csv_report",
    "report_tables": "csv_report",
    "systematic_findings_table": "csv_report",
    "write_csv_tables": "csv_report",
    "write_parquet": "csv_report",
    "render_html": "html_report",
    "write_html": "html_report",
    "read_json": "json_report",
    "to_json_text": "json_report",
    "write_json": "json_report",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from .csv_report import (  # noqa: F401
        agreement_table,
        findings_table,
        neutralise_cell,
        neutralise_frame,
        report_tables,
        systematic_findings_table,
        write_csv_tables,
        write_parquet,
    )
    from .html_report import render_html, write_html  # noqa: F401
    from .json_report import read_json, to_json_text, write_json  # noqa: F401


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
