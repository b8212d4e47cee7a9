"""A study on the PostgreSQL test server, in the app, with the network cut.

The app reaches the server through a small TCP relay on 127.0.0.1 that the test can
cut (every open connection dropped, new ones closed at once: what a lost network
looks like to the driver) and restore; the server's own backends are terminated
too (``pg_terminate_backend``). A cut submit says one line, keeps the answer,
retries with backoff and stores it once; a server that stays away moves the rater
to the local package, whose answers sync once it is back.
"""

from __future__ import annotations

import select
import socket
import threading
from pathlib import Path

import pytest
from gui_support import RATER, open_window, wait_ready
from PySide6.QtCore import Qt

from annotator.demo import scenario
from annotator.services.study import Study
from annotator.ui.main_window import MainWindow
from annotator.ui.settings import AppSettings


class Relay:
    """127.0.0.1:<port> -> the PostgreSQL server; `cut()` drops every connection and refuses
    new ones until `restore()`. Loopback only; stops by itself with the test."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.down = threading.Event()
        self.stop = threading.Event()
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                client, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self.down.is_set():
                client.close()  # the network is gone: the driver sees the server close at once
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()

    def _pipe(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while not self.stop.is_set() and not self.down.is_set():
                ready, _, _ = select.select([a, b], [], [], 0.2)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                try:
                    s.close()
                except OSError:
                    pass

    def cut(self) -> None:
        self.down.set()
        with self.lock:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.open.clear()

    def restore(self) -> None:
        self.down.clear()

    def close(self) -> None:
        self.stop.set()
        self.cut()
        self.sock.close()


def _terminate(pg_server, db: str) -> None:  # noqa: ANN001
    import psycopg

    with psycopg.connect(pg_server.admin_url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (db,)
        )


@pytest.fixture
def server_study(pg_server, pg_url, tmp_path):
    """A ui_mockup study on the server (18 demo items, one rater) and a relay in front of it."""
    files = scenario.write_demo_inputs(tmp_path / "inputs", variants_per_case=1)
    study = Study.create(pg_url, "ui_mockup")
    try:
        study.import_items(files.manifest)
        study.add_rater(RATER)
    finally:
        study.close()
    head, db = pg_url.rsplit("/", 1)
    scheme, _, rest = head.partition("://")
    user = rest.split("@", 1)[0] if "@" in rest else ""
    host = rest.split("@", 1)[-1]
    h, _, p = host.partition(":")
    relay = Relay((h or "127.0.0.1", int(p or 5432)))
    url = f"{scheme}://{user + '@' if user else ''}127.0.0.1:{relay.port}/{db}"
    yield url, pg_url, db, relay
    relay.close()


def _judgements(pg_url: str) -> list[tuple[int, int]]:
    from sqlalchemy import text

    study = Study.open(pg_url, mode="read")
    try:
        with study.db.read() as s:
            return [
                tuple(r)
                for r in s.execute(text("SELECT item_pk, rater_pk FROM judgements ORDER BY id"))
            ]
    finally:
        study.close()


def _fill(qtbot, view) -> None:  # noqa: ANN001
    for key in (Qt.Key.Key_P, Qt.Key.Key_4, Qt.Key.Key_P, Qt.Key.Key_4):
        qtbot.keyClick(view, key)


def _window(qtbot, url: str, tmp_path: Path) -> MainWindow:  # noqa: ANN001
    MainWindow.outbox_folder = tmp_path / "outbox"
    try:
        w = open_window(qtbot, url, RATER, settings=AppSettings())
    finally:
        MainWindow.outbox_folder = None
    w.outbox_folder = tmp_path / "outbox"
    qtbot.waitUntil(
        lambda: w.outbox_path is not None, timeout=60_000
    )  # the local copy, made on connect
    return w


def test_a_cut_submit_keeps_the_answer_and_stores_it_once(qtbot, server_study, pg_server, tmp_path):
    url, pg_url, db, relay = server_study
    w = _window(qtbot, url, tmp_path)
    assert w.snapshot.is_server and w.settings.recent_studies()[0] == w.snapshot.where
    view = w.current_view
    wait_ready(qtbot, view)
    view.retry_ms = (300,)
    view.offline_after = 99  # this test: the server comes back before the app gives up on it
    first = view.current_item.item_pk
    ids: list[int] = []
    view.submitted.connect(ids.append)
    _fill(qtbot, view)
    relay.cut()
    _terminate(pg_server, db)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: "your answer is kept; reconnecting" in view.message.text(), timeout=20_000
    )
    assert view.state == "busy"  # keys are ignored meanwhile: nothing is submitted twice
    qtbot.keyClick(view, Qt.Key.Key_Return)
    relay.restore()
    qtbot.waitUntil(
        lambda: view.state == "ready" and view.current_item.item_pk != first, timeout=30_000
    )
    assert len(ids) == 1
    rows = _judgements(pg_url)
    assert [r[0] for r in rows] == [first]  # stored once, never dropped, never doubled
    w.close()


@pytest.mark.slow
def test_a_server_that_stays_away_moves_the_rater_to_the_local_package(
    qtbot, server_study, pg_server, tmp_path, screenshot_dir
):
    url, pg_url, db, relay = server_study
    w = _window(qtbot, url, tmp_path)
    w.sync_every_ms = 400
    view = w.current_view
    wait_ready(qtbot, view)
    view.retry_ms = (200,)
    view.offline_after = 2
    first = view.current_item.item_pk
    _fill(qtbot, view)
    relay.cut()
    _terminate(pg_server, db)
    qtbot.keyClick(view, Qt.Key.Key_Return)
    # Offline: the rater is in the local package; the answer that failed went with them.
    qtbot.waitUntil(
        lambda: (
            w.offline is not None
            and w.snapshot is not None
            and w.snapshot.is_package
            and w.current_view is not None
            and w.current_view.state == "ready"
        ),
        timeout=60_000,
    )
    local = w.current_view
    qtbot.waitUntil(lambda: w.offline.waiting >= 1, timeout=20_000)
    # the carried answer went to the same item in the package (its own numbering), then the next
    assert local.current_item.item_pk != w.outbox_items[first]
    _fill(qtbot, local)
    qtbot.keyClick(local, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: w.offline is not None and w.offline.waiting == 2, timeout=20_000)
    assert w.sync_label.isVisible() and "2 answers waiting to sync" in w.sync_label.text()
    qtbot.waitUntil(
        lambda: not w.current_view.item_panel.waiting_for(), timeout=20_000
    )  # its picture, decoded
    assert w.grab().save(str(screenshot_dir / "offline_waiting_to_sync.png"))
    assert not w.mode_allowed("dashboard")  # the local package has no lead view either
    # The server comes back: the answers sync once and the rater returns to the server.
    relay.restore()
    qtbot.waitUntil(
        lambda: w.offline is None and w.snapshot is not None and w.snapshot.is_server,
        timeout=60_000,
    )
    rows = _judgements(pg_url)
    items = [r[0] for r in rows]
    assert len(items) == 2 and len(set(items)) == 2 and first in items
    w.close()


def test_the_recent_list_never_keeps_a_password(tmp_path):
    settings = AppSettings(tmp_path / "annotator.ini")
    settings.add_recent_study("postgresql://ann:s3cret@db.example/study")
    settings.set_last_rater("postgresql://ann:s3cret@db.example/study", "ann")
    assert "s3cret" not in settings.path.read_text(encoding="utf-8")
    assert settings.recent_studies() == ["postgresql://ann@db.example/study"]
    assert settings.last_rater("postgresql://ann@db.example/study") == "ann"


def test_a_rater_role_labels_in_the_app(qtbot, pg_server, pg_url, tmp_path):
    """The app connected as a rater's own login role (not the owner): it opens, serves, stores."""
    from annotator.store import roles

    files = scenario.write_demo_inputs(tmp_path / "inputs", variants_per_case=1)
    database = pg_url.rsplit("/", 1)[1]
    lead = Study.create(pg_url, "ui_mockup")
    try:
        lead.import_items(files.manifest)
        lead.add_rater(RATER)
        roles.apply_roles(lead.db, database, [RATER])
        role = roles.logins_of(lead.db)[RATER]
        MainWindow.outbox_folder = tmp_path / "outbox"
        try:
            w = open_window(
                qtbot, pg_url.replace("postgres@", f"{role}@", 1), RATER, settings=AppSettings()
            )
        finally:
            MainWindow.outbox_folder = None
        view = w.current_view
        wait_ready(qtbot, view)
        assert view.state == "ready", view.message.text()
        first = view.current_item.item_pk
        _fill(qtbot, view)
        qtbot.keyClick(view, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: view.current_item.item_pk != first, timeout=20_000)
        assert [r[0] for r in _judgements(pg_url)] == [first]
        w.close()
    finally:
        roles.drop_roles(lead.db, database)
        lead.close()


