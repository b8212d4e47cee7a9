"""Rater packages (contract 5.6), export: one SQLite file holding one rater's work, blinded by
(Over 500 lines on purpose: what a package holds is one blinding rule, written once for every table
it copies.)
construction (the merge that brings the answers back is `package_merge`).

Blind by construction: the package is a new database into which only what the
rater may see is written: items under per-rater codes (the code is the item_id,
the case id is a code too), no generator, no source name or path, no original
hashes, no judge scores, no other rater, and no study-wide row number (`local_keys`).
Silent drift anchors are dealt as items (`_silent_anchors`): their own codes, places in the
queue, no flag, no reference; the `anchors` table holds only the calibration set (the anchors
not dealt silently), and merge maps the silent answers back (`_Merger.unblind`).
Answer rows keep their UUIDs, which is all merge needs to insert what is new and skip
what it has. Which columns a package carries is read from the metadata, less the ones
`package_columns` names with the reason (a new column is carried unless named there).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select, text
from sqlalchemy.orm import Session as OrmSession

from ..domain import queue as q
from ..domain.errors import InputError
from ..domain.settings import DEFAULT_SETTINGS, RATER_SETTINGS
from . import settings
from .assignments import assigned_items, assigned_pairs
from .db import StudyDB
from .engine import head_revision
from .items import new_display_code
from .models import (
    Anchor,
    AnchorShowing,
    Case,
    Cell,
    Item,
    ItemMedia,
    Judgement,
    Media,
    QueueEntry,
    Rater,
    RubricVersion,
    Session,
    Setting,
)
from .models_pairs import Calibration, Pair, PairQueueEntry, PairVote
from .models_team import (
    AnchorSetVersion,
    MediaBlob,
    PackageManifest,
    RaterCode,
)
from .package_columns import carried, export_row
from .people import rater_pk
from .roles import is_rater_session

FORMAT_VERSION = 1
# settings a rater's app needs, as a rater's role on a server reads them (but dealing on demand,
# which is the server's); everything else (release gates, the study's judges...) stays home
PACKAGE_SETTINGS = tuple(k for k in RATER_SETTINGS if k != "deal_on_demand")


def codes_for(s: OrmSession, rpk: int, kind: str, targets: list[int]) -> dict[int, str]:
    """This rater's code of each target, minted once and kept (a re-export uses the same codes)."""
    have = {
        t: c
        for t, c in s.execute(
            select(RaterCode.target_pk, RaterCode.code).where(
                RaterCode.rater_pk == rpk, RaterCode.kind == kind
            )
        )
    }
    taken = set(have.values())
    fresh = {t: new_display_code(taken) for t in targets if t not in have}
    if fresh:
        s.execute(
            insert(RaterCode),
            [dict(rater_pk=rpk, kind=kind, target_pk=t, code=c) for t, c in fresh.items()],
        )
        have.update(fresh)
    return {t: have[t] for t in targets}


@dataclass
class PackageContent:
    """Everything that goes into one rater's package, read from the study in one transaction."""

    rater: dict[str, Any]
    rubric: dict[str, Any]
    settings: dict[str, str]
    cases: list[dict[str, Any]] = field(default_factory=list)
    cells: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    item_media: list[dict[str, Any]] = field(default_factory=list)
    media: list[dict[str, Any]] = field(default_factory=list)
    # the package's name of each image -> the study's (to read its bytes; never written)
    media_source: dict[str, str] = field(default_factory=dict)
    anchors: list[dict[str, Any]] = field(default_factory=list)
    set_versions: list[dict[str, Any]] = field(default_factory=list)
    queue: list[dict[str, Any]] = field(default_factory=list)
    pairs: list[dict[str, Any]] = field(default_factory=list)
    pair_queue: list[dict[str, Any]] = field(default_factory=list)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    showings: list[dict[str, Any]] = field(default_factory=list)
    judgements: list[dict[str, Any]] = field(default_factory=list)
    votes: list[dict[str, Any]] = field(default_factory=list)
    calibrations: list[dict[str, Any]] = field(default_factory=list)
    # the study's item number -> the package's (filled by `local_keys`): an answer in doubt
    # on the server is stored in the package on the same item
    local_items: dict[int, int] = field(default_factory=dict)

    n_silent: int = 0  # silent anchors dealt as items (the lead's count; not in the package)
    n_live: int = 0

    def counts(self, *, lead: bool = True) -> dict[str, int]:
        """What the package holds; the package's own copy counts silent anchors as items."""
        out = {
            "items": self.n_live if lead else self.n_live + self.n_silent,
            "anchors": len(self.anchors),
            "pairs": len(self.pairs),
            "media": len(self.media),
            "judgements": len(self.judgements),
            "pair_votes": len(self.votes),
        }
        if lead:
            out["silent_anchors"] = self.n_silent
        return out


