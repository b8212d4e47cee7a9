"""The answer form on screen: the focus frame follows the keys (checked by repaints and,
when Xvfb is there, by the pixels of a real X11 window), the focused metric scrolls into
view at the default window size, a likert row, and the mask overlay off the UI thread."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gui_support import RATER, free_display, open_window, wait_ready
from PySide6.QtCore import QEvent, QObject, QPoint, Qt

from annotator.ingest.rubrics import load_rubric
from annotator.ui.keymap import Keymap
from annotator.ui.rubric_form import RubricForm

CHILD = Path(__file__).with_name("xcb_focus_child.py")


class PaintCounter(QObject):
    def __init__(self, widgets) -> None:  # noqa: ANN001
        super().__init__()
        self.counts = {id(w): 0 for w in widgets}
        for w in widgets:
            w.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802, ANN001
        if event.type() == QEvent.Type.Paint and id(obj) in self.counts:
            self.counts[id(obj)] += 1
        return False

    def of(self, w) -> int:  # noqa: ANN001
        return self.counts[id(w)]


def test_focus_frame_is_repainted_when_the_focus_moves(qtbot, ui_study):
    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    rows = view.form.rows
    counter = PaintCounter(rows)
    for key, frm, to in (
        (Qt.Key.Key_Down, 0, 1),
        (Qt.Key.Key_Down, 1, 2),
        (Qt.Key.Key_Up, 2, 1),
        (Qt.Key.Key_P, 2, 3),
    ):
        view.form.focus_metric(rows[frm].rubric_metric.key)
        qtbot.waitUntil(lambda f=frm: counter.of(rows[f]) > 0)
        before = (counter.of(rows[frm]), counter.of(rows[to]))
        qtbot.keyClick(view, key)
        assert view.form.focused_row() is rows[to]
        # Both the row losing the frame and the row gaining it are painted again.
        qtbot.waitUntil(
            lambda f=frm, t=to, b=before: counter.of(rows[f]) > b[0] and counter.of(rows[t]) > b[1],
            timeout=2000,
        )
    w.close()


def test_focused_metric_scrolls_into_view_at_the_default_size(qtbot, ui_study):
    w = open_window(qtbot, ui_study.folder, size=(1100, 720))
    view = w.current_view
    wait_ready(qtbot, view)
    port = view.form_scroll.viewport()

    def fully_visible(widget) -> bool:  # noqa: ANN001
        top = widget.mapTo(port, QPoint(0, 0)).y()
        return top >= 0 and (
            top + widget.height() <= port.height() or widget.height() > port.height()
        )

    for _ in range(len(view.form._answerable)):
        qtbot.keyClick(view, Qt.Key.Key_Down)
        row = view.form.focused_row()
        qtbot.waitUntil(lambda r=row: fully_visible(r), timeout=2000)
    qtbot.keyClick(view, Qt.Key.Key_R)
    edit = view.form.reason_edit()
    assert edit.hasFocus()
    qtbot.waitUntil(lambda: fully_visible(edit), timeout=2000)
    w.close()


LIKERT = """
id = "likert_demo"
title = "Likert demo"
instructions = "Rate it."
[[metrics]]
key = "overall"
kind = "likert"
label = "Overall quality"
points = ["Very poor", "Poor", "Fair", "Good", "Very good"]
[[metrics]]
key = "ok"
kind = "gate"
label = "Acceptable"
"""


def test_likert_row_shows_every_point_and_digits_pick_one(qtbot, tmp_path):
    path = tmp_path / "likert.toml"
    path.write_text(LIKERT, encoding="utf-8")
    rubric = load_rubric(path)
    form = RubricForm(rubric, Keymap())
    qtbot.addWidget(form)
    row = form.rows[0]
    assert [b.text() for b in row.buttons.values()] == [
        "1  Very poor",
        "2  Poor",
        "3  Fair",
        "4  Good",
        "5  Very good",
    ]
    assert form.focused_key() == "overall"
    assert not form.apply("value_7")  # no seventh point
    assert form.apply("value_4") and form.answers()["overall"] == 4
    assert form.focused_key() == "ok"  # answered: the focus moves on
    form.apply("pass")
    assert form.missing() == [] and form.answers() == {"overall": 4, "ok": "PASS"}
    form.focus_metric("overall")
    form.apply("cannot_judge")
    assert form.answers()["overall"] == "cannot_judge"


STEPPED = """id = "stepped"
title = "Points between whole numbers"
[[metrics]]
key = "faithful"
kind = "scale"
label = "Faithful"
min = 0
max = 1
step = 0.5
levels = { "0" = "Not at all", "0.5" = "Partly", "1" = "Fully" }
"""


def test_a_scale_with_a_step_is_answered_by_the_place_of_its_point(qtbot, tmp_path):
    path = tmp_path / "stepped.toml"
    path.write_text(STEPPED, encoding="utf-8")
    form = RubricForm(load_rubric(path), Keymap())
    qtbot.addWidget(form)
    row = form.rows[0]
    assert [b.text() for b in row.buttons.values()] == ["0 (1)", "0.5 (2)", "1 (3)"]
    assert row.own_keys() == ["1-3"]
    assert not form.apply("value_4")  # three points: no fourth
    assert form.apply("value_2") and form.answers()["faithful"] == 0.5
    form.focus_metric("faithful")
    assert form.apply("value_1") and form.answers()["faithful"] == 0
    assert row.level_labels[0.5].text() == "0.5  Partly"


def test_mask_overlay_is_computed_off_the_ui_thread(qtbot, logo_study, monkeypatch):
    import annotator.ui.decode as decode

    threads: list[str] = []
    real = decode.overlay_image

    def spy(data: bytes):  # noqa: ANN202
        threads.append(threading.current_thread().name)
        return real(data)

    monkeypatch.setattr(decode, "overlay_image", spy)
    w = open_window(qtbot, logo_study.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=5000)
    assert view.item_panel.has_mask and all(v.has_mask for v in view.item_panel.views())
    assert threads and threading.main_thread().name not in threads
    w.close()


# -- the same check on real pixels, in a real X11 window ------------------------------
@pytest.fixture()
def xvfb():
    if shutil.which("Xvfb") is None:
        print("\nskipped: Xvfb is not installed (apt-get install xvfb)")
        pytest.skip("Xvfb is not installed (apt-get install xvfb)")
    n = free_display(90, 140)
    proc = subprocess.Popen(
        ["Xvfb", f":{n}", "-screen", "0", "1280x900x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    sock = Path(f"/tmp/.X11-unix/X{n}")
    deadline = time.monotonic() + 10
    while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if not sock.exists():
        proc.kill()
        pytest.skip("Xvfb did not start")
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(sock))
        s.close()
        yield f":{n}"
    finally:
        proc.terminate()
        proc.wait(5)


def test_focus_frame_moves_on_a_real_x11_screen(ui_study, tmp_path, xvfb):
    env = dict(
        os.environ, DISPLAY=xvfb, QT_QPA_PLATFORM="xcb", ANNOTATOR_SETTINGS=str(tmp_path / "x.ini")
    )
    r = subprocess.run(
        [sys.executable, str(CHILD), str(ui_study.folder), RATER],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    if r.returncode == 3 or "could not load the Qt platform plugin" in r.stderr:
        reason = r.stdout.strip() or (
            "the xcb platform plugin cannot load (Debian: libxcb-cursor0 and the "
            "other libxcb-* packages listed in tests/benchmarks/ui.md)"
        )
        print(f"\nskipped: {reason}")
        pytest.skip(reason)
    assert r.returncode == 0, r.stderr[-3000:]
    steps = json.loads(r.stdout.strip().splitlines()[-1])
    assert len(steps) >= 4
    for step in steps:
        # Exactly one frame on screen, around the metric the keys act on.
        assert step["framed"] == [step["focused"]], step
