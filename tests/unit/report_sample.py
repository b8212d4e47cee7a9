"""A report dict built by hand to the JSON contract (docs/design.md 5.5), with the extras the
report model may add, so the writers' tests (test_reports_render.py, test_reports_screenshot.py)
do not depend on the statistics: every section filled, hostile rater and judge texts, a metric
whose alpha is undefined (null with its note), thumbnails as real PNGs."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

XSS = "<script>alert(1)</script>"
CONTRACT_TOP = ("study", "rubric", "metrics", "findings", "raters", "pairwise")
CONTRACT_METRIC = (
    "kind",
    "level",
    "n_items",
    "n_raters",
    "n_judgements",
    "human_alpha",
    "human_alpha_interval",
    "judges",
)
CONTRACT_JUDGE = (
    "n_items",
    "alpha_vs_consensus",
    "alpha_with_judge_as_rater",
    "permutation_alpha",
    "exact_agreement",
    "mean_difference",
    "pearson",
    "spearman",
    "kendall_tau_b",
)


def est(
    e: float | None,
    lo: float | None = None,
    hi: float | None = None,
    n: int | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    d: dict[str, Any] = {"estimate": e, "low": lo, "high": hi}
    if n is not None:
        d["n"] = n
    if note:
        d["note"] = note
    return d


def _cusum(dev: list[float], k: float = 0.5) -> tuple[list[float], list[float]]:
    up, down, su, sd = [], [], 0.0, 0.0
    for d in dev:
        su, sd = max(0.0, su + d - k), max(0.0, sd - d - k)
        up.append(su)
        down.append(sd)
    return up, down


def _ewma(dev: list[float], lam: float = 0.2) -> list[float]:
    z, out = 0.0, []
    for d in dev:
        z = lam * d + (1 - lam) * z
        out.append(z)
    return out


def _series(dev: list[float]) -> dict[str, Any]:
    up, down = _cusum(dev)
    limit = [
        round(3 * 0.55 * ((0.2 / 1.8) * (1 - 0.8 ** (2 * (t + 1)))) ** 0.5, 4)
        for t in range(len(dev))
    ]
    return {
        "seq": list(range(len(dev))),
        "deviation": dev,
        "cusum_up": up,
        "cusum_down": down,
        "ewma": _ewma(dev),
        "ewma_limit": limit,
        "k": 0.5,
        "h": 4.0,
    }


def _judge(alpha: dict, *, n: int, scale: bool) -> dict[str, Any]:
    j: dict[str, Any] = {
        "n_items": n,
        "alpha_vs_consensus": alpha,
        "alpha_with_judge_as_rater": est(0.58, 0.44, 0.69, n=n),
        "permutation_alpha": {
            "mean": -0.004,
            "p_value": 0.001,
            "n_perm": 1000,
            "observed": alpha["estimate"],
        },
        "exact_agreement": 0.71,
        "exact_agreement_ci": est(0.71, 0.6, 0.81, n=n - 3),
        "alpha_humans_same_items": est(0.69, 0.57, 0.78, n=n),
        "alpha_gain": est(-0.11, -0.2, -0.03, n=n),
        "same_scale": True,
        "n_cannot_judge": 0,
        "mean_difference": est(
            -0.2 if scale else 0.05, -0.41 if scale else -0.02, 0.01 if scale else 0.12, n=n
        ),
        "pearson": est(0.64, 0.5, 0.75, n=n),
        "spearman": est(0.61, 0.47, 0.73, n=n),
        "kendall_tau_b": est(0.49, 0.37, 0.6, n=n),
        "cohen_kappa": {
            "unweighted": est(0.41, 0.28, 0.54),
            "linear": est(0.52, 0.4, 0.63),
            "quadratic": est(0.63, 0.5, 0.74),
        }
        if scale
        else est(0.44, 0.3, 0.58),
        "confusion": {
            "labels": ["0", "1", "2", "3", "4", "5"] if scale else ["FAIL", "PASS"],
            "matrix": [
                [2, 1, 0, 0, 0, 0],
                [1, 3, 2, 0, 0, 0],
                [0, 2, 6, 3, 0, 0],
                [0, 0, 3, 9, 2, 0],
                [0, 0, 0, 2, 8, 1],
                [0, 0, 0, 0, 1, 4],
            ]
            if scale
            else [[11, 4], [6, 39]],
        },
        "human_range": {
            "measure": "cohen_kappa",
            "judge_vs_human": {"r1": est(0.5, 0.3, 0.7, n=n)},
            "human_vs_human": {"pairs": {}, "min": 0.48, "max": 0.66},
            "judge_mean": 0.52,
            "position": "inside",
        },
        "permutation_pearson": {"mean": 0.002, "p_value": 0.005, "n_perm": 200},
        "slices": {
            "by_case": {
                c: {
                    "n_items": 20,
                    "alpha_vs_consensus": est(a, a - 0.2, a + 0.15, n=20),
                    "exact_agreement": est(a + 0.1, a - 0.1, a + 0.25, n=20),
                }
                for c, a in (("ui_signup", 0.6), ("ui_checkout", 0.52), ("ui_dashboard", 0.7))
            },
            "by_generator": {
                "gen-b": {
                    "n_items": 30,
                    "alpha_vs_consensus": est(0.6, 0.4, 0.75, n=30),
                    "exact_agreement": est(None, n=8, note="fewer than 10 items"),
                },
                "gen-a": {
                    "n_items": 30,
                    "alpha_vs_consensus": est(0.64, 0.5, 0.8, n=30),
                    "exact_agreement": est(0.73, 0.6, 0.85, n=30),
                },
            },
        },
    }
    return j


def sample_report() -> dict[str, Any]:
    """A report as the report model writes it (5.5 plus the documented extras)."""
    n = 60
    metrics = {
        "instruction_following": {
            "kind": "gate",
            "level": "nominal",
            "n_items": n,
            "n_raters": 3,
            "n_judgements": 178,
            "human_alpha": est(0.71, 0.6, 0.8, n=n),
            "human_alpha_interval": est(0.71, 0.6, 0.8, n=n),
            "percent_agreement": est(0.86, 0.8, 0.91, n=n),
            "fleiss_kappa": est(0.7, 0.59, 0.8),
            "gwet_ac1": est(0.78, 0.7, 0.86),
            "n_cannot_judge": 2,
            "n_ties": 1,
            "rater_pairs": {
                "r1 vs r2": {"n": 60, "unweighted": est(0.7, 0.55, 0.83, n=60)},
                "r1 vs r3": {"n": 58, "unweighted": est(0.66, 0.5, 0.8, n=58)},
                "r2 vs r3": {"n": 6, "note": "fewer than 10 items answered by both"},
            },
            "judges": {
                "gpt-judge": _judge(est(0.62, 0.49, 0.73, n=n), n=n, scale=False),
                "clip-judge": _judge(est(0.33, 0.18, 0.47, n=n), n=n, scale=False),
            },
        },
        "layout_hierarchy": {
            "kind": "scale",
            "level": "ordinal",
            "n_items": n,
            "n_raters": 3,
            "n_judgements": 180,
            "human_alpha": est(0.66, 0.55, 0.75, n=n),
            "human_alpha_interval": est(0.69, 0.58, 0.78, n=n),
            "n_cannot_judge": 0,
            "judges": {"gpt-judge": _judge(est(0.58, 0.45, 0.68, n=n), n=n, scale=True)},
        },
        "text_rendering": {
            "kind": "gate",
            "level": "nominal",
            "n_items": n,
            "n_raters": 3,
            "n_judgements": 180,
            # every human answered PASS: alpha is undefined, with the reason beside it
            "human_alpha": None,
            "human_alpha_note": "every answer identical (PASS)",
            "human_alpha_interval": est(None, note="every answer identical (PASS)"),
            "judges": {},
        },
        "failure_tags": {
            "kind": "tags",
            "level": "nominal",
            "n_items": n,
            "n_raters": 3,
            "n_judgements": 150,
            "human_alpha": est(0.41, 0.27, 0.53, n=n),
            "human_alpha_interval": est(0.41, 0.27, 0.53, n=n),
            "judges": {},
        },
    }
    findings = [
        {
            "item_id": "it-007",
            "display_code": "K7Q2",
            "case_id": "ui_checkout",
            "generator": "gen-a",
            "metric": "instruction_following",
            "humans": "FAIL (3 of 3)",
            "judge": "PASS",
            "kind": "judge_lenient",
            "human_answers": {"r1": "FAIL", "r2": "FAIL", "r3": "FAIL"},
            "human_reasons": {
                "r1": "No order summary section.",
                "r2": XSS,
                "r3": '=HYPERLINK("x")',
            },
            "judge_value": "PASS",
            "judge_reason": "All required sections present. " + XSS,
        },
        # the shape stats/findings.py gives: a list of {rater, value, reason}
        {
            "item_id": "it-019",
            "display_code": "P3ZX",
            "case_id": "ui_signup",
            "generator": "gen-b",
            "metric": "layout_hierarchy",
            "judge_name": "gpt-judge",
            "humans": "2, 1, 2",
            "human_answers": [
                {"rater": "r1", "value": "2", "reason": "CTA buried below the fold"},
                {"rater": "r2", "value": "1", "reason": None},
                {"rater": "r3", "value": "2", "reason": "two primary buttons"},
            ],
            "judge": "4",
            "judge_reason": "Clean grid, clear hierarchy.",
            "kind": "judge_above_human_range",
        },
        {
            "item_id": "it-031",
            "display_code": "M81D",
            "case_id": "ui_dashboard",
            "generator": "gen-a",
            "metric": "instruction_following",
            "humans": "split 2-1",
            "judge": None,
            "kind": "human_split",
            "human_answers": {"r1": "PASS", "r2": "FAIL", "r3": "PASS"},
        },
    ]
    raters = {
        "r1": {
            "n_judgements": 240,
            "anchors": 12,
            "drift": {"flagged": False, "metric": None, "direction": None, "first_flag_at": None},
            "accuracy": {
                "instruction_following": est(0.92, 0.62, 1.0, n=12) | {"rule": "exact"},
                "layout_hierarchy": est(0.83, 0.52, 0.98, n=12)
                | {"rule": "within one point", "exact": 0.5},
            },
            "test_retest": {
                "layout_hierarchy": {
                    "n_pairs": 6,
                    "n_anchors": 6,
                    "agreement": 1.0,
                    "exact": 0.67,
                    "rule": "within one point",
                }
            },
            "series": {"layout_hierarchy": _series([0, 1, -1, 0, 0, 1, 0, -1, 0, 0, 1, 0])},
        },
        "r2": {
            "n_judgements": 238,
            "anchors": 30,
            "drift": {
                "flagged": True,
                "metric": "layout_hierarchy",
                "direction": "up",
                "first_flag_at": 22,
            },
            "accuracy": {
                "instruction_following": est(0.9, 0.73, 0.98, n=30),
                "layout_hierarchy": est(None, n=0, note="no answers"),
            },
            "test_retest": {
                "layout_hierarchy": {
                    "n_pairs": 0,
                    "n_anchors": 0,
                    "agreement": None,
                    "note": "no anchor answered in two sessions",
                }
            },
            "series": {
                "layout_hierarchy": _series(
                    [
                        0,
                        0,
                        1,
                        -1,
                        0,
                        0,
                        1,
                        0,
                        0,
                        -1,
                        0,
                        0,
                        1,
                        0,
                        0,
                        1,
                        1,
                        2,
                        1,
                        1,
                        2,
                        1,
                        2,
                        1,
                        2,
                        2,
                        1,
                        2,
                        1,
                        2,
                    ]
                ),
                "instruction_following": _series(
                    [
                        0,
                        0,
                        0,
                        1,
                        0,
                        0,
                        -1,
                        0,
                        0,
                        0,
                        0,
                        1,
                        0,
                        0,
                        0,
                        0,
                        1,
                        0,
                        0,
                        1,
                        0,
                        0,
                        1,
                        0,
                        0,
                        0,
                        1,
                        0,
                        0,
                        1,
                    ]
                ),
            },
        },
        "r3": {
            "n_judgements": 180,
            "anchors": 0,
            "drift": {"flagged": False, "metric": None, "direction": None, "first_flag_at": None},
        },
    }

    # the report model's shape: figures per generator, overall (cases weighted equally) and per case
    def gen(verdict: list[float], layout: list[float], gate_pass: bool) -> dict[str, Any]:
        case_ids = ["ui_signup", "ui_checkout", "ui_dashboard"]  # deliberately not alphabetical
        by_case = {
            c: {
                "n_items": 10,
                "verdict_pass_rate": est(v, max(0, v - 0.3), min(1, v + 0.2), n=10),
                "layout_hierarchy": est(lh, lh - 0.5, lh + 0.5, n=10),
            }
            for c, v, lh in zip(case_ids, verdict, layout, strict=True)
        }
        by_case["ui_checkout"]["verdict_pass_rate"] = est(
            None, n=4, note="4 answers, fewer than 10: a share is not shown"
        )
        mean_v = sum(verdict) / 3
        return {
            "n_items": 30,
            "n_cases": 3,
            "overall": {
                "verdict_pass_rate": est(mean_v, mean_v - 0.15, mean_v + 0.12, n=30)
                | {"n_cases": 3},
                "layout_hierarchy": est(sum(layout) / 3, 2.6, 3.9, n=30) | {"n_cases": 3},
            },
            "by_case": by_case,
            "release_gate": {
                "pass": gate_pass,
                "checks": {
                    "verdict_pass_rate": {"threshold": 0.6, "low": mean_v - 0.15, "pass": gate_pass}
                },
            },
        }

    generators = {
        "cases": ["ui_checkout", "ui_dashboard", "ui_signup"],
        "figures": {"verdict_pass_rate": "pass rate", "layout_hierarchy": "mean score"},
        "by_generator": {
            "gen-b": gen([0.7, 0.5, 0.7], [3.1, 2.8, 3.5], False),
            "gen-a": gen([0.9, 0.6, 0.9], [3.8, 3.0, 4.1], True),
        },
        "release_gate": {
            "thresholds": {"verdict_pass_rate": 0.6},
            "rule": "every figure's lower 95% bound reaches its threshold",
        },
    }
    pairwise = {
        "cells": {
            "ui_signup": {
                "gen-a vs gen-b": {
                    "n": 12,
                    "left": 5,
                    "right": 5,
                    "both": 1,
                    "neither": 1,
                    "wins": {"gen-a": 7, "gen-b": 3},
                    "share": {"gen-a": 7 / 12, "gen-b": 0.25, "both": 1 / 12, "neither": 1 / 12},
                }
            },
            "ui_checkout": {
                "gen-a vs gen-b": {
                    "n": 6,
                    "left": 2,
                    "right": 3,
                    "both": 0,
                    "neither": 1,
                    "wins": {"gen-a": 2, "gen-b": 3},
                    "note": "n=6 is below the minimum of 10 votes for a share",
                }
            },
        },
        "bradley_terry": {
            "gen-a": est(0.31, 0.02, 0.6, n=18),
            "gen-b": est(-0.31, -0.6, -0.02, n=18),
        },
        "bradley_terry_by_case": {
            "ui_signup": {"gen-a": est(0.4, -0.1, 0.9, n=12), "gen-b": est(-0.4, -0.9, 0.1, n=12)},
            "ui_checkout": {
                "gen-a": est(-0.08, -0.6, 0.5, n=6),
                "gen-b": est(0.08, -0.5, 0.6, n=6),
            },
        },
        "position_bias": {
            "left": 7,
            "right": 8,
            "n": 15,
            "p_value": 1.0,
            "share_left": 7 / 15,
            "by_rater": {
                "r1": {
                    "left": 4,
                    "right": 3,
                    "n": 7,
                    "p_value": 1.0,
                    "p_adjusted": 1.0,
                    "flagged": False,
                    "note": "n=7 is below the minimum",
                },
                "r2": {
                    "left": 3,
                    "right": 5,
                    "n": 8,
                    "p_value": 0.73,
                    "p_adjusted": 1.0,
                    "flagged": False,
                },
            },
            "flagged_raters": [],
            "multiplicity": "Holm over 2 raters, family-wise 0.05",
        },
        "rater_alpha": est(0.44, 0.1, 0.7) | {"n_pairs": 8, "n_raters": 2, "n_votes": 16},
        "rater_kappas": {"r1|r2": 0.45},
        "rater_kappas_detail": {"r1|r2": est(0.45, 0.1, 0.75, n=8)},
        "judges": {
            "gpt-judge": {
                "n": 8,
                "agreement_with_majority": 0.75,
                "kappa_vs_majority": 0.5,
                "agreement_interval": {"low": 0.5, "high": 1.0},
                "kappa_interval": {"low": 0.0, "high": 1.0},
                "n_no_majority": 1,
                "n_without_humans": 0,
                "macro_f1": 0.66,
                "position_bias": {"left": 5, "right": 3, "n": 8, "p_value": 0.73},
            }
        },
        "settings": {"n_boot": 1000, "seed": 0, "min_count": 10},
    }
    return {
        "study": "checkout-ui-study",
        "rubric": {"id": "ui_mockup", "version": "3f9c" + "0" * 60, "title": "UI mockup"},
        "n_boot": 1000,
        "verdict": {
            "rules": ["instruction_following == PASS", "layout_hierarchy >= 3"],
            "pass_rate": est(0.71, 0.59, 0.81, n=n),
        },
        "metrics": metrics,
        "findings": findings,
        "systematic_findings": [
            {
                "metric": "layout_hierarchy",
                "judge_name": "gpt-judge",
                "kind": "lenient",
                "mean_difference": est(0.4, 0.21, 0.6, n=n),
                "note": "the 95% interval of judge minus human consensus excludes zero",
            },
            {"summary": "clip-judge passes items the humans fail", "n": 9},
        ],
        "raters": raters,
        "generators": generators,
        "pairwise": pairwise,
    }


def png_bytes(colour: tuple[int, int, int], size: tuple[int, int] = (640, 400)) -> bytes:
    im = Image.new("RGB", size, colour)
    # a little structure so the thumbnail is a real picture, not a flat fill
    for x in range(0, size[0], 40):
        for y in range(size[1] // 3, size[1] // 3 + 30):
            im.putpixel((x, y), (255, 255, 255))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()