def _silent_anchors(
    s: OrmSession,
    rpk: int,
    seed: int,
    queue: list[QueueEntry],
    anchor_pks: list[int],
    settings: dict[str, str],
    version: str,
) -> dict[int, int]:
    """live queue position -> the anchor seeded silently before it in this package: the slots the
    app would fill (`anchor_slots`, the rater's seed) that no showing fills yet and whose live item
    is unanswered, each anchor at most once per package (a second copy would repeat an item)."""
    raw = settings.get("anchor_every")
    every = int((json.loads(raw) if raw is not None else DEFAULT_SETTINGS["anchor_every"]) or 0)
    if every < 2 or not anchor_pks or not queue:
        return {}
    shown = list(s.scalars(select(AnchorShowing).where(AnchorShowing.rater_pk == rpk)))
    filled = {x.before_position for x in shown}
    counts: dict[int, int] = {}
    for x in shown:
        counts[x.item_pk] = counts.get(x.item_pk, 0) + 1
    answered = set(
        s.scalars(
            select(Judgement.item_pk).where(
                Judgement.rater_pk == rpk,
                Judgement.context == "live",
                Judgement.rubric_version == version,
            )
        )
    )
    slots = q.anchor_slots(seed, len(queue), every)
    out: dict[int, int] = {}
    for e in queue:
        slot = q.anchor_slot(seed, e.position, every)
        if e.position not in slots or slot is None or e.position in filled:
            continue
        if e.item_pk in answered:
            continue
        choice = q.choose_anchor(anchor_pks, set(out.values()), counts, slot)
        if choice is None:
            break
        out[e.position] = choice
        counts[choice] = counts.get(choice, 0) + 1
    return out


def _read(s: OrmSession, model: Any, where: Any, *also: str) -> list[Any]:
    """The rows of `model` that `where` selects, with only the columns the package carries (and
    `also`, what the export computes from): never a column it does not carry, so a rater's login
    (granted only what a rater sees) reads its own package as the lead reads it."""
    table = model.__table__
    names = [*carried(table.name), *(n for n in also if n not in carried(table.name))]
    return list(s.execute(select(*(table.c[n] for n in names)).where(where)))


MEDIA_SALT = "media_salt"  # the package's own setting: the random part of its image names


def media_name(salt: str, sha256: str) -> str:
    """An image's name in one package: a hash of the package's random salt and the image's
    hash, so two raters' packages cannot be joined by name, and the name is no study-wide key
    (the study's hash, or the generator's file's). Whoever holds the package can check it
    against the bytes (`blob_name`)."""
    return hashlib.sha256(f"annotator-package-media:{salt}:{sha256}".encode()).hexdigest()


def package_salt(pkg: StudyDB) -> str:
    with pkg.read() as s:
        raw = s.scalar(select(Setting.value).where(Setting.key == MEDIA_SALT))
    return json.loads(raw) if raw else ""


def blob_name(pkg: StudyDB) -> Callable[[bytes], str]:
    """The name an image's bytes must have in this package (merge checks every blob by it)."""
    salt = package_salt(pkg)
    return lambda data: media_name(salt, hashlib.sha256(data).hexdigest())


