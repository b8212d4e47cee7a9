"""A study's settings and their defaults: the one table every layer reads.

The defaults were written twice, here (then in services/study.py) and inline wherever a statistic
read a setting (`settings.get("alt_test_epsilon", 0.1)`), so a changed default changed only some
figures. `setting` reads one key with its default from this table; the checks of a value a lead
sets stay in services/study.py `check_setting` (they name the CLI's key in their one line).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DEFAULT_SETTINGS", "RATER_SETTINGS", "setting"]

DEFAULT_SETTINGS: dict[str, Any] = {
    "anchor_every": 15,
    "min_count_for_share": 10,
    "pair_raters_per_pair": 3,
    "pair_question": "Which output better meets the prompt and criteria?",
    "qualification": {"gate_exact": 0.9, "scale_within_one": 0.8},
    "release_gate": None,
    "release_gate_min_cases": 5,  # a release gate decides nothing on fewer cases or items
    "release_gate_min_items": 30,
    "alt_test_epsilon": 0.1,  # the alternative-annotator test's margin (stats/alt_test.py)
    "alt_test_min_items": 30,  # items an annotator needs for the alt-test to count them
    "claim_expiry_minutes": 30,  # an on-demand claim left unanswered this long is freed
    # an answer counts only once its item was on screen this long (docs/raters.md says why 250)
    "min_exposure_ms": 250,
    "debiased_plan_width": 0.1,  # the width the report's debiased plans aim at (stats/debiased_plan.py)
    # the planner's cheapest mix of human labels and judge calls prices them so (any one unit)
    "cost_human_label": 1.0,
    "cost_judge_call": 0.01,
    # certified judging (stats/certified.py): the accepted items disagree with the humans at most
    # alpha, with probability at least 1 - delta; scales agree within the tolerance (0: exactly)
    "certified_alpha": 0.1,
    "certified_delta": 0.1,
    "certified_scale_tolerance": 0,
    "certified_cascade": None,  # judges in the order they are tried; None: every judge, by name
    "certified_mode": "pac",  # which guarantee decides the escalation and the labels
    "certified_fdr_q": 0.1,  # conformal alignment's level (expected share of disagreements)
}


# What a rater's own app reads of the study's settings: on a team server a rater's role reads
# these rows and no other (the others name items, generators and the lead's design: the human
# sample's items and probabilities, the dealing seed), and a rater package carries the same rows
# (store/package_export.py PACKAGE_SETTINGS); tests/unit/test_security_server.py lists them
# against what a rater role can read.
RATER_SETTINGS: tuple[str, ...] = (
    "name",
    "study_id",
    "anchor_every",
    "qualification",
    "pair_question",
    "pair_raters_per_pair",
    "deal_on_demand",
    "min_exposure_ms",
)


def setting(settings: Mapping[str, Any], key: str) -> Any:
    """`key`'s value in `settings`, else its default; an unknown key is a bug (KeyError)."""
    default = DEFAULT_SETTINGS[key]
    value = settings.get(key)
    return default if value is None else value
