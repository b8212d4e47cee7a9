"""The lead's review view on the demo study: decisions by key only, stored as adjudication rows
beside (never over) the raters' judgements, the same rows as the CLI, promotion to an anchor,
filters as the service filters, a guarded submit, one-line errors, lead-only."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from gui_support import open_window, save_screenshot
from PySide6.QtCore import Qt

from annotator.cli import main
from annotator.domain.text import MAX_NAME
from annotator.services.adjudication import adjudicate, gold_rows, review_queue
from annotator.services.study import DB_NAME, Study
from annotator.ui.keymap import ACTIONS, Keymap


@pytest.fixture
def demo(small_demo_dir, tmp_path) -> Path:
    """A writable copy of the session's demo with two variants per case (tests/conftest.py):
    quicker than the full demo, and still judge findings the demo lead has not decided (they
    lead the queue), besides the raters' disagreements."""
    dest = tmp_path / "demo"
    shutil.copytree(small_demo_dir, dest)
    return dest


def _rows(folder: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(folder / DB_NAME) as c:
        return c.execute(sql).fetchall()


def _adjudications(folder: Path) -> list[tuple]:
    """Every adjudication row but its own id, uuid and time (the same decision twice compares
    equal)."""
    return _rows(
        folder,
        "SELECT i.item_id, a.metric, a.value, a.reason, a.category, a.by, a.supersedes IS NULL "
        "FROM adjudications a JOIN items i ON i.id = a.item_pk ORDER BY a.id",
    )


def _review(qtbot, folder: Path, size=(1400, 860)):  # noqa: ANN001, ANN202
    w = open_window(qtbot, folder, rater=None, size=size)
    assert w.lead_mode
    w.actions_by_name["mode_review"].trigger()  # what its key (Ctrl+Shift+R) does
    view = w.current_view
    assert w.mode == "review" and view is not None
    qtbot.waitUntil(lambda: view.state == "ready", timeout=30_000)
    return w, view


def _key_for(view, entry) -> Qt.Key:  # noqa: ANN001
    """The one key that answers the entry's metric with a value no rater gave, when there is one."""
    m = view.rubric.metric(entry.metric)
    given = {h["value"] for h in entry.humans}
    if m.kind == "gate":
        return Qt.Key.Key_F if "FAIL" not in given else Qt.Key.Key_P
    values = [str(v) for v in m.values()] if m.spec.ordered else list(m.options)
    pick = next((i for i, v in enumerate(values) if v not in given), 0)
    digit = int(values[pick]) if m.spec.ordered else (pick + 1) % 10
    return Qt.Key(Qt.Key.Key_0 + digit)


def _decide_by_keys(qtbot, view, reason: str, *, category_steps: int = 0) -> tuple:  # noqa: ANN001
    entry = view.current()
    qtbot.keyClick(view, _key_for(view, entry))
    for _ in range(category_steps):
        qtbot.keyClick(view, Qt.Key.Key_C)
    qtbot.keyClick(view, Qt.Key.Key_R)  # into the reason box
    qtbot.keyClicks(view.reason_edit, reason)
    qtbot.keyClick(view.reason_edit, Qt.Key.Key_Escape)  # back to the keys
    value = view.form_row.value()
    with qtbot.waitSignal(view.decided, timeout=20_000):
        qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.state == "ready", timeout=20_000)
    return entry, value


def test_three_findings_resolved_by_key_only(qtbot, demo, screenshot_dir):
    judgements = _rows(demo, "SELECT * FROM judgements ORDER BY id")
    before = _adjudications(demo)
    w, view = _review(qtbot, demo)
    decided = []
    for n in range(3):
        entry, value = _decide_by_keys(
            qtbot, view, f"checked against the prompt {n}", category_steps=1 if n == 0 else 0
        )
        assert entry.adjudicated is not None
        nxt = view.current()
        assert nxt is not None and (nxt.item_id, nxt.metric) != (entry.item_id, entry.metric)
        assert not nxt.adjudicated  # on to the next entry still undecided
        decided.append((entry, value))
    # The judge's findings come first in the queue: these three are findings.
    assert all("judge_contradicts" in e.reasons for e, _ in decided)
    rows = _adjudications(demo)[len(before) :]
    assert [(r[0], r[1]) for r in rows] == [(e.item_id, e.metric) for e, _ in decided]
    for (entry, value), row in zip(decided, rows, strict=True):
        m = view.rubric.metric(entry.metric)
        assert row[2] == json.dumps(m.spec.to_json(m.spec.validate(m, value)))
        assert row[5] == "lead" and row[6] == 1
    assert [r[4] for r in rows] == ["rubric_unclear", None, None]
    assert [r[3] for r in rows] == [f"checked against the prompt {n}" for n in range(3)]
    # Beside, never over: not one rater judgement changed.
    assert _rows(demo, "SELECT * FROM judgements ORDER BY id") == judgements
    qtbot.keyClick(view, Qt.Key.Key_Up)
    qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=20_000)
    save_screenshot(view, screenshot_dir / "review_view.png", shows=_what_the_review_shows(view))
    w.close()