def study_image_of(pkg: StudyDB, keys: list[str]) -> dict[str, str]:
    """{package blob name: the study image (SHA-256) it was exported from}, of the study images
    `keys` (a merge tells a package that carried a study's damaged image from an altered one)."""
    salt = package_salt(pkg)
    return {media_name(salt, k): k for k in keys}


def own_salt(study_id: str | None, rpk: int) -> str:
    return f"{study_id}:{rpk}"


def own_code(salt: str, kind: str, target: int) -> str:
    """The code of a case or pair in a package a rater's own login makes (it may not mint codes
    in the study): derived from the study and the rater, the same at every refresh."""
    return f"{kind[0]}-" + hashlib.sha256(f"{salt}:{kind}:{target}".encode()).hexdigest()[:16]


def read_content(
    db: StudyDB, rater: str, package_id: str, *, record: bool = True
) -> PackageContent:
    """What one rater's package holds (codes minted here, inside the study's transaction, and the
    export of `package_id` to this rater recorded: merge checks a package against it; `record`
    False: a refresh of a package already recorded).

    Made by the rater's own login on a server (their offline copy, services/outbox.py), it reads
    only what that login is granted: its live work (no anchor: those are the server's), the
    study's display codes for items and derived codes for cases and pairs (a rater's login
    mints none and records no export: the copy goes back through the rater's own inserts,
    `package_merge.merge_rows`)."""
    with db.write() as s:
        own = is_rater_session(s)
        rpk = rater_pk(s, rater)
        r = s.get_one(Rater, rpk)
        if r.is_operator:
            raise InputError(
                f"'{rater}' is an operator account: operators work in the lead's study, not in a package",
                field="--rater",
            )
        if record and not own:
            record_export(s, rpk, package_id)
        rv = s.scalars(select(RubricVersion).where(RubricVersion.is_active.is_(True))).one()
        settings = {
            k: v for k, v in s.execute(select(Setting.key, Setting.value)) if k in PACKAGE_SETTINGS
        }
        study_settings = dict(settings)
        # the package seeds no anchor itself (its anchors table holds only the calibration set,
        # which the rater knows): the silent ones are dealt as items below, and their drift
        # check is the lead's, after merge
        settings["anchor_every"] = json.dumps(0)
        media_salt = secrets.token_hex(16)
        settings[MEDIA_SALT] = json.dumps(media_salt)
        anchor_pks = [] if own else list(s.scalars(select(Anchor.item_pk).order_by(Anchor.item_pk)))
        mine = None if own else assigned_items(s, rpk)
        if own:
            live = list(s.scalars(text("SELECT item_pk FROM public.annotator_live_items()")))
        elif mine is None:
            live = list(s.scalars(select(Item.id).where(Item.is_anchor.is_(False))))
        else:
            live = mine
        queue = list(
            s.scalars(
                select(QueueEntry)
                .where(QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == rv.version)
                .order_by(QueueEntry.position)
            )
        )
        if own:  # the server built this queue from the same rule; a claim since is in it
            live = sorted(set(live) | {e.item_pk for e in queue})
        silent = _silent_anchors(s, rpk, r.seed, queue, anchor_pks, study_settings, rv.version)
        # an anchor dealt silently is not also a calibration item of this package (its content
        # and reference would name it): the calibration set here is the other anchors
        item_pks = sorted((set(live) | set(anchor_pks)) - set(silent.values()))
        item_pks_set = set(item_pks)
        item_code = {} if own else codes_for(s, rpk, "item", item_pks)
        silent_code = codes_for(s, rpk, "silent", sorted(set(silent.values())))
        # a rater's login reads the study's display codes (its codes here), the lead the flags
        also = ("created_at", "display_code") if own else ("created_at", "is_anchor")
        items = {
            it.id: it for it in _read(s, Item, Item.id.in_(item_pks + list(silent_code)), *also)
        }
        sid = study_settings.get("study_id")
        salt = own_salt(json.loads(sid) if sid else None, rpk)
        if own:
            item_code = {pk: items[pk].display_code for pk in item_pks}
        # one time on every item and image: an anchor imported on another day than the live
        # items would otherwise stand out by its timestamp
        stamp = min((it.created_at for it in items.values()), default=None)
        cells = {
            c.id: c for c in _read(s, Cell, Cell.id.in_({it.cell_pk for it in items.values()}))
        }
        case_pks = sorted({c.case_pk for c in cells.values()})
        case_code = (
            {pk: own_code(salt, "case", pk) for pk in case_pks}
            if own
            else codes_for(s, rpk, "case", case_pks)
        )
        out = PackageContent(
            rater=export_row("raters", r, is_operator=False),
            rubric=export_row("rubric_versions", rv, is_active=True),
            settings=settings,
            cases=[
                export_row("cases", c, case_id=case_code[c.id], task_type=None)
                for c in _read(s, Case, Case.id.in_(case_pks))
            ],
            n_silent=len(silent_code),
            n_live=len(set(live) - set(anchor_pks)),
        )
        out.cells = [
            export_row(
                "cells", c, prompt_sha256=hashlib.sha256(c.prompt.encode("utf-8")).hexdigest()
            )
            for c in cells.values()
        ]
        # a silent anchor's row: a live item's row in every column (its own code, no flag, no
        # reference); its package key is the negated study pk until local_keys numbers it
        rows_of = [(pk, item_code[pk], pk) for pk in item_pks]
        rows_of += [(-pk, silent_code[pk], pk) for pk in sorted(silent_code)]
        for key, code, pk in rows_of:
            it = items[pk]
            row = export_row(
                "items",
                it,
                item_id=code,
                generator="",
                display_code=code,
                slice=None,
                seed=None,
                # the calibration copy keeps its flag (the rater calibrates on it, knowingly)
                is_anchor=not own and it.is_anchor and key > 0,
                content_sha256=hashlib.sha256(code.encode()).hexdigest(),
                source=None,
                created_at=stamp,
            )
            out.items.append(dict(row, id=key))
        shas: set[str] = set()
        media_of = _read(
            s, ItemMedia, ItemMedia.item_pk.in_(item_pks + list(silent_code)), "media_sha256"
        )
        for key, m in [(m.item_pk, m) for m in media_of if m.item_pk in item_pks_set] + [
            (-m.item_pk, m) for m in media_of if m.item_pk in silent_code
        ]:
            name = media_name(media_salt, m.media_sha256)
            row = export_row("item_media", m, source_name=None, media_sha256=name)
            out.item_media.append(dict(row, item_pk=key))
            shas.add(m.media_sha256)
            out.media_source[name] = m.media_sha256
        out.media = (
            [
                export_row(
                    "media",
                    m,
                    sha256=(name := media_name(media_salt, m.sha256)),
                    original_sha256=name,
                    created_at=stamp,
                )
                for m in _read(s, Media, Media.sha256.in_(shas), "sha256")
            ]
            if shas
            else []
        )
        out.anchors = (
            []
            if own
            else [
                export_row("anchors", a)
                for a in s.scalars(select(Anchor))
                if a.item_pk in item_pks_set
            ]
        )
        out.set_versions = [
            export_row("anchor_set_versions", v, note="")
            for v in s.scalars(select(AnchorSetVersion))
        ]
        # the silent anchors take their places in the queue as items; positions renumbered 0..n-1
        # (a gap or a pattern in them would mark the anchors); merge maps each back to the slot
        out.queue = []
        for e in queue:
            if e.position in silent:
                out.queue.append(dict(export_row("queue", e), item_pk=-silent[e.position]))
            out.queue.append(export_row("queue", e))
        for n, row in enumerate(out.queue):
            row["position"] = n
        pair_pks = assigned_pairs(s, rpk)
        if pair_pks is None:
            pair_pks = list(
                s.scalars(select(PairQueueEntry.pair_pk).where(PairQueueEntry.rater_pk == rpk))
            )
        pairs = _read(s, Pair, Pair.id.in_(pair_pks)) if pair_pks else []
        pairs = [p for p in pairs if p.item_a in items and p.item_b in items]
        pair_code = (
            {p.id: own_code(salt, "pair", p.id) for p in pairs}
            if own
            else codes_for(s, rpk, "pair", [p.id for p in pairs])
        )
        out.pairs = [export_row("pairs", p, pair_id=pair_code[p.id]) for p in pairs]
        kept_pairs = {p.id for p in pairs}
        out.pair_queue = [
            export_row("pair_queue", q)
            for q in s.scalars(select(PairQueueEntry).where(PairQueueEntry.rater_pk == rpk))
            if q.pair_pk in kept_pairs
        ]
        out.sessions = [
            export_row("sessions", x)
            for x in s.scalars(select(Session).where(Session.rater_pk == rpk))
        ]
        # no showings: merged showings name the anchors, they stay in the lead's study
        out.showings = []
        out.judgements = [
            export_row("judgements", x)
            for x in s.scalars(
                select(Judgement).where(Judgement.rater_pk == rpk).order_by(Judgement.id)
            )
            if x.item_pk in item_pks_set and x.context != "anchor"
        ]
        # a live answer travels with the package's position of its item
        position_of = {e["item_pk"]: e["position"] for e in out.queue}
        for j in out.judgements:
            if j["context"] == "live" and j["item_pk"] in position_of:
                j["queue_position"] = position_of[j["item_pk"]]
        out.votes = [
            export_row("pair_votes", x)
            for x in s.scalars(
                select(PairVote).where(PairVote.rater_pk == rpk).order_by(PairVote.id)
            )
            if x.pair_pk in kept_pairs
        ]
        out.calibrations = [
            export_row("calibrations", x)
            for x in s.scalars(select(Calibration).where(Calibration.rater_pk == rpk))
        ]
        return local_keys(out)


