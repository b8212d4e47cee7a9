"""The first hour of a lead and a rater: the review view on imported ratings that
carry no reason, keys typed while a save waits (refused in words), reopening as the lead, every screen within
1100 x 700 in each language, the Help menu, key names as the keyboard labels them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gui_support import build_study, open_window
from PySide6.QtCore import Qt

from annotator.services.study import Study


def _reasonless_study(tmp_path: Path) -> Path:
    """A study whose three raters' answers were imported from a CSV without a reason column,
    disagreeing on every item (each a review entry), and a judge's scores without reasons."""
    built = build_study(tmp_path)
    items = [json.loads(x)["item_id"] for x in built.manifest.read_text().splitlines()]
    lines = ["item_id,rater,metric,value"]
    judge = ["item_id,judge,metric,value"]
    for i, item in enumerate(items):
        for r, rater in enumerate(("ana", "ben", "cai")):
            lines.append(f"{item},{rater},instruction_following,{'PASS' if r != i % 3 else 'FAIL'}")
            lines.append(f"{item},{rater},layout_hierarchy,{(i + r) % 6}")
            lines.append(f"{item},{rater},text_rendering,PASS")
            lines.append(f"{item},{rater},ui_affordance,{(i * r) % 6}")
        judge.append(f"{item},gpt-judge,layout_hierarchy,{(i + 3) % 6}")
    csv = tmp_path / "ratings.csv"
    csv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    jcsv = tmp_path / "judge.csv"
    jcsv.write_text("\n".join(judge) + "\n", encoding="utf-8")
    study = Study.open(built.folder)
    try:
        study.import_ratings(csv)
        study.import_judge(jcsv)
    finally:
        study.close()
    return built.folder


def test_review_walks_every_entry_of_reasonless_imported_ratings(qtbot, tmp_path):
    folder = _reasonless_study(tmp_path)
    w = open_window(qtbot, folder, rater=None, size=(1400, 860))
    w.actions_by_name["mode_review"].trigger()
    view = w.current_view
    qtbot.waitUntil(lambda: view.state == "ready", timeout=30_000)
    n = view.queue.count()
    assert n >= 10
    for i in range(n):
        table = view.details.answers
        entry = view.current()
        expected = len(entry.humans) + len(entry.judges)
        assert table.rowCount() == expected, i
        for r in range(expected):
            for c in range(3):
                cell = table.item(r, c)
                assert cell is not None, (i, r, c)
                assert "nan" not in cell.text().lower().split(), (i, r, c, cell.text())
        if i < n - 1:
            qtbot.keyClick(view, Qt.Key.Key_Down)
            qtbot.waitUntil(lambda i=i: view.queue.currentRow() == i + 1, timeout=5000)


def test_every_missing_value_reaches_the_answers_table_as_empty_text(qtbot, tmp_path):
    """NaN, pandas NA and numpy NaN in every field an entry carries: the table is filled
    whole (before, ``QTableWidgetItem(nan)`` raised OverflowError after the first rater)."""
    import numpy as np
    import pandas as pd
    from gui_support import RUBRICS

    from annotator.ingest.rubrics import load_rubric
    from annotator.services.adjudication import ReviewEntry, consensus
    from annotator.ui.review_panels import EntryDetails

    rubric = load_rubric(RUBRICS / "ui_mockup.toml")
    m = rubric.metric("layout_hierarchy")
    entry = ReviewEntry(
        "demo-001",
        "case-1",
        "gen-a",
        m.key,
        ["humans_disagree"],
        consensus(m, [1, 4]),
        [
            {"rater": "ana", "value": "1", "reason": float("nan")},
            {"rater": "ben", "value": float("nan"), "reason": pd.NA},
            {"rater": "cai", "value": "4", "reason": np.float64("nan")},
        ],
        [{"judge": "gpt", "value": "2", "reason": None}],
        {"value": "2", "by": "lead", "category": float("nan"), "reason": pd.NA},
    )
    details = EntryDetails()
    qtbot.addWidget(details)
    details.show_entry(entry, m)
    t = details.answers
    assert t.rowCount() == 4
    texts = [[t.item(r, c).text() for c in range(3)] for r in range(4)]
    assert [row[0] for row in texts] == ["ana", "ben", "cai", "gpt (judge)"]
    assert [row[2] for row in texts] == ["", "", "", ""]
    assert "nan" not in details.previous_label.text().lower()


def test_shown_text_maps_every_missing_kind_to_the_empty_text():
    import numpy as np
    import pandas as pd

    from annotator.ui.shown import shown_text

    for v in (None, float("nan"), pd.NA, pd.NaT, np.float32("nan"), np.nan):
        assert shown_text(v) == ""
    assert shown_text(np.int64(3)) == "3"
    assert shown_text(3.0) == "3"
    assert shown_text(0.25) == "0.25"
    assert shown_text("x") == "x"


