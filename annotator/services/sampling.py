"""The random human sample of a study: drawn, stored, and what the report uses.

`draw` deals nothing by itself: `annotator assign --sample N` draws (or tops up) the sample
and then deals only its items to the raters. The sample is the study setting
`human_sample` (domain/sampling.py describes it), so no table or migration is needed: the
report reads the settings, and a rater package never carries it (store/package_export.py copies an
allow-list of settings; the sample names items and generators, which a package must not).
"""

from __future__ import annotations

import secrets
from contextlib import closing
from datetime import UTC, datetime
from typing import Any

from ..domain.errors import InputError
from ..domain.sampling import draw_sample
from ..domain.sampling_active import draw_active
from ..domain.sampling_strata import draw_by_strata
from ..domain.settings import setting
from ..stats.debiased import SAMPLE_SETTING
from ..stats.debiased_pairs import PAIR_SAMPLE_SETTING
from ..stats.pair_tallies import pair_key
from ..store import rows as R
from .study import Study


def judge_uncertainty(study: Study) -> dict[str, float]:
    """Per item, 1 - the judges' stated confidence in their answers (mean over judges and
    metrics), from every score that states one."""
    item_of = {r.pk: r.item_id for r in R.items(study.db)}
    total: dict[str, list[float]] = {}
    for sc in R.judge_scores(study.db):
        if sc.confidence is not None and sc.item_pk in item_of:
            total.setdefault(item_of[sc.item_pk], []).append(1.0 - float(sc.confidence))
    return {i: sum(v) / len(v) for i, v in total.items()}


def _same(a: Any, b: Any) -> bool:
    """A human's answer and a judge's agree: equal numbers, equal tag sets, equal texts."""
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return sorted(map(str, a)) == sorted(map(str, b))
    return str(a) == str(b)


def judge_errors(study: Study) -> dict[str, float]:
    """Per item the humans answered, the share of (score with a stated confidence, human)
    pairs where the human's answer differs from the judge's: what the judge's confidence
    claims to predict, and what an active batch recalibrates it on."""
    item_of = {r.pk: r.item_id for r in R.items(study.db)}
    scores: dict[int, list[tuple[str, Any]]] = {}
    for sc in R.judge_scores(study.db):
        if sc.confidence is not None and sc.item_pk in item_of:
            scores.setdefault(sc.item_pk, []).append((sc.metric, sc.value))
    wrong: dict[str, list[float]] = {}
    with closing(R.judgements(study.db, ("live",))) as rows:
        for j in rows:
            for metric, value in scores.get(j.item_pk, []):
                if metric in j.answers and j.answers[metric] is not None:
                    wrong.setdefault(item_of[j.item_pk], []).append(
                        0.0 if _same(j.answers[metric], value) else 1.0
                    )
    return {i: sum(v) / len(v) for i, v in wrong.items()}


def _draw_active(
    study: Study,
    live: list[tuple[int, str, str, str]],
    before: dict[str, Any] | None,
    *,
    n: int | dict[str, int] | None,
    share: float | None,
    batch: int | None,
    seed: int,
    now: str,
) -> dict[str, Any]:
    """The next batch of an active sample (the first where none is recorded)."""
    if before and not (before.get("request") or {}).get("active"):
        raise InputError(
            f"the study already records a uniform sample ({len(before.get('items') or {})} "
            "items): --active would mix designs; top it up without --active",
            field="--active",
        )
    if before and not before.get("batches"):
        raise InputError(
            "the study's active sample was drawn in one batch before batches were recorded: "
            "it cannot be continued",
            field="--active",
        )
    u = judge_uncertainty(study)
    if not u:
        raise InputError(
            "--active needs the judge's confidences: run `annotator judge run --confidence "
            "logprobs|field` first (or drop --active for a uniform sample)",
            field="--active",
        )
    if batch is None and before:
        batch = (before.get("request") or {}).get("batch")
    settings = study.db.all_settings()
    return draw_active(
        live,
        u,
        n=n,
        share=share,
        seed=seed,
        created_at=now,
        batch=batch,
        before=before,
        observed=judge_errors(study) if before else None,
        tau=float(setting(settings, "active_tau")),
        max_loss=float(setting(settings, "active_max_loss")),
        guarded=setting(settings, "active_rule") == "guarded",
    )


