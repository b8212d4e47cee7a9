"""A whole label session driven by the keyboard alone, on a real study file."""

from __future__ import annotations

import sqlite3

from gui_support import RATER, open_window, wait_ready
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from annotator.domain.verdict import compile_rules
from annotator.services.labeling import LabelSession
from annotator.services.study import Study
from annotator.store.answers import history_of
from annotator.ui.settings import AppSettings

KEY = {"P": Qt.Key.Key_P, "F": Qt.Key.Key_F, "Return": Qt.Key.Key_Return, "Down": Qt.Key.Key_Down}
DIGITS = [getattr(Qt.Key, f"Key_{d}") for d in range(10)]


def plan(rubric, i: int) -> tuple[list, dict]:
    """Keys that answer item i (relying on the focus moving by itself) and the answers they give."""
    keys, expect = [], {}
    for n, m in enumerate(rubric.metrics):
        vals = m.values()
        if vals == ("FAIL", "PASS"):
            v = "PASS" if (i + n) % 3 else "FAIL"
            keys.append(KEY["P"] if v == "PASS" else KEY["F"])
            expect[m.key] = v
        elif vals and isinstance(vals[0], int):
            v = vals[(i * 7 + n) % len(vals)]
            keys.append(DIGITS[v])
            expect[m.key] = v
        elif m.spec.multi:
            if i % 2:
                keys.append(DIGITS[1 + i % len(m.options[:9])])
                expect[m.key] = [m.options[i % len(m.options[:9])]]
            else:
                expect[m.key] = []
    return keys, expect


def test_keyboard_only_session_with_correction_and_resume(qtbot, ui_study):
    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    assert w.mode == "label"
    wait_ready(qtbot, view)
    rubric = view.rubric
    rules = compile_rules(rubric)
    ids: list[int] = []
    view.submitted.connect(ids.append)
    answered: dict[int, dict] = {}

    # Enter on an empty form submits nothing and says calmly what is missing.
    qtbot.keyClick(view, Qt.Key.Key_Return)
    assert view.message.text().startswith("Still to answer: Instruction following")
    assert view.state == "ready" and ids == []

    i = 0
    while view.state == "ready":
        item_pk = view.current_item.item_pk
        keys, expect = plan(rubric, i)
        for k in keys:
            qtbot.keyClick(view, k)
        assert view.form.answers() == expect
        assert view.form.verdict() == rules.evaluate(expect)
        # A held Enter (auto-repeat) never submits; a real press does, once, even if pressed twice.
        QApplication.sendEvent(
            view,
            QKeyEvent(
                QEvent.Type.KeyPress, Qt.Key.Key_Return, Qt.KeyboardModifier.NoModifier, "\r", True
            ),
        )
        assert view.state == "ready"
        qtbot.keyClick(view, Qt.Key.Key_Return)
        qtbot.keyClick(view, Qt.Key.Key_Return)  # lands while the submit is in flight: refused
        # an answer key while the save is in flight is refused in words, never kept for an item
        # the rater has not seen (a key meant for the item before must not answer this one)
        qtbot.keyClick(view, Qt.Key.Key_P)
        assert "not applied" in view.message.text(), view.message.text()
        wait_ready(qtbot, view)
        if view.state == "ready":
            assert view.form.answers().get("instruction_following") is None  # blank
            assert view.form.focused_key() == "instruction_following"
        answered[item_pk] = expect
        i += 1
        assert len(ids) == i
    assert view.state == "done"
    assert len(answered) == 18 and len(set(ids)) == 18
    assert view.progress_label.text().startswith("18 / 18 done")

    # Ctrl+Z: back to the last answer, shown with its answers; correct one scale.
    last_pk = next(reversed(answered))
    qtbot.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    wait_ready(qtbot, view)
    assert view.current_item.item_pk == last_pk
    assert view.current_item.previous_judgement == ids[-1]
    assert {k: v for k, v in view.form.answers().items()} == answered[last_pk]
    qtbot.keyClick(view, Qt.Key.Key_Down)  # focus: instruction_following -> layout_hierarchy
    assert view.form.focused_key() == "layout_hierarchy"
    new_layout = (answered[last_pk]["layout_hierarchy"] + 2) % 6
    qtbot.keyClick(view, DIGITS[new_layout])
    qtbot.keyClick(view, Qt.Key.Key_Return)
    wait_ready(qtbot, view)
    assert view.state == "done" and len(ids) == 19
    w.close()

    # Reopen: the log keeps the superseded answer; the corrected one is current.
    study = Study.open(ui_study.folder)
    try:
        chain = history_of(study.db, RATER, last_pk)
        assert [c["id"] for c in chain] == [ids[-2], ids[-1]]
        assert chain[1]["supersedes"] == chain[0]["id"]
        assert chain[0]["answers"]["layout_hierarchy"] == answered[last_pk]["layout_hierarchy"]
        assert chain[1]["answers"]["layout_hierarchy"] == new_layout
        for pk, expect in answered.items():
            current = history_of(study.db, RATER, pk)[-1]["answers"]
            if pk != last_pk:
                assert current == expect
        assert LabelSession(study, RATER).next() is None  # nothing left to resume
    finally:
        study.close()
    with sqlite3.connect(ui_study.folder / "study.sqlite") as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT count(*) FROM judgements").fetchone()[0] == 19


