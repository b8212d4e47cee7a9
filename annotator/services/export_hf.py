"""The Hugging Face `datasets` layout of a study: every table as Parquet under `data/`, and a
dataset card (`README.md`) with its `configs`, the report's figures and the certified labels'
guarantee, loadable by `datasets.load_dataset(folder, <table>)` without annotator depending on
`datasets`. Rubric and study texts enter the card as Markdown data, never as its markup.
Tested in tests/unit/test_interop_exports.py and tests/unit/test_security_inputs.py.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..base.atomic import atomic_files, atomic_write_text
from ..base.task import TaskState
from ..domain.errors import InputError
from ..domain.figures import estimate_text, fmt_num
from .exports import TABLES, write_rows
from .study import Study


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
    task: TaskState | None = None,
) -> list[Path]:
    """`out_dir/data/<table>.parquet` + `out_dir/README.md` (a dataset card with `configs`), loadable
    by `datasets.load_dataset(out_dir, <table>)` without annotator depending on `datasets`."""
    study.require_lead("an export")
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(
            "this is a file; `export hf` writes a folder", source=str(out_dir), field="--out"
        )
    with atomic_files(out_dir) as tmp:  # every file lands, or none
        made = _hf_files(study, tmp, n_boot=n_boot, seed=seed, task=task)
        return [out_dir / p.relative_to(tmp) for p in made]


def _hf_files(
    study: Study,
    out_dir: Path,
    *,
    n_boot: int,
    seed: int,
    task: TaskState | None,
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
    report, _ = cached_study_report(study, n_boot=n_boot, seed=seed, task=task)
    card = out_dir / "README.md"
    atomic_write_text(card, dataset_card(study, report, counts, n_boot))
    return [card, *written]