def neyman_strata(
    study: Study, figure: str, judge: str | None
) -> tuple[dict[str, tuple[list[str], list[float], dict[str, int]]], str, dict[str, Any]]:
    """The strata `assign --by-strata FIGURE [--judge J]` draws by: per generator with a
    stratified figure (the report's `stratified` block), its strata's names, W_k S_k and
    members; what they come from; and per generator why: each stratum's "W .. x S ..", or
    the note of a generator left as one stratum."""
    from ..stats.debiased_plan import debiased_figures
    from .reporting import study_frames

    sec = debiased_figures(study_frames(study), strata_members=True)
    have = {
        j: by["by_generator"]
        for j, by in sorted(sec["judges"].items())
        if any(figure in figs for figs in by["by_generator"].values())
    }
    if not have:
        known = sorted(
            {f for by in sec["judges"].values() for g in by["by_generator"].values() for f in g}
        )
        raise InputError(
            f"--by-strata {figure}: no debiased figure of that name"
            + (
                f" (figures: {', '.join(known)})" if known else f"; {sec.get('note') or 'none yet'}"
            ),
            field="--by-strata",
        )
    if judge is None and len(have) > 1:
        raise InputError(
            f"--by-strata {figure}: judges {', '.join(have)} each have it; name one with --judge J",
            field="--judge",
        )
    judge = judge if judge is not None else next(iter(have))
    if judge not in have:
        raise InputError(
            f"--judge {judge}: no debiased {figure} figure for that judge "
            f"(judges with one: {', '.join(have)})",
            field="--judge",
        )
    figs = {g: f[figure] for g, f in sorted(have[judge].items()) if figure in f}
    blocks = {g: f["stratified"] for g, f in figs.items() if f.get("stratified")}
    if not blocks:
        notes = sorted({str(f.get("stratified_note") or "no strata") for f in figs.values()})
        raise InputError(
            f"--by-strata {figure}: judge {judge}'s figure has no strata yet ({'; '.join(notes)})",
            field="--by-strata",
        )
    strata = {}
    why: dict[str, Any] = {}
    for g, b in blocks.items():
        ss = b["strata"]
        strata[g] = ([s["name"] for s in ss], [s["weight"] * s["sd"] for s in ss], b["members"])
        why[g] = {s["name"]: f"W {s['weight']:.2f} x S {s['sd']:.2f}" for s in ss}
    for g in figs.keys() - blocks.keys():
        why[g] = f"one stratum, a uniform top-up: {figs[g].get('stratified_note')}"
    return strata, f"judge {judge}'s {figure} by {next(iter(blocks.values()))['by']}", why


def _by_strata_lines(sample: dict[str, Any], before: dict[str, Any], why: dict[str, Any]) -> str:
    """What `assign --by-strata` says: the total, then per generator each stratum's new draws
    and its W_k and S_k (Neyman's reason)."""
    n = len(sample["items"])
    added = n - len(before.get("items") or {})
    lines = [
        f"human sample by strata ({sample['request']['by_strata']}; Neyman: n_k proportional "
        f"to W_k S_k): {n} items ({added} new), seed {sample['seed']}"
    ]
    for g, st in sorted(sample["neyman"][-1]["strata"].items()):
        reason = why.get(g)
        per = "; ".join(
            f"{name} +{s['now'] - s['had']} ({s['had']} -> {s['now']} of {s['items']}"
            + (f"; {reason[name]})" if isinstance(reason, dict) else ")")
            for name, s in st.items()
        )
        lines.append(f"  {g}: {per}" + (f" ({reason})" if isinstance(reason, str) else ""))
    if sample.get("outside_frame"):
        lines.append(
            f"  {sample['outside_frame']} items imported since the sample was drawn stay "
            "outside it (and the figures)"
            + (
                ""
                if before.get("cells")
                else ": a uniform top-up (--sample N) first brings them in"
            )
        )
    return "\n".join(lines)


def draw(
    study: Study,
    *,
    n: int | None,
    share: float | None,
    seed: int | None,
    active: bool = False,
    batch: int | None = None,
    by_strata: str | None = None,
    judge: str | None = None,
) -> tuple[dict[str, Any], set[int], str]:
    """Draw or top up the sample; returns it, the item keys in it, and a line for the lead.
    `by_strata`: a figure whose strata the top-up follows (Neyman; `judge`: whose figure)."""
    study.require_lead("a human sample")
    before = study.db.all_settings().get(SAMPLE_SETTING)
    before = before if isinstance(before, dict) else None
    if seed is None:
        seed = int(before["seed"]) if before and "seed" in before else secrets.randbits(31)
    live = [(r.pk, r.item_id, r.generator, r.case_id) for r in R.items(study.db) if not r.is_anchor]
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if by_strata is not None:
        if before is None or not before.get("items"):
            raise InputError(
                "--by-strata tops up a recorded sample by its strata: draw one first with "
                "--sample N",
                field="--by-strata",
            )
        if n is None:
            raise InputError("--by-strata says how to draw: add --sample N", field="--by-strata")
        strata, what, why = neyman_strata(study, by_strata, judge)
        sample = draw_by_strata(
            live, strata, n=n, seed=seed, before=before, created_at=now, why=what
        )
        study.db.set_setting(SAMPLE_SETTING, sample)
        chosen = set(sample["items"])
        pks = {r.pk for r in R.items(study.db) if r.item_id in chosen}
        return sample, pks, _by_strata_lines(sample, before, why)
    if active:
        sample = _draw_active(
            study, live, before, n=n, share=share, batch=batch, seed=seed, now=now
        )
    else:
        sample = draw_sample(live, n=n, share=share, seed=seed, before=before, created_at=now)
    study.db.set_setting(SAMPLE_SETTING, sample)
    chosen = set(sample["items"])
    pks = {r.pk for r in R.items(study.db) if r.item_id in chosen}
    return sample, pks, _drawn_line("human sample", "items", "generator drawn/live", sample, before)