def _what_the_review_shows(view) -> tuple[str, ...]:  # noqa: ANN001
    """The page's title with the study's name, and the current entry's metric and generator."""
    e = view.current()
    name = view.snapshot.name
    return (f"Review and adjudicate: {name}", view.rubric.metric(e.metric).label, e.generator)


def test_the_view_and_the_cli_store_the_same_row(qtbot, demo, tmp_path):
    twin = tmp_path / "twin"
    shutil.copytree(demo, twin)
    w, view = _review(qtbot, demo)
    entry, _value = _decide_by_keys(qtbot, view, "the rubric's wording", category_steps=1)
    w.close()
    ours = _adjudications(demo)[-1]
    assert ours[:2] == (entry.item_id, entry.metric)
    # The CLI is given the value as the ratings CSV writes it (tags joined by ';').
    stored = json.loads(ours[2])
    value = ";".join(stored) if isinstance(stored, list) else str(stored)
    args = ["adjudicate", "--study", str(twin), "--item", entry.item_id, "--metric", entry.metric]
    args += ["--value", value, "--reason", "the rubric's wording", "--by", "lead"]
    assert main([*args, "--category", "rubric_unclear"]) == 0
    assert _adjudications(twin) == _adjudications(demo)


def test_promote_from_the_view_makes_an_anchor_in_a_new_set_version(qtbot, demo):
    from annotator.store.adjudication import versions
    from annotator.store.anchors import anchors

    study = Study.open(demo)
    try:
        # The queued item with the fewest metrics lacking a final answer; those are decided
        # first (promote needs every metric's final answer).
        missing: dict[str, list[str]] = {}
        for r in gold_rows(study):
            missing.setdefault(r["item_id"], [])
            if r["value"] is None:
                missing[r["item_id"]].append(r["metric"])
        queued = {e.item_id for e in review_queue(study)}
        target = min(sorted(queued), key=lambda i: len(missing[i]))
        for metric in missing[target]:
            m = study.rubric.metric(metric)
            first = m.options[0] if m.options else "PASS" if m.kind == "gate" else "3"
            adjudicate(study, item_id=target, metric=metric, value=first, reason="decided first")
        sets_before = versions(study.db)
        n_anchors = len(anchors(study.db))
    finally:
        study.close()
    w, view = _review(qtbot, demo)
    view.hide_decided = False
    at = next(i for i, e in enumerate(view.shown) if e.item_id == target)
    view.select(at)
    qtbot.keyClick(view, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)
    assert view.rationale_edit.isVisible()
    qtbot.keyClicks(view.rationale_edit, "teaches where the checkout's sections go")
    with qtbot.waitSignal(view.promoted, timeout=20_000) as got:
        qtbot.keyClick(view.rationale_edit, Qt.Key.Key_Return)
    anchor_id, version = got.args
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    assert "anchor" in view.message.text()
    w.close()
    study = Study.open(demo)
    try:
        after = versions(study.db)
        assert len(anchors(study.db)) == n_anchors + 1
        (name,) = [k for k in after if after[k] != sets_before.get(k)]
        assert after[name] == sets_before.get(name, 0) + 1 == version
    finally:
        study.close()
    promoted = _rows(
        demo,
        "SELECT i.item_id, a.set_version, src.item_id FROM anchors a JOIN items i ON i.id = "
        "a.item_pk JOIN items src ON src.id = a.promoted_from",
    )
    assert (anchor_id, version, target) in promoted


def test_an_unsaved_answer_survives_hiding_and_filtering(qtbot, demo):
    w, view = _review(qtbot, demo)
    entry = view.current()
    assert entry is not None and not entry.adjudicated
    qtbot.keyClick(view, _key_for(view, entry))
    qtbot.keyClick(view, Qt.Key.Key_R)
    qtbot.keyClicks(view.reason_edit, "not saved yet")
    qtbot.keyClick(view.reason_edit, Qt.Key.Key_Escape)
    value = view.form_row.value()
    assert value is not None

    def holds_the_draft() -> bool:
        now = view.current()
        return (
            (now.item_id, now.metric) == (entry.item_id, entry.metric)
            and view.form_row.value() == value
            and view.reason_edit.toPlainText() == "not saved yet"
        )

    qtbot.keyClick(view, Qt.Key.Key_H)  # hide the decided: the entry stays, so does its answer
    assert holds_the_draft()
    # a filter that drops the entry, then none: it comes back with its answer
    other = next(e.metric for e in view.entries if e.metric != entry.metric)
    assert view.set_filter("metric", other) and all(e.metric == other for e in view.shown)
    qtbot.keyClick(view, Qt.Key.Key_Backspace, Qt.KeyboardModifier.ShiftModifier)
    view.select(view._index_of(entry))
    assert holds_the_draft()
    w.close()


