"""Helpers for the Qt tests: real study folders made from real demo images."""

from __future__ import annotations

import os
from dataclasses import dataclass
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
        for rel in [*rec.get("images", []), *rec.get("inputs", []), *([rec["mask"]] if rec.get("mask") else [])]:
            p = manifest.parent / rel
            out.update({rel, p.name, p.stem, str(p)})
    return sorted(out)


def build_study(root: Path, kind: str = "ui", *, anchors: bool = False, anchor_every: int | None = None,
                raters: tuple[str, ...] = (RATER,), before_import=None) -> BuiltStudy:  # noqa: ANN001
    """A real study folder: ui_mockup demo items (18) or logo_edit items with inputs and mask (6).

    `before_import(manifest) -> list[Path]` may alter the source files and return
    more manifests to import after the first one.
    """
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
    """A full, valid answer set for any rubric (varied by i)."""
    out: dict = {}
    for m in rubric.metrics:
        if m.kind == "gate":
            out[m.key] = "PASS" if i % 3 else "FAIL"
        elif m.kind == "scale":
            vals = m.scale_values()
            out[m.key] = vals[(i + len(m.key)) % len(vals)]
        elif m.kind == "choice":
            out[m.key] = m.options[i % len(m.options)]
        elif m.kind == "tags":
            out[m.key] = [m.options[i % len(m.options)]] if i % 2 else []
        elif m.kind == "text" and m.required:
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
        out += [w.windowTitle(), w.toolTip(), w.statusTip(), w.whatsThis(), w.accessibleName(),
                w.accessibleDescription()]
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