def _package_judgements(path: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM judgements").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("as_role", [True, False], ids=["rater-role", "owner"])
def test_offline_after_work_on_the_server_returns_with_every_answer_once(
    qtbot, pg_server, pg_url, tmp_path, as_role
):
    """3 answers on the server, the server gone, 10 more answers (the first of them
    the one whose save was cut), the server back: every answer is there once, none clashes, the
    waiting count reaches 0 and the app is on the server again."""
    from sqlalchemy import text

    from annotator.store import roles

    files = scenario.write_demo_inputs(tmp_path / "inputs", variants_per_case=1)
    database = pg_url.rsplit("/", 1)[1]
    lead = Study.create(pg_url, "ui_mockup")
    lead.import_items(files.manifest)
    lead.add_rater(RATER)
    roles.apply_roles(lead.db, database, [RATER])
    role = roles.logins_of(lead.db)[RATER]
    relay = Relay(("127.0.0.1", int(pg_url.rsplit(":", 1)[1].split("/", 1)[0])))
    user = role if as_role else pg_url.split("://", 1)[1].split("@", 1)[0]
    url = f"postgresql://{user}@127.0.0.1:{relay.port}/{database}"
    try:
        w = _window(qtbot, url, tmp_path)
        w.sync_every_ms = 400
        view = w.current_view
        wait_ready(qtbot, view)
        view.retry_ms = (200,)
        view.offline_after = 2
        given = 0
        for n in range(1, 4):  # on the server; the local package follows each answer
            shown = view.current_item.item_pk
            _fill(qtbot, view)
            qtbot.keyClick(view, Qt.Key.Key_Return)
            qtbot.waitUntil(
                lambda s=shown: view.state == "ready" and view.current_item.item_pk != s,
                timeout=30_000,
            )
            given += 1
            qtbot.waitUntil(lambda n=n: _package_judgements(w.outbox_path) == n, timeout=30_000)
        _fill(qtbot, view)
        relay.cut()
        _terminate(pg_server, database)
        qtbot.keyClick(view, Qt.Key.Key_Return)  # cut: carried into the local package
        qtbot.waitUntil(
            lambda: (
                w.offline is not None
                and w.snapshot is not None
                and w.snapshot.is_package
                and w.current_view is not None
                and w.current_view.state == "ready"
            ),
            timeout=60_000,
        )
        qtbot.waitUntil(lambda: w.offline.waiting >= 1, timeout=20_000)
        given += 1
        local = w.current_view
        while given < 13:  # 10 answers while the server is away (the carried one included)
            shown = local.current_item.item_pk
            _fill(qtbot, local)
            qtbot.keyClick(local, Qt.Key.Key_Return)
            qtbot.waitUntil(
                lambda s=shown: (
                    local.state in ("ready", "done")
                    and (local.current_item is None or local.current_item.item_pk != s)
                ),
                timeout=20_000,
            )
            given += 1
        qtbot.waitUntil(lambda: w.offline is not None and w.offline.waiting == 10, timeout=20_000)
        counts: list[int] = []
        w.synced.connect(counts.append)
        relay.restore()
        qtbot.waitUntil(
            lambda: w.offline is None and w.snapshot is not None and w.snapshot.is_server,
            timeout=60_000,
        )
        assert counts and counts[-1] == 0
        with lead.db.read() as s:
            rows = [
                tuple(r)
                for r in s.execute(text("SELECT item_pk, uuid FROM judgements ORDER BY id"))
            ]
            clashes = s.execute(text("SELECT count(*) FROM merge_conflicts")).scalar()
        assert len(rows) == given == 13
        assert len({r[0] for r in rows}) == 13 and len({r[1] for r in rows}) == 13
        assert clashes == 0
        w.close()
    finally:
        relay.close()
        roles.drop_roles(lead.db, database)
        lead.close()
