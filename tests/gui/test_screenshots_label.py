"""Screenshots of the main window and the label view (gate+scale rubric and an
editing case with inputs and mask), saved to the `screenshot_dir` (a temp folder
unless `--screenshots DIR`; the copies in the README and docs/raters.md are refreshed
with `--screenshots packaging/screenshots`, CONTRIBUTING.md). Each test checks what the
picture shows (`save_screenshot`: not blank, the expected words on screen)."""

from __future__ import annotations

from gui_support import RATER, RUBRICS, open_window, save_screenshot
from PIL import Image

from annotator.ingest.rubrics import load_rubric

SIZE = (1400, 900)


def _full_size(path) -> None:  # noqa: ANN001
    img = Image.open(path)
    assert img.size[0] >= SIZE[0] - 2 and img.size[1] >= SIZE[1] - 2


def _label_window(qtbot, folder):  # noqa: ANN001, ANN202
    w = open_window(qtbot, folder, RATER, size=SIZE)
    view = w.current_view
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=5000)
    return w


def _metric_labels(rubric_file: str) -> tuple[str, ...]:
    return tuple(m.label for m in load_rubric(RUBRICS / rubric_file).metrics)


def test_screenshot_main_window(qtbot, ui_study, screenshot_dir):
    from annotator.ui.main_window import MainWindow
    from annotator.ui.settings import AppSettings

    first = MainWindow(AppSettings())  # a first start: nothing open yet
    qtbot.addWidget(first)
    first.resize(*SIZE)
    first.show()
    shot = save_screenshot(
        first,
        screenshot_dir / "start_first.png",
        shows=("1. Study", "2. Rater", "3. Mode", "No study open.", "Try the demo study"),
    )
    _full_size(shot)
    first.close()
    w = open_window(qtbot, ui_study.folder, None, size=SIZE)
    w.show_start()
    title = load_rubric(RUBRICS / "ui_mockup.toml").title
    shot = save_screenshot(w, screenshot_dir / "main_window.png", shows=(f"rubric: {title}",))
    _full_size(shot)
    w.close()


def test_screenshot_label_gate_and_scale(qtbot, ui_study, screenshot_dir):
    w = _label_window(qtbot, ui_study.folder)
    view = w.current_view
    # Part-answered, so the selected states and the live verdict show.
    for action in ("pass", "value_4"):
        view.apply_action(action)
    labels = _metric_labels("ui_mockup.toml")
    _full_size(save_screenshot(w, screenshot_dir / "label_ui_mockup.png", shows=labels))
    w.close()


def test_screenshot_label_editing_case(qtbot, logo_study, screenshot_dir):
    w = _label_window(qtbot, logo_study.folder)
    view = w.current_view
    assert len(view.item_panel.views()) == 2 and view.item_panel.has_mask
    labels = _metric_labels("logo_edit.toml")
    _full_size(save_screenshot(w, screenshot_dir / "label_logo_edit.png", shows=labels))
    w.close()
