"""Reports: the report dict (DESIGN.md 5.5) -> JSON, CSV/Parquet tables, charts, HTML.

Nothing here computes a statistic: every figure comes from the report dict built
by `annotator.stats.report_model`. Every file is written atomically.
"""

from __future__ import annotations

from .atomic import atomic_open, atomic_write_bytes, atomic_write_text
from .csv_report import (
    agreement_table,
    findings_table,
    neutralise_cell,
    neutralise_frame,
    report_tables,
    systematic_findings_table,
    write_csv_tables,
    write_parquet,
)
from .html_report import render_html, write_html
from .json_report import read_json, to_json_text, write_json

__all__ = [
    "atomic_open",
    "atomic_write_bytes",
    "atomic_write_text",
    "agreement_table",
    "findings_table",
    "neutralise_cell",
    "neutralise_frame",
    "report_tables",
    "systematic_findings_table",
    "write_csv_tables",
    "write_parquet",
    "render_html",
    "write_html",
    "read_json",
    "to_json_text",
    "write_json",
]
