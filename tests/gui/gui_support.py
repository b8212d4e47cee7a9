"""Helpers for the Qt tests: real study folders made from real demo images.

Building a study (demo images, import, raters) is the slow part of most tests,
so each distinct study is built once per test session into a template folder
and copied for every test that asks for it (a fresh, writable copy each time).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import annotator.ui  # noqa: E402,F401 - applies the PySide6 None-refcount fix before Qt is driven
from annotator.demo import scenario  # noqa: E402
from annotator.services.study import Study  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RUBRICS = REPO / "rubrics"
ANCHORS = REPO / "anchors" / "ui_mockup" / "anchors.jsonl"
RATER = "rater-one"


@dataclass
class BuiltStudy:
    folder: Path
    inputs: Path  # where the source files (with revealing names) were written
    manifest: Path
    secrets: list[str]  # generator names, source file names and paths a rater must never see


def _secrets_from_manifest(manifest: Path) -> list[str]:
    import json

    out: set[str] = {str(manifest.parent), manifest.name}
    for line in manifest.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        out.add(rec["generator"])
        out.add(rec["item_id"])  # the source's id is not the display code either
        for rel in [
            *rec.get("images", []),
            *rec.get("inputs", []),
            *([rec["mask"]] if rec.get("mask") else []),
        ]:
            p = manifest.parent / rel
            out.update({rel, p.name, p.stem, str(p)})
    return sorted(out)


_TEMPLATES: dict[tuple, BuiltStudy] = {}
_TEMPLATE_ROOT: list[Path] = []  # set for the session by tests/gui/conftest.py (tmp_path_factory)


@contextmanager
def study_templates(root: Path) -> Iterator[None]:
    """Keep the session's template studies under `root` (a pytest temp folder, cleaned by pytest
    as any other) and forget them when the session ends. Outside it, each study is built
    straight where it is asked for."""
    _TEMPLATE_ROOT[:] = [root]
    try:
        yield
    finally:
        _TEMPLATE_ROOT.clear()
        _TEMPLATES.clear()


def build_study(
    root: Path,
    kind: str = "ui",
    *,
    anchors: bool = False,
    anchor_every: int | None = None,
    raters: tuple[str, ...] = (RATER,),
    before_import=None,
) -> BuiltStudy:  # noqa: ANN001
    """A real study folder: ui_mockup demo items (18) or logo_edit items with inputs and mask (6).

    `before_import(manifest) -> list[Path]` may alter the source files and return
    more manifests to import after the first one (such a study is never shared).
    """
    if before_import is not None or not _TEMPLATE_ROOT:
        return _build(
            root,
            kind,
            anchors=anchors,
            anchor_every=anchor_every,
            raters=raters,
            before_import=before_import,
        )
    key = (kind, anchors, anchor_every, tuple(raters))
    if key not in _TEMPLATES:
        where = _TEMPLATE_ROOT[0] / f"t{len(_TEMPLATES)}"
        _TEMPLATES[key] = _build(
            where, kind, anchors=anchors, anchor_every=anchor_every, raters=raters
        )
    t = _TEMPLATES[key]
    root.mkdir(parents=True, exist_ok=True)
    folder = root / "study"
    shutil.copytree(t.folder, folder)
    return replace(t, folder=folder)


def _build(
    root: Path,
    kind: str,
    *,
    anchors: bool,
    anchor_every: int | None,
    raters: tuple[str, ...],
    before_import=None,
) -> BuiltStudy:  # noqa: ANN001
    inputs = root / "inputs"
    if kind == "ui":
        files = scenario.write_demo_inputs(inputs, variants_per_case=1)
        manifest, rubric = files.manifest, RUBRICS / "ui_mockup.toml"
    elif kind == "logo":
        manifest, rubric = scenario.write_logo_edit_inputs(inputs), RUBRICS / "logo_edit.toml"
    else:
        raise ValueError(kind)
    extra = list(before_import(manifest) or []) if before_import is not None else []
    folder = root / "study"
    study = Study.create(folder, rubric)
    try:
        study.import_items(manifest)
        for m in extra:
            study.import_items(m)
        if anchors:
            study.import_anchors(ANCHORS)
        if anchor_every is not None:
            study.db.set_setting("anchor_every", anchor_every)
        for r in raters:
            study.add_rater(r)
    finally:
        study.close()
    return BuiltStudy(folder, inputs, manifest, _secrets_from_manifest(manifest))


def complete_answers(rubric, i: int = 0) -> dict:
    """A full, valid answer set for any rubric (varied by i), whatever its kinds."""
    out: dict = {}
    for m in rubric.metrics:
        vals = m.values()
        if m.spec.multi:
            out[m.key] = [vals[i % len(vals)]] if i % 2 else []
        elif vals:
            out[m.key] = vals[(i + len(m.key)) % len(vals)]
        elif m.required:
            out[m.key] = f"reason {i}"
    return out


def widget_strings(root) -> list[str]:  # noqa: ANN001 - a QWidget
    """Everything a widget tree can show: texts, tips, titles, accessible names, placeholders."""
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QLabel,
        QLineEdit,
        QListWidget,
        QMainWindow,
        QPlainTextEdit,
        QTextEdit,
        QWidget,
    )

    out: list[str] = []
    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        out += [
            w.windowTitle(),
            w.toolTip(),
            w.statusTip(),
            w.whatsThis(),
            w.accessibleName(),
            w.accessibleDescription(),
        ]
        if isinstance(w, (QLabel, QAbstractButton, QLineEdit)):
            out.append(w.text())
        if isinstance(w, QLineEdit):
            out.append(w.placeholderText())
        if isinstance(w, (QPlainTextEdit, QTextEdit)):
            out += [w.toPlainText(), w.placeholderText()]
        if isinstance(w, QComboBox):
            out += [w.itemText(i) for i in range(w.count())]
        if isinstance(w, QListWidget):
            out += [w.item(i).text() for i in range(w.count())]
            out += [w.item(i).toolTip() for i in range(w.count())]
        if isinstance(w, QMainWindow):
            out.append(w.statusBar().currentMessage())
    for a in root.findChildren(QAction):
        out += [a.text(), a.toolTip(), a.statusTip(), a.whatsThis()]
    return [s for s in out if s]


def visible_texts(root) -> list[str]:  # noqa: ANN001 - a QWidget
    """The texts a person sees in `root` now: those of its widgets shown on screen (not their
    tips or accessible names, not hidden pages), as plain text."""
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QGroupBox,
        QLabel,
        QLineEdit,
        QListWidget,
        QPlainTextEdit,
        QTabBar,
        QTextEdit,
        QWidget,
    )

    def shown(text: str) -> str:  # a lone & marks a mnemonic (underlined, not shown); && is &
        return text.replace("&&", "\0").replace("&", "").replace("\0", "&")

    out: list[str] = []
    for w in [root, *root.findChildren(QWidget)]:
        if w is not root and not w.isVisibleTo(root):
            continue
        if isinstance(w, QLabel):
            text = _plain(w.text()) if "<" in w.text() else w.text()
            out.append(shown(text) if w.buddy() is not None else text)
        elif isinstance(w, QAbstractButton):
            out.append(shown(w.text()))
        elif isinstance(w, QLineEdit):
            out.append(w.text())
        elif isinstance(w, (QPlainTextEdit, QTextEdit)):
            out.append(w.toPlainText())
        elif isinstance(w, QComboBox):
            out.append(w.currentText())
        elif isinstance(w, QGroupBox):
            out.append(shown(w.title()))
        elif isinstance(w, QTabBar):
            out += [shown(w.tabText(i)) for i in range(w.count())]
        elif isinstance(w, QListWidget):
            out += [w.item(i).text() for i in range(w.count()) if not w.item(i).isHidden()]
    return [t for t in out if t]


def _plain(text: str) -> str:
    """A rich-text label's words as shown."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def save_screenshot(widget, path: Path, *, shows: tuple[str, ...] = ()) -> Path:  # noqa: ANN001
    """Save what `widget` shows to `path` and check that it shows it: a picture, not a blank or
    half-painted window (many colours over the whole and in its middle), and each of `shows` in
    the text of a widget on screen. A screenshot test checks the screen, not that a file exists.
    """
    from PIL import Image

    assert widget.grab().save(str(path)), path
    img = Image.open(path).convert("RGB")
    w, h = img.size
    colours = len(img.getcolors(w * h))  # at most one colour a pixel: never None
    middle = len(img.crop((w // 4, h // 4, 3 * w // 4, 3 * h // 4)).getcolors(w * h))
    assert colours > 50 and middle > 10, f"{path.name}: nearly blank ({colours}, middle {middle})"
    texts = visible_texts(widget)
    missing = [t for t in shows if not any(t in x for x in texts)]
    assert not missing, f"{path.name} does not show {missing}; it shows {texts[:40]}"
    return path


def spin_until(predicate, timeout: float = 10.0) -> None:  # noqa: ANN001
    """Process Qt events until predicate() holds (for code outside a qtbot test)."""
    from PySide6.QtCore import QCoreApplication

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met in time")
        QCoreApplication.processEvents()
        time.sleep(0.002)


def hold_study(worker, folder: Path):  # noqa: ANN001, ANN201 - DbWorker -> StudySnapshot
    """Open `folder` on the database worker (which keeps the Study) and return its snapshot."""
    from annotator.services.snapshot import open_study

    box: dict = {}
    worker.open_study(
        open_study,
        Path(folder),
        on_done=lambda r: box.setdefault("r", r),
        on_error=lambda e: box.setdefault("e", e),
    )
    spin_until(lambda: box, 30)
    if "e" in box:
        raise box["e"]
    return box["r"]


def open_window(
    qtbot, folder: Path, rater: str | None = RATER, *, size=(1280, 820), settings=None, **kw
):  # noqa: ANN001, ANN201
    """A MainWindow on `folder` as `rater`, shown, once the study is open and the mode's view is up."""
    from annotator.ui.main_window import MainWindow
    from annotator.ui.settings import AppSettings

    w = MainWindow(settings or AppSettings(), study=folder, rater=rater, **kw)
    qtbot.addWidget(w)
    if size:
        w.resize(*size)
    w.show()
    qtbot.waitUntil(lambda: not w.busy, timeout=30_000)
    return w


def wait_ready(qtbot, view, timeout: int = 10_000) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: view.state in ("ready", "done", "error"), timeout=timeout)


def free_display(first: int, last: int) -> int:
    """An X display number in [first, last) that no server holds (each test file its own range,
    so two test processes never start Xvfb on one number)."""
    for n in range(first, last):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    raise RuntimeError("no free X display number")


def with_minimum_exposure(root: Path, minimum: int = 250, *, anchors: bool = False) -> Path:
    """A `ui` study whose `min_exposure_ms` is set (tests of the exposure rule)."""
    from annotator.services.study import Study

    built = build_study(root, "ui", anchors=anchors, anchor_every=0)
    s = Study.open(built.folder)
    try:
        s.db.set_setting("min_exposure_ms", minimum)
    finally:
        s.close()
    return built.folder