def _renumber(rows: list[dict[str, Any]], order: Any = None) -> dict[int, int]:
    """old id -> 1, 2, ... in `order` (default: the rows' own order)."""
    keys = sorted(rows, key=order) if order else rows
    return {r["id"]: n for n, r in enumerate(keys, start=1)}


def local_keys(c: PackageContent) -> PackageContent:
    """The package's own row numbers instead of the study's: a study-wide item number says where
    an item was imported (its generator, by order within a case), lets two raters join their
    files, and an answer's id counts everyone's answers. Items are numbered in the order of the
    rater's codes (random), cells by their first item, cases by code; answer rows 1, 2, ... in the
    order they were made. Merge never reads these numbers: it maps codes and UUIDs."""
    item = _renumber(c.items, lambda r: r["item_id"])
    first: dict[int, int] = {}
    for r in c.items:
        first[r["cell_pk"]] = min(first.get(r["cell_pk"], 1 << 62), item[r["id"]])
    cell = _renumber(c.cells, lambda r: first.get(r["id"], 1 << 62))
    case = _renumber(c.cases, lambda r: r["case_id"])
    pair = _renumber(c.pairs, lambda r: r["pair_id"])
    sess = _renumber(c.sessions)
    show = _renumber(c.showings)
    jud = _renumber(c.judgements)
    vot = _renumber(c.votes)
    cal = _renumber(c.calibrations)

    def opt(m: dict[int, int], v: int | None) -> int | None:
        return None if v is None else m[v]

    c.local_items = dict(item)
    c.cases = sorted((dict(r, id=case[r["id"]]) for r in c.cases), key=lambda r: r["id"])
    c.cells = [dict(r, id=cell[r["id"]], case_pk=case[r["case_pk"]]) for r in c.cells]
    c.items = sorted(
        (dict(r, id=item[r["id"]], cell_pk=cell[r["cell_pk"]]) for r in c.items),
        key=lambda r: r["id"],
    )
    c.item_media = [dict(r, item_pk=item[r["item_pk"]]) for r in c.item_media]
    c.anchors = [dict(r, item_pk=item[r["item_pk"]]) for r in c.anchors]
    c.queue = [dict(r, item_pk=item[r["item_pk"]]) for r in c.queue]
    c.pairs = [
        dict(r, id=pair[r["id"]], item_a=min(a, b), item_b=max(a, b))
        for r in c.pairs
        for a, b in [(item[r["item_a"]], item[r["item_b"]])]
    ]
    c.pair_queue = [
        dict(r, pair_pk=pair[r["pair_pk"]], left_item=item[r["left_item"]]) for r in c.pair_queue
    ]
    c.sessions = [dict(r, id=sess[r["id"]]) for r in c.sessions]
    c.showings = [
        dict(r, id=show[r["id"]], session_pk=sess[r["session_pk"]], item_pk=item[r["item_pk"]])
        for r in c.showings
    ]
    c.judgements = [
        dict(
            r,
            id=jud[r["id"]],
            item_pk=item[r["item_pk"]],
            session_pk=opt(sess, r["session_pk"]),
            showing_pk=opt(show, r["showing_pk"]),
            supersedes=opt(jud, r["supersedes"]),
        )
        for r in c.judgements
    ]
    c.votes = [
        dict(
            r,
            id=vot[r["id"]],
            pair_pk=pair[r["pair_pk"]],
            item_left=item[r["item_left"]],
            item_right=item[r["item_right"]],
            session_pk=opt(sess, r["session_pk"]),
            supersedes=opt(vot, r["supersedes"]),
        )
        for r in c.votes
    ]
    c.calibrations = [
        dict(r, id=cal[r["id"]], session_pk=sess[r["session_pk"]]) for r in c.calibrations
    ]
    return c


