"""Certified judging on real studies (SQLite files, imports through the CLI's services): the
calibration set, versions, the report's sections, `assign --escalated`, `export labels`, the
dataset card and the judge CSV's confidence column."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from annotator.cli import main
from annotator.services.escalation import certification, label_rows
from annotator.services.study import Study
from annotator.stats.selective import MIN_ABOVE, pac_threshold

RUBRIC = """id = "cert"
title = "Certified judging test"
instructions = "Judge the text."
[[metrics]]
key = "ok"
kind = "gate"
label = "Meets the brief"
[[metrics]]
key = "quality"
kind = "scale"
label = "Quality"
min = 1
max = 5
"""
N_ITEMS = 240
GENS = ("gen-a", "gen-b")


def _truths(seed: int = 0) -> dict[str, dict]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(N_ITEMS):
        out[f"it-{i:03d}"] = {
            "ok": "PASS" if rng.random() < 0.6 else "FAIL",
            "quality": int(rng.integers(1, 6)),
            "generator": GENS[i % 2],
            "case": f"case{i // 6}",
        }
    return out


def _judge_rows(truths: dict, judge: str, seed: int, skill: float = 1.0) -> list[tuple]:
    """A judge whose confidence says how often it is right: wrong with probability
    (1 - conf)^2 / skill (rare above 0.9, common near 0.5)."""
    rng = np.random.default_rng(seed)
    rows = []
    for item_id, t in truths.items():
        for metric in ("ok", "quality"):
            conf = float(np.round(rng.uniform(0.5, 1.0), 3))
            wrong = rng.random() < min(1.0, (1 - conf) ** 2 * 4 / skill)
            if metric == "ok":
                value = ("FAIL" if t["ok"] == "PASS" else "PASS") if wrong else t["ok"]
            else:
                value = min(5, t["quality"] + 2) if wrong else t["quality"]
                if wrong and value == t["quality"]:
                    value = t["quality"] - 2
            rows.append((item_id, judge, metric, value, "", conf))
    return rows


def _write_csv(path: Path, header: tuple, rows: list[tuple]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def _new_study(tmp_path: Path, truths: dict) -> Study:
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    st = Study.create(tmp_path / "study", rubric)
    manifest = tmp_path / "items.jsonl"
    manifest.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": i,
                    "case_id": t["case"],
                    "prompt": f"Write about {t['case']}",
                    "generator": t["generator"],
                    "images": [],
                    "text": f"output {i}",
                }
            )
            + "\n"
            for i, t in truths.items()
        ),
        encoding="utf-8",
    )
    st.import_items(manifest)
    return st


def _rate(st: Study, tmp_path: Path, truths: dict, items: list[str], name: str = "r.csv") -> None:
    """Two raters who agree with the truth (a clear consensus), except on every tenth item,
    where they split (no clear consensus: left out of calibration and counted)."""
    rows = []
    for n, i in enumerate(items):
        t = truths[i]
        for rater in ("ann", "bob"):
            ok = t["ok"]
            if n % 10 == 9 and rater == "bob":
                ok = "FAIL" if ok == "PASS" else "PASS"
            rows.append((i, rater, "ok", ok))
            rows.append((i, rater, "quality", t["quality"]))
    st.import_ratings(_write_csv(tmp_path / name, ("item_id", "rater", "metric", "value"), rows))


@pytest.fixture
def sampled(tmp_path) -> tuple[Study, dict, list[tuple], list[str]]:
    """A study of 240 items, a judge with confidences on all of them, a random sample of 60 per
    generator rated by two raters."""
    from annotator.services.sampling import draw

    truths = _truths()
    st = _new_study(tmp_path, truths)
    judge = _judge_rows(truths, "j1", seed=1)
    st.import_judge(
        _write_csv(
            tmp_path / "judge.csv",
            ("item_id", "judge", "metric", "value", "reason", "confidence"),
            judge,
        )
    )
    sample, _pks, _line = draw(st, n=60, share=None, seed=5)
    rated = sorted(sample["items"])
    _rate(st, tmp_path, truths, rated)
    yield st, truths, judge, rated
    st.close()


def _expected(truths, judge, rated, metric, tolerance=0.0, alpha=0.1, delta=0.1):
    """The threshold, from the files alone: calibration = the rated sample items whose two
    raters agree, agreement = the judge's answer equals theirs (within the tolerance)."""
    by = {(r[0], r[2]): r for r in judge}
    conf, wrong = [], []
    for n, i in enumerate(rated):
        if metric == "ok" and n % 10 == 9:
            continue  # the raters split on the gate there
        r = by[(i, metric)]
        conf.append(r[5])
        truth = truths[i][metric]
        wrong.append(abs(r[3] - truth) > tolerance if metric == "quality" else r[3] != truth)
    return pac_threshold(np.array(conf), np.array(wrong), alpha=alpha, delta=delta)


