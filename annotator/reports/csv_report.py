"""Tidy CSV (and Parquet, when pyarrow is installed) tables of a report.

CSV files get opened in spreadsheets, and a rater's reason or a judge's reply is
untrusted text: a cell starting with `=`, `+`, `-`, `@`, a tab or a carriage
return would run as a formula. Such string cells are prefixed with a single
quote (`domain.text.guard_cell`, which `annotator import` reverses). Numbers stay
numbers (`-0.2` is data, not a formula), and so does a string that is exactly a
plain number.

Records end in CRLF, as RFC 4180 and the csv module's default have it: the csv module
quotes a field that holds a character of the line terminator, so with CRLF a reason
holding a bare carriage return is quoted (with LF alone it was not, and split the record).
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ..base.atomic import atomic_files, atomic_open
from ..domain.figures import as_dict
from ..domain.text import FORMULA_PREFIXES, guard_cell
from .sections import Section, Table
from .view_findings import FINDING_FIELDS

__all__ = [
    "FORMULA_PREFIXES",
    "neutralise_cell",
    "neutralise_frame",
    "write_csv_tables",
    "write_parquet",
    "agreement_table",
    "findings_table",
    "systematic_findings_table",
    "report_tables",
    "section_tables",
]

# Every CSV this package writes: the csv module's quoting of any field holding a delimiter,
# a quote, CR or LF (CR counts only when it is in the line terminator).
CSV_OPTIONS: dict[str, Any] = {"lineterminator": "\r\n", "quoting": csv.QUOTE_MINIMAL}
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def _flatten(value: Any) -> Any:
    """Collections in a cell become text: tags `;`-joined as in the ratings CSV (5.3)."""
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=str) if isinstance(value, (set, frozenset)) else value
        return ";".join("" if v is None else str(v) for v in items)
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, sort_keys=False, default=str)
    return value


def neutralise_cell(value: Any) -> Any:
    """Defuse a string that a spreadsheet would read as a formula; leave everything else."""
    value = _flatten(value)
    return guard_cell(value) if isinstance(value, str) else value


def neutralise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` with every text cell neutralised; numeric columns untouched."""
    out = df.copy()
    for col in out.columns:
        if pd.api.types.is_numeric_dtype(out[col].dtype) or pd.api.types.is_datetime64_any_dtype(
            out[col].dtype
        ):
            continue
        out[col] = out[col].astype(object).map(neutralise_cell)
    # Column names are cells too.
    out.columns = [neutralise_cell(str(c)) for c in out.columns]
    return out


def _file_stem(name: str) -> str:
    stem = _SAFE_NAME.sub("_", name).strip("._")
    if not stem:
        raise ValueError(f"table name {name!r} gives an empty file name")
    return stem


def write_csv_tables(
    tables: Mapping[str, pd.DataFrame], folder: str | os.PathLike[str], *, parquet: bool = True
) -> list[Path]:
    """Write each table as `<folder>/<name>.csv` (atomically, UTF-8, neutralised).

    When `parquet` is true and pyarrow is importable, `<name>.parquet` files are
    written too (typed, not neutralised: Parquet is not opened by spreadsheets).
    Returns every path written, CSVs first.
    """
    out = Path(folder)
    with atomic_files(out) as tmp:  # every table lands, or none (a full disk: no partial set)
        paths: list[Path] = []
        for name, df in tables.items():
            if df is None:
                continue
            path = tmp / f"{_file_stem(name)}.csv"
            safe = neutralise_frame(df)
            with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
                safe.to_csv(fh, index=False, **CSV_OPTIONS)
            paths.append(path)
        if parquet:
            paths.extend(write_parquet(tables, tmp))
        return [out / p.relative_to(tmp) for p in paths]


def _parquet_ready(df: pd.DataFrame) -> pd.DataFrame:
    # Object columns mixing str/int/tuple (a `value` column across metric kinds)
    # cannot be typed by pyarrow: store them as text, keeping missing as null.
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object:
            kinds = {
                type(v) for v in out[col] if v is not None and not (isinstance(v, float) and v != v)
            }
            if len(kinds) > 1 or kinds & {list, tuple, set, frozenset, dict}:
                out[col] = out[col].map(lambda v: None if v is None else str(_flatten(v)))
    return out


