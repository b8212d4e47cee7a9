"""Rater packages (contract 5.6): one SQLite file holding one rater's work, blinded by
construction, and the merge that brings their answers back into the lead's study.

Blind by construction: the package is a new database into which only what the
rater may see is written: items under per-rater codes (the code is the item_id,
the case id is a code too), no generator, no source name or path, no original
hashes, no judge scores, no other rater, and no study-wide row number (`local_keys`).
Silent drift anchors are dealt as items (`_silent_anchors`): their own codes, places in the
queue, no flag, no reference; the `anchors` table holds only the calibration set (the anchors
not dealt silently), and merge maps the silent answers back (`_Merger.unblind`).
Answer rows keep their UUIDs, which is all merge needs to insert what is new and skip
what it has; merge checks every row before it writes one (`package_checks`), and takes
the rater from the lead's record of the export, never from the file.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as OrmSession

from ..domain import calibration
from ..domain import queue as q
from ..domain.errors import InputError
from ..domain.rubric import Rubric, rubric_from_canonical
from . import settings
from .assignments import assigned_items, assigned_pairs
from .chains import is_current
from .db import StudyDB
from .engine import head_revision
from .items import free_display_code, new_display_code
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
    Merge,
    MergeConflict,
    PackageManifest,
    RaterCode,
)
from .package_checks import bad, check_rows, check_timestamps
from .people import rater_pk

FORMAT_VERSION = 1
# settings a rater's app needs; everything else (release gates, the study's judges...) stays home
PACKAGE_SETTINGS = (
    "name",
    "study_id",
    "anchor_every",
    "qualification",
    "pair_question",
    "pair_raters_per_pair",
)


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
    new = [
        dict(rater_pk=rpk, kind=kind, target_pk=t, code=new_display_code(taken))
        for t in targets
        if t not in have
    ]
    if new:
        s.execute(insert(RaterCode), new)
        have.update({r["target_pk"]: r["code"] for r in new})
    return {t: have[t] for t in targets}


@dataclass
class PackageContent:
    """Everything that goes into one rater's package, read from the study in one transaction."""

    rater: dict[str, Any]
    rubric: dict[str, Any]
    settings: dict[str, str]
    cases: dict[int, str] = field(default_factory=dict)  # case pk -> code
    cells: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    item_media: list[dict[str, Any]] = field(default_factory=list)
    media: list[dict[str, Any]] = field(default_factory=list)
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
    every = int((json.loads(raw) if raw is not None else q.ANCHOR_EVERY) or 0)
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


