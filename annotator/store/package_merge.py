"""Rater packages (contract 5.6), merge: the answers of a rater's package back into the lead's
(Over 500 lines on purpose: the checks of every row and the merge that writes them are one
transaction's logic, kept whole so none is written unchecked.)
study, by UUID (what is new goes in, what the study holds is skipped, a clash is kept aside).

Merge checks every row before it writes one (`package_checks`) and takes the rater from the
lead's record of the export (`package_export.record_export`), never from the file. Silent anchors
a package dealt as items are mapped back (`_Merger.unblind`). The columns taken from a package's
row are read from the metadata, less the ones `package_columns.MERGE` names with the reason.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session as OrmSession

from ..domain import calibration, time_spent
from ..domain.errors import InputError
from ..domain.rubric import Rubric, rubric_from_canonical
from .anchors import calibration_answers_in
from .assignments import assigned_items
from .db import StudyDB
from .items import free_display_code
from .models import (
    Anchor,
    AnchorShowing,
    Item,
    Judgement,
    QueueEntry,
    Rater,
    RubricVersion,
    Session,
    Setting,
)
from .models_pairs import Calibration, Pair, PairVote
from .models_team import Merge, MergeConflict, RaterCode
from .package_checks import bad, check_rows, check_timestamps
from .package_columns import MERGE, merged
from .package_export import own_code, own_salt
from .roles import is_rater_session


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
        T, V, S = "judgements", "pair_votes", "anchor_showings"

        def row(table: str, x: Any, **refs: Any) -> dict[str, Any]:
            """The row's columns merge takes as stored, its id (for messages) and its references."""
            return dict({n: getattr(x, n) for n in merged(table)}, id=x.id, **refs)

        return PackageRows(
            rater=name,
            queue=[
                code[pk]
                for pk in s.scalars(select(QueueEntry.item_pk).order_by(QueueEntry.position))
                if pk in code
            ],
            sessions=[row("sessions", x) for x in sessions],
            showings=[
                row(
                    S,
                    x,
                    session=_ref(S, x.id, "session_pk", sess, x.session_pk),
                    item=_ref(S, x.id, "item_pk", code, x.item_pk),
                )
                for x in showings
            ],
            judgements=[
                row(
                    T,
                    x,
                    item=_ref(T, x.id, "item_pk", code, x.item_pk),
                    session=_ref(T, x.id, "session_pk", sess, x.session_pk, optional=True),
                    showing=_ref(T, x.id, "showing_pk", show, x.showing_pk, optional=True),
                    supersedes=_ref(T, x.id, "supersedes", jud, x.supersedes, optional=True),
                    queue_position=x.queue_position,  # the package's, mapped back by unblind
                )
                for x in judgements
            ],
            votes=[
                row(
                    V,
                    x,
                    pair=_ref(V, x.id, "pair_pk", pair_code, x.pair_pk),
                    item_left=_ref(V, x.id, "item_left", code, x.item_left),
                    item_right=_ref(V, x.id, "item_right", code, x.item_right),
                    session=_ref(V, x.id, "session_pk", sess, x.session_pk, optional=True),
                    supersedes=_ref(V, x.id, "supersedes", vot, x.supersedes, optional=True),
                )
                for x in votes
            ],
            calibrations=[
                row(
                    "calibrations",
                    x,
                    session=_ref("calibrations", x.id, "session_pk", sess, x.session_pk),
                )
                for x in s.scalars(select(Calibration).order_by(Calibration.id))
            ],
        )