def write_content(
    dest: StudyDB,
    content: PackageContent,
    *,
    study_id: str,
    package_id: str,
    created_at: datetime,
) -> None:
    """Fill a fresh package database (one transaction), all but the images' bytes: those go
    into the finished file (`write_media`)."""
    with dest.write() as d:
        for key, text in content.settings.items():
            settings.put(d, key, json.loads(text))
        settings.put(d, "role", "package")
        d.execute(insert(RubricVersion), [content.rubric])
        rpk = d.execute(insert(Rater).returning(Rater.id), [content.rater]).scalar_one()
        if content.cases:
            d.execute(insert(Case), content.cases)
        if content.cells:
            d.execute(insert(Cell), content.cells)
        if content.media:
            d.execute(insert(Media), content.media)
        if content.items:
            d.execute(insert(Item), content.items)
        for rows, model in (
            (content.item_media, ItemMedia),
            (content.anchors, Anchor),
            (content.set_versions, AnchorSetVersion),
        ):
            if rows:
                d.execute(insert(model), rows)
        if content.queue:
            d.execute(insert(QueueEntry), [dict(q, rater_pk=rpk) for q in content.queue])
        if content.pairs:
            d.execute(insert(Pair), content.pairs)
        if content.pair_queue:
            d.execute(insert(PairQueueEntry), [dict(q, rater_pk=rpk) for q in content.pair_queue])
        for rows, rater_table in (
            (content.sessions, Session),
            (content.showings, AnchorShowing),
            (content.judgements, Judgement),
            (content.votes, PairVote),
            (content.calibrations, Calibration),
        ):
            if rows:
                d.execute(insert(rater_table), [dict(r, rater_pk=rpk) for r in rows])
        d.add(
            PackageManifest(
                id=package_id,
                format_version=FORMAT_VERSION,
                study_id=study_id,
                rubric_id=content.rubric["rubric_id"],
                rubric_version=content.rubric["version"],
                schema_revision=head_revision(),
                rater=content.rater["name"],
                counts=json.dumps(content.counts(lead=False)),
                created_at=created_at,
            )
        )


