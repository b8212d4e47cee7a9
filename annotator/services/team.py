"""The lead's team work: dealing items to raters, and what `status` shows of their progress."""

from __future__ import annotations

import secrets

from ..domain.assignment import check_design
from ..domain.errors import InputError
from ..store import answers as answer_store
from ..store import assignments as store
from ..store import people
from .study import Study


def assign(
    study: Study, raters: list[str], *, overlap: int, pair_overlap: int | None, seed: int | None
) -> str:
    """Deal live items (and pairs) to the named raters; raters the study does not know are added."""
    study.require_lead("assignment")
    check_design(raters, overlap)  # before any rater is added: a refused design writes nothing
    if pair_overlap is not None:
        check_design(raters, pair_overlap)
    known = {r.name for r in study.raters()}
    for name in raters:
        if name not in known:
            study.add_rater(name)
    seed = secrets.randbits(31) if seed is None else seed
    dealt = store.assign(study.db, raters, overlap=overlap, pair_overlap=pair_overlap, seed=seed)
    study.db.set_setting(
        "assignment", {"overlap": overlap, "pair_overlap": pair_overlap, "seed": seed}
    )
    lines = [
        f"dealt {dealt.items} item assignments"
        + (f" and {dealt.pairs} pair assignments" if dealt.pairs else "")
        + f" to {dealt.raters} raters (overlap {overlap}, seed {seed})"
    ]
    lines += [f"warning: {w}" for w in store.balance_warnings(store.progress(study.db))]
    return "\n".join(lines)


def deal_on_demand(study: Study, *, overlap: int) -> str:
    """Raters take items as they go (each item until `overlap` raters have it): for a team server."""
    study.require_lead("assignment")
    if overlap < 1:
        raise InputError(
            f"--overlap {overlap}: each item needs at least 1 rater", field="--overlap"
        )
    study.db.set_setting(store.ON_DEMAND, overlap)
    return f"items are dealt on demand: each rater takes the next item that has fewer than {overlap} raters"


def release_claims(study: Study, rater: str) -> str:
    """`annotator assign --release RATER`: the items RATER took on demand and left unanswered go
    back to the pool (a rater who quit; claims also expire by themselves, setting
    claim_expiry_minutes)."""
    study.require_lead("assignment")
    n = store.release_claims(study.db, rater)
    if n is None:
        raise InputError(
            "this study deals fixed lists, not items on demand: nothing is claimed to release "
            "(re-run `annotator assign --raters ...` to deal again)",
            field="--release",
        )
    return f"released {n} unanswered claim{'s' if n != 1 else ''} of {rater}"


def status_lines(study: Study) -> list[str]:
    lines = [
        f"{'package' if study.is_package else 'study'} {study.name}  rubric {study.rubric.id} "
        f"({study.rubric.version[:12]})"
    ]
    lines += [f"{k:16s}{v}" for k, v in study.counts().items()]
    rows = store.progress(study.db)
    if rows:
        lines.append("")
        lines.append(
            f"{'rater':20s}{'assigned':>9s}{'done':>7s}{'anchors':>9s}{'pairs':>13s}  last activity"
        )
        for r in rows:
            if r.is_operator and study.is_package:
                continue
            who = r.rater + (" (operator)" if r.is_operator else "")
            assigned = "all" if r.assigned is None else str(r.assigned)
            pairs = f"{r.pairs_done}/{'-' if r.pairs_assigned is None else r.pairs_assigned}"
            last = (
                r.last_activity.isoformat(sep=" ", timespec="minutes") if r.last_activity else "-"
            )
            lines.append(
                f"{who[:20]:20s}{assigned:>9s}{r.done:>7d}{r.anchors:>9d}{pairs:>13s}  {last}"
            )
        lines += [f"warning: {w}" for w in store.balance_warnings(rows)]
    merged = store.merges(study.db)
    if merged:
        lines.append("")
        lines.append("merges:")
        for m in merged:
            added = ", ".join(f"{v} {k}" for k, v in m["rows_added"].items() if v) or "nothing new"
            lines.append(f"  {m['at']}  {m['rater']}  {m['package_sha256'][:12]}  {added}")
    return lines


def queue_codes(study: Study) -> list[str]:
    """A package's queue, in order, as the display codes the rater sees (one per item)."""
    if not study.is_package:
        raise InputError(
            "`status --queue` lists a rater package's queue; give the .annot file as --study",
            field="--queue",
        )
    rater = next(r.name for r in people.raters(study.db) if not r.is_operator)
    answer_store.ensure_queue(study.db, rater, study.rubric.version)
    return answer_store.queue_codes(study.db, rater, study.rubric.version)


def server_roles(
    study: Study, raters: list[str], print_only: bool = False, drop: bool = False
) -> list[str]:
    """The rater group role, its grants and row rules, and a login role per rater (no passwords:
    the DBA sets them, annotator never sees one). Returns the SQL, or what was done. `drop`:
    remove this study's rater roles instead."""
    from ..store import roles
    from ..store.server import server_url

    if study.kind != "server":
        raise InputError("database roles are for a study on a PostgreSQL server", field="--study")
    database = server_url(str(study.location)).database or ""
    if drop:
        gone = roles.drop_roles(study.db, database)
        return [f"dropped role {name}" for name in gone] or ["this study has no rater roles"]
    known = {r.name for r in study.raters()}
    unknown = [r for r in raters if r not in known]
    if unknown:
        raise InputError(
            f"no rater named '{unknown[0]}' in this study; add it with `annotator rater add`",
            field="--raters",
        )
    sql_lines, logins, group = roles.apply_roles(study.db, database, raters, print_only=print_only)
    if print_only:
        return sql_lines
    return [
        f"rater group role {group}: reads what raters see, inserts their own answers",
        *(
            f"rater {login.rater!r}: login role {login.role} (set its password with ALTER ROLE, "
            "or use ~/.pgpass on the rater's machine)"
            for login in logins
        ),
    ]