def test_filters_list_what_the_service_lists_in_its_order(qtbot, demo):
    study = Study.open(demo)
    try:
        w, view = _review(qtbot, demo)
        entries = view.entries
        assert [(e.item_id, e.metric) for e in entries] == [
            (e.item_id, e.metric) for e in review_queue(study)
        ]
        some = {
            "metric": entries[-1].metric,
            "generator": entries[0].generator,
            "case": entries[1].case_id,
            "rater": entries[0].humans[-1]["rater"],
        }
        for kind, value in some.items():
            assert view.filters.clear()
            assert view.set_filter(kind, value)
            want = review_queue(study, **{kind: value})
            assert [(e.item_id, e.metric) for e in view.shown] == [
                (e.item_id, e.metric) for e in want
            ]
        # Shift+M steps through the metrics; Shift+Backspace clears every filter.
        view.filters.clear()
        qtbot.keyClick(view, Qt.Key.Key_M, Qt.KeyboardModifier.ShiftModifier)
        assert {e.metric for e in view.shown} == {view.filters.chosen()["metric"]}
        qtbot.keyClick(view, Qt.Key.Key_Backspace, Qt.KeyboardModifier.ShiftModifier)
        assert len(view.shown) == len(entries)
        qtbot.keyClick(view, Qt.Key.Key_H)  # hide the decided ones
        assert view.shown == [e for e in entries if not e.adjudicated]
        w.close()
    finally:
        study.close()


def test_a_double_submit_stores_once_and_a_bad_input_is_one_line(qtbot, demo):
    w, view = _review(qtbot, demo)
    before = len(_adjudications(demo))
    qtbot.keyClick(view, Qt.Key.Key_Return)  # nothing answered yet: said, nothing stored
    assert "answer" in view.message.text() and view.state == "ready"
    qtbot.keyClick(view, _key_for(view, view.current()))
    qtbot.keyClick(view, Qt.Key.Key_Return)  # no reason yet
    assert "reason" in view.message.text().lower() and view.state == "ready"
    view.reason_edit.setPlainText("twice")
    with qtbot.waitSignal(view.decided, timeout=20_000):
        assert view.submit()
        assert not view.submit()  # in flight: the second one does nothing
        qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    # a second write, had one been sent, would still be on the database worker's queue
    qtbot.waitUntil(lambda: not w.worker.busy, timeout=10_000)
    assert len(_adjudications(demo)) == before + 1
    # A name the study refuses: one line in the view, the decision kept in the form.
    qtbot.keyClick(view, _key_for(view, view.current()))
    view.reason_edit.setPlainText("a reason")
    view.adjudicator_edit.setText("x" * (MAX_NAME + 1))
    assert view.submit()
    qtbot.waitUntil(lambda: view.state == "ready", timeout=10_000)
    text = view.message.text()
    assert "adjudicator" in text and "\n" not in text and "Traceback" not in text
    assert view.decision.reason() == "a reason" and view.form_row.value() is not None
    assert len(_adjudications(demo)) == before + 1
    w.close()


def test_only_the_lead_reaches_the_review(qtbot, demo):
    w = open_window(qtbot, demo, rater=None)
    assert w.set_rater("sim-steady")
    assert w.show_mode("review") is None
    assert not w.actions_by_name["mode_review"].isEnabled()
    w.close()


def test_every_review_key_has_its_handler(qtbot, demo):
    assert not Keymap().problems()
    w, view = _review(qtbot, demo)
    want = {a.name for a in ACTIONS if "review" in a.contexts}
    assert want <= set(view.key_actions()), sorted(want - set(view.key_actions()))
    # J / K move through the list; the draft of an entry comes back when it is shown again.
    first = view.current()
    qtbot.keyClick(view, _key_for(view, first))
    value = view.form_row.value()
    qtbot.keyClick(view, Qt.Key.Key_J)
    assert view.current() is not first
    qtbot.keyClick(view, Qt.Key.Key_K)
    assert view.current() is first and view.form_row.value() == value
    w.close()


@pytest.mark.slow
def test_screenshot_of_the_review_view_on_the_full_demo(
    qtbot, demo_study_dir, tmp_path, screenshot_dir
):
    folder = tmp_path / "demo"
    shutil.copytree(demo_study_dir, folder)  # the lead's view may write: never the shared one
    w, view = _review(qtbot, folder, size=(1440, 900))
    qtbot.keyClick(view, Qt.Key.Key_J)
    qtbot.waitUntil(lambda: not view.item_panel.waiting_for(), timeout=20_000)
    shows = _what_the_review_shows(view)
    save_screenshot(view, screenshot_dir / "review_view_demo.png", shows=shows)
    w.close()


def test_the_review_view_in_spanish_shows_no_english(qtbot, qapp, demo):
    from test_i18n import _english, _visible_strings

    from annotator.ui import i18n

    assert i18n.install(qapp, "es") == "es"
    try:
        w, view = _review(qtbot, demo)
        qtbot.keyClick(view, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier)  # the rationale
        # The study's own names (cases, generators) in the filter lists are its words.
        names = [view.snapshot.name, *{v for e in view.entries for v in (e.generator, e.case_id)}]
        found = [(c, t, _english(t)) for c, t in _visible_strings(view, names) if _english(t)]
        assert not found, found[:5]
        w.close()
    finally:
        i18n.install(qapp, "en")