def write_media(path: Path, content: PackageContent, read_media: Callable[[str], bytes]) -> None:
    """The images' bytes, written once, straight into the finished package file (the copy
    VACUUM INTO made of the scratch database), one image in memory at a time.

    Why not in the scratch database with the rest: a package is the size of its images (2,000
    images of 2 MB: 4 GB), and the scratch's write-ahead log, its checkpoint and VACUUM INTO's
    copy wrote every byte four times. The file is the `.tmp` of an atomic replace, deleted if
    anything fails and fsynced before it is renamed, so it needs no journal of its own; rows are
    only added, so it keeps no free page (tested). Its journal mode stays the one VACUUM INTO
    gave it."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("BEGIN")
        sql = f"INSERT INTO {MediaBlob.__tablename__} (sha256, data) VALUES (?, ?)"
        for m in content.media:
            conn.execute(sql, (m["sha256"], read_media(content.media_source[m["sha256"]])))
        conn.execute("COMMIT")
    finally:
        conn.close()


class _Stale(Exception):
    """The package no longer matches the study's content row for row (rolled back)."""


def refresh_answers(dest: StudyDB, content: PackageContent) -> bool:
    """Add to a package the rater's rows the study holds and the package lacks (answers given on
    the server since the package was made, queue entries added since), with their UUIDs, so the
    package serves, offline, only what is still to do; one transaction.

    False (nothing written) when the package is not a row-for-row earlier state of `content`:
    other items, a row numbered otherwise, or an answer of its own the study lacks (not synced
    yet); the caller makes the package again then."""
    answer_tables = (
        (content.sessions, Session),
        (content.showings, AnchorShowing),
        (content.judgements, Judgement),
        (content.votes, PairVote),
        (content.calibrations, Calibration),
    )
    try:
        with dest.write() as d:
            have_items = {i: c for i, c in d.execute(select(Item.id, Item.item_id))}
            if have_items != {r["id"]: r["item_id"] for r in content.items}:
                raise _Stale
            rpk = d.scalar(select(Rater.id))
            for rows, model in answer_tables:
                have = {u: i for u, i in d.execute(select(model.uuid, model.id))}
                theirs = {r["uuid"]: r["id"] for r in rows}
                if any(theirs.get(u) != i for u, i in have.items()):
                    raise _Stale
                new = [dict(r, rater_pk=rpk) for r in rows if r["uuid"] not in have]
                if new:
                    d.execute(insert(model), new)
            queues: tuple[tuple[list[dict[str, Any]], type[QueueEntry] | type[PairQueueEntry]], ...]
            queues = ((content.queue, QueueEntry), (content.pair_queue, PairQueueEntry))
            for rows, queue in queues:
                have_q = {tuple(k) for k in d.execute(select(queue.position, queue.rater_pk))}
                new = [dict(q, rater_pk=rpk) for q in rows if (q["position"], rpk) not in have_q]
                if new:
                    d.execute(insert(queue), new)
    except _Stale:
        return False
    return True


def manifest(db: StudyDB) -> dict[str, Any] | None:
    with db.read() as s:
        m = s.scalars(select(PackageManifest)).first()
        if m is None:
            return None
        return dict(
            id=m.id,
            format_version=m.format_version,
            study_id=m.study_id,
            rubric_id=m.rubric_id,
            rubric_version=m.rubric_version,
            schema_revision=m.schema_revision,
            rater=m.rater,
            counts=json.loads(m.counts),
            created_at=m.created_at,
        )


def record_export(s: OrmSession, rpk: int, package_id: str) -> None:
    """The lead's record that package `package_id` went to this rater: merge takes the rater from
    here, never from the file (a per-rater code of kind "package", numbered per rater)."""
    n = s.scalar(
        select(func.count())
        .select_from(RaterCode)
        .where(RaterCode.rater_pk == rpk, RaterCode.kind == "package")
    )
    s.add(RaterCode(rater_pk=rpk, kind="package", target_pk=(n or 0) + 1, code=package_id))
