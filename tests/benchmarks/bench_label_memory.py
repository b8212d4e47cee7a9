"""Memory while labelling: the app's proportional set size (PSS) after 10 submits and after
200, on a demo-like study (540 x 1140 mockups, anchors seeded every 15 items as in the demo).

    python tests/benchmarks/bench_label_memory.py [--items 200] [--platform offscreen|xcb]

The label view runs in this process as the app runs it (the main window, its database worker
and decoder pool, the look-ahead); the benchmark answers each item through the view's own
submit (what Enter does) after a short pause, and reads /proc/self/smaps_rollup after letting
the app go idle (0.5 s of events, a gc). Target: PSS after 200 submits within
50 MB of PSS after 10. Linux only (smaps_rollup).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "gui"))


def pss_mb() -> float:
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no Pss line in /proc/self/smaps_rollup")


def build(root: Path, items: int) -> Path:
    from annotator.demo import scenario
    from annotator.services.study import Study

    variants = max(1, -(-items // 18) + 1)  # 18 case x generator pairs; a few spare items
    files = scenario.write_demo_inputs(root / "inputs", variants_per_case=variants)
    study = Study.create(root / "study", REPO / "rubrics" / "ui_mockup.toml")
    try:
        study.import_items(files.manifest)
        study.import_anchors(REPO / "anchors" / "ui_mockup" / "anchors.jsonl")
        study.db.set_setting("anchor_every", 15)
        study.add_rater("bench-rater")
    finally:
        study.close()
    return root / "study"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--platform", default=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    ap.add_argument("--pause-ms", type=int, default=60)
    a = ap.parse_args()
    os.environ["QT_QPA_PLATFORM"] = a.platform
    os.environ.setdefault("ANNOTATOR_SETTINGS", str(Path(tempfile.mkdtemp()) / "s.ini"))
    from gui_support import complete_answers
    from PySide6.QtCore import QCoreApplication, QTimer

    import annotator.ui  # noqa: F401 - the PySide6 refcount fix first
    from annotator.ui.app import make_app
    from annotator.ui.main_window import MainWindow
    from annotator.ui.session_view import SessionView
    from annotator.ui.settings import AppSettings

    # memory over submits, not a rater's looking: the exposure rule is off
    SessionView.exposure_minimum = staticmethod(lambda _snapshot: 0)
    t0 = time.monotonic()
    folder = build(Path(tempfile.mkdtemp(prefix="bench-mem-")), a.items)
    print(f"study built in {time.monotonic() - t0:.0f} s", flush=True)
    app = make_app()
    w = MainWindow(AppSettings(), study=folder, rater="bench-rater")
    w.resize(1280, 820)
    w.show()

    def spin(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            QCoreApplication.processEvents()
            time.sleep(0.005)

    while w.current_view is None or getattr(w.current_view, "state", "") != "ready":
        spin(0.05)
    view = w.current_view
    spin(1.0)
    gc.collect()
    marks = {0: pss_mb()}
    want = {10, 25, 50, 100, 150, 200, a.items}
    done = 0
    while done < a.items:
        if view.state != "ready":
            spin(0.01)
            continue
        spin(a.pause_ms / 1000)
        view.submit_answers(complete_answers(view.rubric, done))
        done += 1
        if done in want:
            while view.state not in ("ready", "done"):
                spin(0.01)
            spin(0.5)
            gc.collect()
            marks[done] = pss_mb()
            print(f"after {done:4d} submits: PSS {marks[done]:6.1f} MB", flush=True)
        if view.state == "done":
            break
    QTimer.singleShot(0, app.quit)
    w.shutdown()
    print(f"platform {a.platform}; at the label view {marks[0]:.1f} MB")
    if 10 in marks and done in marks:
        print(f"growth 10 -> {done}: {marks[done] - marks[10]:+.1f} MB (target: within 50 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
