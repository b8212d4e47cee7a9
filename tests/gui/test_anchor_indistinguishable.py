"""An anchor served during live labelling looks exactly like a live item.

Drives the real label view (inside the real main window) over a study whose
queue seeds anchors often, and compares a live item with an anchor: the same
widget tree (classes, names, visibility, enabled state), the same chrome
strings, the same code format, and no word anywhere (labels, buttons,
tooltips, accessible names, placeholders, window title, status bar, actions)
that marks the item as an anchor.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from gui_support import ANCHORS, RATER, build_study, complete_answers, open_window, widget_strings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QWidget,
)

from annotator.ui.main_window import MainWindow

MARKERS = ("anchor", "calibration", "reference", "gold", "honeypot", "control item", "check item")
CODE = re.compile(r"^Item [A-Z0-9]{3}-[A-Z0-9]{3}$")


def _tree(root: QWidget) -> list[tuple]:
    """The widget tree as (depth, class, object name, visible, enabled), depth first."""
    out: list[tuple] = []

    def walk(w: QWidget, depth: int) -> None:
        for c in w.children():
            if isinstance(c, QWidget):
                # Scroll bars come and go with the length of the prompt: content, not chrome.
                shown = None if c.objectName().startswith("qt_scrollarea") else c.isVisibleTo(root)
                out.append((depth, type(c).__name__, c.objectName(), shown, c.isEnabled()))
                walk(c, depth + 1)

    walk(root, 0)
    return out


def _snapshot(win: MainWindow) -> dict:
    view = win.current_view
    own = {
        view.prompt_label.text(),
        view.criteria_label.text(),
        view.code_label.text(),
        view.progress_label.text(),
        view.item_panel.text.toPlainText(),
    }
    return {
        "tree": _tree(view),
        "chrome": sorted(s for s in widget_strings(view) if s not in own),
        "window": [win.windowTitle(), win.statusBar().currentMessage()],
        "actions": sorted(a.text() for a in win.findChildren(QAction)),
        "code": view.code_label.text(),
        "view_strings": widget_strings(view),
        "captions": [t.caption.text() for t in view.item_panel.tiles if t.isVisibleTo(view)],
        "form": [(type(r).__name__, r.title.text()) for r in view.form.rows],
    }


def _references(folder: Path) -> dict[int, dict]:
    """Reference answers by item primary key (the shipped file joined with the study's items)."""
    by_id = {}
    for line in ANCHORS.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        by_id[rec["item_id"]] = rec["reference"]
    con = sqlite3.connect(folder / "study.sqlite")
    try:
        return {
            pk: by_id[iid]
            for pk, iid in con.execute("SELECT id, item_id FROM items")
            if iid in by_id
        }
    finally:
        con.close()


@pytest.fixture()
def window(qtbot, tmp_path: Path):
    built = build_study(tmp_path, "ui", anchors=True, anchor_every=2)
    win = open_window(qtbot, built.folder, RATER)
    qtbot.waitExposed(win)
    yield win
    win.close()


def test_anchor_looks_like_a_live_item(qtbot, window):
    win = window
    assert win.mode == "label"
    view = win.current_view
    qtbot.waitUntil(lambda: view.state in ("ready", "done"), timeout=10_000)
    refs = _references(win.study_path)
    shots: dict[str, dict] = {}
    i = 0
    while view.state == "ready" and len(shots) < 2 and i < 12:
        served = view.current_item
        qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=5000)
        kind = "anchor" if served.context == "anchor" else "live"
        if kind not in shots:
            shots[kind] = _snapshot(win)
        # Anchors get their reference answers: no drift notice is raised by this test.
        answers = (
            dict(refs[served.item_pk]) if kind == "anchor" else complete_answers(view.rubric, i)
        )
        i += 1
        assert view.submit_answers(answers)
        qtbot.waitUntil(lambda: view.state in ("ready", "done"), timeout=10_000)
    assert set(shots) == {"live", "anchor"}, "the queue served no anchor within 12 items"
    live, anchor = shots["live"], shots["anchor"]

    # The same widgets, in the same places, shown and enabled alike.
    assert anchor["tree"] == live["tree"]
    assert anchor["form"] == live["form"] and anchor["captions"] == live["captions"]
    # The same words around the item, the same window title, status bar and menus.
    assert anchor["chrome"] == live["chrome"]
    assert anchor["window"] == live["window"]
    assert anchor["actions"] == live["actions"]
    # Its code has the live items' format (an anchor has its own code each showing).
    assert CODE.match(live["code"]) and CODE.match(anchor["code"])
    assert anchor["code"] != live["code"]

    # No word anywhere in the view, or in the window's title and status bar, marks an anchor.
    for snap in (live, anchor):
        blob = "\n".join(snap["view_strings"] + snap["window"]).lower()
        # whole words: a prompt may well say "Preferences"
        marked = [w for w in MARKERS if re.search(rf"\b{w}\b", blob)]
        assert not marked, marked


def test_anchor_behaves_like_a_live_item(qtbot, window):
    view = window.current_view
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    refs = _references(window.study_path)
    seen: list[tuple[str, bool, str]] = []
    view.itemShown.connect(
        lambda: seen.append(
            (
                view.current_item.context,
                bool(view.item_panel.waiting_for()),
                view.progress_label.text().split("  ")[0],
            )
        )
    )
    seen.append(("first", True, view.progress_label.text().split("  ")[0]))
    for i in range(6):
        qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=5000)
        qtbot.waitUntil(
            lambda: view.lookahead_done, timeout=5000
        )  # what it expects next is decoded
        served = view.current_item
        answers = (
            dict(refs[served.item_pk])
            if served.context == "anchor"
            else complete_answers(view.rubric, i)
        )
        assert view.submit_answers(answers)
        qtbot.waitUntil(lambda: view.state in ("ready", "done"), timeout=10_000)
    later = seen[1:]
    assert any(c == "anchor" for c, _, _ in later) and any(c == "live" for c, _, _ in later)
    # Every item, anchor or live, is on screen with its pictures as soon as it is shown ...
    assert not [c for c, waiting, _ in later if waiting]
    # ... and the done count moves after every answer.
    counts = [p for _, _, p in seen]
    assert all(a != b for a, b in zip(counts, counts[1:], strict=False)), counts
