"""The package side of a rater's own login: a rater connected to the team server as their own login role
makes their offline package and syncs it back, through the code the app runs (services/outbox.py),
on a real PostgreSQL scratch database. The export read every column of `items` and `media`
(ungranted to raters) and minted codes in the lead's `rater_codes`; the merge wrote the lead's
`merges`: both failed as "this login may not do that"."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

import pytest
from factories import basic_rows, write_manifest
from sqlalchemy import text

from annotator.services.labeling import LabelSession
from annotator.services.outbox import Outbox
from annotator.services.pairing import PairSession
from annotator.services.study import Study
from annotator.services.team import assign
from annotator.store import roles

REPO = Path(__file__).resolve().parents[2]
ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "ok",
}


@pytest.fixture
def team(pg_server, tmp_path):
    """A server study (items, anchors, pairs) dealt to two raters; the first one's login URL."""
    url = pg_server.new_database()
    database = url.rsplit("/", 1)[1]
    ana, bob = f"ana_{secrets.token_hex(3)}", f"bob_{secrets.token_hex(3)}"
    lead = Study.create(url, "ui_mockup")
    try:
        src = tmp_path / "src"
        src.mkdir()
        lead.import_items(write_manifest(src, basic_rows(src, n_cases=6, gens=("a", "b"))))
        lead.import_anchors(REPO / "anchors" / "ui_mockup" / "anchors.jsonl")
        assign(lead, [ana, bob], overlap=1, pair_overlap=1, seed=3)
        roles.apply_roles(lead.db, database, [ana, bob])
        login = roles.logins_of(lead.db)[ana]
        yield lead, ana, url.replace("postgres@", f"{login}@", 1)
    finally:
        roles.drop_roles(lead.db, database)
        lead.close()


def _lead_rows(lead: Study, sql: str, **params) -> list[tuple]:
    with lead.db.read() as s:
        return [tuple(r) for r in s.execute(text(sql), params)]


def test_a_rater_login_makes_its_offline_package_and_syncs_it_back(team, tmp_path):
    lead, ana, url = team
    server = Study.open(url)
    try:
        box = Outbox(server, ana, tmp_path / "outbox")
        box.prepare()  # refused before: "no right to table rater_codes" / items' columns
        dealt = {
            r[0]
            for r in _lead_rows(
                lead,
                "SELECT a.item_pk FROM assignments a JOIN raters r ON r.id = a.rater_pk "
                "WHERE r.name = :n",
                n=ana,
            )
        }
        with sqlite3.connect(box.path) as c:
            codes = {r[0] for r in c.execute("SELECT item_id FROM items")}
            n_anchor_rows = c.execute("SELECT count(*) FROM anchors").fetchone()[0]
        by_code = dict(_lead_rows(lead, "SELECT display_code, id FROM items"))
        assert codes and {by_code[c] for c in codes} == dealt  # the rater's live work, no more
        assert n_anchor_rows == 0  # anchors are the server's (a rater's login reads none)

        online = LabelSession(server, ana)
        for _ in range(2):  # on the server; the copy follows
            online.submit(online.next(), ALL, 5)
        box.refresh()
        package = Study.open(box.path)
        try:
            offline = LabelSession(package, ana)
            for _ in range(3):
                offline.submit(offline.next(), {**ALL, "layout_hierarchy": 2}, 6)
            votes = PairSession(package, ana)
            shown = votes.next()
            assert shown is not None, "the fixture deals the rater a pair"
            votes.vote(shown, "left", None, 4)
        finally:
            package.close()
        assert box.pending() == 4
        result = box.sync()  # refused before: the lead's `merges` table
        assert result is not None and not result.conflicts, result
        assert result.added["judgements"] == 3 and result.added["pair_votes"] == 1
        assert box.pending() == 0
        again = box.sync()
        assert again is not None and sum(again.added.values()) == 0 and not again.conflicts
    finally:
        server.close()
    # two answers given on the server (one may be a drift anchor it seeded), three offline
    mine = _lead_rows(
        lead,
        "SELECT j.item_pk, j.context FROM judgements j JOIN raters r ON r.id = j.rater_pk "
        "WHERE r.name = :n",
        n=ana,
    )
    live = [i for i, context in mine if context == "live"]
    assert len(mine) == 5 and len(live) >= 3 and len(set(live)) == len(live)
    assert set(live) <= dealt
    assert _lead_rows(lead, "SELECT count(*) FROM pair_votes")[0][0] == 1
    assert _lead_rows(lead, "SELECT count(*) FROM merges")[0][0] == 0  # the lead's record, unread


def test_a_long_correction_chain_given_online_and_offline_syncs_whole(team, tmp_path):
    """One item corrected 105 times on the server (back and submit, what Ctrl+Z and Enter do),
    then another 105 times in the offline copy: the next connect's copy is made, every offline
    answer syncs and none stays pending (the old chain limit kept them pending for ever)."""
    lead, ana, url = team
    server = Study.open(url)
    try:
        online = LabelSession(server, ana)
        online.submit(online.next(), ALL, 5)
        for n in range(105):
            online.submit(online.back(), {**ALL, "layout_hierarchy": n % 5}, 5)
            online.next()  # what the app shows after each answer
        box = Outbox(server, ana, tmp_path / "outbox")
        box.prepare()  # the copy of a rater with a 106-long chain
        package = Study.open(box.path)
        try:
            offline = LabelSession(package, ana)
            offline.submit(offline.next(), ALL, 6)
            for n in range(105):
                offline.submit(offline.back(), {**ALL, "ui_affordance": n % 5}, 6)
                offline.next()
        finally:
            package.close()
        assert box.pending() == 106
        result = box.sync()
        assert result is not None and not result.conflicts, result
        assert result.added["judgements"] == 106
        assert box.pending() == 0
    finally:
        server.close()
    assert _lead_rows(
        lead,
        "SELECT count(*) FROM judgements j JOIN raters r ON r.id = j.rater_pk WHERE r.name = :n",
        n=ana,
    ) == [(212,)]
