"""The random human sample of a study (issue 25): drawn, stored, and what the report uses.

`draw` deals nothing by itself: `annotator assign --sample N` draws (or tops up) the sample
and then deals only its items to the raters. The sample is the study setting
`human_sample` (domain/sampling.py describes it), so no table or migration is needed: the
report reads the settings, and a rater package never carries it (store/package_export.py copies an
allow-list of settings; the sample names items and generators, which a package must not).
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from ..domain.errors import InputError
from ..domain.sampling import draw_active, draw_sample
from ..stats.debiased import SAMPLE_SETTING
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


def draw(
    study: Study,
    *,
    n: int | None,
    share: float | None,
    seed: int | None,
    active: bool = False,
) -> tuple[dict[str, Any], set[int], str]:
    """Draw or top up the sample; returns it, the item keys in it, and a line for the lead."""
    study.require_lead("a human sample")
    before = study.db.all_settings().get(SAMPLE_SETTING)
    before = before if isinstance(before, dict) else None
    if seed is None:
        seed = int(before["seed"]) if before and "seed" in before else secrets.randbits(31)
    live = [(r.pk, r.item_id, r.generator, r.case_id) for r in R.items(study.db) if not r.is_anchor]
    now = datetime.now(UTC).isoformat(timespec="seconds")
    if active:
        if before:
            raise InputError(
                f"the study already records a sample ({len(before.get('items') or {})} items): "
                "--active draws a new design only where none exists",
                field="--active",
            )
        u = judge_uncertainty(study)
        if not u:
            raise InputError(
                "--active needs the judge's confidences: run `annotator judge run --confidence "
                "logprobs|field` first (or drop --active for a uniform sample)",
                field="--active",
            )
        sample = draw_active(live, u, n=n, share=share, seed=seed, created_at=now)
    else:
        sample = draw_sample(live, n=n, share=share, seed=seed, before=before, created_at=now)
    study.db.set_setting(SAMPLE_SETTING, sample)
    chosen = set(sample["items"])
    pks = {r.pk for r in R.items(study.db) if r.item_id in chosen}
    added = len(chosen) - len((before or {}).get("items") or {})
    per = ", ".join(
        f"{g} {s['n_drawn']}/{s['n_live']}" for g, s in sorted(sample["strata"].items())
    )
    line = (
        f"human sample: {len(chosen)} items ({added} new; per generator drawn/live: {per}), "
        f"seed {seed}"
    )
    return sample, pks, line
