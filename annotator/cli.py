"""The `annotator` command: a headless twin of the UI (docs/design.md 5.4).
(Over 500 lines on purpose: the whole command table of contract 5.4 in one place, one small
function per command.)

Exit status: 0 success, 2 bad input (one line on stderr), 3 judge items left
unscored after retries.
Tested in tests/unit/test_cli.py.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from .base.task import TaskState
from .domain.errors import InputError
from .services.import_kinds import KINDS as IMPORT_KINDS
from .services.import_kinds import OPTIONS as IMPORT_OPTIONS

EXIT_OK, EXIT_BUG, EXIT_BAD_INPUT, EXIT_UNSCORED = 0, 1, 2, 3
EXIT_CLOSED_PIPE = 128 + 13  # what a shell reports for a writer a closed pipe ends (SIGPIPE)


class _ExportKinds(Sequence[str]):
    """The kinds of `annotator export`: `EXPORT_KINDS` of services/exports.py (its TABLES, then
    the folder layouts), read when first asked, so the other commands never load the exports'
    libraries (pandas, pyarrow) to build the parser."""

    def _names(self) -> tuple[str, ...]:
        from .services.exports import EXPORT_KINDS as names

        return names

    def __getitem__(self, i):  # type: ignore[override]
        return self._names()[i]

    def __len__(self) -> int:
        return len(self._names())


EXPORT_KINDS = _ExportKinds()


def _seed(text: str) -> int:
    """A seed the study can store in every engine (an INTEGER column holds 32 bits on a
    PostgreSQL server)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if not 0 <= n < 2**31:
        raise argparse.ArgumentTypeError(f"{text} is not a seed from 0 to 2147483647")
    return n