def draw_pairs(
    study: Study, *, n: int | dict[str, int], seed: int | None
) -> tuple[dict[str, Any], set[int], str]:
    """Draw or top up the random sample of pairs (`assign --pair-sample N`): N pairs per
    generator pair, spread over cases, stored as the study setting `human_pair_sample` in the
    item sample's form (domain/sampling.py: each drawn pair's probability, each stratum's
    rate, the frame), so the debiased win rates (stats/debiased_pairs.py) weigh them alike.
    `n` by generator pair: the planner's top-up. Returns it, the pair keys in it, and a line
    for the lead."""
    from ..store.pairs import ensure_pairs, pair_rows

    study.require_lead("a pair sample")
    if isinstance(n, int) and n < 1:
        raise InputError(
            f"--pair-sample {n}: draw at least 1 pair per generator pair", field="--pair-sample"
        )
    ensure_pairs(study.db)  # the pairs of the design, before they are drawn from
    before = study.db.all_settings().get(PAIR_SAMPLE_SETTING)
    before = before if isinstance(before, dict) else None
    if seed is None:
        seed = int(before["seed"]) if before and "seed" in before else secrets.randbits(31)
    item = {r.pk: r for r in R.items(study.db)}
    frame = [
        (pk, pid, pair_key(item[a].generator, item[b].generator), item[a].case_id)
        for pk, pid, a, b in pair_rows(study.db)
        if a in item and b in item and not item[a].is_anchor and not item[b].is_anchor
    ]
    if not frame:
        raise InputError(
            "the study has no pairs to sample: it needs items of two generators in one cell",
            field="--pair-sample",
        )
    now = datetime.now(UTC).isoformat(timespec="seconds")
    sample = draw_sample(frame, n=n, share=None, seed=seed, before=before, created_at=now)
    sample["design"] = "uniform per generator pair, spread over cases in proportion (systematic)"
    study.db.set_setting(PAIR_SAMPLE_SETTING, sample)
    chosen = set(sample["items"])
    pks = {pk for pk, pid, _, _ in frame if pid in chosen}
    return (
        sample,
        pks,
        _drawn_line("pair sample", "pairs", "generator pair drawn/all", sample, before),
    )


def _drawn_line(
    what: str, units: str, per_what: str, sample: dict[str, Any], before: dict[str, Any] | None
) -> str:
    """The one line `assign` prints for a drawn (or topped-up) item or pair sample."""
    n = len(sample["items"])
    added = n - len((before or {}).get("items") or {})
    per = ", ".join(
        f"{g} {s['n_drawn']}/{s['n_live']}" for g, s in sorted(sample["strata"].items())
    )
    return f"{what}: {n} {units} ({added} new; per {per_what}: {per}), seed {sample['seed']}"


