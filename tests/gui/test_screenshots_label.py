"""Screenshots of the main window and the label view (gate+scale rubric and an
editing case with inputs and mask), saved to packaging/screenshots/."""

from __future__ import annotations

from pathlib import Path

from gui_support import RATER
from PIL import Image

from annotator.ui.main_window import MainWindow
from annotator.ui.settings import AppSettings

OUT = Path(__file__).resolve().parents[2] / "packaging" / "screenshots"
SIZE = (1400, 900)


def _save(widget, name: str) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / name
    assert widget.grab().save(str(path))
    img = Image.open(path)
    assert img.size[0] >= SIZE[0] - 2 and img.size[1] >= SIZE[1] - 2
    # A real picture, not a blank window: many distinct colours.
    assert len(img.convert("RGB").getcolors(1 << 20) or []) > 50
    return path


def _label_window(qtbot, folder) -> MainWindow:
    w = MainWindow(AppSettings(), study=folder, rater=RATER)
    qtbot.addWidget(w)
    w.resize(*SIZE)
    w.show()
    view = w.current_view
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=5000)
    qtbot.wait(50)
    return w


def test_screenshot_main_window(qtbot, ui_study):
    w = MainWindow(AppSettings(), study=ui_study.folder)
    qtbot.addWidget(w)
    w.resize(*SIZE)
    w.show()
    assert w.mode == "start" or w.mode == "label"
    w.show_start()
    qtbot.wait(50)
    path = _save(w, "main_window.png")
    print(f"\nscreenshots in {OUT}")
    assert path.exists()
    w.close()


def test_screenshot_label_gate_and_scale(qtbot, ui_study):
    w = _label_window(qtbot, ui_study.folder)
    view = w.current_view
    # Part-answered, so the selected states and the live verdict show.
    for key in ("P", "4"):
        view.apply_action({"P": "pass", "4": "value_4"}[key])
    path = _save(w, "label_ui_mockup.png")
    print(f"\nscreenshots in {OUT}")
    assert path.exists()
    w.close()


def test_screenshot_label_editing_case(qtbot, logo_study):
    w = _label_window(qtbot, logo_study.folder)
    view = w.current_view
    assert len(view.item_panel.views()) == 2 and view.item_panel.has_mask
    path = _save(w, "label_logo_edit.png")
    print(f"\nscreenshots in {OUT}")
    assert path.exists()
    w.close()
