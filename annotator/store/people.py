"""Raters, sessions and rubric versions."""

from __future__ import annotations

import secrets

from sqlalchemy import select, update
from sqlalchemy.orm import Session as OrmSession

from ..domain.errors import InputError
from ..domain.records import RaterInfo
from ..domain.rubric import Rubric, rubric_from_canonical
from ..domain.text import check_text, lookalike_key, person_name
from .db import StudyDB
from .models import Rater, RubricVersion, Session


def add_rubric_version(s: OrmSession, rubric: Rubric, *, activate: bool = True) -> None:
    """Inside the caller's transaction."""
    if activate:
        s.execute(update(RubricVersion).values(is_active=False))
    row = s.get(RubricVersion, rubric.version)
    if row is None:
        s.add(
            RubricVersion(
                version=rubric.version,
                rubric_id=rubric.id,
                canonical=rubric.canonical_text(),
                is_active=activate,
            )
        )
    elif activate:
        row.is_active = True


def active_rubric_or_none(s: OrmSession) -> str | None:
    return s.scalar(select(RubricVersion.version).where(RubricVersion.is_active.is_(True)))


def active_rubric(db: StudyDB) -> Rubric:
    with db.read() as s:
        row = s.scalars(select(RubricVersion).where(RubricVersion.is_active.is_(True))).first()
        if row is None:
            raise InputError(
                "the study has no rubric; create it with `annotator new STUDY --rubric FILE`",
                source=db.where,
            )
        rubric = rubric_from_canonical(row.canonical)
    assert rubric.version == row.version, "stored rubric does not hash to its version"
    return rubric


def ensure_rater(
    s: OrmSession,
    name: str,
    *,
    operator: bool = False,
    expertise: str | None = None,
    seed: int | None = None,
) -> Rater:
    name = person_name(name, "a rater's name", field="rater")
    r = s.scalars(select(Rater).where(Rater.name == name)).first()
    if r is None:
        key = lookalike_key(name)
        for other in s.scalars(select(Rater.name)):
            if lookalike_key(other) == key:
                raise InputError(
                    f"rater '{name}' reads like the rater '{other}' the study has (the same letters "
                    f"in another case, script or width); use '{other}', or a name that reads "
                    "differently",
                    field="rater",
                )
        seed = secrets.randbits(31) if seed is None else seed
        r = Rater(name=name, is_operator=operator, expertise=expertise, seed=seed)
        s.add(r)
        s.flush()
    return r


def add_rater(
    db: StudyDB,
    name: str,
    *,
    operator: bool = False,
    expertise: str | None = None,
    seed: int | None = None,
) -> RaterInfo:
    """A new rater; `seed` (their queue order and pair sides) is random unless given: a
    reproducible build such as the demo gives it."""
    name = person_name(name, "a rater's name", field="name")
    if expertise is not None:
        check_text(expertise, "the expertise", field="expertise")
    with db.write() as s:
        if s.scalars(select(Rater).where(Rater.name == name)).first() is not None:
            raise InputError(f"rater '{name}' already exists", field="name")
        r = ensure_rater(s, name, operator=operator, expertise=expertise, seed=seed)
        return RaterInfo(r.name, r.is_operator, r.expertise, r.seed)


def raters(db: StudyDB) -> list[RaterInfo]:
    with db.read() as s:
        return [
            RaterInfo(r.name, r.is_operator, r.expertise, r.seed)
            for r in s.scalars(select(Rater).order_by(Rater.name))
        ]


def rater_pk(s: OrmSession, name: str) -> int:
    pk = s.scalar(select(Rater.id).where(Rater.name == name))
    if pk is None:
        raise InputError(
            f"no rater named '{name}' in this study; add one with `annotator rater add`",
            field="rater",
        )
    return pk


def rater_seed(s: OrmSession, pk: int) -> int:
    """The rater's recorded queue seed (the rater row exists: its pk came from `rater_pk`)."""
    seed = s.scalar(select(Rater.seed).where(Rater.id == pk))
    if seed is None:
        raise InputError(f"no rater with id {pk} in this study", field="rater")
    return int(seed)


def start_session(db: StudyDB, rater: str, mode: str) -> int:
    with db.write() as s:
        row = Session(rater_pk=rater_pk(s, rater), mode=mode)
        s.add(row)
        s.flush()
        return row.id
