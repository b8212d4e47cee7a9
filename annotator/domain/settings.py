"""A study's settings: one declarative table of each key's default, check and one-line doc.

Every layer reads this table: `setting` reads one key with its default, services/study.py
`check_setting` checks a value a lead sets by the key's `check`, `annotator set` lists its keys,
and tests/unit/test_docs.py holds docs/statistics.md "Settings of a study" and every read of a
setting in annotator/ to it. The defaults were once written in several places, and a changed
default then changed only some figures.

A check returns None when the value fits, else what the value must be: the second half of the
one line `setting 'KEY' must be ...` that names the key and what to do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_SETTINGS",
    "RATER_SETTINGS",
    "RECORDS",
    "SETTINGS",
    "Check",
    "Setting",
    "problem",
    "setting",
]

Check = Callable[[Any], str | None]  # None: the value fits; else what it must be


def _is_number(v: Any) -> bool:
    # JSON's true/false arrive as bool, a subclass of int: never a number of anything here
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def integer(at_least: int, what: str) -> Check:
    """A whole number >= `at_least`."""
    return lambda v: None if _is_int(v) and v >= at_least else what


def number(
    low: float | None,
    high: float | None,
    what: str,
    *,
    open_low: bool = False,
    open_high: bool = False,
    whole: bool = False,
) -> Check:
    """A number in [low, high] (None: unbounded; `open_*`: that end excluded; `whole`: an int)."""

    def check(v: Any) -> str | None:
        if not (_is_int(v) if whole else _is_number(v)):
            return what
        if low is not None and (v <= low if open_low else v < low):
            return what
        if high is not None and (v >= high if open_high else v > high):
            return what
        return None

    return check


def probability(what: str = "a number strictly between 0 and 1, e.g. 0.1") -> Check:
    """A level or error rate: strictly between 0 and 1 (0 and 1 promise nothing or everything)."""
    return number(0, 1, what, open_low=True, open_high=True)


def choice(names: tuple[str, ...], what: str) -> Check:
    return lambda v: None if v in names else what


def text(what: str = "a non-empty text") -> Check:
    return lambda v: None if isinstance(v, str) and v.strip() else what


def shares(what: str) -> Check:
    """A mapping of name -> share in [0, 1]."""

    def check(v: Any) -> str | None:
        ok = isinstance(v, dict) and all(_is_number(x) and 0 <= x <= 1 for x in v.values())
        return None if ok else what

    return check


def _anchor_every(v: Any) -> str | None:
    if not _is_int(v) or v < 0:
        return "a positive integer (0 turns anchors off)"
    if v == 1:
        return "0 (off) or at least 2: anchors are never shown twice in a row"
    return None


def _cascade(v: Any) -> str | None:
    fits = v is None or (
        isinstance(v, list)
        and bool(v)
        and all(isinstance(x, str) and x.strip() for x in v)
        and len(set(v)) == len(v)
    )
    return (
        None if fits else 'null or the judges in the order they are tried, e.g. ["cheap", "strong"]'
    )


_GATE_EXAMPLE = (
    '{"verdict_pass_rate": 0.7}, or on the debiased lower bounds '
    '{"source": "debiased", "verdict_pass_rate": 0.7}'
)


def _release_gate(v: Any) -> str | None:
    """null, or figure -> threshold with an optional "source" (humans | debiased) and, on the
    debiased bounds only, the "judge" whose debiased figures it reads."""
    if v is None:
        return None
    if not isinstance(v, dict):
        return f"null or thresholds by figure, e.g. {_GATE_EXAMPLE}"
    if v.get("source", "humans") not in ("humans", "debiased"):
        return f'a gate whose \'source\' is "humans" or "debiased", e.g. {_GATE_EXAMPLE}'
    if "judge" in v and (
        v.get("source") != "debiased" or not isinstance(v["judge"], str) or not v["judge"].strip()
    ):
        return f'a gate whose \'judge\' (a judge\'s name) goes with "source": "debiased", e.g. {_GATE_EXAMPLE}'
    figures = {k: x for k, x in v.items() if k not in ("source", "judge")}
    if (not figures and v) or not all(_is_number(x) for x in figures.values()):
        return f"null or thresholds by figure, e.g. {_GATE_EXAMPLE}"
    return None


@dataclass(frozen=True)
class Setting:
    """One setting a lead sets (`annotator set KEY VALUE`): its default, its check, its doc."""

    default: Any
    check: Check
    doc: str


_COUNT = "a positive integer"

SETTINGS: dict[str, Setting] = {
    "anchor_every": Setting(
        15, _anchor_every, "one silent anchor in this many served items; 0 turns silent anchors off"
    ),
    "min_count_for_share": Setting(
        10, integer(1, _COUNT), "answers a share (a pass rate, a category's share) needs"
    ),
    "pair_raters_per_pair": Setting(3, integer(1, _COUNT), "raters each pair is dealt to"),
    "pair_question": Setting(
        "Which output better meets the prompt and criteria?",
        text(),
        "the question a rater answers on a pair",
    ),
    "qualification": Setting(
        {"gate_exact": 0.9, "scale_within_one": 0.8},
        shares('shares between 0 and 1, e.g. {"gate_exact": 0.9, "scale_within_one": 0.8}'),
        "the shares of calibration anchors a rater must match to qualify",
    ),
    "release_gate": Setting(
        None,
        _release_gate,
        "null, or thresholds by figure checked on the conservative (or the debiased) lower bound",
    ),
    "release_gate_min_cases": Setting(
        5, integer(1, _COUNT), "a release gate decides nothing on fewer cases"
    ),
    "release_gate_min_items": Setting(
        30, integer(1, _COUNT), "a release gate decides nothing on fewer items"
    ),
    "alt_test_epsilon": Setting(
        0.1,
        number(0, 1, "a number between 0 and 1 (the share of items a judge may lose), e.g. 0.1"),
        "the alternative-annotator test's margin: the share of items a judge may lose (0 to 1)",
    ),
    "alt_test_min_items": Setting(
        30, integer(1, _COUNT), "items an annotator needs for the alt-test to count them"
    ),
    "claim_expiry_minutes": Setting(
        30,
        number(
            0,
            None,
            "a positive number of minutes (an unanswered on-demand claim is freed then)",
            open_low=True,
        ),
        "an on-demand claim left unanswered this long is freed",
    ),
    # docs/raters.md says why 250
    "min_exposure_ms": Setting(
        250,
        number(
            0,
            10_000,
            "a whole number of milliseconds from 0 to 10000, e.g. 250 (0: no minimum)",
            whole=True,
        ),
        "an answer counts only once its item was on screen this long",
    ),
    "active_tau": Setting(
        0.1,
        number(0, 1, "a share between 0 and 1, e.g. 0.1 (1: a uniform sample)"),
        "the least share of an --active sample drawn uniformly (every item at least tau * n / N)",
    ),
    "active_max_loss": Setting(
        0.03,
        number(0, None, "a share of at least 0, e.g. 0.03 (0: uniform until the labels confirm)"),
        "what an --active sample may lose to uniform while the labels have not confirmed the "
        "judge's confidence",
    ),
    "active_rule": Setting(
        "guarded",
        choice(("guarded", "zrnic-candes"), 'one of "guarded", "zrnic-candes"'),
        "an --active sample's design: guarded (the judge's confidence followed once the labels "
        "confirm it, within active_max_loss until then) or zrnic-candes (the paper's, unguarded)",
    ),
    "debiased_plan_width": Setting(
        0.1,
        number(
            0,
            None,
            "a positive width in the figure's units, e.g. 0.1 (a pass rate +/- 0.05)",
            open_low=True,
        ),
        "the interval width each debiased figure's plan aims at",
    ),
    "debiased_strata": Setting(
        None,
        lambda v: (
            None
            if v is None or v in ("confidence", "slice", "none")
            else 'null, "confidence", "slice" or "none"'
        ),
        "stratified PPI++'s strata: confidence bins, the items' slice, or none; null: "
        "confidence bins where the judge states confidences",
    ),
    # the planner's cheapest mix of human labels and judge calls prices them so (any one unit)
    "cost_human_label": Setting(
        1.0,
        number(0, None, "a positive cost in any one unit for both costs, e.g. 1.0", open_low=True),
        "what the plan's cheapest mix prices a human label at",
    ),
    "cost_judge_call": Setting(
        0.01,
        number(0, None, "a positive cost in any one unit for both costs, e.g. 0.01", open_low=True),
        "what the plan's cheapest mix prices a judge call at",
    ),
    # certified judging (stats/certified.py): the accepted items disagree with the humans at most
    # alpha, with probability at least 1 - delta; scales agree within the tolerance (0: exactly)
    "certified_alpha": Setting(
        0.1,
        probability(),
        "the accepted items disagree with the raters' consensus at most this share",
    ),
    "certified_delta": Setting(
        0.1, probability(), "certified_alpha holds with probability at least 1 - delta"
    ),
    "certified_scale_tolerance": Setting(
        0,
        number(0, None, "a number of scale points, 0 or more (0: the judge's answer exactly)"),
        "a judge's scale answer agrees within this many points of the consensus",
    ),
    "certified_cascade": Setting(
        None, _cascade, "judges in the order they are tried; null: every judge, by name"
    ),
    "certified_mode": Setting(
        "pac",
        choice(
            ("pac", "conformal_alignment"), '"pac" (Trust or Escalate) or "conformal_alignment"'
        ),
        "which guarantee decides the escalation and the labels: pac or conformal_alignment",
    ),
    "certified_fdr_q": Setting(
        0.1, probability(), "conformal alignment's level (expected share of disagreements)"
    ),
}

DEFAULT_SETTINGS: dict[str, Any] = {k: s.default for k, s in SETTINGS.items()}

# What the study keeps in the same table that annotator writes itself, never `annotator set`:
# a lead changes them through the command named, which does more than store a value.
RECORDS: dict[str, str] = {
    "name": "the study's name (its folder's or database's)",
    "study_id": "the study's UUID, which its rater packages carry",
    "assignment": "the last deal's overlap and seed (`annotator assign`)",
    "deal_on_demand": "raters per item when raters take items as they go (`assign --on-demand`)",
    "human_sample": "the random human sample of items (`assign --sample`)",
    "human_pair_sample": "the random human sample of pairs (`assign --pair-sample`)",
    "media_salt": "a rater package's random part of its image names",
    "role": "a rater package's mark",
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


def problem(key: str, value: Any) -> str | None:
    """What `value` must be for setting `key` (None: it fits); `key` must be in SETTINGS."""
    return SETTINGS[key].check(value)


def setting(settings: Mapping[str, Any], key: str) -> Any:
    """`key`'s value in `settings`, else its default; an unknown key is a bug (KeyError)."""
    default = DEFAULT_SETTINGS[key]
    value = settings.get(key)
    return default if value is None else value