def test_quit_midway_and_resume_at_first_unanswered(qtbot, ui_study):
    w = open_window(qtbot, ui_study.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    done_pks = []
    for i in range(5):
        done_pks.append(view.current_item.item_pk)
        for k in plan(view.rubric, i)[0]:
            qtbot.keyClick(view, k)
        qtbot.keyClick(view, Qt.Key.Key_Return)
        wait_ready(qtbot, view)
    on_screen = view.current_item.item_pk
    # Half an answer is typed, then the rater quits: it is never stored as an answer, and comes
    # back as a draft, so a half-given answer is not lost
    qtbot.keyClick(view, Qt.Key.Key_P)
    w.close()

    with sqlite3.connect(ui_study.folder / "study.sqlite") as con:
        rows = con.execute(
            "SELECT q.item_pk FROM queue q JOIN raters r ON r.id = q.rater_pk WHERE r.name = ? "
            "ORDER BY q.position",
            (RATER,),
        ).fetchall()
        answered = {r[0] for r in con.execute("SELECT item_pk FROM judgements")}
    first_unanswered = next(pk for (pk,) in rows if pk not in answered)
    assert answered == set(done_pks)
    assert first_unanswered == on_screen

    w2 = open_window(qtbot, ui_study.folder)
    v2 = w2.current_view
    wait_ready(qtbot, v2)
    assert v2.current_item.item_pk == first_unanswered
    assert v2.form.answers() == {"failure_tags": [], "instruction_following": "PASS"}
    assert "unfinished answer" in v2.message.text()
    assert v2.progress_label.text().startswith("5 / 18 done")
    w2.close()


def test_zoom_mask_and_instructions_keys_on_an_editing_case(qtbot, logo_study):
    w = open_window(qtbot, logo_study.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=5000)
    inp, out = view.item_panel.views()
    assert inp.image() is not None and out.image() is not None
    assert inp.has_mask and inp.mask_visible()
    fit = out.zoom()
    qtbot.keyClick(view, Qt.Key.Key_Plus)
    assert (
        out.zoom() > fit
        and abs(inp.view_state().relative_zoom - out.view_state().relative_zoom) < 1e-6
    )
    qtbot.keyClick(view, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    assert abs(out.zoom() - 1.0) < 1e-9 and abs(inp.zoom() - 1.0) < 1e-9
    out.horizontalScrollBar().setValue(out.horizontalScrollBar().maximum())
    assert abs(inp.view_state().cx - out.view_state().cx) < 0.01  # panning is in step
    qtbot.keyClick(view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    assert out.is_fit() and inp.is_fit()
    qtbot.keyClick(view, Qt.Key.Key_M)
    assert not inp.mask_visible() and not out.mask_visible()
    assert "hidden" in view.item_panel.tiles[0].caption.text()
    qtbot.keyClick(view, Qt.Key.Key_F1)
    assert view._instructions is not None and view._instructions.isVisible()
    qtbot.keyClick(view._instructions, Qt.Key.Key_Escape)
    assert not view._instructions.isVisible()
    # Digits still answer scales (zoom keys never steal them).
    qtbot.keyClick(view, Qt.Key.Key_4)
    assert view.form.answers()["edit_intent_correctness"] == 4
    w.close()


def test_drift_alert_shows_at_the_next_item_and_offers_recalibration(qtbot, tmp_path):
    from gui_support import build_study

    built = build_study(tmp_path, "ui", anchors=True, anchor_every=2)
    w = open_window(qtbot, built.folder)
    view = w.current_view
    wait_ready(qtbot, view)
    far_off = {
        "instruction_following": "FAIL",
        "layout_hierarchy": 0,
        "text_rendering": "FAIL",
        "ui_affordance": 0,
        "failure_tags": [],
    }
    fair = {
        "instruction_following": "PASS",
        "layout_hierarchy": 4,
        "text_rendering": "PASS",
        "ui_affordance": 4,
        "failure_tags": [],
    }
    for _ in range(12):
        if view.banner.isVisible() or view.state != "ready":
            break
        # The rater cannot tell anchors apart; the test can, to answer them far from the reference.
        view.submit_answers(far_off if view.current_item.context == "anchor" else fair)
        wait_ready(qtbot, view)
        # the anchor's drift check is a job of its own once the statistics are imported
        qtbot.waitUntil(lambda: not view.drift_check_waiting, timeout=30_000)
    assert view.banner.isVisible(), "no drift alert after anchors answered far from the reference"
    text = view.banner.text.text()
    assert "drifted" in text and any(f"“{m.label}”" in text for m in view.rubric.metrics)
    assert view.state == "ready"  # shown at an item boundary, the next item is on screen
    if "calibration" in w.available_modes():
        with qtbot.waitSignal(w.viewChanged, timeout=5000) as sig:
            qtbot.mouseClick(view.banner.action, Qt.MouseButton.LeftButton)
        assert sig.args == ["calibration"] and w.mode == "calibration"
    w.close()


def test_key_overrides_from_settings_rebind_and_relabel(qtbot, ui_study):
    settings = AppSettings()
    settings.set_key_override("pass", ["Y"])
    settings.set_key_override("submit", ["Ctrl+Return"])
    w = open_window(qtbot, ui_study.folder)  # a fresh read of the keys file
    view = w.current_view
    wait_ready(qtbot, view)
    gate = view.form.rows[0]
    assert gate.pass_btn.text() == "PASS (Y)"
    qtbot.keyClick(view, Qt.Key.Key_P)
    assert view.form.answers().get("instruction_following") is None  # P is free now
    qtbot.keyClick(view, Qt.Key.Key_Y)
    assert view.form.answers()["instruction_following"] == "PASS"
    for k in (DIGITS[4], Qt.Key.Key_Y, DIGITS[3]):  # layout, text rendering, affordance
        qtbot.keyClick(view, k)
    assert not view.form.missing()
    first = view.current_item.item_pk
    qtbot.keyClick(view, Qt.Key.Key_Return)  # no longer submits
    assert view.state == "ready" and view.current_item.item_pk == first
    qtbot.keyClick(view, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    wait_ready(qtbot, view)
    assert view.current_item.item_pk != first
    w.close()