_KEYS = (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_P, Qt.Key.Key_3)


def test_answer_keys_typed_while_a_save_waits_are_refused_in_words(qtbot, ui_study):
    """Another program holds the write lock for a moment: the submit waits ("Saving…"), and the
    keys the rater types meanwhile are refused in words, never applied to the next item, which
    the rater has not seen yet (never carried onto it); Enter meanwhile is
    refused the same way, and the answer waiting to be saved is stored once."""
    import sqlite3

    from PySide6.QtCore import QTimer

    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    first = view.current_item.item_pk
    for key in _KEYS:
        qtbot.keyClick(view, key)
    assert not view.form.missing()
    other = sqlite3.connect(ui_study.folder / "study.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another program holds the write lock for 1.5 s
    released = []
    QTimer.singleShot(1500, lambda: (other.rollback(), other.close(), released.append(1)))
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert view.state == "busy"
    for key in _KEYS:  # keys meant for the next item, typed while the save waits
        qtbot.keyClick(view, key)
        assert "not applied" in view.message.text(), view.message.text()
    qtbot.keyClick(view, Qt.Key.Key_Return)  # refused, and said
    assert view.message.text().startswith("Saving"), view.message.text()
    qtbot.waitUntil(lambda: bool(released) and view.state == "ready", timeout=20_000)
    assert view.current_item.item_pk != first
    assert "not applied here: 4" in view.message.text(), view.message.text()  # said again
    got = view.form.answers()
    assert all(got.get(k) is None for k in ("instruction_following", "layout_hierarchy"))
    assert all(got.get(k) is None for k in ("text_rendering", "ui_affordance"))
    with sqlite3.connect(ui_study.folder / "study.sqlite") as con:
        assert con.execute("SELECT count(*) FROM judgements").fetchone()[0] == 1
    qtbot.keyClick(view, Qt.Key.Key_Return)  # nothing submitted on the unseen-then-blank form
    assert view.message.text().startswith("Still to answer"), view.message.text()


def test_an_anchor_submit_does_not_run_the_drift_check_inside_the_save(tmp_path):
    """The drift check's first run imports the statistics stack (seconds on a loaded machine):
    in a fresh process, answering an anchor through the UI's submit job leaves it for a job of
    its own (before, the submit imported annotator.stats.drift and the rater waited 8-11 s)."""
    import os
    import subprocess
    import sys

    built = build_study(tmp_path, "ui", anchors=True, anchor_every=2)
    code = f"""
import sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from gui_support import complete_answers
from annotator.services.study import Study
from annotator.ui.label_answers import _job_open, _job_submit
study = Study.open({str(built.folder)!r})
session, step = _job_open(study, "rater-one")
session.defer_drift = True  # what the label view sets
anchors = 0
for i in range(8):
    served = step.served
    anchors += served.context == "anchor"
    step = _job_submit(study, session, served, complete_answers(session.rubric, i), 100)
    if served.context == "anchor":
        assert step.drift_due
assert anchors, "no anchor served"
assert "annotator.stats.drift" not in sys.modules, "the drift check ran inside a submit"
session.check_drift()  # the job of its own
assert "annotator.stats.drift" in sys.modules
print("OK", anchors)
"""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0 and "OK" in out.stdout, out.stderr[-2000:]


def test_reopens_as_the_lead_when_the_last_session_ended_in_lead_mode(qtbot, tmp_path):
    """`annotator gui --study DEMO` after the lead left rater mode: the lead's window again,
    not the last rater's (a lead must not find themself working as a rater unasked)."""
    from PySide6.QtWidgets import QMessageBox

    from annotator.ui.settings import AppSettings

    built = build_study(tmp_path, "ui", anchor_every=0, raters=("rater-one", "zed"))
    w = open_window(qtbot, built.folder, None, default_rater="rater-one")
    assert w.rater == "rater-one"
    w.leave_rater()
    box = w.pending_confirmation
    leave = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole)
    leave.click()
    qtbot.waitUntil(lambda: w.rater is None)
    w.actions_by_name["mode_dashboard"].trigger()
    assert w.mode == "dashboard"
    w.close()
    w = open_window(qtbot, built.folder, None, settings=AppSettings(), default_rater="rater-one")
    assert w.rater is None and w.lead_mode and w.mode == "start"
    assert w.mode_allowed("dashboard")
    # Choosing a rater is the lead's act; the next start is then that rater's again.
    assert w.set_rater("zed")
    w.close()
    w = open_window(qtbot, built.folder, None, settings=AppSettings(), default_rater="rater-one")
    assert w.rater == "zed"
    w.close()