def _cols(row: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {n: getattr(row, n) for n in names}


def read_content(
    db: StudyDB, rater: str, package_id: str, *, record: bool = True
) -> PackageContent:
    """What one rater's package holds (codes minted here, inside the study's transaction, and the
    export of `package_id` to this rater recorded: merge checks a package against it; `record`
    False: a refresh of a package already recorded)."""
    with db.write() as s:
        rpk = rater_pk(s, rater)
        r = s.get_one(Rater, rpk)
        if r.is_operator:
            raise InputError(
                f"'{rater}' is an operator account: operators work in the lead's study, not in a package",
                field="--rater",
            )
        if record:
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
        mine = assigned_items(s, rpk)
        live = (
            mine
            if mine is not None
            else list(s.scalars(select(Item.id).where(Item.is_anchor.is_(False))))
        )
        anchor_pks = list(s.scalars(select(Anchor.item_pk).order_by(Anchor.item_pk)))
        queue = list(
            s.scalars(
                select(QueueEntry)
                .where(QueueEntry.rater_pk == rpk, QueueEntry.rubric_version == rv.version)
                .order_by(QueueEntry.position)
            )
        )
        silent = _silent_anchors(s, rpk, r.seed, queue, anchor_pks, study_settings, rv.version)
        # an anchor dealt silently is not also a calibration item of this package (its content
        # and reference would name it): the calibration set here is the other anchors
        item_pks = sorted((set(live) | set(anchor_pks)) - set(silent.values()))
        item_code = codes_for(s, rpk, "item", item_pks)
        item_pks_set = set(item_pks)
        silent_code = codes_for(s, rpk, "silent", sorted(set(silent.values())))
        items = (
            {it.id: it for it in s.scalars(select(Item).where(Item.id.in_(item_pks)))}
            if item_pks
            else {}
        )
        if silent_code:
            items.update(
                {it.id: it for it in s.scalars(select(Item).where(Item.id.in_(list(silent_code))))}
            )
        # one time on every item and image: an anchor imported on another day than the live
        # items would otherwise stand out by its timestamp
        stamp = min((it.created_at for it in items.values()), default=None)
        cells = {
            c.id: c
            for c in s.scalars(
                select(Cell).where(Cell.id.in_({it.cell_pk for it in items.values()}))
            )
        }
        case_code = codes_for(s, rpk, "case", sorted({c.case_pk for c in cells.values()}))
        out = PackageContent(
            rater=dict(
                name=r.name,
                is_operator=False,
                expertise=r.expertise,
                seed=r.seed,
                created_at=r.created_at,
            ),
            rubric=dict(
                version=rv.version, rubric_id=rv.rubric_id, canonical=rv.canonical, is_active=True
            ),
            settings=settings,
            cases=case_code,
            n_silent=len(silent_code),
            n_live=len(set(live) - set(anchor_pks)),
        )
        out.cells = [
            dict(
                id=c.id,
                case_pk=c.case_pk,
                prompt_sha256=c.prompt_sha256,
                prompt=c.prompt,
                criteria=c.criteria,
            )
            for c in cells.values()
        ]
        # a silent anchor's row: a live item's row in every column (its own code, no flag, no
        # reference); its package key is the negated study pk until local_keys numbers it
        rows_of = [(pk, item_code[pk], pk) for pk in item_pks]
        rows_of += [(-pk, silent_code[pk], pk) for pk in sorted(silent_code)]
        for key, code, pk in rows_of:
            it = items[pk]
            out.items.append(
                dict(
                    id=key,
                    item_id=code,
                    cell_pk=it.cell_pk,
                    generator="",
                    display_code=code,
                    slice=None,
                    seed=None,
                    text=it.text,
                    # the calibration copy keeps its flag (the rater calibrates on it, knowingly)
                    is_anchor=it.is_anchor and key > 0,
                    content_sha256=hashlib.sha256(code.encode()).hexdigest(),
                    source=None,
                    created_at=stamp,
                )
            )
        shas: set[str] = set()
        media_of = list(
            s.scalars(select(ItemMedia).where(ItemMedia.item_pk.in_(item_pks + list(silent_code))))
        )
        for key, m in [(m.item_pk, m) for m in media_of if m.item_pk in item_pks_set] + [
            (-m.item_pk, m) for m in media_of if m.item_pk in silent_code
        ]:
            out.item_media.append(
                dict(
                    item_pk=key,
                    role=m.role,
                    ordinal=m.ordinal,
                    media_sha256=m.media_sha256,
                    source_name=None,
                )
            )
            shas.add(m.media_sha256)
        out.media = (
            [
                dict(
                    sha256=m.sha256,
                    original_sha256=m.sha256,
                    width=m.width,
                    height=m.height,
                    n_bytes=m.n_bytes,
                    created_at=stamp,
                )
                for m in s.scalars(select(Media).where(Media.sha256.in_(shas)))
            ]
            if shas
            else []
        )
        out.anchors = [
            dict(
                item_pk=a.item_pk,
                anchor_set=a.anchor_set,
                reference=a.reference,
                rationale=a.rationale,
                set_version=a.set_version,
            )
            for a in s.scalars(select(Anchor))
            if a.item_pk in item_pks_set
        ]
        out.set_versions = [
            dict(anchor_set=v.anchor_set, version=v.version, note="", created_at=v.created_at)
            for v in s.scalars(select(AnchorSetVersion))
        ]
        # the silent anchors take their places in the queue as items; positions renumbered 0..n-1
        # (a gap or a pattern in them would mark the anchors); merge maps each back to the slot
        out.queue = []
        for e in queue:
            if e.position in silent:
                out.queue.append(
                    dict(
                        item_pk=-silent[e.position],
                        seed=e.seed,
                        rubric_version=e.rubric_version,
                        position=0,
                    )
                )
            out.queue.append(_cols(e, ("position", "item_pk", "seed", "rubric_version")))
        for n, row in enumerate(out.queue):
            row["position"] = n
        pair_pks = assigned_pairs(s, rpk)
        if pair_pks is None:
            pair_pks = list(
                s.scalars(select(PairQueueEntry.pair_pk).where(PairQueueEntry.rater_pk == rpk))
            )
        pairs = (
            [p for p in s.scalars(select(Pair).where(Pair.id.in_(pair_pks)))] if pair_pks else []
        )
        pairs = [p for p in pairs if p.item_a in items and p.item_b in items]
        pair_code = codes_for(s, rpk, "pair", [p.id for p in pairs])
        out.pairs = [
            dict(id=p.id, pair_id=pair_code[p.id], item_a=p.item_a, item_b=p.item_b) for p in pairs
        ]
        kept_pairs = {p.id for p in pairs}
        out.pair_queue = [
            _cols(q, ("position", "pair_pk", "left_item", "seed"))
            for q in s.scalars(select(PairQueueEntry).where(PairQueueEntry.rater_pk == rpk))
            if q.pair_pk in kept_pairs
        ]
        out.sessions = [
            _cols(x, ("id", "uuid", "mode", "started_at"))
            for x in s.scalars(select(Session).where(Session.rater_pk == rpk))
        ]
        out.showings = [
            _cols(
                x,
                (
                    "id",
                    "uuid",
                    "session_pk",
                    "item_pk",
                    "before_position",
                    "seed",
                    "display_code",
                    "created_at",
                    "anchor_set_version",
                ),
            )
            for x in s.scalars(select(AnchorShowing).where(AnchorShowing.rater_pk == rpk))
            if False  # merged showings name the anchors: they stay in the lead's study
        ]
        out.judgements = [
            _cols(
                x,
                (
                    "id",
                    "uuid",
                    "item_pk",
                    "rubric_version",
                    "session_pk",
                    "context",
                    "showing_pk",
                    "queue_position",
                    "answers",
                    "reason",
                    "time_ms",
                    "source",
                    "supersedes",
                    "created_at",
                ),
            )
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
            _cols(
                x,
                (
                    "id",
                    "uuid",
                    "pair_pk",
                    "item_left",
                    "item_right",
                    "choice",
                    "side_seed",
                    "session_pk",
                    "queue_position",
                    "reason",
                    "time_ms",
                    "source",
                    "supersedes",
                    "created_at",
                ),
            )
            for x in s.scalars(
                select(PairVote).where(PairVote.rater_pk == rpk).order_by(PairVote.id)
            )
            if x.pair_pk in kept_pairs
        ]
        out.calibrations = [
            _cols(
                x,
                (
                    "id",
                    "uuid",
                    "session_pk",
                    "anchor_set",
                    "anchor_set_version",
                    "rubric_version",
                    "result",
                    "qualified",
                    "created_at",
                ),
            )
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
    first = {}
    for r in c.items:
        first[r["cell_pk"]] = min(first.get(r["cell_pk"], 1 << 62), item[r["id"]])
    cell = _renumber(c.cells, lambda r: first.get(r["id"], 1 << 62))
    case = {pk: n for n, (pk, _) in enumerate(sorted(c.cases.items(), key=lambda kv: kv[1]), 1)}
    pair = _renumber(c.pairs, lambda r: r["pair_id"])
    sess = _renumber(c.sessions)
    show = _renumber(c.showings)
    jud = _renumber(c.judgements)
    vot = _renumber(c.votes)
    cal = _renumber(c.calibrations)

    def opt(m: dict[int, int], v: int | None) -> int | None:
        return None if v is None else m[v]

    c.local_items = dict(item)
    c.cases = {case[pk]: code for pk, code in c.cases.items()}
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
    read_media,
    created_at: datetime,
) -> None:  # noqa: ANN001 - read_media: sha -> bytes
    """Fill a fresh package database (one transaction); media blobs are streamed one at a time."""
    with dest.write() as d:
        for key, text in content.settings.items():
            settings.put(d, key, json.loads(text))
        settings.put(d, "role", "package")
        d.execute(insert(RubricVersion), [content.rubric])
        rpk = d.scalar(insert(Rater).returning(Rater.id), [content.rater])
        d.execute(
            insert(Case),
            [dict(id=pk, case_id=code, task_type=None) for pk, code in content.cases.items()],
        )
        if content.cells:
            d.execute(insert(Cell), content.cells)
        if content.media:
            d.execute(insert(Media), content.media)
            for m in content.media:
                d.execute(
                    insert(MediaBlob), [dict(sha256=m["sha256"], data=read_media(m["sha256"]))]
                )
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
        for rows, model in (
            (content.sessions, Session),
            (content.showings, AnchorShowing),
            (content.judgements, Judgement),
            (content.votes, PairVote),
            (content.calibrations, Calibration),
        ):
            if rows:
                d.execute(insert(model), [dict(r, rater_pk=rpk) for r in rows])
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
            for rows, model in ((content.queue, QueueEntry), (content.pair_queue, PairQueueEntry)):
                have_q = {tuple(k) for k in d.execute(select(model.position, model.rater_pk))}
                new = [dict(q, rater_pk=rpk) for q in rows if (q["position"], rpk) not in have_q]
                if new:
                    d.execute(insert(model), new)
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


# ---- merge ---------------------------------------------------------------------------------


@dataclass
class PackageRows:
    """A package's answer rows, with its local keys replaced by codes and UUIDs."""

    rater: str
    sessions: list[dict[str, Any]]
    showings: list[dict[str, Any]]
    judgements: list[dict[str, Any]]
    votes: list[dict[str, Any]]
    calibrations: list[dict[str, Any]]
    queue: list[str] = field(default_factory=list)  # item codes in the package's queue order


def _ref(table: str, rid: Any, field: str, mapping: dict, key: Any, *, optional: bool = False):
    """The code or UUID a package row points at through its local key; refused when the key names
    no row of the package (an altered file)."""
    if key is None and optional:
        return None
    try:
        return mapping[key]
    except (KeyError, TypeError):
        raise bad(table, rid, field, "it points at no row of the package") from None


def read_rows(pkg: StudyDB) -> PackageRows:
    """The package's answer rows with its local keys replaced by codes and UUIDs; every local key
    checked (an unknown one refuses the package), and every row the one rater's."""
    with pkg.read() as s:
        raters = s.execute(select(Rater.id, Rater.name)).all()
        if len(raters) != 1:
            raise InputError(
                f"a package holds one rater; this one holds {len(raters)}", field="raters"
            )
        ((own, name),) = raters
        check_timestamps(s)
        for model in (Session, AnchorShowing, Judgement, PairVote, Calibration):
            stray = s.scalar(select(model.id).where(model.rater_pk.is_distinct_from(own)).limit(1))
            if stray is not None:
                raise bad(model.__tablename__, stray, "rater_pk", "it is not the package's rater's")
        stray = s.scalar(select(PairVote.id).where(PairVote.judge.is_not(None)).limit(1))
        if stray is not None:
            raise bad("pair_votes", stray, "judge", "a package holds no judge's votes")
        code = dict(s.execute(select(Item.id, Item.item_id)).all())
        pair_code = dict(s.execute(select(Pair.id, Pair.pair_id)).all())
        sessions = list(s.scalars(select(Session).order_by(Session.id)))
        showings = list(s.scalars(select(AnchorShowing).order_by(AnchorShowing.id)))
        judgements = list(s.scalars(select(Judgement).order_by(Judgement.id)))
        votes = list(s.scalars(select(PairVote).order_by(PairVote.id)))
        sess = {x.id: x.uuid for x in sessions}
        show = {x.id: x.uuid for x in showings}
        jud = {x.id: x.uuid for x in judgements}
        vot = {x.id: x.uuid for x in votes}
        T, V = "judgements", "pair_votes"
        return PackageRows(
            rater=name,
            queue=[
                code[pk]
                for pk in s.scalars(select(QueueEntry.item_pk).order_by(QueueEntry.position))
                if pk in code
            ],
            sessions=[
                dict(id=x.id, uuid=x.uuid, mode=x.mode, started_at=x.started_at) for x in sessions
            ],
            showings=[
                dict(
                    id=x.id,
                    uuid=x.uuid,
                    session=_ref("anchor_showings", x.id, "session_pk", sess, x.session_pk),
                    item=_ref("anchor_showings", x.id, "item_pk", code, x.item_pk),
                    before_position=x.before_position,
                    seed=x.seed,
                    display_code=x.display_code,
                    created_at=x.created_at,
                    anchor_set_version=x.anchor_set_version,
                )
                for x in showings
            ],
            judgements=[
                dict(
                    id=x.id,
                    uuid=x.uuid,
                    item=_ref(T, x.id, "item_pk", code, x.item_pk),
                    rubric_version=x.rubric_version,
                    session=_ref(T, x.id, "session_pk", sess, x.session_pk, optional=True),
                    context=x.context,
                    showing=_ref(T, x.id, "showing_pk", show, x.showing_pk, optional=True),
                    queue_position=x.queue_position,
                    answers=x.answers,
                    reason=x.reason,
                    time_ms=x.time_ms,
                    source=x.source,
                    supersedes=_ref(T, x.id, "supersedes", jud, x.supersedes, optional=True),
                    created_at=x.created_at,
                )
                for x in judgements
            ],
            votes=[
                dict(
                    id=x.id,
                    uuid=x.uuid,
                    pair=_ref(V, x.id, "pair_pk", pair_code, x.pair_pk),
                    item_left=_ref(V, x.id, "item_left", code, x.item_left),
                    item_right=_ref(V, x.id, "item_right", code, x.item_right),
                    choice=x.choice,
                    side_seed=x.side_seed,
                    session=_ref(V, x.id, "session_pk", sess, x.session_pk, optional=True),
                    queue_position=x.queue_position,
                    reason=x.reason,
                    time_ms=x.time_ms,
                    source=x.source,
                    supersedes=_ref(V, x.id, "supersedes", vot, x.supersedes, optional=True),
                    created_at=x.created_at,
                )
                for x in votes
            ],
            calibrations=[
                dict(
                    id=x.id,
                    uuid=x.uuid,
                    session=_ref("calibrations", x.id, "session_pk", sess, x.session_pk),
                    anchor_set=x.anchor_set,
                    anchor_set_version=x.anchor_set_version,
                    rubric_version=x.rubric_version,
                    created_at=x.created_at,
                )
                for x in s.scalars(select(Calibration).order_by(Calibration.id))
            ],
        )


def _same(existing: dict[str, Any], incoming: dict[str, Any]) -> bool:
    return all(existing.get(k) == v for k, v in incoming.items())


class _Merger:
    """Inserts one package's rows into the study inside one transaction, by UUID."""

    def __init__(
        self,
        s: OrmSession,
        rows: PackageRows,
        package_sha: str,
        package_id: str,
        *,
        rpk: int,
        version: str,
    ) -> None:
        self.s, self.rows, self.rpk, self.version = s, rows, rpk, version
        self.items = {
            c: t
            for c, t in s.execute(
                select(RaterCode.code, RaterCode.target_pk).where(
                    RaterCode.rater_pk == self.rpk, RaterCode.kind == "item"
                )
            )
        }
        self.pairs = {
            c: t
            for c, t in s.execute(
                select(RaterCode.code, RaterCode.target_pk).where(
                    RaterCode.rater_pk == self.rpk, RaterCode.kind == "pair"
                )
            )
        }
        self.pair_items = {
            pk: {a, b}
            for pk, a, b in s.execute(select(Pair.id, Pair.item_a, Pair.item_b))
            if pk in set(self.pairs.values())
        }
        self.anchor_pks = set(s.scalars(select(Anchor.item_pk)))
        # the codes this rater's packages gave silent anchors (each its own code, apart from the
        # anchor's calibration code): an answer on one is an anchor answer
        self.silent = {
            c: t
            for c, t in s.execute(
                select(RaterCode.code, RaterCode.target_pk).where(
                    RaterCode.rater_pk == self.rpk, RaterCode.kind == "silent"
                )
            )
        }
        self._code_of = {t: c for c, t in self.items.items()}
        self.items.update(self.silent)
        self.rubrics = study_rubrics(s)
        self.merge = Merge(
            package_sha256=package_sha, package_id=package_id, rater_pk=self.rpk, counts="{}"
        )
        s.add(self.merge)
        s.flush()
        self.added = {
            "sessions": 0,
            "anchor_showings": 0,
            "judgements": 0,
            "pair_votes": 0,
            "calibrations": 0,
        }
        self.skipped = 0
        self.conflicts: list[str] = []

    def unblind(self) -> None:
        """A package shows its silent anchors as items: their answers come back as live answers
        on a silent code. Each becomes the anchor answer it is in the lead's study, on a showing
        (one per silent code, its UUID derived from the code, so a second merge finds it) before
        the study position of the live item that follows it in the package's queue; live answers
        get their study queue positions back. A live answer on a calibration code is refused."""
        position = {
            c: p
            for p, pk in self.s.execute(
                select(QueueEntry.position, QueueEntry.item_pk).where(
                    QueueEntry.rater_pk == self.rpk, QueueEntry.rubric_version == self.version
                )
            )
            for c in [self._code_of.get(pk)]
            if c is not None
        }
        before: dict[str, int] = {}
        pending: list[str] = []
        for c in self.rows.queue:
            if c in self.silent:
                pending.append(c)
            elif c in position:
                before.update({p: position[c] for p in pending})
                pending = []
        # Silent anchors after the last live item the study has a place for (or a rater whose
        # queue the lead's study never built): shown after every known place, in the package's
        # own order.
        end = max(position.values()) + 1 if position else 0
        order = {c: i for i, c in enumerate(self.rows.queue)}
        before.update({c: end + order[c] for c in pending})
        showings: dict[str, dict[str, Any]] = {}
        for x in self.rows.judgements:
            code = x["item"]
            if x["context"] == "live" and code in self.silent:
                if code not in before:
                    raise bad("judgements", x["id"], "item_pk", "an item out of the queue")
                show = showings.get(code)
                if show is None:
                    show = showings[code] = dict(
                        id=f"silent:{code}",
                        uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"annotator:{self.rpk}:{code}")),
                        session=x["session"],
                        item=code,
                        before_position=before[code],
                        seed=0,
                        display_code=code,
                        created_at=x["created_at"],
                        anchor_set_version=self._set_version(self.silent[code]),
                    )
                x.update(context="anchor", showing=show["uuid"], queue_position=before[code])
            elif x["context"] == "live":
                if self.items.get(code) in self.anchor_pks:
                    raise bad("judgements", x["id"], "item_pk", "a live answer on an anchor")
                if code in position:
                    x["queue_position"] = position[code]
        self.rows.showings.extend(showings.values())

    def _set_version(self, anchor_pk: int) -> int | None:
        from .adjudication import current_version

        name = self.s.scalar(select(Anchor.anchor_set).where(Anchor.item_pk == anchor_pk))
        return current_version(self.s, name) if name is not None else None

    def check_assigned(self) -> None:
        """Every row must name an item (or pair) this rater was given: codes are per rater."""
        mine = assigned_items(self.s, self.rpk)
        allowed = None if mine is None else set(mine) | set(self.s.scalars(select(Anchor.item_pk)))
        for j in self.rows.judgements + self.rows.showings:
            pk = self.items.get(j["item"])
            if pk is None or (allowed is not None and pk not in allowed):
                raise InputError(
                    f"the package holds answers on an item '{j['item']}' that was not dealt to "
                    f"'{self.rows.rater}': it is not this rater's package, or it was altered",
                    field="items",
                )
        for v in self.rows.votes:
            if v["pair"] not in self.pairs:
                raise InputError(
                    f"the package holds a vote on a pair '{v['pair']}' that was not dealt to "
                    f"'{self.rows.rater}'",
                    field="pairs",
                )
            sides = {self.items.get(v["item_left"]), self.items.get(v["item_right"])}
            if sides != self.pair_items.get(self.pairs[v["pair"]]) or len(sides) != 2:
                raise bad("pair_votes", v["id"], "item_left", "its sides are not the pair's items")
        for table, x in [("anchor_showings", x) for x in self.rows.showings] + [
            ("judgements", x) for x in self.rows.judgements if x["context"] != "live"
        ]:
            if self.items[x["item"]] not in self.anchor_pks:
                raise bad(
                    table, x["id"], "item_pk", "an anchor answer on an item that is no anchor"
                )
        known = set()
        late = [x for x in self.rows.judgements + self.rows.calibrations]
        late = [x for x in late if x["rubric_version"] != self.version]
        for model in (Judgement, Calibration):
            uids = [x["uuid"] for x in late]
            for i in range(0, len(uids), 500):
                known |= set(
                    self.s.scalars(select(model.uuid).where(model.uuid.in_(uids[i : i + 500])))
                )
        for x in late:
            if x["uuid"] not in known:
                table = "calibrations" if "anchor_set" in x else "judgements"
                raise bad(
                    table, x["id"], "rubric_version", "a new answer under another rubric version"
                )

    def _conflict(self, table: str, uid: str, reason: str, incoming: dict[str, Any]) -> None:
        self.s.add(
            MergeConflict(
                merge_pk=self.merge.id,
                table_name=table,
                uuid=uid,
                reason=reason,
                incoming=json.dumps(incoming, default=str, sort_keys=True),
            )
        )
        self.conflicts.append(f"{table} {uid}: {reason}")

    def _insert_many(
        self, table: str, model: Any, entries: list[tuple[dict, dict, dict]]
    ) -> dict[str, int | None]:
        """(values, fields compared with a known row, the package row) -> uuid: study id, or None
        when it went to the conflicts. New rows go in with one bulk INSERT; only when a unique rule
        refuses it are they inserted one by one to find the clashing row."""
        out: dict[str, int | None] = {}
        uids = [v["uuid"] for v, _, _ in entries]
        known: dict[str, Any] = {}
        for i in range(0, len(uids), 500):
            known.update(
                {
                    r.uuid: r
                    for r in self.s.scalars(select(model).where(model.uuid.in_(uids[i : i + 500])))
                }
            )
        fresh = []
        for values, compare, incoming in entries:
            old = known.get(values["uuid"])
            if old is not None and old.rater_pk != self.rpk:
                # a copy of another rater's row: skipping it as "known" would hand its id to the
                # package's corrections and sessions
                raise bad(
                    table, incoming["id"], "uuid", "the study holds this id as another rater's"
                )
            if old is None:
                fresh.append((values, incoming))
            elif _same({k: getattr(old, k) for k in compare}, compare):
                self.skipped += 1
                out[values["uuid"]] = old.id
            else:
                self._conflict(
                    table, values["uuid"], "the study holds this id with other content", incoming
                )
                out[values["uuid"]] = None
        if not fresh:
            return out
        try:
            with self.s.begin_nested():
                got = self.s.execute(
                    insert(model).returning(model.id, model.uuid, sort_by_parameter_order=True),
                    [v for v, _ in fresh],
                ).all()
            out.update({uid: pk for pk, uid in got})
            self.added[table] += len(got)
            return out
        except IntegrityError:
            pass
        for values, incoming in fresh:
            try:
                with self.s.begin_nested():
                    out[values["uuid"]] = self.s.scalar(insert(model).returning(model.id), [values])
                self.added[table] += 1
            except IntegrityError as exc:
                self._conflict(
                    table,
                    values["uuid"],
                    f"its slot is taken in the study ({str(exc.orig)[:80]})",
                    incoming,
                )
                out[values["uuid"]] = None
        return out

    def _chained(
        self, table: str, model: Any, rows: list[dict[str, Any]], build
    ) -> dict[str, int | None]:  # noqa: ANN001
        """Rows that may correct earlier ones, inserted in generations (each once its target has an
        id): the generations found set-wise from the rows' targets, never by a walk per row (a
        long chain took minutes); check_rows capped their number. Every correction is checked to
        supersede this rater's answer in the same slot, in the package or in the study."""
        by_uuid = {x["uuid"]: x for x in rows}
        outside = sorted(
            {x["supersedes"] for x in rows if x["supersedes"] and x["supersedes"] not in by_uuid}
        )
        stored: dict[str, Any] = {}
        for i in range(0, len(outside), 500):
            stored.update(
                {
                    r.uuid: r
                    for r in self.s.scalars(
                        select(model).where(model.uuid.in_(outside[i : i + 500]))
                    )
                }
            )
        children: dict[str, list[dict[str, Any]]] = {}
        for x in rows:
            if x["supersedes"] in by_uuid:
                children.setdefault(x["supersedes"], []).append(x)
            elif x["supersedes"] is not None:
                self._same_slot(table, x, stored.get(x["supersedes"]))
        for x in rows:
            if x["supersedes"] in by_uuid:
                self._same_slot(table, x, by_uuid[x["supersedes"]])
        ids: dict[str, int | None] = {u: r.id for u, r in stored.items()}
        level = [x for x in rows if x["supersedes"] not in by_uuid]
        while level:
            entries = []
            for x in level:
                if x["supersedes"] is not None and ids.get(x["supersedes"]) is None:
                    self._conflict(
                        table, x["uuid"], "it corrects an answer that is not in the study", x
                    )
                    ids[x["uuid"]] = None
                    continue
                entries.append(build(x, ids.get(x["supersedes"]) if x["supersedes"] else None))
            ids.update(self._insert_many(table, model, entries))
            level = [c for x in level for c in children.get(x["uuid"], ())]
        return ids

    def _same_slot(self, table: str, x: dict[str, Any], target: Any) -> None:
        """A correction supersedes this rater's answer on the same item (pair), rubric version and
        context; `target` is the package's row (a dict) or the study's (a model), None if unknown."""
        if target is None:
            return  # not in the study: kept aside as a conflict by _chained
        if isinstance(target, dict):
            slot = ("item", "rubric_version", "context") if table == "judgements" else ("pair",)
            same = all(target[k] == x[k] for k in slot)
        elif table == "judgements":
            same = (
                target.rater_pk == self.rpk
                and target.item_pk == self.items[x["item"]]
                and target.rubric_version == x["rubric_version"]
                and target.context == x["context"]
            )
        else:
            same = target.rater_pk == self.rpk and target.pair_pk == self.pairs[x["pair"]]
        if not same:
            what = "answer on the same item" if table == "judgements" else "vote on the same pair"
            raise bad(
                table,
                x["id"],
                "supersedes",
                f"a correction must supersede the same rater's {what}",
            )

    def run(self) -> None:
        sess = self._insert_many(
            "sessions",
            Session,
            [
                (
                    dict(
                        uuid=x["uuid"],
                        rater_pk=self.rpk,
                        mode=x["mode"],
                        started_at=x["started_at"],
                    ),
                    {"mode": x["mode"]},
                    x,
                )
                for x in self.rows.sessions
            ],
        )
        codes = (
            set(
                self.s.scalars(
                    select(AnchorShowing.display_code).where(
                        AnchorShowing.display_code.in_(
                            [x["display_code"] for x in self.rows.showings]
                        )
                    )
                )
            )
            if self.rows.showings
            else set()
        )
        mine = {x["uuid"] for x in self.rows.showings}
        own = (
            set(
                self.s.scalars(
                    select(AnchorShowing.display_code).where(AnchorShowing.uuid.in_(mine))
                )
            )
            if mine
            else set()
        )
        show = self._insert_many(
            "anchor_showings",
            AnchorShowing,
            [
                (
                    dict(
                        uuid=x["uuid"],
                        rater_pk=self.rpk,
                        session_pk=sess[x["session"]],
                        item_pk=self.items[x["item"]],
                        before_position=x["before_position"],
                        seed=x["seed"],
                        created_at=x["created_at"],
                        anchor_set_version=x.get("anchor_set_version"),
                        display_code=free_display_code(self.s)
                        if x["display_code"] in codes - own
                        else x["display_code"],
                    ),
                    {"item_pk": self.items[x["item"]], "before_position": x["before_position"]},
                    x,
                )
                for x in self.rows.showings
                if sess.get(x["session"]) is not None
            ],
        )

        def judgement(x: dict[str, Any], sup: int | None) -> tuple[dict, dict, dict]:
            vals = dict(
                uuid=x["uuid"],
                rater_pk=self.rpk,
                item_pk=self.items[x["item"]],
                rubric_version=x["rubric_version"],
                session_pk=sess.get(x["session"]) if x["session"] else None,
                context=x["context"],
                showing_pk=show.get(x["showing"]) if x["showing"] else None,
                queue_position=x["queue_position"],
                answers=x["answers"],
                reason=x["reason"],
                time_ms=x["time_ms"],
                source=x["source"],
                supersedes=sup,
                created_at=x["created_at"],
            )
            return (
                vals,
                {
                    "item_pk": vals["item_pk"],
                    "answers": x["answers"],
                    "reason": x["reason"],
                    "context": x["context"],
                },
                x,
            )

        def vote(x: dict[str, Any], sup: int | None) -> tuple[dict, dict, dict]:
            vals = dict(
                uuid=x["uuid"],
                rater_pk=self.rpk,
                pair_pk=self.pairs[x["pair"]],
                item_left=self.items[x["item_left"]],
                item_right=self.items[x["item_right"]],
                choice=x["choice"],
                side_seed=x["side_seed"],
                session_pk=sess.get(x["session"]) if x["session"] else None,
                queue_position=x["queue_position"],
                reason=x["reason"],
                time_ms=x["time_ms"],
                source=x["source"],
                supersedes=sup,
                created_at=x["created_at"],
            )
            return vals, {"choice": x["choice"], "pair_pk": vals["pair_pk"]}, x

        self._chained("judgements", Judgement, self.rows.judgements, judgement)
        self._chained("pair_votes", PairVote, self.rows.votes, vote)
        cal = []
        for x in self.rows.calibrations:
            session_pk = sess.get(x["session"])
            if session_pk is None:
                continue
            result = self._qualification(session_pk, x["rubric_version"])
            cal.append(
                (
                    dict(
                        uuid=x["uuid"],
                        rater_pk=self.rpk,
                        session_pk=session_pk,
                        anchor_set=x["anchor_set"],
                        anchor_set_version=x.get("anchor_set_version"),
                        rubric_version=x["rubric_version"],
                        result=json.dumps(result),
                        qualified=result["qualified"],
                        created_at=x["created_at"],
                    ),
                    {"session_pk": session_pk, "anchor_set": x["anchor_set"]},
                    x,
                )
            )
        self._insert_many("calibrations", Calibration, cal)
        self.merge.counts = json.dumps(self.added, sort_keys=True)

    def _qualification(self, session_pk: int, version: str) -> dict[str, Any]:
        """The calibration's result as the lead's code computes it from the session's calibration
        answers now in the study (never the package's own verdict), as CalibrationSession.finish
        does."""
        rubric = self.rubrics[version]
        anchors = {
            a.item_pk: (json.loads(a.reference), json.loads(a.rationale))
            for a in self.s.scalars(select(Anchor))
        }
        results = []
        for item_pk, text in self.s.execute(
            select(Judgement.item_pk, Judgement.answers)
            .where(
                Judgement.session_pk == session_pk,
                Judgement.context == "calibration",
                is_current(Judgement),
            )
            .order_by(Judgement.id)
        ):
            if item_pk in anchors:
                ref, rationale = anchors[item_pk]
                results.append(calibration.feedback(rubric, json.loads(text), ref, rationale))
        rules = self.s.scalar(select(Setting.value).where(Setting.key == "qualification"))
        result = calibration.qualify(rubric, results, json.loads(rules) if rules else None)
        result["n_anchors"] = len(results)
        return result