def _width(text: str) -> float:
    """An interval's target width: a finite number a plan can be counted for."""
    try:
        w = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not 1e-6 <= w <= 1e6:
        raise argparse.ArgumentTypeError(
            f"{text} is not a width from 0.000001 to 1000000, in the figure's units (e.g. 0.05)"
        )
    return w


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, like every other bad input
        self.exit(EXIT_BAD_INPUT, f"annotator: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="annotator",
        description="Blinded expert rating of model outputs, reconciled with LLM judges.",
    )
    p.add_argument(
        "--selftest",
        action="store_true",
        help="check this installation (window offscreen, migrations, statistics, translations, "
        "resources): one line per check, exit 1 if any fails",
    )
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    new = sub.add_parser("new", help="create a study folder")
    new.add_argument("study")
    new.add_argument(
        "--rubric",
        required=True,
        help="a rubric .toml file, or the name of a shipped rubric "
        "(ui_mockup, marketing_flyer, virtual_try_on, logo_edit)",
    )

    imp = sub.add_parser(
        "import",
        help="import items, ratings, judge scores, pair votes or anchors",
        epilog="formats: " + "; ".join(f"{k.name}: {k.what}" for k in IMPORT_KINDS.values()),
    )
    imp.add_argument("kind", choices=tuple(IMPORT_KINDS))
    imp.add_argument("file")
    imp.add_argument("--study", required=True)
    for option in IMPORT_OPTIONS.values():
        if option.is_switch:
            imp.add_argument(option.flag, dest=option.name, action="store_true", help=option.help)
        else:
            imp.add_argument(
                option.flag, dest=option.name, metavar=option.metavar, help=option.help
            )

    exp = sub.add_parser(
        "export",
        help="judgements, pairs, judge scores or items as CSV / JSON Lines / Parquet; "
        "a Hugging Face datasets folder; Label Studio tasks",
    )
    # a metavar, so that building the parser does not list (and load) the kinds; help lists them
    exp.add_argument("kind", choices=EXPORT_KINDS, metavar="KIND", help="one of %(choices)s")
    exp.add_argument("--study", required=True)
    exp.add_argument(
        "--out",
        help="the file (format from its suffix: .csv .jsonl .parquet; .json for label-studio) "
        "or, for hf, the folder; default: exports/<study>/<date>/",
    )
    exp.add_argument(
        "--format",
        choices=("csv", "jsonl", "parquet"),
        default=None,
        help="the format when --out is not given (default csv)",
    )
    exp.add_argument(
        "--with-annotations",
        action="store_true",
        help="label-studio: include the raters' current answers as annotations",
    )
    exp.add_argument(
        "--boot", type=int, default=1000, help="hf: bootstrap resamples for the agreement figures"
    )
    exp.add_argument("--seed", type=_seed, default=0)

    rater = sub.add_parser("rater", help="manage raters")
    rsub = rater.add_subparsers(dest="rater_command", parser_class=_Parser, required=True)
    radd = rsub.add_parser("add")
    radd.add_argument("name")
    radd.add_argument("--study", required=True)
    radd.add_argument(
        "--operator", action="store_true", help="staff account: answers stored, never counted"
    )
    radd.add_argument("--expertise")
    rsub.add_parser("list").add_argument("--study", required=True)

    judge = sub.add_parser("judge", help="LLM judge")
    jsub = judge.add_subparsers(dest="judge_command", parser_class=_Parser, required=True)
    jrun = jsub.add_parser("run")
    jrun.add_argument("--study", required=True)
    jrun.add_argument("--model", required=True)
    jrun.add_argument("--base-url")
    jrun.add_argument("--api", choices=("responses", "chat"), default="responses")
    jrun.add_argument("--concurrency", type=int, default=4)
    jrun.add_argument("--max-retries", type=int, default=4)
    jrun.add_argument("--timeout", type=float, default=120.0)
    jrun.add_argument("--judge-name", help="name the scores are stored under (default: the model)")
    jrun.add_argument(
        "--pairs",
        action="store_true",
        help="vote on the study's pairs, each in both orders (A|B and B|A), instead of scoring items",
    )
    jrun.add_argument(
        "--confidence",
        choices=("none", "logprobs", "field"),
        default="none",
        help="the judge's probability of each answer, for calibration: the API's token "
        "logprobs, or a confidence field in the reply (a new judge version)",
    )
    jrun.add_argument(
        "--simulated-annotators",
        type=int,
        default=0,
        metavar="N",
        help="a confidence for a judge that gives none: ask each item N times, each time after "
        "--shots examples a human rater answered; the majority answer, its share the confidence "
        "(Trust or Escalate); N calls per item, the cost is printed first",
    )
    jrun.add_argument(
        "--shots", type=int, default=3, metavar="K", help="examples per simulated annotator"
    )
    jcmp = jsub.add_parser(
        "compare", help="two judges, or two versions of one (name@version), on the same items"
    )
    jcmp.add_argument("--study", required=True)
    jcmp.add_argument(
        "--judge", action="append", required=True, help="name or name@version; give it twice"
    )
    jcmp.add_argument("--boot", type=int, default=1000, help="bootstrap resamples, at least 1")
    jcmp.add_argument("--seed", type=_seed, default=0)

    rep = sub.add_parser(
        "report",
        help="agreement and findings as JSON / HTML / CSV (default: all three, in "
        "exports/<study>/<date>/)",
    )
    rep.add_argument("--study", required=True)
    rep.add_argument("--json")
    rep.add_argument("--html")
    rep.add_argument("--csv", metavar="DIR")
    rep.add_argument(
        "--boot",
        type=int,
        default=1000,
        help="bootstrap resamples, at least 1 (>= 1000 for published figures)",
    )
    rep.add_argument("--seed", type=_seed, default=0)

    cal = sub.add_parser("calibrate", help="open a calibration session on the study's anchors")
    cal.add_argument("--study", required=True)
    cal.add_argument("--rater", required=True)
    cal.add_argument(
        "--history", action="store_true", help="print the rater's calibrations instead"
    )

    demo = sub.add_parser("demo", help="build (if absent) and open the demo study")
    demo.add_argument("--study", default=None)
    demo.add_argument("--headless", action="store_true")

    gui = sub.add_parser("gui", help="open the rater app")
    gui.add_argument("--study")
    gui.add_argument("--rater")

    sett = sub.add_parser(
        "set", help="change a study setting (value as JSON), e.g. anchor_every 10"
    )
    sett.add_argument("key")
    sett.add_argument("value", nargs="?", help="JSON value; omit to print the current one")
    sett.add_argument("--study", required=True)

    st = sub.add_parser(
        "status", help="print what a study holds: counts, per-rater progress, merges"
    )
    st.add_argument("--study", required=True)
    st.add_argument(
        "--queue", action="store_true", help="on a rater package: its queue as display codes"
    )

    pln = sub.add_parser(
        "plan",
        help="how many more human labels each debiased figure needs for an interval of a width "
        "(and to decide the release gate), with the judge and without, the cheapest mix of "
        "labels and judge calls, and what the judge is worth there",
    )
    pln.add_argument("--study", required=True)
    pln.add_argument(
        "--width",
        type=_width,
        required=True,
        help="the target width of the 95%% interval, in the figure's units (0.05 for a pass rate)",
    )

    asg = sub.add_parser(
        "assign", help="deal items (and pairs) to K raters each, balanced and seeded"
    )
    asg.add_argument("--study", required=True)
    asg.add_argument(
        "--raters",
        help="comma-separated rater names (added if new; default: every non-operator rater)",
    )
    asg.add_argument("--overlap", type=int, default=2, help="raters per item (K)")
    asg.add_argument(
        "--pair-overlap",
        type=int,
        default=None,
        help="raters per pair vote (default: no pairs dealt)",
    )
    asg.add_argument(
        "--seed", type=_seed, default=None, help="the dealing seed (default: a new one, recorded)"
    )
    asg.add_argument(
        "--on-demand",
        action="store_true",
        help="no dealt lists: each rater takes the next item that still needs raters (a team server)",
    )
    asg.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="draw a seeded random sample of N live items per generator (spread over cases; "
        "topped up if one exists) and deal only those: the debiased figures need it",
    )
    asg.add_argument(
        "--sample-share",
        type=float,
        default=None,
        metavar="F",
        help="as --sample, a share F of each generator's live items",
    )
    asg.add_argument(
        "--active",
        action="store_true",
        help="with --sample/--sample-share: draw where the judge's errors are predicted "
        "largest (from its stated confidence, recalibrated on the labels so far), N expected "
        "per generator, each item's probability recorded; again on an active sample: its next "
        "batch",
    )
    asg.add_argument(
        "--batch",
        type=int,
        default=None,
        metavar="K",
        help="with --active: draw K of the N now, the next K at the next call (each batch "
        "recalibrated on the labels gathered before it)",
    )
    asg.add_argument(
        "--by-strata",
        metavar="FIGURE",
        default=None,
        help="with --sample N: top the recorded sample up to N per generator over the strata "
        "of the debiased FIGURE's stratified PPI++ (the report's `stratified`), n_k "
        "proportional to W_k S_k (Neyman), uniformly within each",
    )
    asg.add_argument(
        "--judge",
        metavar="NAME",
        default=None,
        help="with --by-strata: whose figure's strata, when several judges score it",
    )
    asg.add_argument(
        "--pair-sample",
        type=int,
        default=None,
        metavar="N",
        help="draw a seeded random sample of N pairs per generator pair (spread over cases; "
        "topped up if one exists) and deal only those (with --pair-overlap): the debiased win "
        "rates need it",
    )
    asg.add_argument(
        "--top-up",
        type=float,
        default=None,
        metavar="WIDTH",
        help="grow the recorded sample (and the pair sample, with --pair-overlap) per generator "
        "to what `annotator plan --width WIDTH` says, and deal the new items",
    )
    asg.add_argument(
        "--escalated",
        action="store_true",
        help="deal the items no judge may decide under the certified guarantee (and no human "
        "has rated) to --overlap raters each, and with --pair-overlap K the pairs no judge may "
        "decide (and no human has voted on) to K raters each: the report's `certified` split",
    )
    asg.add_argument(
        "--release",
        metavar="RATER",
        help="free the items RATER took on demand and left unanswered (a rater who quit)",
    )

    pkg = sub.add_parser(
        "package", help="rater packages: export one rater's blinded work, merge them back"
    )
    psub = pkg.add_subparsers(dest="package_command", parser_class=_Parser, required=True)
    pexp = psub.add_parser("export")
    pexp.add_argument("--study", required=True)
    pexp.add_argument("--rater", required=True)
    pexp.add_argument("--out", required=True, help="FILE.annot")
    adj = sub.add_parser(
        "adjudicate",
        help="the lead's resolved answer on an item x metric (kept beside, never "
        "over, the raters' answers)",
    )
    adj.add_argument("--study", required=True)
    adj.add_argument(
        "--item", required=True, help="the item_id (the lead's id, not a rater's display code)"
    )
    adj.add_argument("--metric", required=True)
    adj.add_argument(
        "--value",
        required=True,
        help="as in the ratings CSV: PASS/FAIL, an integer, an option, tags joined by ';'",
    )
    adj.add_argument("--reason", required=True)
    adj.add_argument("--by", help="who decided (default: lead)")
    adj.add_argument(
        "--category", help="why: rubric_unclear, rater_error, judge_error, ambiguous_item, other"
    )

    rev = sub.add_parser(
        "review", help="the lead's review queue: what needs an adjudication, most important first"
    )
    rev.add_argument("--study", required=True)
    rev.add_argument("--metric")
    rev.add_argument("--generator")
    rev.add_argument("--case")
    rev.add_argument("--rater")
    rev.add_argument("--open", action="store_true", help="only what is not adjudicated yet")

    anc = sub.add_parser("anchors", help="anchor sets: promote an adjudicated item, export the set")
    asub = anc.add_subparsers(dest="anchors_command", parser_class=_Parser, required=True)
    apro = asub.add_parser("promote")
    apro.add_argument("--study", required=True)
    apro.add_argument("--item", required=True)
    apro.add_argument(
        "--rationale", help="for metrics not adjudicated (default: the consensus it rests on)"
    )
    aexp = asub.add_parser("export")
    aexp.add_argument("--study", required=True)
    aexp.add_argument("--out", required=True, help="a new folder")

    rol = sub.add_parser(
        "roles", help="on a PostgreSQL study: the raters' least-privilege database roles"
    )
    rol.add_argument(
        "--study", required=True, help="postgresql://LEAD@host/db (the owner of the study's tables)"
    )
    rol.add_argument(
        "--raters", default="", help="comma-separated rater names: each gets a login role"
    )
    rol.add_argument(
        "--drop",
        action="store_true",
        help="remove this study's rater roles (the study's data stays)",
    )
    rol.add_argument(
        "--print",
        action="store_true",
        dest="print_only",
        help="print the SQL instead of running it",
    )

    stu = sub.add_parser("study", help="whole studies: copy between a folder and a database server")
    ssub = stu.add_subparsers(dest="study_command", parser_class=_Parser, required=True)
    scp = ssub.add_parser(
        "copy", help="copy SRC (folder or URL) to DEST (new folder or empty database)"
    )
    scp.add_argument("src")
    scp.add_argument("dest")

    pmer = psub.add_parser("merge")
    pmer.add_argument("files", nargs="+", metavar="FILE.annot")
    pmer.add_argument("--study", required=True)
    return p