def test_the_decoded_picture_cache_is_bounded_in_count_and_bytes(qtbot, tmp_path):
    """24 decoded 1024 px pictures were kept whatever their size (+190 MB in a rater's first 20
    items at 2048 px): the cache keeps at most its count and its bytes, and always the last few
    (the item on screen and the look-ahead)."""
    import io

    from PIL import Image

    from annotator.ui.decode import KEEP_AT_LEAST, ImagePrefetcher

    blobs = {}
    for i in range(14):
        buf = io.BytesIO()
        Image.new("RGB", (1024, 1024), (i * 17, 90, 200 - i * 9)).save(buf, "PNG")
        blobs[f"k{i}"] = buf.getvalue()
    one = 1024 * 1024 * 4  # an RGB32 picture
    pre = ImagePrefetcher(blobs.__getitem__, capacity=10, max_bytes=6 * one)
    try:
        for key in blobs:
            pre.prefetch([key])
            qtbot.waitUntil(lambda key=key: pre.contains(key), timeout=10_000)
            assert pre.cached_bytes <= max(6 * one, KEEP_AT_LEAST * one)
        kept = [k for k in blobs if pre.contains(k)]
        assert kept == [f"k{i}" for i in range(8, 14)], kept  # the last six: 6 x 4 MB
        assert pre.cached_bytes == 6 * one
        small = ImagePrefetcher(blobs.__getitem__, capacity=10, max_bytes=one)
        try:
            for key in list(blobs)[:6]:
                small.prefetch([key])
                qtbot.waitUntil(lambda key=key: small.contains(key), timeout=10_000)
            # over the byte bound, but the last KEEP_AT_LEAST stay
            assert sum(small.contains(k) for k in blobs) == KEEP_AT_LEAST
        finally:
            small.stop()
    finally:
        pre.stop()


def test_the_dashboard_keeps_at_most_three_models():
    from annotator.services.dashboard import ModelCache

    class _M:  # the cache reads only these two fields of a model
        def __init__(self, version: str) -> None:
            self.data_version, self.n_boot = version, 20

    cache = ModelCache()
    for i in range(5):
        cache.put(Path(f"/s{i}"), 1, _M("v"))  # type: ignore[arg-type]
    assert [cache.get(Path(f"/s{i}"), "v", 20, 1) is not None for i in range(5)] == [
        False,
        False,
        True,
        True,
        True,
    ]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_keys_are_named_as_the_keyboard_labels_them(qapp, lang):
    """Never "Backtab" (Qt's name for Shift+Tab), "Return" or "PgDown", in any context's help,
    in either language."""
    from annotator.ui import i18n
    from annotator.ui.keymap import CONTEXTS, Keymap

    assert i18n.install(qapp, lang) == lang
    try:
        km = Keymap()
        shown = {k for c in CONTEXTS for keys, _ in km.help_rows(c) for k in keys.split(", ")}
        assert shown
        for bad in ("Backtab", "Return", "PgDown"):
            assert not [k for k in shown if bad in k], (lang, bad, sorted(shown))
        assert ("Shift+Tab" if lang == "en" else "Tab") in km.hints("prev_metric")
    finally:
        i18n.install(qapp, "en")


def test_a_finished_package_says_to_send_the_file_back_and_opens_its_folder(qtbot, tmp_path):
    from gui_support import complete_answers
    from PySide6.QtCore import QObject, QUrl, Slot
    from PySide6.QtGui import QDesktopServices

    from annotator.services.packages import export_package
    from annotator.services.team import assign

    built = build_study(tmp_path, "ui", anchor_every=0)
    study = Study.open(built.folder)
    try:
        study.add_rater("rater-two")
        assign(study, ["rater-one", "rater-two"], overlap=1, pair_overlap=None, seed=5)
        pkg = export_package(study, "rater-one", tmp_path / "out" / "rater-one.annot").path
    finally:
        study.close()
    w = open_window(qtbot, pkg, rater=None)
    view = w.current_view
    assert w.snapshot.is_package and w.mode == "label"
    n = 0
    while view.state != "done":
        qtbot.waitUntil(lambda: view.state in ("ready", "done"), timeout=10_000)
        if view.state == "ready":
            n += 1
            assert view.submit_answers(complete_answers(view.rubric, n))
            qtbot.waitUntil(lambda: view.state != "busy", timeout=10_000)
    text = view.send_back_label.text()
    assert view.send_back_label.isVisible() and "Send this file back" in text
    assert str(pkg) in text
    assert view.open_folder_btn.isVisible()

    class Catch(QObject):
        urls: list = []

        @Slot(QUrl)
        def show(self, url: QUrl) -> None:  # noqa: D401 - Qt's URL handler
            self.urls.append(url.toLocalFile())

    catch = Catch()
    QDesktopServices.setUrlHandler("file", catch, "show")
    try:
        view.open_folder_btn.click()
        qtbot.keyClick(view, Qt.Key.Key_Return)  # the done page's key does the same
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert catch.urls == [str(pkg.parent)] * 2
    w.close()


