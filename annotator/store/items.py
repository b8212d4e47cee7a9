"""Cases, cells, items and media rows."""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Iterable, Sequence

from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session

from ..domain.errors import InputError
from ..domain.records import ItemSpec, ItemView
from .db import StudyDB
from .models import Case, Cell, Item, ItemMedia, Media

# No 0/O, 1/I/L: codes are read aloud and typed by raters.
_CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"


def new_display_code(taken: set[str]) -> str:
    while True:
        code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(6))
        code = f"{code[:3]}-{code[3:]}"
        if code not in taken:
            taken.add(code)
            return code


def free_display_code(s: Session) -> str:
    """A code no item and no anchor showing uses (checked by query: the study may hold many)."""
    from .models import AnchorShowing
    from .roles import is_rater_session

    rater = is_rater_session(s)
    while True:
        code = new_display_code(set())
        if rater:  # a rater's role sees only its own items: the server checks them all
            if not s.scalar(text("SELECT public.annotator_code_taken(:c)"), {"c": code}):
                return code
            continue
        if (
            s.scalar(select(Item.id).where(Item.display_code == code)) is None
            and s.scalar(select(AnchorShowing.id).where(AnchorShowing.display_code == code)) is None
        ):
            return code


def content_sha(spec: ItemSpec) -> str:
    return hashlib.sha256(repr(spec.content_key()).encode("utf-8")).hexdigest()


def existing_items(db: StudyDB, item_ids: Iterable[str]) -> dict[str, str]:
    """item_id -> content hash, for those already in the study."""
    ids = list(item_ids)
    out: dict[str, str] = {}
    with db.read() as s:
        for i in range(0, len(ids), 500):
            rows = s.execute(
                select(Item.item_id, Item.content_sha256).where(Item.item_id.in_(ids[i : i + 500]))
            )
            out.update({a: b for a, b in rows})
    return out


def import_order(s: Session, specs: Sequence[ItemSpec]) -> random.Random:
    """The shuffle that decides in which order an import's new rows get their ids.

    Item, case and cell ids are numbered in insertion order, and a rater's login role on a team
    server reads them: in import order they would tell the generator by an item's position within
    its case (a manifest lists each case's generators in a fixed order) and the manifest's order.
    The seed is what is imported (every item_id with its content hash, sorted: the file's row
    order plays no part), so the same items imported the same way get the same ids in any fresh
    study: a study rebuilt from its files (the reference reports, the demo, a lead's rebuild)
    publishes the same figures, its random sample included. A rater, who sees only the items
    dealt to them and no item_id, case_id, generator or original hash, cannot recompute it. (The
    study's study_id, which a rater can read, would add nothing a rater does not know.)
    """
    h = hashlib.sha256(b"annotator import order")
    for key in sorted(f"{sp.item_id}\t{content_sha(sp)}" for sp in specs):
        h.update(b"\n" + key.encode("utf-8"))
    return random.Random(h.hexdigest())


def add_items(
    s: Session,
    specs: Sequence[ItemSpec],
    media: Sequence[tuple[str, str, int, int, int]],
    *,
    is_anchor: bool = False,
) -> dict[str, int]:
    """Insert items (skipping identical re-imports) inside the caller's transaction.

    media rows: (sha256, original_sha256, width, height, n_bytes). Returns item_id -> pk.
    Rows go in with bulk INSERTs: an import's transaction holds the study's write lock,
    and every rater's submit waits for it. New media, cases, cells and items go in a seeded
    random order (`import_order`), never the file's.
    """
    order = import_order(s, specs)
    shas = [m[0] for m in media]
    known_media: set[str] = set()
    for i in range(0, len(shas), 500):
        known_media |= set(
            s.scalars(select(Media.sha256).where(Media.sha256.in_(shas[i : i + 500])))
        )
    new_media = [
        dict(sha256=sha, original_sha256=orig, width=w, height=h, n_bytes=n)
        for sha, orig, w, h, n in media
        if sha not in known_media
    ]
    # a rater reads media.created_at, stamped row by row: in file order it would pair media with
    # generators just as item ids would
    new_media.sort(key=lambda m: str(m["sha256"]))
    order.shuffle(new_media)
    if new_media:
        s.execute(insert(Media), new_media)
    cases = {c.case_id: c.id for c in s.scalars(select(Case))}
    cells = {(c.case_pk, c.prompt_sha256, c.criteria): c.id for c in s.scalars(select(Cell))}
    taken = set(s.scalars(select(Item.display_code)))
    existing: dict[str, Item] = {}
    ids = [sp.item_id for sp in specs]
    for i in range(0, len(ids), 500):
        existing.update(
            {
                it.item_id: it
                for it in s.scalars(select(Item).where(Item.item_id.in_(ids[i : i + 500])))
            }
        )
    out: dict[str, int] = {}
    fresh: list[tuple[ItemSpec, str]] = []
    for sp in specs:
        sha = content_sha(sp)
        if sp.item_id in existing:
            it = existing[sp.item_id]
            if it.content_sha256 != sha:
                raise InputError(
                    f"item_id '{sp.item_id}' is already in the study with other content; give it a new item_id",
                    source=sp.source,
                    field="item_id",
                )
            if it.is_anchor != is_anchor:
                was, now = (
                    ("an anchor", "a live item") if it.is_anchor else ("a live item", "an anchor")
                )
                raise InputError(
                    f"item_id '{sp.item_id}' is already in the study as {was}; an item cannot also be {now} "
                    "(raters' live answers and anchor answers would mix): give the copy its own item_id",
                    source=sp.source,
                    field="item_id",
                )
            out[sp.item_id] = it.id
        else:
            fresh.append((sp, sha))
    fresh.sort(key=lambda f: f[0].item_id)
    order.shuffle(fresh)
    for sp, _ in fresh:
        if sp.case_id not in cases:
            cases[sp.case_id] = s.execute(
                insert(Case).returning(Case.id),
                [{"case_id": sp.case_id, "task_type": sp.task_type}],
            ).scalar_one()
        psha = hashlib.sha256(sp.prompt.encode("utf-8")).hexdigest()
        key = (cases[sp.case_id], psha, sp.criteria)
        if key not in cells:
            cells[key] = s.execute(
                insert(Cell).returning(Cell.id),
                [
                    {
                        "case_pk": key[0],
                        "prompt_sha256": psha,
                        "prompt": sp.prompt,
                        "criteria": sp.criteria,
                    }
                ],
            ).scalar_one()
    if not fresh:
        return out
    item_rows = [
        dict(
            item_id=sp.item_id,
            generator=sp.generator,
            display_code=new_display_code(taken),
            slice=sp.slice,
            seed=sp.seed,
            text=sp.text,
            is_anchor=is_anchor,
            content_sha256=sha,
            source=sp.source,
            cell_pk=cells[
                (
                    cases[sp.case_id],
                    hashlib.sha256(sp.prompt.encode("utf-8")).hexdigest(),
                    sp.criteria,
                )
            ],
        )
        for sp, sha in fresh
    ]
    pks = (
        s.execute(insert(Item).returning(Item.id, sort_by_parameter_order=True), item_rows)
        .scalars()
        .all()
    )
    media_rows = []
    for (sp, _), pk in zip(fresh, pks, strict=True):
        out[sp.item_id] = pk
        for role, shas_ in (
            ("output", sp.outputs),
            ("input", sp.inputs),
            ("mask", (sp.mask,) if sp.mask else ()),
        ):
            for n, m in enumerate(shas_):
                media_rows.append(
                    dict(
                        item_pk=pk,
                        role=role,
                        ordinal=n,
                        media_sha256=m,
                        source_name=sp.source_names.get(m),
                    )
                )
    if media_rows:
        s.execute(insert(ItemMedia), media_rows)
    return out