def _open(path: str, mode: str = "write"):
    from .services.study import Study

    return Study.open(path, mode=mode)


def _cmd_new(a) -> int:
    from .services.study import Study

    Study.create(a.study, a.rubric).close()
    print(f"created study {a.study}")
    return EXIT_OK


def _cmd_import(a) -> int:
    from .services.importers import run_import

    study = _open(a.study)
    try:
        print(
            run_import(
                study,
                a.kind,
                a.file,
                **{name: getattr(a, name) for name in IMPORT_OPTIONS},
            )
        )
    finally:
        study.close()
    return EXIT_OK


def _stderr_lines() -> TaskState:
    """The task of a command that prints each stage of its work as a line on stderr."""
    return TaskState(lambda _fraction, message: print(message, file=sys.stderr))


def _cmd_export(a) -> int:
    from .services.export_hf import export_hf
    from .services.export_label_studio import export_label_studio
    from .services.exports import export_table
    from .services.outputs import default_output

    if a.format and a.out:
        raise InputError(
            "give --out FILE (its suffix names the format) or --format, not both", field="--format"
        )
    if a.boot < 1:
        raise InputError(f"--boot {a.boot}: give at least 1 resample", field="--boot")
    study = _open(a.study, "read")
    try:
        if a.kind == "hf":
            out = Path(a.out) if a.out else default_output(study, "hf")
            paths = export_hf(study, out, n_boot=a.boot, seed=a.seed, task=_stderr_lines())
            print(f"wrote {out}: a dataset card and {len(paths) - 1} Parquet tables")
        elif a.kind == "label-studio":
            out = Path(a.out) if a.out else default_output(study, "label-studio.json")
            paths = export_label_studio(study, out, with_annotations=a.with_annotations)
            n_img = sum(p.suffix == ".png" for p in paths)
            for p in paths:
                if p.suffix != ".png":
                    print(f"wrote {p}")
            if n_img:
                print(f"wrote {n_img} images into {out.parent / (out.stem + '-media')}")
            print(
                "annotator: note: Label Studio shows predictions (the judge's scores) to annotators as pre-labels; "
                "turn off 'Use predictions to pre-label tasks' in the project settings to keep raters blind",
                file=sys.stderr,
            )
        else:
            out = Path(a.out) if a.out else default_output(study, f"{a.kind}.{a.format or 'csv'}")
            path, n = export_table(study, a.kind, out)
            print(f"wrote {path} ({n} rows)")
    finally:
        study.close()
    return EXIT_OK