@dataclass(frozen=True)
class MergeResult:
    rater: str
    added: dict[str, int]
    skipped: int
    conflicts: list[str]
    already_merged: bool


def exported_to(s: OrmSession, package_id: str) -> int | None:
    """The rater the lead exported this package for (their record of the export), or None."""
    return s.scalar(
        select(RaterCode.rater_pk).where(RaterCode.kind == "package", RaterCode.code == package_id)
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


def study_rubrics(s: OrmSession) -> dict[str, Rubric]:
    """Every rubric version the study knows, rebuilt from its canonical text."""
    return {
        v: rubric_from_canonical(text)
        for v, text in s.execute(select(RubricVersion.version, RubricVersion.canonical))
    }


def merge_rows(
    db: StudyDB, rows: PackageRows, *, package_sha: str, package_id: str, version: str
) -> MergeResult:
    """One transaction per package: every row checked (one bad row refuses the package and writes
    nothing), every new row in, known ones skipped, clashes kept aside."""
    with db.write() as s:
        rpk = exported_to(s, package_id)
        if rpk is None:
            raise InputError(
                "this study has no record of exporting this package: merge only packages exported "
                "from this study (export the rater a new one)",
                field="package_manifest",
            )
        rater = s.get_one(Rater, rpk)
        if rater.name != rows.rater or rater.is_operator:
            raise InputError(
                f"this package was exported for '{rater.name}' but names '{rows.rater[:40]}' as "
                "its rater: the file was altered, and nothing was merged",
                field="raters",
            )
        check_rows(rows, study_rubrics(s), version)
        already = s.scalar(select(Merge.id).where(Merge.package_sha256 == package_sha)) is not None
        m = _Merger(s, rows, package_sha, package_id, rpk=rpk, version=version)
        m.unblind()
        m.check_assigned()
        m.run()
        return MergeResult(rows.rater, dict(m.added), m.skipped, list(m.conflicts), already)


def study_identity(db: StudyDB) -> tuple[str | None, str]:
    """(study id, active rubric version)."""
    with db.read() as s:
        sid = s.scalar(select(Setting.value).where(Setting.key == "study_id"))
        version = s.scalar(select(RubricVersion.version).where(RubricVersion.is_active.is_(True)))
        return (json.loads(sid) if sid else None), version


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def known_uuids(db: StudyDB, uuids: set[str]) -> set[str]:
    """Which of these answer ids the study holds."""
    ids = sorted(uuids)
    out: set[str] = set()
    with db.read() as s:
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for model in (Judgement, PairVote, Calibration):
                out |= set(s.scalars(select(model.uuid).where(model.uuid.in_(chunk))))
    return out