def test_calibrated_on_the_random_sample(sampled) -> None:
    st, truths, judge, rated = sampled
    cert = certification(st)
    sec = cert.section
    assert sec["calibration"] == "random sample" and sec["mode"] == "pac"
    for metric in ("ok", "quality"):
        want = _expected(truths, judge, rated, metric)
        got = sec["judges"]["j1"][metric]
        assert want.accepted, metric
        assert got["threshold"] == want.threshold
        assert (got["n_calibration"], got["n_above"], got["k_disagree_above"]) == (
            want.n_calibration,
            want.n_above,
            want.k_disagree_above,
        )
        assert got["upper_bound"] == pytest.approx(want.upper_bound, abs=1e-12)
        assert got["n_unclear"] == (12 if metric == "ok" else 0)
        # coverage: the unrated items whose confidence is at or above the threshold
        conf = {r[0]: r[5] for r in judge if r[2] == metric and r[0] not in set(rated)}
        n_acc = sum(c >= want.threshold for c in conf.values())
        assert got["n_accepted"] == n_acc and got["n_to_decide"] == N_ITEMS - len(rated)
        assert got["coverage"] == pytest.approx(n_acc / (N_ITEMS - len(rated)))
        assert got["version"] == "import"
    # the decisions: rated items are the humans', the others the judge's or escalated
    dec = cert.decisions
    ok = dec[dec["metric"] == "ok"]
    assert set(ok.loc[ok["decision"] == "rated", "item_id"]) == set(rated)
    t = sec["judges"]["j1"]["ok"]["threshold"]
    accepted = set(ok.loc[ok["decision"] == "accepted", "item_id"])
    conf_ok = {r[0]: r[5] for r in judge if r[2] == "ok"}
    assert accepted == {i for i, c in conf_ok.items() if i not in set(rated) and c >= t}


def test_human_answers_outside_the_sample_do_not_calibrate(sampled, tmp_path) -> None:
    st, truths, judge, rated = sampled
    before = certification(st).section["judges"]["j1"]["ok"]
    others = [i for i in truths if i not in set(rated)][:20]
    _rate(st, tmp_path, truths, others, name="more.csv")
    after = certification(st).section
    b = after["judges"]["j1"]["ok"]
    assert (b["threshold"], b["n_calibration"]) == (before["threshold"], before["n_calibration"])
    assert after["split"]["ok"]["already_rated"] == len(rated) + 20


def test_without_a_sample_every_rated_item_calibrates_with_a_note(tmp_path) -> None:
    truths = _truths()
    st = _new_study(tmp_path, truths)
    try:
        judge = _judge_rows(truths, "j1", seed=1)
        st.import_judge(
            _write_csv(
                tmp_path / "j.csv",
                ("item_id", "judge", "metric", "value", "reason", "confidence"),
                judge,
            )
        )
        rated = sorted(truths)[:100]
        _rate(st, tmp_path, truths, rated)
        sec = certification(st).section
        assert sec["calibration"] == "all rated items (assumed exchangeable)"
        assert "exchangeable" in sec["calibration_note"] and "exchangeable" in sec["guarantee"]
        want = _expected(truths, judge, rated, "quality")
        assert sec["judges"]["j1"]["quality"]["threshold"] == want.threshold
    finally:
        st.close()