def _cmd_rater(a) -> int:
    study = _open(a.study, "write" if a.rater_command == "add" else "read")
    try:
        if a.rater_command == "add":
            study.add_rater(a.name, operator=a.operator, expertise=a.expertise)
            print(f"added {'operator' if a.operator else 'rater'} {a.name}")
        else:
            for r in study.raters():
                print(f"{r.name}\t{'operator' if r.is_operator else 'rater'}\t{r.expertise or ''}")
    finally:
        study.close()
    return EXIT_OK


def _cmd_judge(a) -> int:
    from .services.judging import JudgeConfig, judge_study_at

    if a.judge_command == "compare":
        return _cmd_judge_compare(a)
    config = JudgeConfig(
        model=a.model,
        base_url=a.base_url,
        api=a.api,
        concurrency=a.concurrency,
        max_retries=a.max_retries,
        timeout=a.timeout,
        judge_name=a.judge_name,
        confidence=a.confidence,
        simulated_annotators=a.simulated_annotators,
        shots=a.shots if a.simulated_annotators else 0,
    )
    what = "pair orders" if a.pairs else "items"

    def report(fraction: float | None, message: str) -> None:
        if fraction is None:  # a line before any call: the cost of simulated annotators
            print(message)
        else:  # "judged done/total", redrawn in place
            print(f"\r{message} {what}", end="", file=sys.stderr, flush=True)

    summary = judge_study_at(a.study, config, task=TaskState(report), pairs=a.pairs)
    print(file=sys.stderr)
    kinds = ", ".join(f"{k}: {v}" for k, v in sorted(summary.errors_by_kind.items()))
    done = "voted" if a.pairs else "scored"
    print(
        f"{done} {summary.n_scored}, already {done} {summary.n_skipped}, failed {summary.n_failed}"
        + (f" ({kinds})" if kinds else "")
    )
    if summary.n_unscored:
        print(
            f"annotator: some {what} are still without an answer; run `annotator judge run` again "
            "to retry exactly those",
            file=sys.stderr,
        )
        return EXIT_UNSCORED
    return EXIT_OK


