"""The dashboard's whole live refresh of two versions of the code, alternating in one run.

Run: python tests/benchmarks/bench_live_refresh.py --before REV [--items 20000] [--rounds 2]

What a rater's 100 new answers cost the dashboard that follows the study, end to end, as its
two workers and its interface do it: `read_live_inputs` (the database worker: the new answers
read into the kept frames, the calibrations, the tiles; the team's progress too, in a version
before the dashboard read it apart), `compute_live` (the compute worker: the live estimate, its
"as of" stamps, the view and its charts, the model; the charts decoded as the version's
dashboard decodes them) with the team's progress read meanwhile on the database worker (where
the version reads it apart), and `section_page` (the interface's thread: the sections as
widgets, offscreen Qt). The study is
bench_dashboard.py's (items x 10 raters of the ui_mockup rubric: 20,000 items = 1,000,000
metric judgements).

Round by round and version by version (`--before`: a git revision checked out in a temporary
worktree; after: this checkout), a fresh process sets the version's memory policy as its
`annotator` command does, opens its own copy of the study, reads it (`read_live_inputs` with
nothing kept), computes the full report (n_boot 1000: the exact figures the estimate carries
from, and the yardstick) and its view (as the dashboard shows it) on a compute worker thread, as
the dashboard does (the estimate too: a thread's memory is not the main thread's), then
adds 100 answers through the app's own session and times the refresh, `--refreshes` times
(3; more of them steady the median: a refresh at a million judgements varies by a tenth). It
prints the median refresh, its parts, and its share of the full report; and the processor time
of each (every thread of the process, `time.process_time`: above the wall time, as numpy's
products and the team's progress on the database worker use the second core), a second reading
of the same ratio on a shared VM whose wall times moved by a fifth from run to run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import build  # noqa: E402
from versions import checkout_before, run_timed  # noqa: E402

_TIMED = """
import json, os, statistics, sys, time
from datetime import datetime, UTC
from pathlib import Path
# this version's code first: bench_live.py puts this checkout's on the path when imported
import annotator
from annotator.services import memory
from annotator.services.study import Study
from annotator.services.dashboard_live import compute_live, read_live_inputs
from annotator.stats.report_model import build_report
sys.path.insert(0, sys.argv[2])
from bench_live import add_answers
assert annotator.__file__.startswith(os.getcwd()), annotator.__file__
# the memory policy this version's `annotator` command sets at start
getattr(memory, "set_memory_policy", memory.return_large_blocks_to_the_os)()
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtWidgets import QApplication
from annotator.ui.decode import decode_image
from annotator.ui.section_widgets import section_page
try:  # the charts decoded as this version's dashboard decodes them
    from annotator.ui.dashboard_jobs import decoded_charts
except ImportError:  # a version that decoded every chart at every refresh
    def decoded_charts(model):
        return {c.name: decode_image(c.png) for c in model.charts()}
app = QApplication([])
import inspect
from concurrent.futures import ThreadPoolExecutor
# the dashboard's compute worker: the full report and the live estimate are computed there
work = ThreadPoolExecutor(1)
st = Study.open(Path(sys.argv[1]))
first = read_live_inputs(st, None, {}, datetime.now(UTC), n_boot=1000, seed=0)
t, c = time.perf_counter(), time.process_time()
exact = work.submit(build_report, first.frames.frames, n_boot=1000).result()
full, full_cpu = time.perf_counter() - t, time.process_time() - c
# the dashboard showed the full computation: its view and charts were drawn then
from annotator.reports.html_report import build_view
work.submit(build_view, exact, with_charts=True, generated_at="-").result()
from annotator.services import dashboard as dash
# a version that reads the team's progress apart reads it as the dashboard does: on the
# database worker, while the compute worker computes the estimate
apart = "team" in inspect.signature(read_live_inputs).parameters
db = ThreadPoolExecutor(1)  # the database worker
frames, read, live, shown, cpu = first.frames, [], [], [], []
for r in range(int(sys.argv[3])):
    add_answers(st, f"late{r}", 100, r)
    t = time.perf_counter()
    c0 = time.process_time()
    more = {"team": False} if apart else {}
    inputs = db.submit(
        read_live_inputs, st, frames, exact, datetime.now(UTC), n_boot=1000, seed=0, **more
    ).result()
    t1 = time.perf_counter()
    team = db.submit(dash.team_section, st) if apart else None
    model = work.submit(compute_live, inputs).result()
    charts = work.submit(decoded_charts, model).result()
    if team is not None:
        model = dash.with_team(model, team.result())
    t2 = time.perf_counter()
    page, _heads = section_page(model.sections, charts, 1000)  # the interface's thread
    t3 = time.perf_counter()
    cpu.append(time.process_time() - c0)
    page.deleteLater()
    assert inputs.frames.how == "delta", inputs.frames.how
    read.append(t1 - t)
    live.append(t2 - t1)
    shown.append(t3 - t2)
    frames = inputs.frames
st.close()
print(json.dumps({"read": statistics.median(read), "live": statistics.median(live),
                  "shown": statistics.median(shown), "full": full,
                  "cpu": statistics.median(cpu), "full_cpu": full_cpu}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="git revision of the code before")
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--raters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument(
        "--sessions",
        type=int,
        default=0,
        help="answers in labelling sessions of this many items, as the app stores them "
        "(0: imported answers, without a session)",
    )
    ap.add_argument(
        "--refreshes", type=int, default=3, help="refreshes timed per process (their median)"
    )
    args = ap.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        checkout_before(args.before, Path(tmp) / "before") as old,
    ):
        source = build(
            Path(tmp) / "study", args.items, args.raters, session_size=args.sessions or None
        )
        kind = f"sessions of {args.sessions}" if args.sessions else "imported, no session"
        print(f"{args.items:,} items x {args.raters} raters ({kind}); before = {args.before}")
        runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for r in range(args.rounds):
            for name, checkout in (("before", old), ("after", REPO)):
                copy = Path(tmp) / f"copy-{name}-{r}"
                shutil.copytree(source, copy)
                t = run_timed(
                    checkout,
                    _TIMED,
                    str(copy),
                    str(REPO / "tests" / "benchmarks"),
                    str(args.refreshes),
                )
                shutil.rmtree(copy)
                runs[name].append(t)
                whole = t["read"] + t["live"] + t["shown"]
                print(
                    f"round {r + 1} {name:6s}: refresh {whole:.3f} s (read {t['read']:.3f} + "
                    f"estimate and view {t['live']:.3f} + laid out {t['shown']:.3f}), full "
                    f"{t['full']:.2f} s ({whole / t['full']:.1%}); processor time "
                    f"{t['cpu']:.3f} s of {t['full_cpu']:.2f} s ({t['cpu'] / t['full_cpu']:.1%})",
                    flush=True,
                )
        for name, ts in runs.items():
            rd, lv, sh, fu, cp, fc = (
                statistics.median(t[k] for t in ts)
                for k in ("read", "live", "shown", "full", "cpu", "full_cpu")
            )
            print(
                f"{name}: median refresh {rd + lv + sh:.3f} s (read {rd:.3f} + estimate and "
                f"view {lv:.3f} + laid out {sh:.3f}), full {fu:.2f} s "
                f"({(rd + lv + sh) / fu:.1%}); processor time {cp:.3f} s of {fc:.2f} s "
                f"({cp / fc:.1%})"
            )


if __name__ == "__main__":
    main()
