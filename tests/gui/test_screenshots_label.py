"""Screenshots of the main window and the label view (gate+scale rubric and an
editing case with inputs and mask), saved to the `screenshot_dir` (a temp folder
unless `--screenshots DIR`; the copies in the README and docs/raters.md are refreshed
with `--screenshots packaging/screenshots`, CONTRIBUTING.md)."""

from __future__ import annotations

from pathlib import Path

from gui_support import RATER, open_window
from PIL import Image

SIZE = (1400, 900)


def _save(widget, out: Path, name: str) -> Path:
    path = out / name
    assert widget.grab().save(str(path))
    img = Image.open(path)
    assert img.size[0] >= SIZE[0] - 2 and img.size[1] >= SIZE[1] - 2
    # A real picture, not a blank window: many distinct colours.
    assert len(img.convert("RGB").getcolors(1 << 20) or []) > 50
    return path


def _label_window(qtbot, folder):  # noqa: ANN001, ANN202
    w = open_window(qtbot, folder, RATER, size=SIZE)
    view = w.current_view
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=5000)
    return w


def test_screenshot_main_window(qtbot, ui_study, screenshot_dir):
    from annotator.ui.main_window import MainWindow
    from annotator.ui.settings import AppSettings

    first = MainWindow(AppSettings())  # a first start: nothing open yet
    qtbot.addWidget(first)
    first.resize(*SIZE)
    first.show()
    assert _save(first, screenshot_dir, "start_first.png").exists()
    first.close()
    w = open_window(qtbot, ui_study.folder, None, size=SIZE)
    w.show_start()
    assert _save(w, screenshot_dir, "main_window.png").exists()
    w.close()


def test_screenshot_label_gate_and_scale(qtbot, ui_study, screenshot_dir):
    w = _label_window(qtbot, ui_study.folder)
    view = w.current_view
    # Part-answered, so the selected states and the live verdict show.
    for action in ("pass", "value_4"):
        view.apply_action(action)
    assert _save(w, screenshot_dir, "label_ui_mockup.png").exists()
    w.close()


def test_screenshot_label_editing_case(qtbot, logo_study, screenshot_dir):
    w = _label_window(qtbot, logo_study.folder)
    view = w.current_view
    assert len(view.item_panel.views()) == 2 and view.item_panel.has_mask
    assert _save(w, screenshot_dir, "label_logo_edit.png").exists()
    w.close()