def test_the_help_menu_shows_each_views_keys_and_the_rubric(qtbot, tmp_path):
    """Help > Keys and instructions of this view, on every screen: the view's own keys (the
    review's Shift+M, the dashboard's F5, the label view's P / F), the keys that work everywhere,
    and the rubric's instructions with its verdict rules as sentences."""
    from screens import leave_rater

    built = build_study(tmp_path, "ui", anchor_every=0)
    w = open_window(qtbot, built.folder, rater=None)
    if w.rater is not None:
        leave_rater(qtbot, w)
    assert "help_keys" in [a.objectName() for a in w.findChildren(type(w.help_action))]
    seen = {}
    for mode, expect in (
        (None, "Ctrl+Shift+O"),
        ("dashboard", "F5"),
        ("review", "Shift+M"),
    ):
        if mode:
            assert w.show_mode(mode) is not None
        else:
            w.show_start()
        w.help_action.trigger()
        text = w.help_dialog.browser.toPlainText()
        assert expect in text, (mode, text[:300])
        assert "Keys everywhere" in text or mode is None
        assert "Verdict rules" in text and "“Instruction following” is PASS" in text
        assert "==" not in text and "Backtab" not in text
        seen[mode] = text
    w.set_rater("rater-one")
    w.show_mode("label")
    w.help_action.trigger()
    text = w.help_dialog.browser.toPlainText()
    assert "F1, ?" in text and "Ctrl+Z" in text and "Up, Shift+Tab, K" in text, text[-900:]
    assert "is at least 3" in text
    w.close()


def test_verdict_rules_read_as_sentences_in_spanish(qapp):
    from gui_support import RUBRICS

    from annotator.ingest.rubrics import load_rubric
    from annotator.ui import i18n
    from annotator.ui.rule_text import rule_sentences, rules_intro

    assert i18n.install(qapp, "es") == "es"
    try:
        rubric = load_rubric(RUBRICS / "ui_mockup.toml").localized("es")
        got = rule_sentences(rubric)
        assert len(got) == 4
        assert all("==" not in s and ">=" not in s and "PASS" not in s for s in got), got
        assert "APROBADO" in got[0] and "al menos 3" in got[2], got
        assert "PASS" not in rules_intro()
    finally:
        i18n.install(qapp, "en")


def test_placeholder_text_meets_aa_contrast_as_drawn(qtbot):
    """A reason box's placeholder, rendered: its darkest ink on the box's base at 4.5:1 or more
    (Qt's default #7f7f7f on white is 4.0:1)."""
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication, QLineEdit

    from annotator.ui.app import make_app
    from annotator.ui.style import contrast

    app = make_app()
    assert app is QApplication.instance()
    edit = QLineEdit()
    qtbot.addWidget(edit)
    edit.setPlaceholderText("Why this answer (R to write, Esc back to the keys)")
    edit.resize(420, 40)
    edit.show()
    qtbot.waitExposed(edit)
    img = edit.grab().toImage()
    base = edit.palette().color(QPalette.ColorRole.Base)
    inks = [
        QColor(img.pixel(x, y))
        for x in range(8, min(img.width(), 300))
        for y in range(img.height() // 4, 3 * img.height() // 4)
    ]
    darkest = max(inks, key=lambda c: contrast(c, base))
    assert contrast(darkest, base) >= 4.5, darkest.name()


def test_the_frame_follows_the_keyboard_into_the_reason_box(qtbot, ui_study):
    """R to write the reason: the reason's row is framed, not the failure tags the keys left
    the frame on; Esc gives the frame back to that metric."""
    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    w.activateWindow()
    for key in _KEYS:
        qtbot.keyClick(view, key)
    form = view.form
    framed_before = [r.rubric_metric.key for r in form.rows if r.property("focused")]
    assert framed_before == ["failure_tags"]
    qtbot.keyClick(view, Qt.Key.Key_R)
    edit = form.reason_edit()
    qtbot.waitUntil(edit.hasFocus, timeout=5000)
    framed = [r.rubric_metric.key for r in form.rows if r.property("focused")]
    assert framed == ["reason"], framed
    qtbot.keyClicks(edit, "crisp layout")
    qtbot.keyClick(edit, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not edit.hasFocus(), timeout=5000)
    assert [r.rubric_metric.key for r in form.rows if r.property("focused")] == ["failure_tags"]