def write_parquet(tables: Mapping[str, pd.DataFrame], folder: str | os.PathLike[str]) -> list[Path]:
    """Write each table as `<folder>/<name>.parquet`; returns [] when pyarrow is missing."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return []
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for name, df in tables.items():
        if df is None:
            continue
        path = out / f"{_file_stem(name)}.parquet"
        with atomic_open(path, "wb") as fh:
            _parquet_ready(df).to_parquet(fh, index=False)
        paths.append(path)
    return paths


# --- tables built from the report dict ------------------------------------------------


def _est_columns(prefix: str, value: Any, note: Any = None) -> dict[str, Any]:
    """An estimate as four tidy columns; undefined gives empty cells and the note."""
    if isinstance(value, dict):
        return {
            prefix: value.get("estimate"),
            f"{prefix}_low": value.get("low"),
            f"{prefix}_high": value.get("high"),
            f"{prefix}_n": value.get("n"),
            f"{prefix}_note": value.get("note") or note,
        }
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {
            prefix: value,
            f"{prefix}_low": None,
            f"{prefix}_high": None,
            f"{prefix}_n": None,
            f"{prefix}_note": note,
        }
    return {
        prefix: None,
        f"{prefix}_low": None,
        f"{prefix}_high": None,
        f"{prefix}_n": None,
        f"{prefix}_note": note,
    }


def _note(d: Mapping[str, Any], key: str) -> Any:
    """The note beside an undefined statistic: `<key>_note` or `notes[<key>]`."""
    notes = d.get("notes")
    return d.get(f"{key}_note") or (notes.get(key) if isinstance(notes, dict) else None)


_HUMAN_EXTRAS = ("percent_agreement", "fleiss_kappa", "gwet_ac1")


def agreement_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per metric x source (`human`, or `judge` with its name): the figures of 5.5."""
    rows: list[dict[str, Any]] = []
    metrics = dict(as_dict(report.get("metrics")))
    verdict = report.get("verdict")
    if isinstance(verdict, Mapping) and ("human_alpha" in verdict or "judges" in verdict):
        # the report model gives the verdict (all rules together) the figures of a metric
        metrics.setdefault("verdict", verdict)
    for key, m in metrics.items():
        m = as_dict(m)
        base = {
            "metric": key,
            "kind": m.get("kind"),
            "level": m.get("level"),
        }
        human = {
            **base,
            "source": "human",
            "judge": None,
            "n_items": m.get("n_items"),
            "n_raters": m.get("n_raters"),
            "n_judgements": m.get("n_judgements"),
            "n_cannot_judge": m.get("n_cannot_judge"),
        }
        human.update(_est_columns("alpha", m.get("human_alpha"), _note(m, "human_alpha")))
        human.update(
            _est_columns(
                "alpha_interval_level",
                m.get("human_alpha_interval"),
                _note(m, "human_alpha_interval"),
            )
        )
        for extra in _HUMAN_EXTRAS:
            if extra in m:
                human.update(_est_columns(extra, m.get(extra), _note(m, extra)))
        rows.append(human)
        for judge, j in as_dict(m.get("judges")).items():
            j = as_dict(j)
            row = {
                **base,
                "source": "judge",
                "judge": judge,
                "n_items": j.get("n_items"),
                "n_raters": m.get("n_raters"),
                "n_judgements": m.get("n_judgements"),
                "n_cannot_judge": j.get("n_cannot_judge"),
            }
            row.update(
                _est_columns("alpha", j.get("alpha_vs_consensus"), _note(j, "alpha_vs_consensus"))
            )
            row.update(
                _est_columns(
                    "alpha_with_judge_as_rater",
                    j.get("alpha_with_judge_as_rater"),
                    _note(j, "alpha_with_judge_as_rater"),
                )
            )
            perm = as_dict(j.get("permutation_alpha"))
            row["permutation_alpha_mean"] = perm.get("mean")
            row["permutation_p_value"] = perm.get("p_value")
            row.update(
                _est_columns(
                    "exact_agreement", j.get("exact_agreement"), _note(j, "exact_agreement")
                )
            )
            for stat in ("mean_difference", "pearson", "spearman", "kendall_tau_b"):
                row.update(_est_columns(stat, j.get(stat), _note(j, stat)))
            kappa = j.get("cohen_kappa")
            if isinstance(kappa, dict):
                if "estimate" in kappa:
                    row.update(_est_columns("cohen_kappa", kappa))
                else:
                    for weight, v in kappa.items():
                        row.update(_est_columns(f"cohen_kappa_{weight}", v))
            rows.append(row)
    return pd.DataFrame(rows)


def _cell_columns(key: str, value: Any) -> dict[str, Any]:
    """One report value as tidy columns: an estimate spreads over four, text stays text."""
    if isinstance(value, Mapping) and "estimate" in value:
        return _est_columns(key, value)
    return {key: _flatten_answers(value)}


def _finding_rows(findings: Iterable[Any]) -> list[dict[str, Any]]:
    rows = []
    for f in findings or []:
        if not isinstance(f, Mapping):
            continue
        f = dict(f)
        answers = f.get("human_answers")
        if (
            isinstance(answers, (list, tuple))
            and answers
            and all(isinstance(a, Mapping) for a in answers)
        ):
            # [{rater, value, reason}] -> one column of answers, one of reasons, both "rater: ..."
            f["human_answers"] = {
                str(a.get("rater", i)): a.get("value", a.get("answer"))
                for i, a in enumerate(answers)
            }
            if "human_reasons" not in f:
                f["human_reasons"] = {
                    str(a.get("rater", i)): a.get("reason")
                    for i, a in enumerate(answers)
                    if a.get("reason")
                }
        row: dict[str, Any] = {}
        for k in (
            *[k for k in FINDING_FIELDS if k in f],
            *[k for k in f if k not in FINDING_FIELDS],
        ):
            row.update(_cell_columns(k, f[k]))
        rows.append(row)
    return rows


