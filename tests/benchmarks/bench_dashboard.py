"""The study lead's dashboard on a large study, end to end (figures in README.md here).

Run: python tests/benchmarks/bench_dashboard.py [--items 20000] [--raters 10] [--new 100]

A SQLite study of items x raters answers (default 20,000 x 10: 200,000 answers, 1,000,000
metric judgements of the ui_mockup rubric, as in bench_agreement.py), answers drawn around a
latent quality per item. It times what the dashboard does:

1. first opening: reading the study (`read_inputs`: the frames) and computing the report;
2. reopening on unchanged data after a restart: the report kept in the study's `.cache/`;
3. after `--new` more answers: the earlier figures shown at once (`read_earlier` and laying
   them out) and the refresh (reading and computing again);

and the peak RSS. The process uses the `annotator` command's memory policy.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench_store import insert_live_answers, study_of_items  # noqa: E402

from annotator.services import dashboard  # noqa: E402
from annotator.services.labeling import LabelSession  # noqa: E402
from annotator.services.study import Study  # noqa: E402

TAGS = ["wrong_screen_type", "missing_required_section", "misspelled_text", "broken_layout"]


def _answers(q: float, rng: np.random.Generator) -> dict:
    n = rng.normal(0, 0.7, 4)
    return {
        "instruction_following": "PASS" if q + n[0] > -0.8 else "FAIL",
        "text_rendering": "PASS" if q + n[1] > -0.5 else "FAIL",
        "layout_hierarchy": int(np.clip(np.rint(2.8 + 1.1 * q + n[2]), 0, 5)),
        "ui_affordance": int(np.clip(np.rint(3.0 + 0.9 * q + n[3]), 0, 5)),
        "failure_tags": [t for t in TAGS if rng.random() < 1 / (1 + np.exp(2.5 + 1.5 * q))],
        "reason": "",
    }


def build(
    folder: Path, n_items: int, n_raters: int, seed: int = 0, session_size: int | None = None
) -> Path:
    """Items in cases of 20 (5 generators x 4 renders); every rater answers every item around
    the item's latent quality, in sessions of `session_size` items as the app stores them, or
    as imported answers without a session (insert_live_answers)."""
    rng = np.random.default_rng(seed)
    rows = [
        {
            "item_id": f"it{i:06d}",
            "case_id": f"case{i // 20:05d}",
            "prompt": f"prompt {i // 20}",
            "generator": f"gen{(i // 4) % 5}",
        }
        for i in range(n_items)
    ]
    study_of_items(folder, rows, [f"rater{r:02d}" for r in range(n_raters)])
    q = rng.normal(0, 1, n_items)
    insert_live_answers(
        folder, lambda _r, i: json.dumps(_answers(q[i], rng), sort_keys=True), session_size
    )
    return folder


def add_answers(study: Study, n: int) -> None:
    """n answers through the app's own session (a new rater works through the queue)."""
    rng = np.random.default_rng(1)
    study.add_rater("late")
    session = LabelSession(study, "late")
    for _ in range(n):
        session.submit(session.next(), _answers(float(rng.normal()), rng), 3000)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(fn, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN201
    t = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=20_000)
    ap.add_argument("--raters", type=int, default=10)
    ap.add_argument("--new", type=int, default=100)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    # imported here: the version benchmarks import this file beside older code without it
    from annotator.services.memory import set_memory_policy

    set_memory_policy()
    with tempfile.TemporaryDirectory() as tmp:
        folder, t_build = timed(build, Path(tmp) / "study", args.items, args.raters)
        study = Study.open(folder)
        nb = dict(n_boot=args.n_boot, seed=0)
        inputs, t_read = timed(dashboard.read_inputs, study, **nb)
        rows = len(inputs.frames.judgements)
        model, t_compute = timed(dashboard.compute, inputs)
        dashboard.CACHE.clear()  # a restart
        kept, t_kept_read = timed(dashboard.read_inputs, study, **nb)
        _, t_kept_show = timed(dashboard.compute, kept)
        add_answers(study, args.new)
        dashboard.CACHE.clear()
        earlier, t_earlier_read = timed(dashboard.read_earlier, study, **nb)
        _, t_earlier_show = timed(dashboard.compute, earlier)
        again, t_reread = timed(dashboard.read_inputs, study, **nb)
        _, t_recompute = timed(dashboard.compute, again)
        study.close()
    print(f"study: {args.items:,} items x {args.raters} raters = {rows:,} metric judgements")
    print(f"  built in {t_build:.1f} s")
    print(f"first opening: read {t_read:.1f} s + compute {t_compute:.1f} s")
    print(f"after a restart, unchanged: read {t_kept_read:.2f} s + show {t_kept_show:.2f} s")
    print(
        f"after {args.new} new answers: earlier figures on screen in "
        f"{t_earlier_read + t_earlier_show:.2f} s (read {t_earlier_read:.2f} + lay out "
        f"{t_earlier_show:.2f}); refreshed in {t_reread + t_recompute:.1f} s (read "
        f"{t_reread:.1f} + compute {t_recompute:.1f})"
    )
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
