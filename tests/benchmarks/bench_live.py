"""The live dashboard's refresh against a full recomputation, in one run.

Run: python tests/benchmarks/bench_live.py [--items 20000] [--raters 10] [--new 100] [--rounds 2]

The study of bench_dashboard.py (items x raters answers of the ui_mockup rubric: 20,000 x 10 =
1,000,000 metric judgements). After `--new` answers through the app's own session, it times,
alternating `--rounds` times so that both see the same machine:

- before (what a refresh did until now): read every answer (`build_frames`) and compute the
  full report (`build_report`, n_boot 1000);
- live: bring the frames up to date (`live_frames.refresh`: the new answers only) and compute
  the live estimate (`build_report(intervals_from=the last full report)`: no resampling).

It prints the seconds of each part, the live refresh as a share of the full one, and the plain
`krippendorff.alpha` call of bench_agreement.py on the same answers as the yardstick.

Then the first live estimate after the app starts again, alternating the
same way: before, the frames read whole (`read_live`); after, read back from the frames cache
(`frames_cache.load`, kept once before the new answers) and brought up to date (`refresh`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_dashboard import _answers, build  # noqa: E402

from annotator.services import frames_cache  # noqa: E402
from annotator.services.frames import build_frames  # noqa: E402
from annotator.services.labeling import LabelSession  # noqa: E402
from annotator.services.live_frames import read_live, refresh  # noqa: E402
from annotator.services.study import DB_NAME, DEFAULT_SETTINGS, Study  # noqa: E402
from annotator.stats.report_model import build_report  # noqa: E402


def add_answers(study: Study, rater: str, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    study.add_rater(rater)
    session = LabelSession(study, rater)
    for _ in range(n):
        session.submit(session.next(), _answers(float(rng.normal()), rng), 3000)


def alpha_yardstick(n_judgements: int) -> float:
    """bench_agreement.py's yardstick: one plain krippendorff.alpha call on an ordinal matrix of
    as many values as the study has metric judgements (10 raters)."""
    import krippendorff
    from bench_agreement import ordinal_matrix

    data = ordinal_matrix(max(1, n_judgements // 10), 10)
    t = time.perf_counter()
    krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--raters", type=int, default=10)
    ap.add_argument("--new", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    # imported here: the version benchmarks import this file beside older code without it
    from annotator.services.memory import set_memory_policy

    set_memory_policy()
    with tempfile.TemporaryDirectory() as tmp:
        folder = build(Path(tmp) / "study", args.items, args.raters)
        st = Study.open(folder)
        settings = {**DEFAULT_SETTINGS, **st.db.all_settings()}
        live = read_live(st.db, st.rubric, st.name, settings)
        exact = build_report(live.frames, n_boot=args.n_boot)
        yard = alpha_yardstick(len(live.frames.judgements))
        print(
            f"study: {args.items:,} items x {args.raters} raters = "
            f"{len(live.frames.judgements):,} metric judgements; yardstick: one plain "
            f"krippendorff.alpha on as many values {yard:.2f} s"
        )
        for r in range(args.rounds):
            add_answers(st, f"late{r}", args.new, r)
            t0 = time.perf_counter()
            frames = build_frames(st.db, st.rubric, st.name, settings)
            t1 = time.perf_counter()
            full = build_report(frames, n_boot=args.n_boot)
            t2 = time.perf_counter()
            live = refresh(live, st.db, st.rubric, st.name, settings)
            t3 = time.perf_counter()
            build_report(live.frames, n_boot=args.n_boot, intervals_from=exact)
            t4 = time.perf_counter()
            before, after = t2 - t0, t4 - t2
            print(
                f"round {r + 1}, +{args.new} answers ({live.how}, {live.n_new} read): "
                f"before: read {t1 - t0:.2f} + report {t2 - t1:.2f} = {before:.2f} s; "
                f"live: refresh {t3 - t2:.2f} + estimate {t4 - t3:.2f} = {after:.2f} s "
                f"({after / before:.0%} of before; {before / yard:.0f}x and {after / yard:.0f}x "
                "the yardstick)"
            )
            exact = full  # the background full computation's result, as the dashboard keeps it
        restart(st, Path(tmp) / "study", settings, args)
        st.close()


def restart(st: Study, folder: Path, settings: dict, args: argparse.Namespace) -> None:
    """The frames of the first live estimate after a restart: read whole, or read back from the
    frames cache and brought up to date."""
    db_file = folder / DB_NAME
    t = time.perf_counter()
    kept = frames_cache.keep(folder, db_file, read_live(st.db, st.rubric, st.name, settings))
    print(f"frames kept in {time.perf_counter() - t:.2f} s (a full read and the keeping)")
    del kept
    for r in range(args.rounds):
        add_answers(st, f"again{r}", args.new, 100 + r)
        t0 = time.perf_counter()
        whole = read_live(st.db, st.rubric, st.name, settings)
        t1 = time.perf_counter()
        back = frames_cache.load(folder, db_file, st.db, st.rubric, st.name)
        t2 = time.perf_counter()
        assert back is not None
        live = refresh(back, st.db, st.rubric, st.name, settings)
        t3 = time.perf_counter()
        assert len(live.frames.judgements) == len(whole.frames.judgements)
        print(
            f"restart {r + 1}, +{args.new * (r + 1)} answers since kept: read whole "
            f"{t1 - t0:.2f} s; kept frames read back {t2 - t1:.2f} + refresh ({live.how}, "
            f"{live.n_new} read) {t3 - t2:.2f} = {t3 - t1:.2f} s ({(t3 - t1) / (t1 - t0):.0%})"
        )


if __name__ == "__main__":
    main()
