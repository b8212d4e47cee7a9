"""Child-process driver for the kill test: opens the label view offscreen and
answers items through the view's own submit path (what Enter does), printing
each committed judgement id as ``J <id>`` the moment the commit is reported.

    python tests/gui/label_driver.py STUDY RATER [--delay-ms N]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gui_support import complete_answers  # noqa: E402

from annotator.ui.app import make_app  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("study")
    ap.add_argument("rater")
    ap.add_argument("--delay-ms", type=int, default=20)
    a = ap.parse_args()
    app = make_app()
    from gui_support import hold_study
    from PySide6.QtCore import QTimer

    from annotator.ui.label_view import LabelView
    from annotator.ui.settings import AppSettings
    from annotator.ui.worker import DbWorker

    # it answers --delay-ms after each item (a kill test, not a rater): the exposure rule is off
    LabelView.exposure_minimum = staticmethod(lambda _snapshot: 0)
    worker = DbWorker()
    snapshot = hold_study(worker, Path(a.study))
    view = LabelView(snapshot, a.rater, worker, AppSettings())
    view.resize(1200, 800)
    view.show()
    count = {"n": 0}

    def answer() -> None:
        if view.state == "ready":
            count["n"] += 1
            view.submit_answers(complete_answers(view.rubric, count["n"]))

    view.itemShown.connect(lambda: QTimer.singleShot(a.delay_ms, answer))
    view.submitted.connect(lambda jid: print(f"J {jid}", flush=True))
    view.finished.connect(lambda: (print("DONE", flush=True), app.quit()))
    print("READY", flush=True)
    code = app.exec()
    view.shutdown()
    worker.stop()  # closes the study on its own thread
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