def _stored(table: str, x: dict[str, Any], **study: Any) -> dict[str, Any]:
    """A package row's values for the study: the columns merge takes as stored, and the study's
    own values of the others (`study`: every column package_columns.MERGE names but `id`)."""
    if set(study) != set(MERGE[table]) - {"id"}:
        raise ValueError(
            f"{table}: merge gives {sorted(study)}, the policy names {sorted(MERGE[table])}"
        )
    vals = dict({n: x[n] for n in merged(table)}, **study)
    if "time_ms" in vals:  # a package from an app that sent its time uncapped
        vals["time_ms"] = time_spent.capped(vals["time_ms"])
    return vals


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
        own: bool = False,
    ) -> None:
        """`own`: the rater's own login pushes the offline copy it made (package_export.read_content
        on a server): codes are the study's display codes and derived pair codes, the copy holds no anchor,
        and no merge or conflict is recorded (the lead's tables)."""
        self.s, self.rows, self.rpk, self.version, self.own = s, rows, rpk, version, own
        if own:
            wanted = {x["item"] for x in rows.judgements + rows.showings}
            wanted |= {v[k] for v in rows.votes for k in ("item_left", "item_right")}
            self.items = {
                c: t
                for t, c in s.execute(
                    select(Item.id, Item.display_code).where(Item.display_code.in_(wanted))
                )
            }
            salt = own_salt(study_identity_in(s)[0], rpk)
            self.pairs = {own_code(salt, "pair", pk): pk for pk in s.scalars(select(Pair.id))}
            # a rater's own copy deals no anchor (its login may not list them: the server seeds
            # its silent anchors itself), so no answer in it is on one
            self.anchor_pks: set[int] = set()
        else:
            self.items = self._codes("item")
            self.pairs = self._codes("pair")
            self.anchor_pks = set(s.scalars(select(Anchor.item_pk)))
        self.pair_items = {
            pk: {a, b}
            for pk, a, b in s.execute(select(Pair.id, Pair.item_a, Pair.item_b))
            if pk in set(self.pairs.values())
        }
        # the codes this rater's packages gave silent anchors (each its own code, apart from the
        # anchor's calibration code): an answer on one is an anchor answer (a rater's own copy
        # deals none)
        self.silent = {} if own else self._codes("silent")
        self._code_of = {t: c for c, t in self.items.items()}
        self.items.update(self.silent)
        self.rubrics = study_rubrics(s)
        self.merge: Merge | None = None
        if not own:
            self.merge = Merge(
                package_sha256=package_sha, package_id=package_id, rater_pk=self.rpk, counts="{}"
            )
            s.add(self.merge)
            s.flush()
        self.added = dict.fromkeys(ADDED, 0)
        self.skipped = 0
        self.conflicts: list[str] = []

    def _codes(self, kind: str) -> dict[str, int]:
        """code -> study pk of this rater's codes of `kind` (the lead's record)."""
        return {
            c: t
            for c, t in self.s.execute(
                select(RaterCode.code, RaterCode.target_pk).where(
                    RaterCode.rater_pk == self.rpk, RaterCode.kind == kind
                )
            )
        }

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
        allowed = None if mine is None else set(mine) | self.anchor_pks
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
        if self.merge is not None:  # a rater's own push keeps it in the package, unsent
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
                    out[values["uuid"]] = self.s.execute(
                        insert(model).returning(model.id), [values]
                    ).scalar_one()
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
        long chain took minutes). Every correction is checked to
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
                (_stored("sessions", x, rater_pk=self.rpk), {"mode": x["mode"]}, x)
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
                        _stored(
                            "anchor_showings",
                            x,
                            rater_pk=self.rpk,
                            session_pk=sess[x["session"]],
                            item_pk=self.items[x["item"]],
                        ),
                        # a code another showing of the study has: a fresh one
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
            vals = _stored(
                "judgements",
                x,
                rater_pk=self.rpk,
                item_pk=self.items[x["item"]],
                session_pk=sess.get(x["session"]) if x["session"] else None,
                showing_pk=show.get(x["showing"]) if x["showing"] else None,
                queue_position=x["queue_position"],  # the study's, set by unblind
                supersedes=sup,
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
            vals = _stored(
                "pair_votes",
                x,
                rater_pk=self.rpk,
                judge=None,
                pair_pk=self.pairs[x["pair"]],
                item_left=self.items[x["item_left"]],
                item_right=self.items[x["item_right"]],
                session_pk=sess.get(x["session"]) if x["session"] else None,
                supersedes=sup,
            )
            return vals, {"choice": x["choice"], "pair_pk": vals["pair_pk"]}, x

        self._chained("judgements", Judgement, self.rows.judgements, judgement)
        self._chained("pair_votes", PairVote, self.rows.votes, vote)
        if self.own:
            self._own_calibrations(sess)
            return
        cal = []
        for x in self.rows.calibrations:
            session_pk = sess.get(x["session"])
            if session_pk is None:
                continue
            result = self._qualification(session_pk, x["rubric_version"])
            cal.append(
                (
                    _stored(
                        "calibrations",
                        x,
                        rater_pk=self.rpk,
                        session_pk=session_pk,
                        result=json.dumps(result),
                        qualified=result["qualified"],
                    ),
                    {"session_pk": session_pk, "anchor_set": x["anchor_set"]},
                    x,
                )
            )
        self._insert_many("calibrations", Calibration, cal)
        assert self.merge is not None
        self.merge.counts = json.dumps(self.added, sort_keys=True)

    def _own_calibrations(self, sess: dict[str, int | None]) -> None:
        """A rater's offline copy holds no anchors, so no calibration of its own: the ones the
        server holds are skipped, any other is kept in the copy (the verdict is the lead's code's,
        from answers on the server)."""
        uids = [x["uuid"] for x in self.rows.calibrations]
        known = {
            r.uuid: r
            for r in (
                self.s.scalars(select(Calibration).where(Calibration.uuid.in_(uids)))
                if uids
                else []
            )
        }
        for x in self.rows.calibrations:
            old = known.get(x["uuid"])
            if old is not None and (old.session_pk, old.anchor_set) == (
                sess.get(x["session"]),
                x["anchor_set"],
            ):
                self.skipped += 1
            else:
                self._conflict(
                    "calibrations", x["uuid"], "a calibration is made on the server only", x
                )

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
        for item_pk, answers in calibration_answers_in(self.s, session_pk).items():
            if item_pk in anchors:
                ref, rationale = anchors[item_pk]
                results.append(calibration.feedback(rubric, answers, ref, rationale))
        rules = self.s.scalar(select(Setting.value).where(Setting.key == "qualification"))
        result = calibration.qualify(rubric, results, json.loads(rules) if rules else None)
        result["n_anchors"] = len(results)
        return result


# what a merge adds, by table (MergeResult.added's keys)
ADDED = ("sessions", "anchor_showings", "judgements", "pair_votes", "calibrations")


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
    nothing), every new row in, known ones skipped, clashes kept aside.

    On a server, a rater's own login pushes the offline copy it made itself (services/outbox.py)
    through its own grants: the rater is the login's, the rows go in as the app's answers would
    (the server's triggers check them too), and the lead's records (merges, conflicts) are left
    alone: a clash stays in the copy, unsent."""
    with db.write() as s:
        own = is_rater_session(s)
        rpk = s.scalar(text("SELECT public.annotator_me()")) if own else exported_to(s, package_id)
        if rpk is None and own:
            raise InputError("this login is no rater of the study", field="raters")
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
        already = not own and (
            s.scalar(select(Merge.id).where(Merge.package_sha256 == package_sha)) is not None
        )
        m = _Merger(s, rows, package_sha, package_id, rpk=rpk, version=version, own=own)
        m.unblind()
        m.check_assigned()
        m.run()
        return MergeResult(rows.rater, dict(m.added), m.skipped, list(m.conflicts), already)


def merged_before(db: StudyDB, package_sha: str) -> str | None:
    """The rater of an earlier merge of this very file (the SHA-256 of its bytes), or None.

    A file merged once holds nothing a second merge could add: the study only ever adds rows,
    so what the first merge added is there, and what it kept aside (merge_conflicts) would be
    kept aside again. Answering from the lead's record skips reading and checking the package
    (20 packages of 1,000 answers merged again: 2.0 s to add nothing, 0.03 s so). None for a
    rater's own login: it keeps no record of merges (its offline copy changes with every answer
    anyway)."""
    with db.read() as s:
        if is_rater_session(s):
            return None
        return s.scalar(
            select(Rater.name)
            .join(Merge, Merge.rater_pk == Rater.id)
            .where(Merge.package_sha256 == package_sha)
            .limit(1)
        )


def study_identity(db: StudyDB) -> tuple[str | None, str]:
    """(study id, active rubric version)."""
    with db.read() as s:
        return study_identity_in(s)


def study_identity_in(s: OrmSession) -> tuple[str | None, str]:
    sid = s.scalar(select(Setting.value).where(Setting.key == "study_id"))
    version = s.scalar(select(RubricVersion.version).where(RubricVersion.is_active.is_(True)))
    if version is None:  # a study is created with its rubric: only a damaged one lacks it
        raise InputError("the study has no active rubric version", field="rubric_versions")
    return (json.loads(sid) if sid else None), str(version)


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
