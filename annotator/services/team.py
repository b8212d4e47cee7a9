"""The lead's team work: dealing items to raters, and what `status` shows of their progress."""

from __future__ import annotations

import secrets

from ..domain.assignment import check_design
from ..domain.errors import InputError
from ..domain.text import counted
from ..store import answers as answer_store
from ..store import assignments as store
from ..store import people
from .study import Study


def assign(
    study: Study,
    raters: list[str] | None,
    *,
    overlap: int,
    pair_overlap: int | None,
    seed: int | None,
    sample: int | None = None,
    sample_share: float | None = None,
    active: bool = False,
    batch: int | None = None,
    by_strata: str | None = None,
    judge: str | None = None,
    pair_sample: int | None = None,
    top_up: float | None = None,
    escalated: bool = False,
) -> str:
    """Deal live items (and pairs) to the named raters; raters the study does not know are added.
    `raters` None: every rater the study has who is not an operator (a lead who added the team
    with `rater add` need not list it again).

    With `sample` (items per generator) or `sample_share`, a seeded random sample is drawn (or
    topped up) and stored first, and only its items are dealt (services/sampling.py; with
    `by_strata`, a figure, topped up over its strata by Neyman, `judge` naming whose); with
    `pair_sample` (pairs per generator pair) the same for pairs, dealt to `pair_overlap`; with
    `top_up` (a width) both samples grow to what the planner says (services/sampling.top_up);
    with `escalated`, only the items no judge may decide under the certified guarantee, and,
    with `pair_overlap`, only the pairs no judge may decide (services/escalation.py)."""
    study.require_lead("assignment")
    if raters is None:
        raters = default_raters(study)
    check_design(raters, overlap)  # before any rater is added: a refused design writes nothing
    if pair_overlap is not None:
        check_design(raters, pair_overlap)
    _add_new(study, raters)
    only, sampled = None, None
    only_pairs, pair_line = None, None
    if escalated:
        from .escalation import escalated as to_raters

        only, escalated_pairs, sampled = to_raters(study)
        # pairs are dealt only with --pair-overlap, as without --escalated
        only_pairs = escalated_pairs if pair_overlap is not None else set()
        if escalated_pairs and pair_overlap is None:
            pair_line = (
                f"{counted(len(escalated_pairs), 'escalated pair')} not dealt: give "
                "--pair-overlap K to deal them"
            )
        if not only and not only_pairs:
            return "\n".join(
                x
                for x in (
                    sampled,
                    pair_line,
                    "nothing dealt: every item is decided by a judge or rated",
                )
                if x
            )
    if sample is not None or sample_share is not None:
        from .sampling import draw

        # no seed given: the sample keeps its own (a top-up draws with the first draw's seed)
        _, only, sampled = draw(
            study,
            n=sample,
            share=sample_share,
            seed=seed,
            active=active,
            batch=batch,
            by_strata=by_strata,
            judge=judge,
        )
    if top_up is not None:
        from .sampling import top_up as grow

        only, only_pairs, said = grow(study, top_up, seed=seed, pairs=pair_overlap is not None)
        sampled = "\n".join(said)
    if pair_sample is not None:
        from .sampling import draw_pairs

        _, only_pairs, pair_line = draw_pairs(study, n=pair_sample, seed=seed)
    seed = secrets.randbits(31) if seed is None else seed
    dealt = store.assign(
        study.db,
        raters,
        overlap=overlap,
        pair_overlap=pair_overlap,
        seed=seed,
        only=only,
        only_pairs=only_pairs,
    )
    study.db.set_setting(
        "assignment", {"overlap": overlap, "pair_overlap": pair_overlap, "seed": seed}
    )
    lines = [x for x in (sampled, pair_line) if x]
    lines += [
        f"dealt {counted(dealt.items, 'item assignment')}"
        + (f" and {counted(dealt.pairs, 'pair assignment')}" if dealt.pairs else "")
        + f" to {counted(dealt.raters, 'rater')} (overlap {overlap}, seed {seed})"
    ]
    lines += [f"warning: {w}" for w in store.balance_warnings(store.progress(study.db))]
    return "\n".join(lines)


def default_raters(study: Study) -> list[str]:
    """The raters `assign` deals to when none are named: all non-operator raters, by name."""
    names = sorted(r.name for r in people.raters(study.db) if not r.is_operator)
    if not names:
        raise InputError(
            "this study has no raters yet: name them with --raters a,b,c (they are added)",
            field="--raters",
        )
    return names


def _add_new(study: Study, raters: list[str]) -> list[str]:
    """Add the raters the study does not know yet; the names added."""
    known = {r.name for r in study.raters()}
    added = [name for name in raters if name not in known]
    for name in added:
        study.add_rater(name)
    return added


def deal_on_demand(study: Study, *, overlap: int, raters: list[str] | None = None) -> str:
    """Raters take items as they go (each item until `overlap` raters have it): for a team server.
    `raters`: added if the study does not know them yet (as `assign` adds the ones it deals to)."""
    study.require_lead("assignment")
    if overlap < 1:
        raise InputError(
            f"--overlap {overlap}: each item needs at least 1 rater", field="--overlap"
        )
    added = _add_new(study, raters or [])
    study.db.set_setting(store.ON_DEMAND, overlap)
    line = "items are dealt on demand: each rater takes the next item that has fewer than " + (
        counted(overlap, "rater")
    )
    return line + (f"; added {counted(len(added), 'rater')}: {', '.join(added)}" if added else "")


# What each stored count counts: `status` printed "judgements 461" beside a dashboard's 237 and
# a fatigue table's 71 with no unit, and a lead could not tell which to believe.
COUNT_UNITS = {
    "items": "live items (anchors not included)",
    "anchors": "anchor items (reference answers)",
    "cases": "cases (prompts)",
    "cells": "cells (a case with one exact prompt text)",
    "media": "media files stored (images, inputs, masks)",
    "raters": "raters (operators included)",
    "judgements": "answers stored (one per rater and item: all metrics; edits, anchors included)",
    "judge_scores": "judge scores stored (one per item and metric, every judge version)",
    "pair_votes": "pair votes stored (operators included)",
    "anchor_showings": "times an anchor was shown",
}


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
    rows = store.progress(study.db)
    counts = study.counts()
    live = sum(r.done for r in rows)
    anchor = sum(r.anchors for r in rows)
    for key, n in counts.items():
        lines.append(f"{key:16s}{n!s:<7s}{COUNT_UNITS.get(key, '')}".rstrip())
        if key == "judgements":  # the stored rows, then what the figures count
            lines.append(f"{'  live':16s}{live!s:<7s}live items answered: the latest per rater")
            lines.append(f"{'  anchor':16s}{anchor!s:<7s}anchor answers (drift, anchor accuracy)")
    if rows:
        lines.append("")
        lines.append(
            f"{'rater':20s}{'assigned':>9s}{'done':>7s}{'anchors':>9s}{'pairs':>13s}  last activity"
        )
        lines.append(f"{'':20s}{'items':>9s}{'items':>7s}{'answers':>9s}{'votes/dealt':>13s}")
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
            f"rater {login.rater}: login role {login.role} (set its password with ALTER ROLE, "
            "or use ~/.pgpass on the rater's machine)"
            for login in logins
        ),
    ]
