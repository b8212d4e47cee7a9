"""The humans-vs-judges section's tables of each judge's detail
(reports/section_humans_judges.py lays out the rest): its confusion matrices, one table each,
and its figures per slice (case, generator...), one table per dimension over the metrics and
judges, with why a figure is undefined said once under it.
Tested in tests/unit/test_report_sections.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .formatting import Est
from .section_agreement import figure_notes, figure_text, fold_line, metric_name, places
from .sections import Block, Note, Table
from .view_metrics import drop_undefined_columns


def _tags(m: Mapping[str, Any]) -> bool:
    return m.get("kind") == "tags"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "x"


def confusion_blocks(metrics: list[Mapping[str, Any]]) -> list[Block]:
    blocks: list[Block] = []
    names: set[str] = set()
    for m in metrics:
        for j in m["judges"]:
            c = j.get("confusion")
            if c is None:
                continue
            csv = f"judges_confusion_{_slug(m['key'])}__{_slug(j['name'])}"
            while csv in names:  # two names alike once slugged
                csv += "_"
            names.add(csv)
            rows = tuple(
                (
                    c.row_labels[i] if i < len(c.row_labels) else "",
                    *(text for text, _shade in row),
                )
                for i, row in enumerate(c.rows)
            )
            blocks.append(
                Note(
                    f"{metric_name(m)}, {j['name']}: confusion matrix, {c.total} items without "
                    f"a tie; rows {c.row_title}, columns {c.col_title}; the diagonal is "
                    "agreement.",
                    "aside",
                )
            )
            blocks.append(
                Table(
                    f"judgesConfusion{len(names)}Table",
                    (f"{c.row_title} ↓ {c.col_title} →", *c.labels),
                    rows,
                    numeric=frozenset(range(1, 1 + len(c.labels))),
                    csv=csv,
                    fold=f"confusion matrix, {metric_name(m)}, {j['name']}" if _tags(m) else "",
                )
            )
    if blocks:
        blocks.insert(0, Note("Confusion matrices", "heading"))
    return blocks


def _camel(text: str) -> str:
    return "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", text) if w) or "X"


def slice_blocks(metrics: list[Mapping[str, Any]]) -> list[Block]:
    """Per dimension (case, generator...) one table over the metrics and judges: the judge's
    figures on each slice's items. A judge's column undefined in all its rows for one reason
    is said once under the table (its cells "—"), as is why any other cell is undefined."""
    # dimension -> (metric, judge, its rows {column: cell}), its columns undefined throughout
    by_dim: dict[str, list[tuple[str, str, list[tuple[str, dict[str, Est | str]]]]]] = {}
    captions: dict[str, dict[str, list[str]]] = {}  # dimension -> caption -> its places
    for m in metrics:
        for j in m["judges"]:
            for s in j.get("slices") or []:
                cols = list(s["columns"])
                own = [(name, list(cells)) for name, cells in s["rows"]]
                for c in drop_undefined_columns(cols, own):
                    captions.setdefault(s["title"], {}).setdefault(c, []).append(
                        f"{metric_name(m)}\t{j['name']}"
                    )
                by_dim.setdefault(s["title"], []).append(
                    (
                        metric_name(m),
                        j["name"],
                        [(name, dict(zip(cols, cells, strict=False))) for name, cells in own],
                    )
                )
    blocks: list[Block] = []
    for title, groups in by_dim.items():
        columns: list[str] = []
        for _m, _j, rows in groups:
            for _name, cells in rows:
                columns += [c for c in cells if c not in columns]
        found: list[tuple[str, str, Est | str]] = []
        table: list[tuple[str, ...]] = []
        for metric, judge, rows in groups:
            for name, cells in rows:
                row = [cells.get(c, "—") for c in columns]
                found += [
                    (f"{metric}\t{judge}", f"{title}, {c}", e)
                    for c, e in zip(columns, row, strict=True)
                ]
                table.append(
                    (
                        metric,
                        judge,
                        name,
                        *(figure_text(e, with_n=False, whole_note=True) for e in row),
                    )
                )
        blocks += [
            Note(f"Each judge {title}", "heading"),
            Table(
                f"judgesSlices{_camel(title)}Table",
                ("metric", "judge", title.removeprefix("by "), *columns),
                tuple(table),
                numeric=frozenset(range(3, 3 + len(columns))),
                fold=fold_line(f"each judge {title}", len(table)),
            ),
            *(
                Note(f"{title} ({places(where)}): {c}.", "aside")
                for c, where in captions.get(title, {}).items()
            ),
            *figure_notes(e for e in found if isinstance(e[2], Est) and not e[2].defined),
        ]
    return blocks


__all__ = ["confusion_blocks", "slice_blocks"]