def _flatten_answers(value: Any) -> Any:
    """Per-rater answers/reasons (`{rater: answer}`) as `rater: answer | ...` text."""
    if isinstance(value, Mapping):
        return " | ".join(f"{k}: {_flatten(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, (Mapping, list, tuple)) for v in value
    ):
        return " | ".join(str(_flatten(v)) for v in value)
    return value


def findings_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per finding, in report order (never re-sorted by size)."""
    rows = _finding_rows(report.get("findings") or [])
    return pd.DataFrame(
        rows, columns=None if rows else ["item_id", "metric", "humans", "judge", "kind"]
    )


def systematic_findings_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per systematic finding (a pattern across items), in report order."""
    found = report.get("systematic_findings") or []
    rows = []
    for f in found:
        if isinstance(f, Mapping):
            row: dict[str, Any] = {}
            for k, v in f.items():
                row.update(_cell_columns(k, v))
            rows.append(row)
        elif f is not None:
            rows.append({"finding": str(f)})
    return pd.DataFrame(rows)


def by_generator_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per metric x generator x source: the humans' alpha and Fleiss' kappa on the
    generator's items, and each judge's correlations with the human mean there."""
    rows: list[dict[str, Any]] = []
    for key, m in as_dict(report.get("metrics")).items():
        for gen, g in as_dict(as_dict(m).get("by_generator")).items():
            g = as_dict(g)
            base = {"metric": key, "generator": gen, "n_items": g.get("n_items")}
            rows.append(
                {
                    **base,
                    "source": "human",
                    **_est_columns("alpha", g.get("human_alpha")),
                    **_est_columns("fleiss_kappa", g.get("fleiss_kappa")),
                }
            )
            for judge, j in as_dict(g.get("judges")).items():
                row = {**base, "source": "judge", "judge": judge}
                for k in ("pearson", "spearman", "kendall_tau_b"):
                    row.update(_est_columns(k, as_dict(j).get(k)))
                rows.append(row)
    return pd.DataFrame(rows)


def answer_times_table(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per rater: answers, those with a time, below the minimum exposure, at the cap."""
    block = report.get("answer_times") or {}
    rows = [
        {"rater": name, **r, "min_exposure_ms": block.get("min_exposure_ms")}
        for name, r in sorted((block.get("raters") or {}).items())
    ]
    return pd.DataFrame(rows)


# what services/reporting.tidy_tables writes beside report_tables: no section table may take
# their file names
ANSWER_TABLES = ("judgements", "judge_scores")


def section_tables(
    sections: Iterable[Section], *, taken: Iterable[str] = ()
) -> dict[str, pd.DataFrame]:
    """Each Table of the sections as one CSV table (file name: `Table.csv_name()`), the app's and
    the HTML report's cells as they read, plus whether the row is flagged. A table with an empty
    CSV name is left out (its numbers are in a table of the contract). A name in `taken`, or
    twice among the sections, is refused: a section never overwrites another table."""
    out: dict[str, pd.DataFrame] = {}
    taken = set(taken)
    for s in sections:
        for b in s.blocks:
            if not isinstance(b, Table) or not b.csv_name():
                continue
            name = b.csv_name()
            if name in taken or name in out:
                raise ValueError(f"section {s.key!r}: table {b.name!r} writes {name}.csv twice")
            out[name] = _table_frame(b)
    return out


def _table_frame(t: Table) -> pd.DataFrame:
    df = pd.DataFrame(list(t.rows), columns=list(t.headers))
    df["flagged"] = [i in t.flagged for i in range(len(t.rows))]
    return df


def report_tables(report: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """The tables built from the report dict alone: the ones `report --csv` writes beside the
    answer tables (services/reporting.tidy_tables), then the tables of the report's sections
    (reports/report_sections.py) that the ones here do not already hold as numbers."""
    from .report_sections import report_sections, section_views
    from .view_certified import certified_pairs_table, certified_table, has_certified_rows
    from .view_debiased import debiased_table, has_debiased_rows

    tables = {"agreement": agreement_table(report), "findings": findings_table(report)}
    if report.get("systematic_findings"):
        tables["systematic_findings"] = systematic_findings_table(report)
    by_gen = by_generator_table(report)
    if len(by_gen):
        tables["by_generator"] = by_gen
    if has_debiased_rows(report):
        tables["debiased"] = debiased_table(report)
    times = answer_times_table(report)
    if len(times):
        tables["answer_times"] = times
    if has_certified_rows(report):
        tables["certified"] = certified_table(report)
        pairs = certified_pairs_table(report)
        if len(pairs):
            tables["certified_pairs"] = pairs
    sections = report_sections(section_views(report))
    return tables | section_tables(sections, taken=(*tables, *ANSWER_TABLES))