def test_without_a_judge_the_sections_alone_are_the_long_ways(tmp_path, monkeypatch) -> None:
    """A study no judge has scored: a report's sections (no decisions asked for: each metric's
    items rated and left, without its tables) are what the long way with the decisions gives,
    on items partly rated (one metric of a few items left unanswered too)."""
    from annotator.services.reporting import study_frames
    from annotator.stats import certified
    from annotator.stats.answers import human_answers, item_table
    from annotator.stats.certified import certify
    from annotator.stats.consensus import metric_specs

    truths = _truths()
    st = _new_study(tmp_path, truths)
    try:
        rated = sorted(truths)[:100]
        _rate(st, tmp_path, truths, rated)
        _rate(st, tmp_path, truths, sorted(truths)[100:110], "more.csv")
        frames = study_frames(st)
    finally:
        st.close()
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    # a few items with one metric's answers alone
    human = human[~(human["item_id"].isin(sorted(truths)[100:105]) & (human["metric"] == "ok"))]
    long = certify(frames, items, specs, human)
    tables = certified._metric_table
    made: list[str] = []
    monkeypatch.setattr(
        certified, "_metric_table", lambda spec, *a: made.append(spec.key) or tables(spec, *a)
    )
    short = certify(frames, items, specs, human, with_decisions=False)
    assert not made  # the short way taken
    assert json.dumps(short.section, sort_keys=True) == json.dumps(long.section, sort_keys=True)
    assert json.dumps(short.conformal, sort_keys=True) == json.dumps(long.conformal, sort_keys=True)
    assert short.section["split"]["ok"]["already_rated"] == 105
    assert short.section["split"]["quality"]["already_rated"] == 110
    assert short.section["items"]["escalated"] == N_ITEMS - 105
    assert len(long.decisions) == 2 * N_ITEMS and not len(short.decisions)


def test_an_active_sample_is_no_calibration_set(tmp_path) -> None:
    from annotator.services.sampling import draw

    truths = _truths()
    st = _new_study(tmp_path, truths)
    try:
        st.import_judge(
            _write_csv(
                tmp_path / "j.csv",
                ("item_id", "judge", "metric", "value", "reason", "confidence"),
                _judge_rows(truths, "j1", seed=1),
            )
        )
        sample, _, _ = draw(st, n=60, share=None, seed=5, active=True)
        _rate(st, tmp_path, truths, sorted(sample["items"]))
        sec = certification(st).section
        assert sec["calibration"] is None and "--active" in sec["calibration_note"]
        assert all(not b["accepted"] for b in sec["judges"]["j1"].values())
        assert sec["items"]["accepted"] == 0
    finally:
        st.close()


def test_a_new_version_is_not_calibrated_until_it_states_confidences(sampled) -> None:
    from annotator.services.judging import record_offline_run

    st, truths, _judge, _rated = sampled
    # the same judge, a new prompt, no confidences: its latest version
    record_offline_run(
        st,
        judge="j1",
        model="m",
        prompt_sha256="b" * 64,
        settings={"task": "items"},
        scores=[(i, {"ok": t["ok"], "quality": t["quality"]}, "", {}) for i, t in truths.items()],
    )
    sec = certification(st).section
    assert "j1" not in sec["judges"]  # the threshold of the version before does not carry over
    (missing,) = sec["not_calibrated"]
    assert missing["judge"] == "j1" and missing["version"] != "import"
    assert "version import had confidences" in missing["why"]
    assert sec["items"]["accepted"] == 0


def test_scale_tolerance_counts_near_answers_as_agreeing(sampled) -> None:
    st, truths, judge, rated = sampled
    exact = certification(st).section["judges"]["j1"]["quality"]
    st.db.set_setting("certified_scale_tolerance", 2)
    within = certification(st).section["judges"]["j1"]["quality"]
    assert exact["disagreement"] > 0 and within["disagreement"] < exact["disagreement"]
    want = _expected(truths, judge, rated, "quality", tolerance=2)
    assert within["threshold"] == want.threshold


