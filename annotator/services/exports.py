"""Exports a team can take elsewhere: open tables (CSV / JSON Lines / Parquet), a Hugging
Face `datasets` layout, and Label Studio tasks.

Every table is one `Table` entry in `TABLES` (its columns, typed, and how its rows are
read); the writers and the CLI read that registry (`EXPORT_KINDS`: the tables, then the two
folder layouts), so one more table is one more entry. The judgement and pair tables keep the
columns of the CSV contract (docs/design.md 5.3), so a CSV export is a ratings / pair votes
file that `annotator import ratings|pairs` reads back; JSON Lines and Parquet hold the
same table (Parquet typed: times as timestamps, counts as integers). Times are UTC.
What is exported is what the reports count: current answers (a correction replaces the
answer it supersedes), live items (anchors are calibration material), no operators.
Tested in tests/unit/test_interop_exports.py.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from ..base.atomic import atomic_files, atomic_open, atomic_write_bytes, atomic_write_text
from ..domain.answers import missing_metrics
from ..domain.errors import InputError
from ..domain.figures import estimate_text, fmt_num
from ..domain.rubric import format_value
from ..ingest.label_studio import META_KEY as LS_META
from ..ingest.mapping import render_mapping
from ..ingest.readers import read_jsonl
from ..ingest.tables import read_csv
from ..reports import label_studio_config as lsc
from ..reports.csv_report import CSV_OPTIONS, neutralise_frame
from ..store import rows as R
from ..store.exports import ItemRecord, item_records, judgement_records, pair_records, vote_records
from .frames import latest_versions
from .study import Study

FORMATS = ("csv", "jsonl", "parquet")


@dataclass(frozen=True)
class Table:
    name: str
    what: str
    columns: tuple[tuple[str, str], ...]  # (column, type): string | int64 | float64 | timestamp
    rows: Callable[[Study], list[dict[str, Any]]]

    @property
    def names(self) -> list[str]:
        return [c for c, _ in self.columns]


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t is not None else None


def _live_items(study: Study) -> dict[int, ItemRecord]:
    return {r.pk: r for r in item_records(study.db) if not r.is_anchor}


def _partial(rubric: Any, j: Any) -> bool:
    """A judgement that skips a required metric (the ratings CSV's `partial` = yes)."""
    typed = {k: rubric.metric(k).spec.from_json(v) for k, v in j.answers.items() if rubric.has(k)}
    return bool(missing_metrics(rubric, typed))


def label_rows(study: Study) -> list[dict[str, Any]]:
    from .escalation import label_rows as rows

    return rows(study)


def gold_rows(study: Study) -> list[dict[str, Any]]:
    from .adjudication import gold_rows as rows

    return rows(study)


def _judgement_rows(study: Study) -> list[dict[str, Any]]:
    rubric = study.rubric
    items = _live_items(study)
    out = []
    for j in judgement_records(study.db, rubric.version):
        it = items.get(j.item_pk)
        if it is None:
            continue
        partial = "yes" if _partial(rubric, j) else None
        for m in rubric.metrics:
            if m.key in j.answers:
                out.append(
                    {
                        "item_id": it.item_id,
                        "rater": j.rater,
                        "metric": m.key,
                        "value": format_value(j.answers[m.key]),
                        "created_at": _iso(j.created_at),
                        "session": j.session,
                        "time_ms": j.time_ms,
                        "partial": partial,
                    }
                )
    return out


def _vote_rows(study: Study, judges: bool) -> list[dict[str, Any]]:
    items = {r.pk: r.item_id for r in item_records(study.db)}
    return [
        {
            "pair_id": v.pair_id,
            "item_left": items[v.item_left],
            "item_right": items[v.item_right],
            "rater": v.rater,
            "choice": v.choice,
            "created_at": _iso(v.created_at),
            "time_ms": v.time_ms,
        }
        for v in vote_records(study.db)
        if v.is_judge == judges
    ]


def _judge_score_rows(study: Study) -> list[dict[str, Any]]:
    """Each judge's latest version, the one the report reads: one row per judge x item x metric,
    so the file imports back as it is (`annotator judge compare` shows the earlier versions)."""
    items = _live_items(study)
    scores = R.judge_scores(study.db)
    latest = latest_versions(scores)
    return [
        {
            "item_id": items[sc.item_pk].item_id,
            "judge": sc.judge,
            "metric": sc.metric,
            "value": format_value(sc.value),
            "reason": sc.reason,
            "confidence": sc.confidence,
        }
        for sc in scores
        if sc.item_pk in items and latest[sc.judge] == sc.version
    ]


def _item_rows(study: Study) -> list[dict[str, Any]]:
    return [
        {
            "item_id": r.item_id,
            "case_id": r.case_id,
            "generator": r.generator,
            "prompt": r.prompt,
            "criteria": r.criteria,
            "slice": r.slice,
            "seed": r.seed,
            "text": r.text,
            "task_type": r.task_type,
            "n_images": len(r.outputs),
        }
        for r in _live_items(study).values()
    ]


_VOTE_COLUMNS = (
    ("pair_id", "string"),
    ("item_left", "string"),
    ("item_right", "string"),
    ("rater", "string"),
    ("choice", "string"),
    ("created_at", "timestamp"),
    ("time_ms", "int64"),
)
TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table(
            "judgements",
            "one row per rater x item x metric (the ratings CSV of contract 5.3)",
            (
                ("item_id", "string"),
                ("rater", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("created_at", "timestamp"),
                ("session", "string"),
                ("time_ms", "int64"),
                ("partial", "string"),
            ),
            _judgement_rows,
        ),
        Table(
            "pairs",
            "one row per rater x pair (the pair votes CSV of contract 5.3)",
            _VOTE_COLUMNS,
            lambda st: _vote_rows(st, False),
        ),
        Table(
            "judge-pairs",
            "the judges' pair votes (judge name in `rater`)",
            _VOTE_COLUMNS,
            lambda st: _vote_rows(st, True),
        ),
        Table(
            "judge-scores",
            "one row per judge x item x metric (the judge CSV of contract 5.3)",
            (
                ("item_id", "string"),
                ("judge", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("reason", "string"),
                ("confidence", "float64"),
            ),
            _judge_score_rows,
        ),
        Table(
            "gold",
            "one row per live item x metric: the final answer (adjudicated, else clear consensus, else "
            "unresolved), the raw answers and reasons, the judge's answer (the lead's view)",
            (
                ("item_id", "string"),
                ("case_id", "string"),
                ("generator", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("source", "string"),
                ("n_raters", "int64"),
                ("answers", "string"),
                ("judge", "string"),
                ("adjudication_reason", "string"),
                ("adjudicated_by", "string"),
                ("category", "string"),
            ),
            lambda st: gold_rows(st),
        ),
        Table(
            "labels",
            "one row per live item x certified metric, then one per pair a judge or a human "
            "voted on (metric `pair_vote`, value the winning item or the tie, generator the "
            "winning one): the final label and its source (the judge's answer accepted under "
            "the guarantee named, the humans' as in the gold or their clear majority, or "
            "escalated to raters)",
            (
                ("item_id", "string"),
                ("case_id", "string"),
                ("generator", "string"),
                ("metric", "string"),
                ("value", "string"),
                ("source", "string"),
                ("judge", "string"),
                ("confidence", "float64"),
                ("threshold", "float64"),
                ("guarantee", "string"),
                ("mode", "string"),
                ("n_raters", "int64"),
                ("pair_id", "string"),
                ("item_a", "string"),
                ("item_b", "string"),
            ),
            lambda st: label_rows(st),
        ),
        Table(
            "items",
            "one row per live item (the lead's view: generators included)",
            (
                ("item_id", "string"),
                ("case_id", "string"),
                ("generator", "string"),
                ("prompt", "string"),
                ("criteria", "string"),
                ("slice", "string"),
                ("seed", "int64"),
                ("text", "string"),
                ("task_type", "string"),
                ("n_images", "int64"),
            ),
            _item_rows,
        ),
    )
}


# What `annotator export KIND` takes: every table, then the layouts written by their own function.
CONTAINERS = ("label-studio", "hf")
EXPORT_KINDS: tuple[str, ...] = (*TABLES, *CONTAINERS)


# ---- the three containers -----------------------------------------------------------------------


def format_of(path: Path) -> str:
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError(
            f"cannot tell the format from '{path.suffix or 'no suffix'}'; end the file name in "
            f"{', '.join('.' + f for f in FORMATS)}",
            source=str(path),
            field="--out",
        )
    return fmt


def write_rows(table: Table, rows: list[dict[str, Any]], path: Path) -> Path:
    """The table at `path` in the format its suffix names, written atomically."""
    fmt = format_of(path)
    if path.is_dir():
        raise InputError("this is a folder; give a file name", source=str(path), field="--out")
    if fmt == "jsonl":
        with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
            for r in rows:
                fh.write(json.dumps({c: r.get(c) for c in table.names}, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        import pandas as pd

        df = pd.DataFrame(rows, columns=table.names)
        for col, typ in table.columns:
            if typ == "int64":
                df[col] = df[col].astype("Int64")
        with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
            # a reason starting with "=" must not run as a spreadsheet formula, and one holding
            # a bare CR must not split its record (CSV_OPTIONS: CRLF, so CR is quoted)
            neutralise_frame(df).to_csv(fh, index=False, **CSV_OPTIONS)
    else:
        pq = _pyarrow("parquet")
        with atomic_open(path, "wb") as fh:
            pq.write_table(arrow_table(table, rows), fh)
    return path


def _pyarrow(part: str = "") -> Any:
    """pyarrow (a dependency; the raters' installer leaves it out): one line when it is missing."""
    import importlib

    try:
        return importlib.import_module("pyarrow" + (f".{part}" if part else ""))
    except ImportError:
        raise InputError(
            "Parquet needs pyarrow, which this installation does not have; export .csv or .jsonl, "
            "or `pip install pyarrow`",
            field="--out",
        ) from None


def arrow_table(table: Table, rows: list[dict[str, Any]]) -> Any:
    pa = _pyarrow()

    # every column typed from the registry, so one with no value in this study is still a typed
    # column (not arrow's `null`); times are UTC and say so (the store keeps naive UTC)
    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
    }
    arrays = []
    for col, typ in table.columns:
        vals = [r.get(col) for r in rows]
        if typ == "timestamp":
            vals = [datetime.fromisoformat(v).replace(tzinfo=UTC) if v else None for v in vals]
        arrays.append(pa.array(vals, type=types[typ]))
    return pa.Table.from_arrays(arrays, schema=pa.schema([(c, types[t]) for c, t in table.columns]))


def read_rows(table: Table, path: Path) -> list[dict[str, Any]]:
    """A table written by `write_rows`, back as rows shaped like the ones written (for checks and
    round trips): times as ISO text, counts as int, missing as None."""
    fmt = format_of(path)
    if fmt == "jsonl":
        rows = [r for _, r in read_jsonl(path)]
    elif fmt == "csv":
        kinds = dict(table.columns)
        rows = []
        for _, raw in read_csv(path, tuple(table.names)):
            row: dict[str, Any] = {}
            for c in table.names:
                v = raw.get(c)
                # "" is an answer in `value` (no tag); elsewhere an empty cell is a missing one
                row[c] = (
                    # v is neither "" nor None here: `value`, the exception, is text
                    (
                        int(cast(str, v))
                        if kinds[c] == "int64"
                        else float(cast(str, v))
                        if kinds[c] == "float64"
                        else v
                    )
                    if v not in ("", None) or c == "value"
                    else None
                )
            rows.append(row)
    else:
        rows = _pyarrow("parquet").read_table(path).to_pylist()
        for r in rows:
            for c, typ in table.columns:
                if typ == "timestamp" and r.get(c) is not None:
                    t = r[c]
                    r[c] = (t.astimezone(UTC).replace(tzinfo=None) if t.tzinfo else t).isoformat()
    return [{c: r.get(c) for c in table.names} for r in rows]


def export_table(study: Study, name: str, out: Path) -> tuple[Path, int]:
    study.require_lead("an export")
    table = TABLES[name]
    format_of(out)
    rows = table.rows(study)
    return write_rows(table, rows, out), len(rows)


# ---- Hugging Face datasets layout ----------------------------------------------------------------


def _est(d: Any) -> str:
    return estimate_text(d, digits=3)


def _num(v: Any) -> str:
    return fmt_num(v, 3)


# ASCII punctuation that Markdown (CommonMark + GitHub's tables and autolinks) gives a
# meaning; each may be backslash-escaped, which renders it as itself.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~&=:\"'$^])")


def _md(text: Any) -> str:
    """A rubric or study text as Markdown *data*: rendered as written, never as a heading, list,
    link, image, HTML tag or table cell break (a rubric's text is not the card's markup)."""
    lines = str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(_MD_SPECIAL.sub(r"\\\1", line.strip()) for line in lines)


def _cell(v: Any) -> str:
    """A table cell: escaped text on one line."""
    return " ".join(_md(v).split())


def _code(v: Any, *, in_table: bool = True) -> str:
    """A name as a code span whose fence no backtick in it can close; in a table, `|` is still
    a cell break inside a code span unless escaped (GitHub's table extension)."""
    text = " ".join(str(v).split())
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    span = f"{fence}{pad}{text}{pad}{fence}"
    return span.replace("|", "\\|") if in_table else span


def _yaml_str(text: str) -> str:
    """A YAML double-quoted scalar that every YAML parser reads back as `text`: `json.dumps`
    writes characters outside the BMP as surrogate pairs, which PyYAML keeps as two halves."""
    out = []
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp"):
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def dataset_card(study: Study, report: dict[str, Any], counts: dict[str, int], n_boot: int) -> str:
    rubric = study.rubric
    configs = []
    for i, name in enumerate(n for n, c in counts.items() if c):
        cfg = name.replace("-", "_")
        configs += [
            f"- config_name: {cfg}",
            "  data_files:",
            "  - split: train",
            f"    path: data/{cfg}.parquet",
        ]
        if i == 0:
            configs.append("  default: true")
    lines = [
        "---",
        f"pretty_name: {_yaml_str(study.name)}",
        "tags:",
        "- human-evaluation",
        "- llm-as-a-judge",
        "configs:",
        *configs,
        "---",
        "",
        f"# {_md(study.name)}: human judgements and judge scores",
        "",
        f"Exported by annotator on {datetime.now(UTC).date().isoformat()} from the study "
        f"{_code(study.name, in_table=False)}, rubric `{rubric.id}` (version `{rubric.version[:12]}`). Current answers only (a correction replaces "
        "the answer it supersedes), live items only, staff (operator) accounts left out. Times are UTC.",
        "",
        "## Rubric",
        "",
        _md(rubric.instructions),
        "",
        "| metric | kind | label | values | required |",
        "|---|---|---|---|---|",
    ]
    for m in rubric.metrics:
        vals = m.spec.describe_values(m, _cell)  # the rubric's labels escaped; the ranges are ours
        lines.append(
            f"| `{m.key}` | {m.kind} | {_cell(m.label)} | {vals} | {'yes' if m.required else 'no'} |"
        )
    if rubric.rules:
        lines += [
            "",
            "Verdict rules: " + "; ".join(_code(r, in_table=False) for r in rubric.rules),
        ]
    lines += ["", "## Tables", "", "| config | rows | what |", "|---|---|---|"]
    lines += [
        f"| `{n.replace('-', '_')}` | {c} | {TABLES[n].what} |" for n, c in counts.items() if c
    ]
    lines += [
        "",
        "## Agreement",
        "",
        f"From `annotator report` on the same study ({n_boot} bootstrap resamples; 95% intervals in "
        "brackets). Alpha is Krippendorff's alpha; an undefined figure is 'undefined' with the reason.",
        "",
        "| metric | level | items | raters | judgements | human alpha |",
        "|---|---|---|---|---|---|",
    ]
    judges = []
    for key, m in report.get("metrics", {}).items():
        lines.append(
            f"| `{key}` | {m.get('level')} | {m.get('n_items')} | {m.get('n_raters')} | "
            f"{m.get('n_judgements')} | {_est(m.get('human_alpha'))} |"
        )
        for judge, j in (m.get("judges") or {}).items():
            judges.append(
                f"| `{key}` | {_code(judge)} | {j.get('n_items')} | {_est(j.get('alpha_vs_consensus'))} | "
                f"{_est(j.get('pearson'))} | {_est(j.get('kendall_tau_b'))} |"
            )
    if judges:
        lines += [
            "",
            "| metric | judge | items | alpha vs human consensus | Pearson r | Kendall tau-b |",
            "|---|---|---|---|---|---|",
            *judges,
        ]
    pw = report.get("pairwise") or {}
    if pw.get("cells"):
        lines += ["", "Pair votes: rater alpha " + _est(pw.get("rater_alpha")) + "."]
        pj = pw.get("judges") or {}
        if pj:
            lines += [
                "",
                "| judge | pairs | agreement with the human majority | kappa vs majority |",
                "|---|---|---|---|",
            ]
            lines += [
                f"| {_code(j)} | {v.get('n')} | {_num(v.get('agreement_with_majority'))} | "
                f"{_num(v.get('kappa_vs_majority'))} |"
                for j, v in pj.items()
            ]
    lines += _certified_card(report)
    lines += [
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        'judgements = load_dataset("path/to/this/folder", "judgements")  # or pandas.read_parquet('
        '"data/judgements.parquet")',
        "```",
        "",
    ]
    return "\n".join(lines)


def _certified_card(report: dict[str, Any]) -> list[str]:
    """The card's part on certified labels: the guarantee the judge's labels stand under, in
    words, and the split of the items (the `labels` config gives each item's source)."""
    pac = report.get("certified") or {}
    fdr = report.get("conformal_alignment") or {}
    sec = fdr if fdr.get("decides") else pac
    if not sec:
        return []
    split = sec.get("items") or {}
    lines = [
        "",
        "## Certified labels",
        "",
        "The `labels` config gives each item's final label per certified metric and where it "
        "comes from: `judge` (the judge's answer, accepted under the guarantee below; `judge` "
        "names judge@version, `threshold` its confidence threshold), `adjudicated` or "
        "`clear_consensus` (the raters'), `unresolved` (rated without a clear consensus) or "
        "`escalated` (left to raters, not rated yet).",
        "",
        f"Method: {_md(sec.get('method'))}. Guarantee: {_md(sec.get('guarantee'))}. "
        f"Calibration set: {_md(sec.get('calibration') or 'none')}; "
        f"{_md(sec.get('calibration_note'))}.",
        "",
        f"Items: {split.get('accepted', 0)} decided by the judges on every certified metric, "
        f"{split.get('escalated', 0)} escalated to raters, {split.get('already_rated', 0)} "
        f"already rated, of {split.get('n_items', 0)}.",
    ]
    pairs = pac.get("pairs") or {}
    if pairs:
        # pair decisions always follow the PAC rule (stats/certified_pairs.py), whatever the mode
        lines += [
            "",
            f"Pairs (metric `pair_vote`: the winning item in `value`, `pair_id`): "
            f"{pairs.get('accepted', 0)} decided by the judges under the guarantee "
            f"{_md(pac.get('guarantee'))}, the judge's confidence being whether its two orders "
            f"agree; {pairs.get('escalated', 0)} escalated to raters, "
            f"{pairs.get('already_rated', 0)} already voted on, of {pairs.get('n_pairs', 0)}; "
            f"calibration set: {_md(pairs.get('calibration') or 'none')}.",
        ]
    rows = []
    for key, sp in (sec.get("split") or {}).items():
        acc = "; ".join(f"{_code(j)}: {n}" for j, n in (sp.get("accepted") or {}).items())
        rows.append(
            f"| `{key}` | {acc or '-'} | {sp.get('escalated')} | {sp.get('already_rated')} |"
        )
    if rows:
        lines += [
            "",
            "| metric | accepted (judge@version: items) | escalated | already rated |",
            "|---|---|---|---|",
            *rows,
        ]
    for m in pac.get("not_calibrated") or []:
        lines += [
            "",
            f"Not calibrated: {_code(m.get('judge'))}@{m.get('version')}: {_md(m.get('why'))}.",
        ]
    return lines


def export_hf(
    study: Study,
    out_dir: Path,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """`out_dir/data/<table>.parquet` + `out_dir/README.md` (a dataset card with `configs`), loadable
    by `datasets.load_dataset(out_dir, <table>)` without annotator depending on `datasets`."""
    study.require_lead("an export")
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(
            "this is a file; `export hf` writes a folder", source=str(out_dir), field="--out"
        )
    with atomic_files(out_dir) as tmp:  # every file lands, or none
        made = _hf_files(study, tmp, n_boot=n_boot, seed=seed, progress=progress)
        return [out_dir / p.relative_to(tmp) for p in made]


def _hf_files(
    study: Study,
    out_dir: Path,
    *,
    n_boot: int,
    seed: int,
    progress: Callable[[str], None] | None,
) -> list[Path]:
    from .report_cache import cached_study_report

    written: list[Path] = []
    counts: dict[str, int] = {}
    for name in ("judgements", "pairs", "judge-scores", "judge-pairs", "labels", "items"):
        table = TABLES[name]
        rows = table.rows(study)
        counts[name] = len(rows)
        if rows:  # an empty config would load as a dataset with no columns' values to show
            written.append(
                write_rows(table, rows, out_dir / "data" / f"{name.replace('-', '_')}.parquet")
            )
    report, _ = cached_study_report(study, n_boot=n_boot, seed=seed, progress=progress)
    card = out_dir / "README.md"
    atomic_write_text(card, dataset_card(study, report, counts, n_boot))
    return [card, *written]


# ---- Label Studio tasks ---------------------------------------------------------------------------


def _media_ref(study: Study, sha: str, media_dir: Path, written: set[str]) -> str:
    """Images go beside the JSON as `<stem>-media/<sha256>.png` (already stripped of metadata,
    named by content) and are referenced the way Label Studio serves local files."""
    if sha not in written:
        atomic_write_bytes(media_dir / f"{sha}.png", study.media.read(sha))
        written.add(sha)
    return f"/data/local-files/?d={media_dir.name}/{sha}.png"


def _time(t: datetime) -> str:
    return t.isoformat() + "Z"


def export_label_studio(study: Study, out: Path, *, with_annotations: bool = False) -> list[Path]:
    """Tasks for Label Studio: `out` (item tasks), `<stem>-pairs.json` (pair tasks, when there are
    pairs), a labeling config for each (`<stem>.config.xml`, `<stem>-pairs.config.xml`), the images
    in `<stem>-media/`, and `<stem>.map.toml`: the mapping that imports the tasks back. Every file
    lands, or none (a full disk leaves no partial set: base/atomic.atomic_files)."""
    study.require_lead("an export")
    if out.suffix.lower() != ".json":
        raise InputError("a Label Studio export is a .json file", source=str(out), field="--out")
    with atomic_files(out.parent) as tmp:
        made = _label_studio_files(study, tmp / out.name, with_annotations=with_annotations)
        return [out.parent / p.relative_to(tmp) for p in made]


def _label_studio_files(study: Study, out: Path, *, with_annotations: bool) -> list[Path]:
    rubric = study.rubric
    items = _live_items(study)
    by_pk = {r.pk: r for r in item_records(study.db)}
    judgements = judgement_records(study.db, rubric.version) if with_annotations else []
    votes = vote_records(study.db)
    media_dir = out.parent / f"{out.stem}-media"
    written: set[str] = set()
    ann_id = iter(range(1, 10**9))

    def annotation(rater: str, result: list, t: datetime, ms: int | None) -> dict[str, Any]:
        """No `completed_by`: Label Studio takes only the id or email of one of its own users
        (ours would be refused, or credited to whoever holds that id); it credits the annotation
        to the user who imports it, and our rater and time ride in each result's `meta`, which
        Label Studio keeps (it resets `created_at` on import)."""
        meta = {LS_META: {"rater": rater, "created_at": _time(t)}}
        a = {
            "id": next(ann_id),
            "result": [{**r, "meta": meta} for r in result],
            "was_cancelled": False,
            "ground_truth": False,
            "created_at": _time(t),
            "updated_at": _time(t),
        }
        if ms is not None:
            a["lead_time"] = ms / 1000
        return a

    by_item: dict[int, list] = {}
    for j in judgements:
        by_item.setdefault(j.item_pk, []).append(j)
    scores: dict[int, dict[str, list]] = {}
    all_scores = R.judge_scores(study.db)
    latest = latest_versions(all_scores)  # one prediction per judge: the version the report reads
    for sc in all_scores:
        if latest[sc.judge] == sc.version:
            scores.setdefault(sc.item_pk, {}).setdefault(sc.judge, []).append(sc)
    multi = any(len(r.outputs) > 1 for r in items.values())
    has = {
        k: any(getattr(r, k) for r in items.values())
        for k in ("outputs", "text", "criteria", "inputs", "mask")
    }
    tasks: list[dict[str, Any]] = []
    # by item_id, not by row number: rows are numbered in a seeded random order per study
    for r in sorted(items.values(), key=lambda r: r.item_id):
        data: dict[str, Any] = {"prompt": r.prompt}
        if has["criteria"]:
            data["criteria"] = r.criteria or ""
        refs = [_media_ref(study, sha, media_dir, written) for sha in r.outputs]
        if multi:
            data["images"] = refs
        elif has["outputs"]:
            data["image"] = refs[0] if refs else ""
        if has["text"]:
            data["text"] = r.text or ""
        if has["inputs"]:
            data["inputs"] = [_media_ref(study, sha, media_dir, written) for sha in r.inputs]
        if has["mask"]:
            data["mask"] = _media_ref(study, r.mask, media_dir, written) if r.mask else ""
        # who made it stays out of `data` (what a rater sees): the lead's fields ride in `meta`
        meta = {
            "kind": "item",
            "item_id": r.item_id,
            "case_id": r.case_id,
            "generator": r.generator,
        }
        meta |= {
            k: getattr(r, k) for k in ("slice", "seed", "task_type") if getattr(r, k) is not None
        }
        task: dict[str, Any] = {"id": len(tasks) + 1, "data": data, "meta": {"annotator": meta}}
        task["annotations"] = [
            annotation(
                j.rater,
                [
                    lsc.metric_result(rubric.metric(k), v)
                    for k, v in j.answers.items()
                    if rubric.has(k)
                ],
                j.created_at,
                j.time_ms,
            )
            for j in by_item.get(r.pk, [])
        ]
        task["predictions"] = [
            {
                "model_version": judge,
                "result": [
                    lsc.metric_result(rubric.metric(sc.metric), sc.value)
                    for sc in scs
                    if rubric.has(sc.metric)
                ],
            }
            for judge, scs in scores.get(r.pk, {}).items()
        ]
        tasks.append(task)
    pair_tasks = _pair_tasks(
        study, items, by_pk, votes, with_annotations, media_dir, written, annotation
    )
    paths = [_write_tasks(out, tasks)]
    images = "images" if multi else "image" if has["outputs"] else None
    paths.append(
        atomic_write_text(
            out.with_name(f"{out.stem}.config.xml"),
            lsc.item_config(
                rubric,
                images=images,
                text=has["text"],
                criteria=has["criteria"],
                inputs=has["inputs"],
                mask=has["mask"],
            ),
        )
    )
    if pair_tasks:
        paths.append(_write_tasks(out.with_name(f"{out.stem}-pairs.json"), pair_tasks))
        paths.append(
            atomic_write_text(
                out.with_name(f"{out.stem}-pairs.config.xml"),
                lsc.pair_config(study.setting("pair_question"), images=has["outputs"]),
            )
        )
    item_paths: dict[str, str | list[str]] = {
        "item_id": "meta.annotator.item_id",
        "case_id": "meta.annotator.case_id",
        "prompt": "data.prompt",
        "generator": "meta.annotator.generator",
        "slice": "meta.annotator.slice",
        "seed": "meta.annotator.seed",
        "task_type": "meta.annotator.task_type",
    }
    if has["criteria"]:
        item_paths["criteria"] = "data.criteria"
    if images:
        item_paths["images"] = [f"data.{images}"]
    for k, path in (("text", "data.text"), ("inputs", "data.inputs"), ("mask", "data.mask")):
        if has[k]:
            item_paths[k] = [path] if k == "inputs" else path
    pairs = (
        {
            "from": lsc.PAIR_CONTROL,
            "tie_from": lsc.TIE_CONTROL,
            "left": "meta.annotator.item_left",
            "right": "meta.annotator.item_right",
            "pair_id": "meta.annotator.pair_id",
        }
        if pair_tasks
        else None
    )
    paths.append(
        atomic_write_text(
            out.with_name(f"{out.stem}.map.toml"),
            render_mapping(
                "label-studio",
                rubric,
                item=item_paths,
                metrics={m.key: m.key for m in rubric.metrics},
                pairs=pairs,
                partial=any(_partial(rubric, j) for j in judgements),
                note=f"Label Studio tasks exported from study '{study.name}'",
            ),
        )
    )
    return paths + sorted(media_dir / f"{sha}.png" for sha in written)


def _pair_tasks(
    study: Study,
    items: dict[int, ItemRecord],
    by_pk: dict[int, ItemRecord],
    votes: list,
    with_ann: bool,
    media_dir: Path,
    written: set[str],
    annotation: Callable,
) -> list[dict[str, Any]]:
    """One task per pair and the sides it was shown in: votes keep the sides their rater saw."""
    groups: dict[tuple[str, int, int], list] = {}
    for pid, a, b in pair_records(study.db):
        if a in items and b in items:
            groups.setdefault((pid, a, b), [])
    for v in votes:
        if v.item_left in items and v.item_right in items:
            key = (v.pair_id, v.item_left, v.item_right)
            if (
                key not in groups
                and (v.pair_id, v.item_right, v.item_left) in groups
                and not groups[(v.pair_id, v.item_right, v.item_left)]
            ):
                del groups[
                    (v.pair_id, v.item_right, v.item_left)
                ]  # no vote saw that side: one task is enough
            groups.setdefault(key, []).append(v)
    tasks: list[dict[str, Any]] = []
    # by name and sides, not by row number (rows are numbered in a seeded random order per study)
    order = sorted(groups, key=lambda k: (k[0], by_pk[k[1]].item_id, by_pk[k[2]].item_id))
    for (pid, a, b), vs in ((k, groups[k]) for k in order):
        left, right = by_pk[a], by_pk[b]
        data: dict[str, Any] = {"prompt": left.prompt}
        if any(r.outputs for r in items.values()):
            data["left_image"] = (
                _media_ref(study, left.outputs[0], media_dir, written) if left.outputs else ""
            )
            data["right_image"] = (
                _media_ref(study, right.outputs[0], media_dir, written) if right.outputs else ""
            )
        else:
            data["left_text"], data["right_text"] = left.text or "", right.text or ""
        meta = {
            "kind": "pair",
            "pair_id": pid,
            "item_left": left.item_id,
            "item_right": right.item_id,
        }
        tasks.append(
            {
                "id": len(tasks) + 1,
                "data": data,
                "meta": {"annotator": meta},
                "annotations": [
                    annotation(v.rater, [lsc.pair_result(v.choice)], v.created_at, v.time_ms)
                    for v in vs
                    if not v.is_judge and with_ann
                ],
                "predictions": [
                    {
                        "model_version": v.rater,
                        "created_at": _time(v.created_at),
                        "result": [lsc.pair_result(v.choice)],
                    }
                    for v in vs
                    if v.is_judge
                ],
            }
        )
    return tasks


def _write_tasks(path: Path, tasks: list[dict[str, Any]]) -> Path:
    # one task a line: a valid JSON array that diffs and greps by task
    text = (
        "[\n"
        + ",\n".join(json.dumps(t, ensure_ascii=False, separators=(",", ":")) for t in tasks)
        + "\n]\n"
    )
    return atomic_write_text(path, text)
