"""Rater packages carry columns from the metadata: every column of every table
is either carried by export (and taken back by merge) or named in store/package_columns.py with
the reason, so a new column cannot silently stay out of packages; and what is carried is the
study's value, on a real export and a real merge."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import copy_study

from annotator.services.labeling import LabelSession
from annotator.services.packages import export_package, merge_package
from annotator.services.pairing import PairSession
from annotator.services.study import DB_NAME, Study
from annotator.services.team import assign
from annotator.store import package_columns as pc
from annotator.store.models import Base

ALL = {
    "instruction_following": "PASS",
    "layout_hierarchy": 4,
    "text_rendering": "PASS",
    "ui_affordance": 3,
    "failure_tags": [],
    "reason": "looks right",
}


def test_every_table_is_carried_made_or_named_as_staying_home():
    tables = set(Base.metadata.tables)
    places = [set(pc.EXPORT), set(pc.NOT_IN_PACKAGE), set(pc.MADE_BY_EXPORT)]
    for table in sorted(tables):
        assert sum(table in p for p in places) == 1, (
            f"table {table}: say in store/package_columns.py whether a package carries it "
            "(EXPORT), makes it (MADE_BY_EXPORT) or leaves it home (NOT_IN_PACKAGE, with why)"
        )
    assert set().union(*places) <= tables, "package_columns names a table the study lacks"
    for why in list(pc.NOT_IN_PACKAGE.values()) + list(pc.MADE_BY_EXPORT.values()):
        assert len(why) > 10


def test_every_named_column_exists_once_with_its_reason():
    for table, carry in pc.EXPORT.items():
        cols = set(pc.columns(table))
        parts = [carry.renumbered, carry.rewritten, carry.dropped]
        for part in parts:
            assert set(part) <= cols, f"{table}: {sorted(set(part) - cols)} are no columns"
            assert all(len(why) > 10 for why in part.values()), table
        assert sum(len(p) for p in parts) == len(carry.named()), f"{table}: a column named twice"
    assert set(pc.MERGE) <= set(pc.EXPORT)
    for table, named in pc.MERGE.items():
        assert set(named) <= set(pc.columns(table)), table
        assert all(len(why) > 10 for why in named.values()), table
        # an answer's own columns come back as the rater gave them
        assert "uuid" in pc.merged(table), table


def test_an_export_must_give_every_rewritten_column():
    class Row:
        name, expertise, seed, created_at, id, is_operator = "x", None, 1, None, 1, True

    with pytest.raises(ValueError, match="raters"):
        pc.export_row("raters", Row())
    assert pc.export_row("raters", Row(), is_operator=False) == {
        "name": "x",
        "expertise": None,
        "seed": 1,
        "created_at": None,
        "is_operator": False,
    }


def _rows(path, table: str, cols: list[str]) -> set[tuple]:
    with sqlite3.connect(path) as c:
        names = ", ".join(f'"{n}"' for n in cols)
        return set(c.execute(f'SELECT {names} FROM "{table}"').fetchall())  # noqa: S608 - ours


@pytest.fixture
def worked(demo_study_dir, tmp_path):
    """A lead's study where 'anaya' answered on the study itself (so her export carries answers
    of every kind), and her package."""
    study = Study.open(copy_study(demo_study_dir, tmp_path / "lead"))
    assign(study, ["anaya", "benito", "caius"], overlap=3, pair_overlap=3, seed=3)
    ls = LabelSession(study, "anaya")
    for _ in range(4):
        it = ls.next()
        if it is None:
            break
        ls.submit(it, ALL, 9)
    ps = PairSession(study, "anaya")
    sp = ps.next()
    if sp is not None:
        ps.vote(sp, "left", "clearer", 4)
    out = tmp_path / "anaya.annot"
    export_package(study, "anaya", out)
    yield study, out
    study.close()


def test_every_carried_column_holds_the_studys_value(worked):
    """Each package row's columns copied as stored (carried, not renumbered) are one study row's
    values, in every table the package carries: a column left out or garbled shows here."""
    study, pkg = worked
    seen = 0
    for table, carry in pc.EXPORT.items():
        kept = [n for n in pc.carried(table) if n not in carry.renumbered]
        if not kept:
            continue
        got = _rows(pkg, table, kept)
        if table == "settings":  # the package's own: it seeds no anchor, is a package, names
            got = {r for r in got if r[0] not in ("anchor_every", "role", "media_salt")}
        assert got <= _rows(study.folder / DB_NAME, table, kept), table
        seen += bool(got)
    assert seen >= 12  # the tables above with rows: the test reads real content
    for table in ("judgements", "pair_votes", "sessions"):
        assert _rows(pkg, table, ["uuid"]), f"no {table} in the package: the fixture is wrong"


def test_merge_takes_back_every_column_it_does_not_name(worked, tmp_path):
    """An answer given in the package comes back into the study with every column merge takes as
    stored equal to the package's (the silent anchors' answers become anchor answers: skipped)."""
    study, pkg = worked
    p = Study.open(pkg)
    try:
        ls = LabelSession(p, "anaya")
        for _ in range(5):
            it = ls.next()
            if it is None:
                break
            ls.submit(it, {**ALL, "layout_hierarchy": 2}, 11)
        ps = PairSession(p, "anaya")
        sp = ps.next()
        if sp is not None:
            ps.vote(sp, "both", "alike", 6)
    finally:
        p.close()
    merge_package(study, pkg)
    compared = dict.fromkeys(pc.MERGE, 0)
    for table in pc.MERGE:
        cols = pc.merged(table)
        theirs = {r[cols.index("uuid")]: r for r in _rows(pkg, table, cols)}
        ours = {r[cols.index("uuid")]: r for r in _rows(study.folder / DB_NAME, table, cols)}
        for uid, row in theirs.items():
            if table == "judgements" and ours[uid] != row:
                context = cols.index("context")
                assert (row[context], ours[uid][context]) == ("live", "anchor"), uid
                continue
            assert ours[uid] == row, (table, uid)
            compared[table] += 1
    assert all(compared[t] for t in ("sessions", "judgements", "pair_votes")), compared