def _fig(d: dict | None) -> str:
    from .domain.figures import estimate_text

    return estimate_text(d, digits=3, with_n=True)


def _cmd_judge_compare(a) -> int:
    from .services.judging import compare_judges

    if len(a.judge) != 2:
        raise InputError("give --judge exactly twice: the two judges or versions to compare")
    out = compare_judges(a.study, a.judge[0], a.judge[1], n_boot=a.boot, seed=a.seed)
    print(f"A = {out['a']}\nB = {out['b']}")
    for metric, m in out["metrics"].items():
        ch = m["changed"]
        print(
            f"{metric} ({m['measure']}, {m['better_if']} is better): A {_fig(m['a'])}; "
            f"B {_fig(m['b'])}; B-A {_fig(m['difference'])}; changed {ch['n']}: "
            f"better {ch.get('n_better', 0)}, worse {ch.get('n_worse', 0)}, "
            f"other {ch.get('n_other', 0)}"
        )
        mc, fl = m.get("mcnemar") or {}, m.get("flip_rate") or {}
        if mc:
            print(
                f"  agreement with the humans on {mc['n']} items: A only {mc['a_only']}, B only "
                f"{mc['b_only']}, exact McNemar p = {mc['p_value']:.3g}"
            )
        if fl.get("n"):
            print(
                f"  flip rate: {fl['n_flipped']} of {fl['n']} answers changed "
                f"({fl['rate']:.1%}, at most {fl['upper_bound']:.1%} at {fl['level']:.0%})"
            )
        for kind in ("better", "worse", "other"):
            for it in ch.get(kind, []):
                print(f"  {kind}\t{it['item_id']}\tA {it['a']}\tB {it['b']}\thumans {it['humans']}")
    return EXIT_OK


def _cmd_report(a) -> int:
    from .services.reporting import write_reports

    if not (a.json or a.html or a.csv):  # all three, in the study's default output folder
        from .services.outputs import default_report_paths

        a.json, a.html, a.csv = default_report_paths(a.study)
    if a.boot < 1:
        raise InputError(
            f"--boot {a.boot}: give at least 1 resample (1000 or more for published figures)",
            field="--boot",
        )
    paths = write_reports(
        a.study,
        json_path=a.json,
        html_path=a.html,
        csv_dir=a.csv,
        n_boot=a.boot,
        seed=a.seed,
        task=_stderr_lines(),
    )
    for p in paths:
        print(f"wrote {p}")
    return EXIT_OK