def test_cascade_in_the_lead_s_order_with_delta_split(sampled, tmp_path) -> None:
    st, truths, judge, rated = sampled
    st.import_judge(
        _write_csv(
            tmp_path / "j0.csv",
            ("item_id", "judge", "metric", "value", "reason", "confidence"),
            _judge_rows(truths, "cheap", seed=9, skill=0.5),
        )
    )
    st.db.set_setting("certified_cascade", ["cheap", "j1"])
    sec = certification(st).section
    stages = [s for s in sec["cascade"] if s["metric"] == "ok"]
    assert [s["judge"] for s in stages] == ["cheap", "j1"]
    assert [s["delta"] for s in stages] == [0.05, 0.05]
    split = sec["split"]["ok"]
    assert sum(split["accepted"].values()) + split["escalated"] == N_ITEMS - len(rated)
    assert split["accepted"]["cheap@import"] == stages[0]["n_accepted"]
    # each judge alone is at the full delta
    assert sec["judges"]["cheap"]["ok"]["delta"] == 0.1


def test_report_contract_keys(sampled) -> None:
    from annotator.services.reporting import build_study_report

    st, *_ = sampled
    report = build_study_report(st, n_boot=20)
    c = report["certified"]
    assert {"mode", "alpha", "delta", "judges", "cascade"} <= set(c)
    block = c["judges"]["j1"]["ok"]
    assert {
        "threshold",
        "n_calibration",
        "n_above",
        "k_disagree_above",
        "upper_bound",
        "coverage",
        "n_accepted",
        "n_escalated",
        "min_escalation",
        "calibration",
    } <= set(block)
    assert {"judge", "threshold", "delta", "n_accepted"} <= set(c["cascade"][0])
    fdr = report["conformal_alignment"]
    assert fdr["mode"] == "conformal_alignment" and not fdr["decides"] and c["decides"]
    json.dumps(report)


def _assigned(st: Study) -> set[str]:
    from annotator.store.models import Item
    from annotator.store.models_team import Assignment

    with st.db.read() as s:
        return set(s.scalars(select(Item.item_id).join(Assignment, Assignment.item_pk == Item.id)))


def test_assign_escalated_and_export_labels_end_to_end(sampled, tmp_path, capsys) -> None:
    st, truths, judge, rated = sampled
    where = str(st.folder)
    cert = certification(st)
    escalated = set(cert.decisions.loc[cert.decisions["decision"] == "escalated", "item_id"])
    st.close()
    assert escalated  # the judge leaves some items to raters
    assert main(["assign", "--study", where, "--escalated", "--overlap", "2"]) == 0
    out = capsys.readouterr().out
    assert f"escalated: {len(escalated)} items" in out
    st2 = Study.open(where)
    try:
        assert _assigned(st2) == escalated
    finally:
        st2.close()
    assert main(["assign", "--study", where, "--escalated", "--sample", "3"]) == 2
    assert "--escalated" in capsys.readouterr().err
    out_csv = tmp_path / "labels.csv"
    assert main(["export", "labels", "--study", where, "--out", str(out_csv)]) == 0
    with out_csv.open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * N_ITEMS
    by = {(r["item_id"], r["metric"]): r for r in rows}
    t_ok = cert.section["judges"]["j1"]["ok"]["threshold"]
    for (item_id, metric), r in by.items():
        if item_id in set(rated):
            assert r["source"] in ("clear_consensus", "unresolved")
        elif r["source"] == "judge":
            assert r["judge"] == "j1@import" and r["mode"] == "pac"
            assert "alpha=0.1 delta=0.1" in r["guarantee"]
            if metric == "ok":
                assert float(r["confidence"]) >= t_ok and float(r["threshold"]) == t_ok
        else:
            assert r["source"] == "escalated" and r["value"] == ""
    assert by[(rated[0], "quality")]["value"] == str(truths[rated[0]]["quality"])
    # the dataset card says the guarantee the judge's labels stand under
    hf = tmp_path / "hf"
    assert main(["export", "hf", "--study", where, "--out", str(hf), "--boot", "10"]) == 0
    card = (hf / "README.md").read_text(encoding="utf-8")
    assert "## Certified labels" in card and "with probability at least 90%" in card
    assert (hf / "data" / "labels.parquet").exists()