def plan(study: Study, width: float) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The planner (`annotator plan`): per judge, generator (or generator pair) and figure, the
    human labels the current judge-human disagreement implies for an interval of `width`
    (stats/debiased_plan.py); returns the rows and the debiased section they come from."""
    from ..stats.debiased_plan import debiased_figures, plan_rows
    from .reporting import study_frames

    if not width > 0:
        raise InputError(f"--width {width}: a positive interval width", field="--width")
    study.require_lead("a plan")
    sec = debiased_figures(study_frames(study), target=width)
    return plan_rows(sec), sec


def plan_lines(rows: list[dict[str, Any]], sec: dict[str, Any], width: float) -> list[str]:
    """The plan as the lead reads it, one line per figure (and why there is none)."""
    lines = []
    for r in rows:
        p = r["plan"]
        unit = "votes" if r["kind"] == "pairs" else "labels"
        if p.get("too_few"):
            lines.append(
                f"{r['unit']}\t{r['figure']}\t(judge {r['judge']}): {p['too_few']}; "
                f"{p['n_needed']} {unit} ({p['more_labels']} more) before a width can be planned"
                + (f"; {p['judge_value']}" if p.get("judge_value") else "")
            )
            continue
        line = f"{r['unit']}\t{r['figure']}\t(judge {r['judge']}): width {p['width']:.3f} from "
        line += f"{p['n_sampled']} {unit}; "
        if p.get("reachable") is False:
            line += p["note"]
        else:
            line += f"{width:g} needs {p['n_needed']} ({p['more_labels']} more)"
            if p.get("design_effect"):
                line += f" (items share cases: design effect {p['design_effect']:.2f})"
            elif p.get("note"):
                line += " (a lower bound: items share cases)"
        if p.get("n_needed_humans_only") is not None:
            line += f"; humans alone need {p['n_needed_humans_only']}"
        mix = p.get("cheapest") or {}
        if mix.get("reachable") is False:
            line += f"; even all {mix['human_labels']} items labelled fall short"
        elif mix.get("uses_judge"):
            line += (
                f"; cheapest: {mix['human_labels']} {unit} and {mix['judge_calls']} judge calls "
                f"(cost {mix['cost']:g} against {mix['humans_only_cost']:g} for humans alone)"
            )
        elif mix:
            line += "; cheapest: humans alone (the judge does not pay for itself)"
        if p.get("judge_value"):
            line += f"; {p['judge_value']}"
        g = p.get("release_gate")
        if g:
            if g["decided"]:
                line += f"; release gate at {g['threshold']:g}: decided ({g['decided']})"
            elif g.get("more_labels") is None:
                line += f"; release gate at {g['threshold']:g}: {g['note']}"
            else:
                line += (
                    f"; release gate at {g['threshold']:g}: {g['more_labels']} more to decide it"
                )
        lines.append(line)
    if not rows:
        notes = [sec.get("note"), (sec.get("pairs") or {}).get("note")]
        lines.append(
            "nothing to plan from: no debiased figure has an interval yet"
            + "".join(f"; {x}" for x in notes if x)
            + " (each figure needs at least `min_count_for_share` sampled items answered)"
        )
    return lines


def top_up(
    study: Study, width: float, *, seed: int | None, pairs: bool
) -> tuple[set[int] | None, set[int] | None, list[str]]:
    """`assign --top-up WIDTH`: grow the recorded sample (and the pair sample, with `pairs`)
    per generator (pair) to the size the plan says its widest figure needs. Returns the item
    and pair keys to deal (None: that sample is not touched) and lines for the lead."""
    from ..stats.debiased_plan import needed_per_unit

    settings = study.db.all_settings()
    if not isinstance(settings.get(SAMPLE_SETTING), dict) and not (
        pairs and isinstance(settings.get(PAIR_SAMPLE_SETTING), dict)
    ):
        raise InputError(
            "--top-up grows a recorded sample: draw one first with --sample N (or --pair-sample N)",
            field="--top-up",
        )
    rows, _ = plan(study, width)
    lines = [f"plan for width {width:g}: {len(rows)} figures with an interval"]
    only = only_pairs = None
    need = needed_per_unit(rows, "items")
    if isinstance(settings.get(SAMPLE_SETTING), dict):
        before = settings[SAMPLE_SETTING]
        s = int(before.get("seed", 0)) if seed is None else seed
        live = [
            (r.pk, r.item_id, r.generator, r.case_id) for r in R.items(study.db) if not r.is_anchor
        ]
        now = datetime.now(UTC).isoformat(timespec="seconds")
        done: dict[str, float] = {}
        for pb in before.get("batches") or []:
            for g, k in pb["size"].items():
                done[g] = done.get(g, 0.0) + float(k)
        if (before.get("request") or {}).get("active") and all(
            k <= done.get(g, 0.0) for g, k in need.items()
        ):
            sample = before  # the plan asks no more than the batches drew: nothing to draw
        elif (before.get("request") or {}).get("active"):
            # an active sample grows by one more batch, recalibrated on the labels so far
            sample = _draw_active(
                study, live, before, n=need, share=None, batch=None, seed=s, now=now
            )
            sample["request"]["top_up_width"] = width
        else:
            sample = draw_sample(live, n=need, share=None, seed=s, before=before, created_at=now)
            sample["request"] = {"top_up_width": width, "n": need}
        study.db.set_setting(SAMPLE_SETTING, sample)
        chosen = set(sample["items"])
        only = {r.pk for r in R.items(study.db) if r.item_id in chosen}
        added = len(chosen) - len(before.get("items") or {})
        lines.append(f"human sample: {len(chosen)} items ({added} new) for width {width:g}")
    if pairs and isinstance(settings.get(PAIR_SAMPLE_SETTING), dict):
        _, only_pairs, line = draw_pairs(study, n=needed_per_unit(rows, "pairs"), seed=seed)
        lines.append(line)
    return only, only_pairs, lines
