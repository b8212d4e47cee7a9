"""The judge on pairs in both orders: consistency, left preference (exact binomial test on the
inconsistent pairs), inconsistent pairs as ties; a planted left-preferring judge through the real
`openai` client is flagged, an unbiased one is not (false-positive rate in simulation)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, binomtest

from annotator.reports.html_report import build_view
from annotator.reports.report_sections import report_sections
from annotator.reports.sections import Table
from annotator.services.judging import JudgeConfig, judge_pairs
from annotator.services.reporting import study_frames
from annotator.stats.frames import PAIR_COLUMNS
from annotator.stats.judge_position import collapse_orders, paired_orders, swap_figures
from annotator.stats.report_model import build_report
from annotator.store.pairs import ensure_pairs

try:
    from .judge_server import JudgeServer
except ImportError:
    from judge_server import JudgeServer


def _votes(rows: list[tuple[str, str, str, str]], judge: str = "j") -> pd.DataFrame:
    """(pair_id, left, right, choice) -> the frame of judge pair votes."""
    return pd.DataFrame(
        [(p, "case", left, right, "g1", "g2", judge, c, None) for p, left, right, c in rows],
        columns=PAIR_COLUMNS,
    )


def test_consistency_and_left_left_counts_by_hand():
    v = _votes(
        [
            ("p1", "a", "b", "left"),  # a
            ("p1", "b", "a", "right"),  # a: consistent
            ("p2", "c", "d", "left"),  # c
            ("p2", "d", "c", "left"),  # d: inconsistent, left-left
            ("p3", "e", "f", "right"),
            ("p3", "f", "e", "right"),  # inconsistent, right-right
            ("p4", "g", "h", "both"),
            ("p4", "h", "g", "both"),  # consistent tie
            ("p5", "i", "k", "left"),
            ("p5", "k", "i", "both"),  # inconsistent, left-tie: not in the test
            ("p6", "m", "n", "left"),  # one order only: not paired
        ]
    )
    p = paired_orders(v).set_index("pair_id")
    assert list(p.index) == ["p1", "p2", "p3", "p4", "p5"]
    assert p["consistent"].tolist() == [True, False, False, True, False]
    assert p.loc["p2", "pattern"] == "LL" and p.loc["p3", "pattern"] == "RR"
    f = swap_figures(v, n_boot=200)
    assert (f["n_pairs"], f["consistent"]) == (5, 2)
    assert f["swap_consistency"]["estimate"] == pytest.approx(2 / 5)
    b = f["position_bias"]
    assert (b["left_left"], b["right_right"]) == (1, 1)
    assert b["p_value"] == pytest.approx(binomtest(1, 2, 0.5).pvalue) and not b["flagged"]
    # MT-Bench: consistent pairs keep their vote, inconsistent ones become ties
    c = collapse_orders(v).set_index("pair_id")
    assert c.loc["p1", "choice"] == "left" and c.loc["p1", "item_left"] == "a"
    assert c.loc[["p2", "p3", "p5"], "choice"].tolist() == ["both"] * 3
    assert c.loc["p4", "choice"] == "both" and c.loc["p6", "choice"] == "left"
    assert len(c) == 6


def _simulated_judge(rng, n_pairs: int, left_shift: float) -> pd.DataFrame:
    """A judge whose vote depends on the two outputs' quality gap plus noise, and (when
    left_shift > 0) on the side shown: log-odds of 'left' moved by left_shift."""
    rows = []
    gap = rng.normal(0, 1.0, n_pairs)  # a's advantage over b
    for i in range(n_pairs):
        for left, right, d in (("a", "b", gap[i]), ("b", "a", -gap[i])):
            if rng.random() < 0.1:
                choice = "both"
            else:
                p_left = 1 / (1 + np.exp(-(d + left_shift + rng.normal(0, 1.0))))
                choice = "left" if rng.random() < p_left else "right"
            rows.append((f"p{i}", f"{left}{i}", f"{right}{i}", choice))
    return _votes(rows)


def test_an_unbiased_judge_is_flagged_at_the_test_level_and_a_biased_one_almost_always():
    rng = np.random.default_rng(2026)
    runs = 200
    flagged = sum(
        swap_figures(_simulated_judge(rng, 60, 0.0), n_boot=0)["position_bias"]["flagged"]
        for _ in range(runs)
    )
    # false-positive rate at most 5% (the exact test is conservative on few inconsistent
    # pairs): the count lies below the 99.9% quantile of Binomial(200, 0.05)
    assert flagged <= binom.ppf(0.999, runs, 0.05), flagged
    biased = sum(
        swap_figures(_simulated_judge(rng, 60, 1.0), n_boot=0)["position_bias"]["flagged"]
        for _ in range(50)
    )
    assert biased >= 40, biased


def _output_urls(body: dict) -> tuple[str, str]:
    """The left and right output images of a pair request (chat or responses format)."""
    content = body["messages"][1]["content"] if "messages" in body else body["input"][1]["content"]
    urls, side = {}, None
    for part in content:
        text = part.get("text", "")
        if text.startswith("The left output"):
            side = "left"
        elif text.startswith("The right output"):
            side = "right"
        elif side and part.get("type") in ("image_url", "input_image"):
            url = part.get("image_url")
            urls[side] = url["url"] if isinstance(url, dict) else url
    return urls["left"], urls["right"]


def _run(study, server, name: str) -> None:
    cfg = JudgeConfig(model="m", base_url=server.base_url, api="chat", judge_name=name)
    summary = judge_pairs(study, cfg)
    assert summary.n_failed == 0


def test_swap_run_through_the_real_client_flags_a_left_preferring_judge(populated, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    n_pairs = ensure_pairs(populated.db)
    assert n_pairs >= 9
    with JudgeServer() as server:
        server.decide = lambda _raw: {"choice": "left"}
        _run(populated, server, "lefty")

        def fair(raw: str) -> dict:
            left, right = _output_urls(json.loads(raw))
            return {"choice": "left" if left < right else "right"}

        server.decide = fair
        _run(populated, server, "fair")
        calls = len(server.calls)
        _run(populated, server, "fair")  # a rerun asks nothing: both orders are stored
        assert len(server.calls) == calls
    with sqlite3.connect(populated.folder / "study.sqlite") as c:
        per_pair = c.execute(
            "select judge, pair_pk, count(*) from pair_votes where judge is not null "
            "group by judge, pair_pk"
        ).fetchall()
    assert {n for _j, _p, n in per_pair} == {2} and len(per_pair) == 2 * n_pairs
    report = build_report(study_frames(populated), n_boot=200, seed=0)
    judges = report["pairwise"]["judges"]
    lefty, fair_ = judges["lefty"], judges["fair"]
    assert lefty["swap_consistency"]["estimate"] == 0.0
    assert lefty["position_bias"]["left_left"] == n_pairs and lefty["position_bias"]["flagged"]
    assert fair_["swap_consistency"]["estimate"] == 1.0
    assert not fair_["position_bias"]["flagged"] and fair_["position_bias"]["p_value"] is None
    assert lefty["n_pairs_both_orders"] == n_pairs and lefty["inconsistent_as_tie"] is True
    # the report's pairwise section: the judge that prefers a side is flagged, in words
    view = build_view(report, with_charts=False)
    (section,) = (s for s in report_sections(view) if s.key == "pairwise")
    swaps = next(
        b for b in section.blocks if isinstance(b, Table) and b.name == "pairwiseJudgeSwapsTable"
    )
    rows = {r[0]: r for r in swaps.rows}
    assert rows["lefty"][1] == str(n_pairs) and rows["lefty"][3:5] == (str(n_pairs), "0")
    assert rows["lefty"][6] == "prefers left" and rows["fair"][6] == "—"
    assert rows["fair"][2].startswith("1.00")
    assert swaps.flagged == {list(rows).index("lefty")}


def test_judge_run_pairs_on_the_command_line(populated, monkeypatch, capsys):
    from annotator.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    folder = str(populated.folder)
    base = ["judge", "run", "--study", folder, "--model", "m", "--api", "chat", "--pairs"]
    with JudgeServer() as server:
        args = [*base, "--base-url", server.base_url]
        assert main(args) == 2  # no pairs designed yet
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "no pairs to vote on" in err
        n = ensure_pairs(populated.db)
        populated.close()
        assert main(args) == 0
        assert f"voted {2 * n}, already voted 0, failed 0" in capsys.readouterr().out
        assert main(args) == 0
        assert f"voted 0, already voted {2 * n}" in capsys.readouterr().out


def test_a_pair_run_refuses_confidences_and_a_second_version_under_one_name(populated, monkeypatch):
    from annotator.domain.errors import InputError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ensure_pairs(populated.db)
    with JudgeServer() as server:
        base = dict(model="m", base_url=server.base_url, api="chat", judge_name="j")
        with pytest.raises(InputError, match="pair votes keep no confidence"):
            judge_pairs(populated, JudgeConfig(**base, confidence="field"))
        _run(populated, server, "j")
        calls = len(server.calls)
        # other settings are another version: its votes would be skipped as already voted
        with pytest.raises(InputError, match="its own --judge-name"):
            judge_pairs(populated, JudgeConfig(**base, temperature=0.7))
        assert len(server.calls) == calls
        assert judge_pairs(populated, JudgeConfig(**base)).n_skipped > 0  # the same: resumes


def test_a_failed_order_is_recorded_on_its_left_item_and_only_it_is_asked_again(
    populated, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ensure_pairs(populated.db)
    db = populated.folder / "study.sqlite"
    with sqlite3.connect(db) as c:
        # a pair id may hold any character the names allow, "|" included
        pk, a, b = c.execute(
            "SELECT p.id, ia.item_id, ib.item_id FROM pairs p JOIN items ia ON ia.id = p.item_a "
            "JOIN items ib ON ib.id = p.item_b ORDER BY p.id LIMIT 1"
        ).fetchone()
        c.execute("UPDATE pairs SET pair_id = 'odd|id' WHERE id = ?", (pk,))
        (with_b,) = c.execute(
            "SELECT count(*) FROM pairs p JOIN items i ON i.id IN (p.item_a, p.item_b) "
            "WHERE i.item_id = ?",
            (b,),
        ).fetchone()
        sha = c.execute(
            "SELECT im.media_sha256 FROM item_media im JOIN items i ON i.id = im.item_pk "
            "WHERE i.item_id = ? AND im.role = 'output'",
            (b,),
        ).fetchone()[0]
    path = populated.media.path(sha)
    kept = path.read_bytes()
    path.unlink()  # the right-hand image of that pair went missing
    with JudgeServer() as server:
        cfg = JudgeConfig(model="m", base_url=server.base_url, api="chat", judge_name="j")
        first = judge_pairs(populated, cfg)
        # both orders of every pair showing that image failed, and the run went on
        assert first.n_failed == 2 * with_b and first.n_scored == first.n_total - 2 * with_b
        with sqlite3.connect(db) as c:
            errors = c.execute(
                "SELECT i.item_id, e.kind, e.message FROM judge_errors e "
                "JOIN items i ON i.id = e.item_pk ORDER BY e.id"
            ).fetchall()
        assert len(errors) == 2 * with_b and {k for _i, k, _m in errors} == {"bad_input"}
        odd = {item for item, _k, m in errors if m.startswith("pair odd|id,")}
        assert odd == {a, b}  # each order's error on the item it showed left
        path.write_bytes(kept)
        calls = len(server.calls)
        again = judge_pairs(populated, cfg)
        assert (again.n_scored, again.n_failed) == (2 * with_b, 0)
        assert len(server.calls) == calls + 2 * with_b  # only the failed orders were asked