def test_conformal_mode_decides_when_set(sampled) -> None:
    st, *_ = sampled
    st.db.set_setting("certified_mode", "conformal_alignment")
    cert = certification(st)
    assert cert.conformal["decides"] and not cert.section["decides"]
    acc = cert.decisions[cert.decisions["decision"] == "accepted"]
    b = cert.conformal["judges"]["j1"]["ok"]
    assert len(acc[acc["metric"] == "ok"]) == b["n_accepted"]
    assert (acc.loc[acc["metric"] == "ok", "confidence"] >= b["threshold"]).all()


def test_judge_csv_confidence_column(tmp_path, capsys) -> None:
    truths = _truths()
    st = _new_study(tmp_path, truths)
    where = str(st.folder)
    st.close()
    bad = _write_csv(
        tmp_path / "bad.csv",
        ("item_id", "judge", "metric", "value", "confidence"),
        [("it-000", "j", "ok", "PASS", "0.9"), ("it-001", "j", "ok", "PASS", "1.5")],
    )
    assert main(["import", "judge", str(bad), "--study", where]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "bad.csv" in err and "3" in err
    assert "confidence" in err
    good = _write_csv(
        tmp_path / "good.csv",
        ("item_id", "judge", "metric", "value", "confidence"),
        [("it-000", "j", "ok", "PASS", "0.9"), ("it-001", "j", "ok", "FAIL", "")],
    )
    assert main(["import", "judge", str(good), "--study", where]) == 0
    from annotator.services.reporting import study_frames

    st = Study.open(where)
    try:
        v = study_frames(st).judge_score_versions.set_index("item_id")["confidence"]
        assert v["it-000"] == 0.9 and np.isnan(v["it-001"])
    finally:
        st.close()
    # exported judge scores carry it, and read back as they were
    out = tmp_path / "scores.csv"
    assert main(["export", "judge-scores", "--study", where, "--out", str(out)]) == 0
    assert "0.9" in out.read_text(encoding="utf-8").splitlines()[1]


def test_too_few_calibration_items_abstains(tmp_path) -> None:
    truths = _truths()
    st = _new_study(tmp_path, truths)
    try:
        st.import_judge(
            _write_csv(
                tmp_path / "j.csv",
                ("item_id", "judge", "metric", "value", "reason", "confidence"),
                _judge_rows(truths, "j1", seed=1),
            )
        )
        _rate(st, tmp_path, truths, sorted(truths)[: MIN_ABOVE - 5])
        b = certification(st).section["judges"]["j1"]["quality"]
        assert b["threshold"] is None and b["n_accepted"] == 0 and "fewer than" in b["note"]
    finally:
        st.close()


def test_judge_compare_gives_exact_mcnemar_and_the_flip_rate_bound(sampled, capsys) -> None:
    from scipy.stats import binomtest
    from statsmodels.stats.contingency_tables import mcnemar

    from annotator.services.judging import compare_judges, record_offline_run

    st, truths, judge, rated = sampled
    by = {(r[0], r[2]): r[3] for r in judge}
    rng = np.random.default_rng(4)
    new = {}
    for i in truths:
        ok = by[(i, "ok")]
        if rng.random() < 0.2:  # the new version changes a fifth of its gate answers
            ok = "FAIL" if ok == "PASS" else "PASS"
        new[i] = {"ok": ok, "quality": by[(i, "quality")]}
    record_offline_run(
        st,
        judge="j1",
        model="m2",
        prompt_sha256="c" * 64,
        settings={"task": "items"},
        scores=[(i, v, "", {}) for i, v in new.items()],
    )
    where = str(st.folder)
    out = compare_judges(where, "j1@import", "j1", n_boot=20)
    m = out["metrics"]["ok"]
    # the counts from the files: items whose raters agree (every tenth rated item they split)
    clear = [i for n, i in enumerate(rated) if n % 10 != 9]
    a_ok = np.array([by[(i, "ok")] == truths[i]["ok"] for i in clear])
    b_ok = np.array([new[i]["ok"] == truths[i]["ok"] for i in clear])
    table = [[int((a_ok & b_ok).sum()), int((a_ok & ~b_ok).sum())]]
    table.append([int((~a_ok & b_ok).sum()), int((~a_ok & ~b_ok).sum())])
    mc = m["mcnemar"]
    assert (mc["both"], mc["a_only"], mc["b_only"], mc["neither"]) == (
        table[0][0],
        table[0][1],
        table[1][0],
        table[1][1],
    )
    assert mc["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
    flips = sum(new[i]["ok"] != by[(i, "ok")] for i in truths)
    fl = m["flip_rate"]
    assert (fl["n"], fl["n_flipped"]) == (N_ITEMS, flips)
    ci = binomtest(flips, N_ITEMS, alternative="less").proportion_ci(0.95, method="exact")
    assert fl["upper_bound"] == pytest.approx(ci.high, abs=1e-12)
    assert out["metrics"]["quality"]["flip_rate"]["n_flipped"] == 0
    assert (
        main(["judge", "compare", "--study", where, "--judge", "j1@import", "--judge", "j1"]) == 0
    )
    text = capsys.readouterr().out
    assert "exact McNemar p" in text and f"{flips} of {N_ITEMS} answers changed" in text


def test_escalated_items_go_to_a_team_in_packages_and_come_back_as_rated(sampled, tmp_path):
    """A team study from packages: the items the judge may not decide are dealt to two new
    raters, who answer them in their packages; merged back, they are rated, the labels say so,
    and nothing is left to escalate."""
    from annotator.services.labeling import LabelSession
    from annotator.services.packages import export_package, merge_package
    from annotator.services.team import assign

    st, truths, _judge, rated = sampled
    before = certification(st)
    escalated = set(before.decisions.loc[before.decisions["decision"] == "escalated", "item_id"])
    assert escalated
    said = assign(st, ["cy", "dee"], overlap=2, pair_overlap=None, seed=3, escalated=True)
    assert f"escalated: {len(escalated)} items" in said
    for rater in ("cy", "dee"):
        out = tmp_path / f"{rater}.annot"
        export_package(st, rater, out)
        pkg = Study.open(out)
        try:
            session = LabelSession(pkg, rater)
            n = 0
            while (item := session.next()) is not None:
                item_id = item.view.text.removeprefix("output ")  # the text names the item
                assert item_id in escalated
                t = truths[item_id]
                session.submit(item, {"ok": t["ok"], "quality": t["quality"]}, 4000)
                n += 1
            assert n == len(escalated)
        finally:
            pkg.close()
        merge_package(st, out)
    after = certification(st)
    dec = after.decisions
    assert set(dec.loc[dec["decision"] == "rated", "item_id"]) == set(rated) | escalated
    assert not (dec["decision"] == "escalated").any()
    # the calibration set is still the random sample: the escalated items do not enter it
    for metric in ("ok", "quality"):
        b, a = before.section["judges"]["j1"][metric], after.section["judges"]["j1"][metric]
        assert (a["threshold"], a["n_calibration"]) == (b["threshold"], b["n_calibration"])
    labels = {(r["item_id"], r["metric"]): r for r in label_rows(st)}
    some = sorted(escalated)[0]
    assert labels[(some, "ok")]["source"] == "clear_consensus"
    assert labels[(some, "ok")]["value"] == truths[some]["ok"]


def test_tifa_with_a_judge_through_the_command_line(tmp_path, capsys) -> None:
    """Real data: TIFA v1.0 items, the 5 DSG raters' ratings as a gate (4 or 5: faithful) on a
    random sample drawn by `assign --sample`, the mPLUG TIFA score as a judge with its
    confidence; the report's threshold equals the search on the same items, read from the
    files alone."""
    import pandas as pd

    data = Path(__file__).resolve().parents[1] / "data" / "tifa"
    rubric = tmp_path / "faithful.toml"
    rubric.write_text(
        'id = "tifa_gate"\ntitle = "TIFA faithful"\n[[metrics]]\nkey = "faithful"\n'
        'kind = "gate"\nlabel = "Faithful to the prompt"\n',
        encoding="utf-8",
    )
    where = str(tmp_path / "st")
    assert main(["new", where, "--rubric", str(rubric)]) == 0
    assert main(["import", "items", str(data / "items.jsonl"), "--study", where]) == 0
    j = pd.read_csv(data / "judge.csv")
    j = j[j["judge"] == "tifa_mplug-large"]
    judge_csv = tmp_path / "judge.csv"
    pd.DataFrame(
        {
            "item_id": j["item_id"],
            "judge": "mplug",
            "metric": "faithful",
            "value": np.where(j["value"] >= 0.5, "PASS", "FAIL"),
            "confidence": np.maximum(j["value"], 1 - j["value"]),
        }
    ).to_csv(judge_csv, index=False)
    assert main(["import", "judge", str(judge_csv), "--study", where]) == 0
    assert main(["assign", "--study", where, "--raters", "a,b", "--sample", "60"]) == 0
    st = Study.open(where, mode="read")
    try:
        sample = set(st.db.all_settings()["human_sample"]["items"])
    finally:
        st.close()
    r = pd.read_csv(data / "ratings_dsg.csv")
    r = r[r["item_id"].isin(sample)].copy()
    r["rater"] = "dsg" + r["rater"].astype(str)
    r["metric"] = "faithful"
    r["value"] = np.where(r["value"] >= 4, "PASS", "FAIL")
    ratings = tmp_path / "ratings.csv"
    r[["item_id", "rater", "metric", "value"]].to_csv(ratings, index=False)
    assert main(["import", "ratings", str(ratings), "--study", where]) == 0
    out = tmp_path / "r.json"
    assert main(["report", "--study", where, "--json", str(out), "--boot", "20"]) == 0
    b = json.loads(out.read_text(encoding="utf-8"))["certified"]["judges"]["mplug"]["faithful"]
    # from the files: the sample's items with 4 of 5 (or all) raters on one side
    g = r.assign(p=r["value"] == "PASS").groupby("item_id")["p"].agg(["mean", "count"])
    clear = g[(g["count"] >= 2) & ((g["mean"] >= 0.8) | (g["mean"] <= 0.2))]
    jj = j.set_index("item_id").reindex(clear.index)
    conf = np.maximum(jj["value"], 1 - jj["value"]).to_numpy()
    wrong = (jj["value"].to_numpy() >= 0.5) != (clear["mean"].to_numpy() >= 0.5)
    want = pac_threshold(conf, wrong, alpha=0.1, delta=0.1)
    assert b["n_calibration"] == len(clear) == want.n_calibration
    assert b["threshold"] == want.threshold and b["k_disagree_above"] == want.k_disagree_above
    assert b["calibration"] == "random sample" and b["n_to_decide"] == 800 - len(sample)
    capsys.readouterr()
    assert main(["assign", "--study", where, "--escalated", "--overlap", "1"]) == 0
    assert f"escalated: {b['n_escalated']} items" in capsys.readouterr().out


def test_the_settings_are_checked_with_one_line(sampled, capsys) -> None:
    st, *_ = sampled
    where = str(st.folder)
    st.close()
    for key, bad in (
        ("certified_alpha", "1.5"),
        ("certified_delta", "0"),
        ("certified_fdr_q", '"a"'),
        ("certified_scale_tolerance", "-1"),
        ("certified_mode", '"bayes"'),
        ("certified_cascade", '["j1", "j1"]'),
        ("certified_cascade", "[]"),
    ):
        assert main(["set", key, bad, "--study", where]) == 2, (key, bad)
        err = capsys.readouterr().err.strip()
        assert key in err and len(err.splitlines()) == 1
    for key, good in (
        ("certified_alpha", "0.05"),
        ("certified_cascade", '["j1"]'),
        ("certified_mode", '"conformal_alignment"'),
    ):
        assert main(["set", key, good, "--study", where]) == 0
    st2 = Study.open(where)
    try:
        sec = certification(st2).section
        assert sec["alpha"] == 0.05 and sec["order"] == ["j1"] and not sec["decides"]
    finally:
        st2.close()