def case_ids(s: Session, pks: Iterable[int]) -> dict[int, str]:
    """Each item's case id (item pk -> case_id): a pair's two items must share one case."""
    return dict(
        s.execute(
            select(Item.id, Case.case_id)
            .join(Cell, Item.cell_pk == Cell.id)
            .join(Case, Cell.case_pk == Case.id)
            .where(Item.id.in_(list(set(pks))))
        ).all()
    )


def item_pks(s: Session, item_ids: Iterable[str]) -> dict[str, int]:
    ids = list(set(item_ids))
    out: dict[str, int] = {}
    for i in range(0, len(ids), 500):
        out.update(
            dict(
                s.execute(
                    select(Item.item_id, Item.id).where(Item.item_id.in_(ids[i : i + 500]))
                ).all()
            )
        )
    return out


def item_view(s: Session, item_pk: int, display_code: str | None = None) -> ItemView:
    """What a rater sees of an item. Names exactly the columns a rater may read (on a team server
    the rater's database role has no right to item_id, generator or source: see store/roles.py)."""
    code, text, prompt, criteria = s.execute(
        select(Item.display_code, Item.text, Cell.prompt, Cell.criteria)
        .join(Cell, Cell.id == Item.cell_pk)
        .where(Item.id == item_pk)
    ).one()
    media = s.execute(
        select(ItemMedia.role, ItemMedia.media_sha256)
        .where(ItemMedia.item_pk == item_pk)
        .order_by(ItemMedia.role, ItemMedia.ordinal)
    ).all()
    outputs = tuple(m for r, m in media if r == "output")
    inputs = tuple(m for r, m in media if r == "input")
    mask = next((m for r, m in media if r == "mask"), None)
    return ItemView(
        display_code=display_code or code,
        prompt=prompt,
        criteria=criteria or "",
        outputs=outputs,
        inputs=inputs,
        mask=mask,
        text=text,
    )


def view_of(db: StudyDB, item_pk: int) -> ItemView:
    with db.read() as s:
        return item_view(s, item_pk)


def views_by_item_id(db: StudyDB, item_ids: Iterable[str]) -> dict[str, ItemView]:
    """What a rater (or the blind judge) sees of each item, by item_id (unknown ids are left out)."""
    with db.read() as s:
        return {iid: item_view(s, pk) for iid, pk in item_pks(s, item_ids).items()}


def live_items(s: Session) -> list[tuple[int, str]]:
    """(item pk, case key) of every live (non-anchor) item; the key groups an item with its case
    (the case's pk: a rater's role may not read case ids, which can name generators). A rater's
    role reads neither `is_anchor` nor items not dealt to them: the server lists the ones it may
    queue."""
    from .roles import is_rater_session

    if is_rater_session(s):
        return [
            (pk, f"case-{case_pk}")
            for pk, case_pk in s.execute(
                text("SELECT item_pk, case_pk FROM public.annotator_live_items()")
            ).all()
        ]
    return [
        (pk, f"case-{case_pk}")
        for pk, case_pk in s.execute(
            select(Item.id, Cell.case_pk)
            .join(Cell, Item.cell_pk == Cell.id)
            .where(Item.is_anchor.is_(False))
            .order_by(Item.id)
        ).all()
    ]


def item_index(db: StudyDB) -> dict[int, tuple[str, str]]:
    """pk -> (item_id, generator), for simulations and reports (never for raters)."""
    with db.read() as s:
        return {
            pk: (iid, gen)
            for pk, iid, gen in s.execute(select(Item.id, Item.item_id, Item.generator))
        }