def _cmd_calibrate(a) -> int:
    if a.history:
        from .services.calibration import calibration_history

        recs = calibration_history(a.study, a.rater)
        if not recs:
            print(
                f"{a.rater} has no calibration yet; run `annotator calibrate --study S --rater R`",
                file=sys.stderr,
            )
            return EXIT_OK
        keys = list(recs[-1]["result"]["metrics"])
        print("when                 " + "  ".join(f"{k[:18]:>18s}" for k in keys) + "  verdict")
        for r in recs:
            shares = [r["result"]["metrics"].get(k, {}).get("share") for k in keys]
            cells = "  ".join(f"{'-' if v is None else f'{v:.0%}':>18s}" for v in shares)
            print(f"{r['created_at']:20s} {cells}  {r['result']['verdict']}")
        return EXIT_OK
    from .ui.app import run_app

    return run_app(study=a.study, rater=a.rater, mode="calibration")  # a folder, package or URL


class DemoProgress:
    """The demo build's progress on stderr: one line redrawn in place on a terminal
    (`building the demo  [#####.....]  2/5 rater answers 120/290`), and on anything else (a log,
    a pipe) one plain line per stage and per quarter of it, never a line per answer."""

    WIDTH = 24

    def __init__(self, stages: tuple[str, ...], stream=None, tty: bool | None = None) -> None:
        self.stages = stages
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self._last: tuple[str, int] | None = None  # (stage, quarter) last printed as a line
        self._drawn = False

    def __call__(self, fraction: float | None, message: str) -> None:
        """The build's TaskState report: `message` is "stage done/total" (task.count)."""
        stage = message.rsplit(" ", 1)[0]
        n = self.stages.index(stage)
        share = min(1.0 if fraction is None else fraction, 1.0)
        overall = (n + share) / len(self.stages)
        filled = round(overall * self.WIDTH)
        text = (
            f"building the demo  [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
            f"{n + 1}/{len(self.stages)} {message}"
        )
        if self.tty:
            self.stream.write("\r" + text.ljust(78)[:78])
            self._drawn = True
        else:
            quarter = min(4, int(share * 4))
            if self._last == (stage, quarter):
                return
            self._last = (stage, quarter)
            self.stream.write(text + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False


def _cmd_demo(a) -> int:
    from .services.demo import DEMO_RATER, STAGES, build_demo, default_demo_folder

    folder = Path(a.study) if a.study else default_demo_folder()
    if not a.headless:
        from .ui.app import preflight

        # before the build: a window that cannot open is said in a second, not after a minute
        problem = preflight()
        if problem is not None:
            print(f"annotator: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
    bar = DemoProgress(STAGES)
    try:
        build_demo(folder, task=TaskState(bar))
    finally:
        bar.end()
    print(f"demo study ready at {folder}")
    if a.headless:
        return EXIT_OK
    from .ui.app import run_app

    return run_app(study=folder, default_rater=DEMO_RATER)  # reopens as the last rater here


def _cmd_gui(a) -> int:
    from .ui.app import run_app

    return run_app(
        study=a.study or None, rater=a.rater
    )  # a folder, package or URL (run_app tells them apart)


def _cmd_status(a) -> int:
    from .services.team import queue_codes, status_lines

    study = _open(a.study, "write" if a.queue else "read")
    try:
        if a.queue:
            for code in queue_codes(study):
                print(code)
            return EXIT_OK
        for line in status_lines(study):
            print(line)
    finally:
        study.close()
    return EXIT_OK


def _cmd_assign(a) -> int:
    from .services.team import assign

    if a.release:
        from .services.team import release_claims

        study = _open(a.study)
        try:
            print(release_claims(study, a.release))
        finally:
            study.close()
        return EXIT_OK
    study = _open(a.study)
    try:
        if a.active and a.sample is None and a.sample_share is None:
            raise InputError("--active says how to draw a sample: add --sample N", field="--active")
        if a.batch is not None and not a.active:
            raise InputError("--batch splits an --active sample: add --active", field="--batch")
        if a.by_strata is not None and (a.sample is None or a.sample_share is not None or a.active):
            raise InputError(
                "--by-strata tops up to --sample N per generator: add --sample N (without "
                "--sample-share or --active)",
                field="--by-strata",
            )
        if a.judge is not None and a.by_strata is None:
            raise InputError("--judge names whose strata: add --by-strata FIGURE", field="--judge")
        if a.top_up is not None and (
            a.sample is not None or a.sample_share is not None or a.active or a.pair_sample
        ):
            raise InputError(
                "--top-up grows the recorded sample to the plan: give it alone, without "
                "--sample, --sample-share, --active or --pair-sample",
                field="--top-up",
            )
        if a.escalated and (
            a.sample is not None
            or a.sample_share is not None
            or a.active
            or a.pair_sample is not None
            or a.top_up is not None
            or a.on_demand
        ):
            raise InputError(
                "--escalated deals the items the judges left to raters: give it without "
                "--sample, --sample-share, --active, --pair-sample, --top-up or --on-demand",
                field="--escalated",
            )
        if a.pair_sample is not None and a.pair_overlap is None:
            raise InputError(
                "--pair-sample deals the drawn pairs: say to how many raters with --pair-overlap K",
                field="--pair-sample",
            )
        if a.on_demand and (
            a.sample is not None
            or a.sample_share is not None
            or a.pair_sample is not None
            or a.top_up is not None
        ):
            raise InputError(
                "--sample deals a dealt list; it cannot be combined with --on-demand",
                field="--sample",
            )
        if a.on_demand:
            from .services.team import deal_on_demand

            named = [r.strip() for r in a.raters.split(",") if r.strip()] if a.raters else None
            print(deal_on_demand(study, overlap=a.overlap, raters=named))
            return EXIT_OK
        print(
            assign(
                study,
                [r.strip() for r in a.raters.split(",") if r.strip()] if a.raters else None,
                overlap=a.overlap,
                pair_overlap=a.pair_overlap,
                seed=a.seed,
                sample=a.sample,
                sample_share=a.sample_share,
                active=a.active,
                batch=a.batch,
                by_strata=a.by_strata,
                judge=a.judge,
                pair_sample=a.pair_sample,
                top_up=a.top_up,
                escalated=a.escalated,
            )
        )
    finally:
        study.close()
    return EXIT_OK


def _cmd_plan(a) -> int:
    from .services.sampling import plan, plan_lines

    study = _open(a.study, "read")
    try:
        rows, sec = plan(study, a.width)
    finally:
        study.close()
    for line in plan_lines(rows, sec, a.width):
        print(line)
    return EXIT_OK


def _cmd_adjudicate(a) -> int:
    from .services.adjudication import adjudicate

    study = _open(a.study)
    try:
        adjudicate(
            study,
            item_id=a.item,
            metric=a.metric,
            value=a.value,
            reason=a.reason,
            by=a.by,
            category=a.category,
        )
        print(f"adjudicated {a.item} {a.metric} = {a.value}")
    finally:
        study.close()
    return EXIT_OK


def _cmd_review(a) -> int:
    from .services.adjudication import review_queue

    study = _open(a.study, "read")
    try:
        entries = review_queue(
            study,
            metric=a.metric,
            generator=a.generator,
            case=a.case,
            rater=a.rater,
            include_resolved=not a.open,
        )
    finally:
        study.close()
    for e in entries:
        humans = ", ".join(f"{h['rater']}={h['value']}" for h in e.humans)
        judges = ", ".join(f"{j['judge']}={j['value']}" for j in e.judges)
        done = f"  [adjudicated {e.adjudicated['value']}]" if e.adjudicated else ""
        print(
            f"{e.item_id}\t{e.metric}\t{'+'.join(e.reasons)}\thumans: {humans}"
            + (f"\tjudge: {judges}" if judges else "")
            + f"\t{e.consensus.rule}{done}"
        )
    print(f"{len(entries)} to review", file=sys.stderr)
    return EXIT_OK


def _cmd_anchors(a) -> int:
    from .services.adjudication import export_anchors, promote

    study = _open(a.study)
    try:
        if a.anchors_command == "promote":
            new_id, version = promote(study, item_id=a.item, rationale=a.rationale)
            print(f"promoted {a.item}: anchor {new_id}, anchor set version {version}")
        else:
            print(f"wrote {export_anchors(study, a.out)}")
    finally:
        study.close()
    return EXIT_OK


def _cmd_roles(a) -> int:
    from .services.team import server_roles

    raters = [r.strip() for r in a.raters.split(",") if r.strip()]
    if not raters and not a.drop:
        raise InputError("name the raters: --raters ana,ben (or --drop)", field="--raters")
    study = _open(a.study)
    try:
        for line in server_roles(study, raters, a.print_only, drop=a.drop):
            print(line)
    finally:
        study.close()
    return EXIT_OK


def _cmd_study(a) -> int:
    from .services.copying import copy_study
    from .services.study import display_location

    counts = copy_study(a.src, a.dest, task=_stderr_lines())
    print(
        f"copied {counts.get('items', 0)} items, {counts.get('judgements', 0)} judgements, "
        f"{counts.get('pair_votes', 0)} pair votes and {counts.get('judge_scores', 0)} judge scores to "
        f"{display_location(a.dest)}"
    )
    return EXIT_OK


def _cmd_package(a) -> int:
    from .services.packages import export_package, merge_package

    study = _open(a.study)
    try:
        if a.package_command == "export":
            e = export_package(study, a.rater, a.out)
            c = e.counts
            print(
                f"wrote {e.path} for {e.rater}: {c['items']} items, {c['anchors']} anchors, {c['pairs']} pairs, "
                f"{e.n_bytes / 1e6:.1f} MB"
            )
            return EXIT_OK
        for f in a.files:
            r = merge_package(study, f)
            if r.already_merged and not any(r.added.values()):
                print(f"merged {f} ({r.rater}): nothing new (this very file was merged before)")
                continue
            what = (
                ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in r.added.items() if v)
                or "nothing new"
            )
            print(
                f"merged {f} ({r.rater}): {what}"
                + (f"; {r.skipped} already here" if r.skipped else "")
            )
            for conflict in r.conflicts:
                print(
                    f"annotator: warning: {f}: {conflict} (kept aside in merge_conflicts, nothing overwritten)",
                    file=sys.stderr,
                )
    finally:
        study.close()
    return EXIT_OK


def _cmd_set(a) -> int:
    import json

    from .services.study import check_key

    check_key(a.key)  # before the study is opened: a typo needs no study to be named
    study = _open(a.study, "read" if a.value is None else "write")
    try:
        if a.value is None:
            print(json.dumps(study.setting(a.key)))
            return EXIT_OK
        try:
            value = json.loads(a.value)
        except json.JSONDecodeError:
            value = a.value  # a bare word is a string (e.g. the pair question)
        study.set_setting(a.key, value)
        print(f"{a.key} = {json.dumps(study.setting(a.key))}")
    finally:
        study.close()
    return EXIT_OK


COMMANDS = {
    "new": _cmd_new,
    "import": _cmd_import,
    "rater": _cmd_rater,
    "judge": _cmd_judge,
    "report": _cmd_report,
    "calibrate": _cmd_calibrate,
    "demo": _cmd_demo,
    "gui": _cmd_gui,
    "status": _cmd_status,
    "set": _cmd_set,
    "assign": _cmd_assign,
    "plan": _cmd_plan,
    "package": _cmd_package,
    "study": _cmd_study,
    "roles": _cmd_roles,
    "adjudicate": _cmd_adjudicate,
    "review": _cmd_review,
    "anchors": _cmd_anchors,
    "export": _cmd_export,
}


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse's own exit: --help (0) or bad usage (2)
        return int(exc.code or 0)
    from .services.memory import set_memory_policy

    set_memory_policy()  # reports and the dashboard: large blocks returned, the heap kept
    if args.selftest:
        from .ui.selftest import run_selftest

        return run_selftest()
    command = args.command or "gui"
    if args.command is None:
        args.study, args.rater = None, None
    try:
        code = COMMANDS[command](args)
        if sys.stdout is not None:
            sys.stdout.flush()  # a closed pipe shows here, not in the flush at exit
        return code
    except BrokenPipeError:
        return _closed_pipe()
    except InputError as exc:
        print(f"annotator: {exc.one_line()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            return _bug(exc)
        # every writer is atomic: a full disk leaves the old files, never half of new ones
        where = f" writing {exc.filename}" if exc.filename else ""
        print(
            f"annotator: the disk is full{where}: nothing was left half-written; free some "
            "space and run it again",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except Exception as exc:
        return _bug(exc)


def _bug(exc: BaseException) -> int:
    """A bug: one line here, the whole traceback in the log."""
    log = _log_crash(exc)
    print(
        f"annotator: internal error ({type(exc).__name__}: {' '.join(str(exc).split())[:160]}); "
        f"this is a bug: please report it with {log}",
        file=sys.stderr,
    )
    return EXIT_BUG


def _closed_pipe() -> int:
    """The reader of our output went away (`annotator roles --print | head`): not a bug, and
    nothing to say. As Python's docs advise (signal module, "Note on SIGPIPE"), stdout is
    pointed at devnull so the interpreter's flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file behind stdout (a test's capture)
        pass
    return EXIT_CLOSED_PIPE


def _log_crash(exc: BaseException) -> str:
    import traceback
    from datetime import datetime

    from platformdirs import user_log_dir

    try:
        folder = Path(user_log_dir("annotator", appauthor=False))
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "crash.log"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"--- {datetime.now().isoformat(timespec='seconds')} {' '.join(sys.argv)}\n")
            fh.write("".join(traceback.format_exception(exc)))
        return str(path)
    except OSError:
        return "the traceback (could not write the crash log)"


if __name__ == "__main__":
    raise SystemExit(main())
