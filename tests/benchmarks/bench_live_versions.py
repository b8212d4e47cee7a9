"""The live estimate and the full report of two versions of the code, alternating in one run.

Run: python tests/benchmarks/bench_live_versions.py --before REV [--items 2000] [--rounds 3]

The study of bench_dashboard.py (items x 10 raters of the ui_mockup rubric: 2,000 items =
100,000 metric judgements, 20,000 = 1,000,000), 100 new answers through the app's own session,
the live frames brought up to date (`live_frames.refresh`) and kept in a pickle. Then, round by
round and version by version (`--before`: a git revision checked out in a temporary worktree;
after: this checkout), a fresh process loads the same frames and times the live estimate
(`build_report(intervals_from=the last full report)`, the median of three), the dashboard's
view of it with its charts drawn afresh (`build_view`, what `dashboard_live.compute_live` did
next before the live view took the last full computation's charts) and the
full report (n_boot 1000). Both versions see the same frames and the same machine, turn by turn.
Reading the new answers (`live_frames.refresh`) is bench_live.py's.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import build  # noqa: E402
from bench_live import add_answers  # noqa: E402
from versions import checkout_before, run_timed  # noqa: E402

from annotator.services.live_frames import read_live, refresh  # noqa: E402
from annotator.services.study import DEFAULT_SETTINGS, Study  # noqa: E402
from annotator.stats.report_model import build_report  # noqa: E402

# what each process runs: the frames and the last full report from the pickle, three live
# estimates (the median counts) and one full report; seconds on stdout as JSON
_TIMED = """
import json, pickle, statistics, sys, time
from annotator.services import memory
from annotator.stats.report_model import build_report
# the memory policy this version's `annotator` command sets at start
getattr(memory, "set_memory_policy", memory.return_large_blocks_to_the_os)()
with open(sys.argv[1], "rb") as f:
    saved = pickle.load(f)
from annotator.reports import charts as _charts
from annotator.reports.html_report import build_view
from annotator.stats.live_estimate import stamp_carried
live, view = [], []
for _ in range(3):
    t = time.perf_counter()
    report = build_report(saved["frames"], n_boot=1000, intervals_from=saved["exact"])
    live.append(time.perf_counter() - t)
    # a chart drawn from the same data comes from the memo: a refresh's data is new, so the
    # charts are drawn each time, as a refresh draws them (the memo kept them before)
    getattr(_charts, "_drawn", {}).clear()
    # the generators' cells are left in their memo (reports/cell_memo.py), as a refresh finds
    # the cells of the one before: the first view makes them, the median one reuses them
    t = time.perf_counter()
    stamp_carried(report, "14:02")
    build_view(report, with_charts=True, generated_at="-")
    view.append(time.perf_counter() - t)
t = time.perf_counter()
build_report(saved["frames"], n_boot=1000)
full = time.perf_counter() - t
print(json.dumps({"live": statistics.median(live), "view": statistics.median(view), "full": full}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="git revision of the code before")
    ap.add_argument("--items", type=int, default=2_000)
    ap.add_argument("--raters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        checkout_before(args.before, Path(tmp) / "before") as old,
    ):
        st = Study.open(build(Path(tmp) / "study", args.items, args.raters))
        settings = {**DEFAULT_SETTINGS, **st.db.all_settings()}
        live = read_live(st.db, st.rubric, st.name, settings)
        exact = build_report(live.frames, n_boot=1000)
        add_answers(st, "late", 100, 0)
        live = refresh(live, st.db, st.rubric, st.name, settings)
        st.close()
        saved = Path(tmp) / "frames.pkl"
        with saved.open("wb") as f:
            pickle.dump({"frames": live.frames, "exact": exact}, f)
        n = len(live.frames.judgements)
        print(f"{n:,} metric judgements; before = {args.before}, after = this checkout")
        runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for r in range(args.rounds):
            for name, checkout in (("before", old), ("after", REPO)):
                t = run_timed(checkout, _TIMED, str(saved))
                runs[name].append(t)
                print(
                    f"round {r + 1} {name:6s}: live {t['live']:.3f} s (+ view and charts "
                    f"{t['view']:.3f} s), full {t['full']:.2f} s ({t['live'] / t['full']:.1%})"
                )
        for name, ts in runs.items():
            lv = statistics.median(t["live"] for t in ts)
            vw = statistics.median(t["view"] for t in ts)
            fu = statistics.median(t["full"] for t in ts)
            print(
                f"{name}: median live {lv:.3f} s (+ view and charts {vw:.3f} s), full "
                f"{fu:.2f} s ({lv / fu:.1%})"
            )


if __name__ == "__main__":
    main()
