"""Certified judging of a study: which judge verdicts may stand without a human, per item and
(Over 500 lines on purpose: the calibration pool, the PAC and conformal thresholds, the cascade and
the per-item decisions are one guarantee.)
metric, with the guarantee of stats/selective.py; the report's `certified` and
`conformal_alignment` sections and the per-item decisions the escalation and the label export
read.

What is certified: every single-answer metric the judge scores with a confidence (gates,
choices; scales by "within `certified_scale_tolerance` points", default exact). Multi-select
metrics (tags) and the verdict are not: a confidence is per answer, and neither has one.

The calibration set is the recorded random human sample (`annotator assign --sample`) where
one was drawn, else every item humans rated, with the note that the guarantee then assumes those
items exchangeable with the rest. A sample drawn with --active follows the judge's confidence,
so it is no calibration set: nothing is accepted, and the report says why. On a calibration
item the judge agrees when its answer equals the clear human consensus (the rule of the
findings and the gold: domain/clear_consensus.py; a scale's consensus is its median, a half
point rounded up, as the gold has it); items without a clear consensus are left out and
counted (`n_unclear`).

Each judge is calibrated on its *latest* version only, the one every other figure reads: a
threshold belongs to the version it was found for, and a version that states no confidence
has none (`not_calibrated`), whatever an earlier version had.

The items to decide are the live items no human has answered on the metric; items with a human
answer are "already rated" (their label is the humans'). The judges are tried in the order of
the setting `certified_cascade` (default: every judge with confidences, by name), each
calibrated on the calibration items the earlier ones left, at delta / (number of judges); an
item no judge accepts is escalated to humans (`annotator assign --escalated`).

The judges' pair votes are certified beside the metrics, under the key `pair_vote`, by the same
rule on their consistency across the two orders (stats/certified_pairs.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..domain.settings import setting
from .certified_pairs import METRIC as PAIR_METRIC
from .certified_pairs import certify_pairs, no_pair_decisions
from .consensus import MetricSpec, clear, consensus
from .debiased import sample_of
from .frames import JUDGE_VERSION_COLUMNS, StudyFrames
from .last_table import LastTable
from .selective import (
    MIN_ABOVE,
    Threshold,
    cascade,
    conformal_alignment,
    min_escalation,
    pac_threshold,
)

PAC = "pac"
CONFORMAL = "conformal_alignment"
MODES = (PAC, CONFORMAL)
FROM_SAMPLE = "random sample"
FROM_RATED = "all rated items (assumed exchangeable)"
DECISION_COLUMNS = [
    "item_id",
    "metric",
    "decision",  # accepted | escalated | rated
    "judge",
    "version",
    "threshold",
    "confidence",
    "value",  # the judge's answer where accepted
]
PAC_PAPER = 'Jung, Brahman & Choi, "Trust or Escalate", ICLR 2025'
CONFORMAL_PAPER = 'Gui, Jin & Candes, "Conformal Alignment", NeurIPS 2024'


def guarantee_text(alpha: float, delta: float, calibration: str | None) -> str:
    """The PAC guarantee in words."""
    what = (
        "the random sample"
        if calibration == FROM_SAMPLE
        else "the items humans rated (used as the calibration set)"
    )
    return (
        f"among items where the judge's confidence >= t, it agrees with the raters' consensus at "
        f"least {1 - alpha:.0%} of the time ({1 - alpha:g}), with probability at least "
        f"{1 - delta:.0%} ({1 - delta:g}), if these items are exchangeable with {what}"
    )


def fdr_text(q: float, calibration: str | None) -> str:
    """The conformal alignment guarantee in words."""
    what = "the random sample" if calibration == FROM_SAMPLE else "the items humans rated"
    return (
        f"on average over calibration sets, at most {q:.0%} ({q:g}) of the items the judge "
        f"decides disagree with the raters' consensus (a false discovery rate), if these items "
        f"are exchangeable with {what}; an average, not a bound on every study"
    )


@dataclass(frozen=True)
class Settings:
    alpha: float
    delta: float
    tolerance: float
    order: list[str] | None
    mode: str
    q: float

    @classmethod
    def of(cls, settings: dict[str, Any]) -> Settings:
        order = setting(settings, "certified_cascade")
        return cls(
            float(setting(settings, "certified_alpha")),
            float(setting(settings, "certified_delta")),
            float(setting(settings, "certified_scale_tolerance")),
            [str(j) for j in order] if order else None,
            str(setting(settings, "certified_mode")),
            float(setting(settings, "certified_fdr_q")),
        )


@dataclass(frozen=True)
class Certified:
    """A study's certification: the report's two sections and the per-item decisions of the
    mode the setting `certified_mode` names."""

    section: dict[str, Any]
    conformal: dict[str, Any]
    decisions: pd.DataFrame
    # one row per pair a judge or a human voted on (stats/certified_pairs.py): always the PAC
    # rule's, whatever the mode
    pair_decisions: pd.DataFrame = field(default_factory=no_pair_decisions)


def _calibration_pool(frames: StudyFrames) -> tuple[set[str] | None, str | None, str]:
    """(item ids of the calibration pool, None for every item humans rated; what it is; a
    note)."""
    sample = sample_of(frames.settings)
    if sample is None:
        return (
            None,
            FROM_RATED,
            (
                "no random human sample recorded (`annotator assign --sample N`): every item humans "
                "rated is the calibration set, and the guarantee assumes those items are "
                "exchangeable with the rest (hand-picked or hard items break it)"
            ),
        )
    if (sample.get("request") or {}).get("active") or sample.get("unsampled"):
        return (
            set(),
            None,
            (
                (
                    "the human sample was topped up by strata (--by-strata), each stratum at its "
                    "own rate"
                    if sample.get("cells")
                    else "the human sample was drawn with --active, each item with a probability "
                    "that follows the judge's confidence"
                )
                + ": it is not exchangeable with the other items, so no threshold is certified; "
                "draw a uniform sample (`annotator assign --sample N`) to calibrate"
            ),
        )
    rates = [float(r) for r in (sample.get("rates") or {}).values() if float(r) > 0]
    note = "human answers on the items of the recorded random sample only"
    if rates and max(rates) > 1.5 * min(rates):
        note += (
            f"; the sample's rate differs by generator ({min(rates):.2f} to {max(rates):.2f}), "
            "so the guarantee holds for items drawn the way the sample was"
        )
    return {str(i) for i in sample["items"]}, FROM_SAMPLE, note


def _latest(frames: StudyFrames) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Each judge's latest version's rows (item_id, judge, metric, value, version, confidence),
    and the judges whose latest version cannot be calibrated, with why."""
    v = frames.judge_score_versions
    if v is None or not len(v):
        return pd.DataFrame(columns=JUDGE_VERSION_COLUMNS), []
    v = v.copy()
    v["judge"] = v["judge"].astype(str)
    top = v.groupby("judge")["order"].transform("max")
    latest = v[v["order"] == top]
    missing = []
    for judge, rows in latest.groupby("judge", sort=True):
        if rows["confidence"].notna().any():
            continue
        version = str(rows["version"].iloc[0])
        older = v[(v["judge"] == judge) & (v["order"] < rows["order"].iloc[0])]
        older = older[older["confidence"].notna()]
        why = (
            "its latest version states no confidence: run it with `judge run --confidence` or "
            "`--simulated-annotators`, or import a `confidence` column"
        )
        if len(older):
            why += (
                f"; version {older['version'].iloc[-1]} had confidences, but a threshold belongs "
                "to the version it was found for"
            )
        missing.append({"judge": str(judge), "version": version, "why": why})
    return latest, missing


def _metric_table(
    spec: MetricSpec,
    items: pd.DataFrame,
    item_ids: np.ndarray,
    human: pd.DataFrame,
    judged: pd.DataFrame,
    latest: pd.DataFrame,
    tolerance: float,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per item: idx, item_id, rated, clear, ref; per judge x item: judge, idx, code, conf,
    disagree). `item_ids`: the items' ids as text (_item_columns). `human` (idx, code) and
    `judged` hold the metric's answers only (certify splits them once), `judged` the coded
    answers of the latest versions. `clear` and `ref` are filled only when a judge answered the
    metric with a confidence: nothing else reads them, and the consensus was most of certify's
    time on a study without a judge."""
    idx = items["idx"].to_numpy(dtype=np.int64)
    # one constructor: a copy and four added columns cost more than the work at 2,000 items
    table = pd.DataFrame(
        {
            "idx": idx,
            "item_id": pd.Series(item_ids, index=items.index, dtype=object),
            "rated": _among(idx, human["idx"]),
            "clear": False,
            "ref": np.nan,
        },
        index=items.index,
    )
    if not len(judged):  # no judge answered the metric: no calibration, no consensus to read
        return table, _no_judged()
    j = judged[["idx", "judge", "code", "item_id"]].copy()
    j["judge"] = j["judge"].astype(str)
    j["item_id"] = j["item_id"].astype(str)
    conf = latest[latest["metric"] == spec.key].set_index(["item_id", "judge"])["confidence"]
    if len(j):
        key = pd.MultiIndex.from_arrays([j["item_id"], j["judge"]])
        j["conf"] = pd.to_numeric(conf.reindex(key), errors="coerce").to_numpy(dtype=float)
    else:
        j["conf"] = pd.Series(dtype=float)
    j = j.dropna(subset=["code", "conf"]).drop_duplicates(["idx", "judge"], keep="last")
    j = j[(j["conf"] >= 0) & (j["conf"] <= 1)]
    if len(human) and len(j):
        cons = consensus(human, spec)
        ok = clear(spec, cons)
        ref = cons["value"].to_numpy(dtype=float)
        if spec.ordinal:
            ref = np.floor(ref + 0.5)  # the gold's value: a median's half point goes up
        ok_idx = cons.index.to_numpy()[ok]
        table.loc[table["idx"].isin(ok_idx), "clear"] = True
        table = table.set_index("idx")
        table.loc[ok_idx, "ref"] = ref[ok]
        table = table.reset_index()
    ref_of = table.set_index("idx")["ref"]
    r = ref_of.reindex(j["idx"]).to_numpy(dtype=float)
    code = j["code"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        agree = np.abs(code - r) <= tolerance + 1e-9 if spec.ordinal else code == r
    j["disagree"] = ~agree
    return table, j


# the last item table's ids as text, their codes and which are live items of the study
_ITEM_COLUMNS = LastTable()


def _item_columns(
    items: pd.DataFrame, study_items: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The item table's ids as text, each one's code as the decisions name the items, and
    whether each is an item of the study (`study_items`); kept for the same two tables (a live
    refresh keeps its item table: twenty thousand ids were read as text four times a refresh).
    """
    last = _ITEM_COLUMNS.get(None)
    if last is not None and last[0] is items and last[1] is study_items:
        return last[2]
    item_ids = items["item_id"].astype(str).to_numpy(dtype=object)
    item_code = pd.factorize(item_ids)[0]
    live = pd.Index(study_items["item_id"].astype(str)).get_indexer(item_ids) >= 0
    for a in (item_ids, item_code, live):  # shared by later calls: nobody writes into them
        a.flags.writeable = False
    _ITEM_COLUMNS.put(None, items, study_items, (item_ids, item_code, live))
    return item_ids, item_code, live


def _unjudged(
    items: pd.DataFrame, live: np.ndarray, answered: np.ndarray, item_code: np.ndarray
) -> tuple[dict[str, Any], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A metric's split where no judge answered anything (certify's loop, without its tables):
    its items of the study (`live`) rated by humans (`answered`: the idx of its answers), every
    other one escalated; and its (rated codes, codes to decide, stages) for `_item_split`."""
    idx = items["idx"].to_numpy(dtype=np.int64)[live]
    rated = _among(idx, answered)
    todo = idx[~rated]
    split = {
        "accepted": {},
        "escalated": len(todo),
        "already_rated": int(rated.sum()),
        "n_items": len(idx),
    }
    return split, (item_code[idx[rated]], item_code[todo], np.full(len(todo), -1, np.int64))


def _no_judged() -> pd.DataFrame:
    """_metric_table's judge rows where no judge answered."""
    return pd.DataFrame(
        {
            "idx": np.zeros(0, dtype=np.int64),
            "judge": pd.Series(dtype=str),
            "code": np.zeros(0),
            "item_id": pd.Series(dtype=str),
            "conf": np.zeros(0),
            "disagree": np.zeros(0, dtype=bool),
        }
    )


def _among(idx: np.ndarray, answered: pd.Series | np.ndarray) -> np.ndarray:
    """Per item idx of `idx`: whether it is among the `answered` idx (both >= 0: item_table's
    0..n-1). A mask over the idx range: a set or an isin of a million answers hashed each."""
    a = np.asarray(answered, dtype=np.int64)
    mask = np.zeros(int(max(idx.max(initial=-1), a.max(initial=-1))) + 1, dtype=bool)
    mask[a] = True
    return mask[idx]


def judge_block(
    t: Threshold,
    mu: float | None,
    *,
    alpha: float,
    delta: float,
    n_to_decide: int,
    n_accepted: int,
    n_unclear: int,
    version: str | None,
    calibration: str | None,
    unit: str = "items",
) -> dict[str, Any]:
    """One judge's PAC figures on one metric (or on its pair votes: `unit` "pairs")."""
    block: dict[str, Any] = {
        "version": version,
        "threshold": t.threshold,
        "accepted": t.accepted,
        "n_calibration": t.n_calibration,
        "n_above": t.n_above,
        "k_disagree_above": t.k_disagree_above,
        "upper_bound": t.upper_bound,
        "n_thresholds_tested": t.n_tested,
        "coverage": n_accepted / n_to_decide if n_to_decide else None,
        "n_to_decide": n_to_decide,
        "n_accepted": n_accepted,
        "n_escalated": n_to_decide - n_accepted,
        "n_unclear": n_unclear,
        "disagreement": mu,
        "min_escalation": None if mu is None else min_escalation(mu, alpha),
        "delta": delta,
        "calibration": calibration,
    }
    if t.n_calibration < MIN_ABOVE:
        block["note"] = (
            f"{t.n_calibration} calibration {unit} with a clear consensus and this judge's "
            f"confidence, fewer than the {MIN_ABOVE} a threshold needs above it: the judge "
            f"abstains on every {unit[:-1]}"
        )
    elif not t.accepted:
        block["note"] = (
            f"no threshold passes: at the highest confidence with {t.n_above} {unit} above it, "
            f"{t.k_disagree_above} disagree and the bound is {t.upper_bound:.3f} > alpha "
            f"{alpha:g}: the judge abstains on every {unit[:-1]}"
        )
    if mu is not None and mu > alpha:
        block["feasibility"] = (
            f"the judge disagrees with the raters on {mu:.1%} of the calibration {unit}, more "
            f"than alpha {alpha:.0%}: whatever the method, at least "
            f"{min_escalation(mu, alpha):.1%} of the {unit} must go to humans"
        )
    return block


def certify(
    frames: StudyFrames,
    items: pd.DataFrame,
    specs: list[MetricSpec],
    human: pd.DataFrame,
    judged: pd.DataFrame | None = None,
    *,
    with_decisions: bool = True,
) -> Certified:
    """The study's certification (module docstring). `judged`: judge_answers of the latest
    versions (the report's; coded here when not given). Without `with_decisions` (a report
    reads the sections only) the per-item decisions come back empty: at a million judge scores
    their rows were the largest part of the report's memory."""
    from .answers import judge_answers, metric_rows

    cfg = Settings.of(frames.settings)
    if judged is None:
        judged = judge_answers(frames, specs, items)
    latest, missing = _latest(frames)
    pool, calibration, cal_note = _calibration_pool(frames)
    item_ids, item_code, live = _item_columns(items, frames.items)
    with_conf = sorted(latest.loc[latest["confidence"].notna(), "judge"].astype(str).unique())
    present = set(latest["judge"].astype(str).unique())
    order = [j for j in (cfg.order or with_conf) if j in present]
    absent = [j for j in (cfg.order or []) if j not in order]
    version_of = {str(j): str(g["version"].iloc[0]) for j, g in latest.groupby("judge", sort=False)}
    judges: dict[str, dict[str, Any]] = {}
    conf_judges: dict[str, dict[str, Any]] = {}
    stages: list[dict[str, Any]] = []
    splits: dict[str, Any] = {}
    fdr_splits: dict[str, Any] = {}
    decisions: list[pd.DataFrame] = []
    fdr_decisions: list[pd.DataFrame] = []
    pac_decides, fdr_decides = cfg.mode == PAC, cfg.mode == CONFORMAL
    # the decisions of the mode returned only: of the other the item split alone is published
    pac_rows = with_decisions and not fdr_decides
    fdr_rows = with_decisions and fdr_decides
    stage_of: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    fdr_stage_of: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    raw = (
        latest.set_index(["item_id", "judge", "metric"])["value"]
        if len(latest) and with_decisions
        else None
    )
    certified = [s for s in specs if not s.multi and s.metric is not None]
    # every row of a metric: an item with a cannot-judge answer is rated all the same
    human_rows = metric_rows(human, coded_only=False)
    judged_rows = metric_rows(judged, coded_only=False)
    none = np.zeros(0, dtype=np.int64)
    h_idx, h_code = human["idx"].to_numpy(), human["code"].to_numpy()
    # no judge at all and no decisions asked for (a report's sections): each metric's items
    # rated and left are all there is to say, so its tables (pandas work, most of a live
    # refresh's certify) are not built
    unjudged = not with_decisions and not len(judged) and not order
    # the calibration items, read by the judged metrics alone
    if unjudged:
        in_pool = np.zeros(0, dtype=bool)
    elif pool is not None:
        in_pool = np.fromiter((i in pool for i in item_ids), dtype=bool, count=len(item_ids))
    elif len(human):  # every item humans rated (an item table names each item once)
        in_pool = _among(items["idx"].to_numpy(dtype=np.int64), human["idx"])
    else:
        in_pool = np.zeros(len(item_ids), dtype=bool)
    for spec in certified:
        rows = human_rows.get(spec.key, none)
        if unjudged:
            split, left = _unjudged(items, live, h_idx[rows], item_code)
            splits[spec.key], fdr_splits[spec.key] = split, {**split, "accepted": {}}
            stage_of.append(left)
            fdr_stage_of.append(left)
            continue
        # the two columns _metric_table and the consensus read: copying every column of the
        # metric's answers took four times as long
        h = pd.DataFrame({"idx": h_idx[rows], "code": h_code[rows]})
        j_rows = judged.iloc[judged_rows.get(spec.key, none)]
        table, j = _metric_table(spec, items, item_ids, h, j_rows, latest, cfg.tolerance)
        table = table[live]
        rated = table["rated"].to_numpy(dtype=bool)
        cal = table[in_pool[live] & rated]
        cal_ok = cal[cal["clear"]]
        n_unclear = int((~cal["clear"]).sum())
        todo = table[~rated]
        for name in sorted(j["judge"].unique()):
            mine = j[j["judge"] == name].set_index("idx")
            c = mine.reindex(cal_ok["idx"]).dropna(subset=["conf"])
            t = (
                pac_threshold(
                    c["conf"].to_numpy(),
                    c["disagree"].to_numpy(dtype=bool),
                    alpha=cfg.alpha,
                    delta=cfg.delta,
                )
                if calibration
                else Threshold(None, 0, 0, 0, None, 0, 0)
            )
            d = mine.reindex(todo["idx"])
            with np.errstate(invalid="ignore"):
                acc = int((d["conf"] >= t.threshold).sum()) if t.accepted else 0
            mu = float(c["disagree"].mean()) if len(c) else None
            judges.setdefault(name, {})[spec.key] = judge_block(
                t,
                mu,
                alpha=cfg.alpha,
                delta=cfg.delta,
                n_to_decide=len(todo),
                n_accepted=acc,
                n_unclear=n_unclear,
                version=version_of.get(name, ""),
                calibration=calibration,
            )
            chosen, fdr_t = _fdr(c, d["conf"].to_numpy(dtype=float), cfg.q, calibration)
            n_sel = int(chosen.sum())
            conf_judges.setdefault(name, {})[spec.key] = {
                "version": version_of.get(name, ""),
                "threshold": fdr_t,
                "accepted": bool(n_sel),
                "n_calibration": len(c),
                "n_disagree_calibration": int(c["disagree"].sum()) if len(c) else 0,
                "n_to_decide": len(todo),
                "n_accepted": n_sel,
                "n_escalated": len(todo) - n_sel,
                "coverage": n_sel / len(todo) if len(todo) else None,
                "q": cfg.q,
                "calibration": calibration,
            }
        # the cascade: judges in order, each on what the earlier ones left
        conf_c = np.full((len(order), len(cal_ok)), np.nan)
        dis_c = np.zeros((len(order), len(cal_ok)), dtype=bool)
        conf_t = np.full((len(order), len(todo)), np.nan)
        for s, name in enumerate(order):
            mine = j[j["judge"] == name].set_index("idx")
            cc = mine.reindex(cal_ok["idx"])
            conf_c[s] = cc["conf"].to_numpy(dtype=float)
            dis_c[s] = cc["disagree"].fillna(False).to_numpy(dtype=bool)
            conf_t[s] = mine.reindex(todo["idx"])["conf"].to_numpy(dtype=float)
        if not calibration:
            conf_c[:] = np.nan
        casc = cascade(conf_c, dis_c, conf_t, alpha=cfg.alpha, delta=cfg.delta)
        accepted: dict[str, int] = {}
        for s, name in enumerate(order):
            t = casc.stages[s]
            n_acc = int((casc.test_stage == s).sum())
            ref = f"{name}@{version_of.get(name, '')}"
            stages.append(t.stage(name, spec.key, version_of.get(name, ""), casc.deltas[s], n_acc))
            accepted[ref] = n_acc
        n_escalated = int((casc.test_stage < 0).sum())
        splits[spec.key] = {
            "accepted": accepted,
            "escalated": n_escalated,
            "already_rated": int(rated.sum()),
            "n_items": len(table),
        }
        rated_codes = item_code[table["idx"].to_numpy(dtype=np.int64)[rated]]
        todo_codes = item_code[todo["idx"].to_numpy(dtype=np.int64)]
        stage_of.append((rated_codes, todo_codes, casc.test_stage))
        if pac_rows:
            decisions.append(
                _decisions(
                    spec,
                    table,
                    todo,
                    casc.test_stage,
                    conf_t,
                    order,
                    [t.threshold for t in casc.stages],
                    version_of,
                    raw,
                )
            )
        # conformal alignment decides with the first judge of the order alone
        first = order[0] if order else None
        stage = np.full(len(todo), -1, dtype=np.int64)
        fdr_t = None
        if first is not None:
            mine = j[j["judge"] == first].set_index("idx")
            c = mine.reindex(cal_ok["idx"]).dropna(subset=["conf"])
            chosen, fdr_t = _fdr(c, conf_t[0], cfg.q, calibration)
            stage[chosen] = 0
        fdr_splits[spec.key] = {
            "accepted": {f"{first}@{version_of.get(first, '')}": int((stage == 0).sum())}
            if first
            else {},
            "escalated": int((stage < 0).sum()),
            "already_rated": int(rated.sum()),
            "n_items": len(table),
        }
        fdr_stage_of.append((rated_codes, todo_codes, stage))
        if fdr_rows:
            fdr_decisions.append(
                _decisions(
                    spec, table, todo, stage, conf_t[:1], order[:1], [fdr_t], version_of, raw
                )
            )
    dec = pd.concat(decisions, ignore_index=True) if decisions else _no_decisions()
    fdr_dec = pd.concat(fdr_decisions, ignore_index=True) if fdr_decisions else _no_decisions()
    notes = [cal_note]
    pairs = certify_pairs(
        frames.pair_votes,
        frames.judge_pair_votes,
        frames.settings,
        alpha=cfg.alpha,
        delta=cfg.delta,
        order=cfg.order,
    )
    if pairs is not None:
        for name, block in pairs.judges.items():
            judges.setdefault(name, {})[PAIR_METRIC] = block
        stages += pairs.stages
        splits[PAIR_METRIC] = pairs.split
    absent = [j for j in absent if pairs is None or j not in pairs.section["order"]]
    if absent:
        notes.append("certified_cascade names judges the study does not have: " + ", ".join(absent))
    section: dict[str, Any] = {
        "mode": PAC,
        "method": f"{PAC_PAPER}: fixed-sequence Clopper-Pearson threshold search",
        "decides": pac_decides,
        "alpha": cfg.alpha,
        "delta": cfg.delta,
        "scale_tolerance": cfg.tolerance,
        "calibration": calibration,
        "calibration_note": "; ".join(notes),
        "guarantee": guarantee_text(cfg.alpha, cfg.delta, calibration),
        "min_above": MIN_ABOVE,
        "judges": judges,
        "cascade": stages,
        "order": order,
        "not_calibrated": missing,
        "split": splits,
        "items": _item_split(stage_of, len(item_ids)),
        "pairs": None if pairs is None else pairs.section,
    }
    conformal = {
        "mode": CONFORMAL,
        "method": f"{CONFORMAL_PAPER}: conformal p-values and Benjamini-Hochberg",
        "decides": fdr_decides,
        "q": cfg.q,
        "calibration": calibration,
        "calibration_note": "; ".join(notes),
        "guarantee": fdr_text(cfg.q, calibration),
        "judge": order[0] if order else None,
        "judges": conf_judges,
        "split": fdr_splits,
        "items": _item_split(fdr_stage_of, len(item_ids)),
    }
    return Certified(
        section,
        conformal,
        fdr_dec if fdr_decides else dec,
        no_pair_decisions() if pairs is None else pairs.decisions,
    )


def _fdr(
    cal: pd.DataFrame, conf: np.ndarray, q: float, calibration: str | None
) -> tuple[np.ndarray, float | None]:
    """Conformal alignment over the items to decide that have the judge's confidence (the others
    cannot be selected): the mask over all of them and the lowest confidence selected."""
    chosen = np.zeros(len(conf), dtype=bool)
    has = ~np.isnan(conf)
    if not calibration or not len(cal) or not has.any():
        return chosen, None
    sel = conformal_alignment(
        cal["conf"].to_numpy(dtype=float),
        cal["disagree"].to_numpy(dtype=bool),
        conf[has],
        q=q,
    )
    chosen[np.flatnonzero(has)[sel.selected]] = True
    return chosen, sel.threshold


def _no_decisions() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in DECISION_COLUMNS})


def _decisions(
    spec: MetricSpec,
    table: pd.DataFrame,
    todo: pd.DataFrame,
    stage: np.ndarray,
    conf_t: np.ndarray,
    order: list[str],
    thresholds: list[float | None],
    version_of: dict[str, str],
    raw: pd.Series | None,
) -> pd.DataFrame:
    """One row per item of the metric: rated, accepted (by which judge) or escalated."""
    rated = table.loc[table["rated"], "item_id"].to_numpy(dtype=object)
    ids = todo["item_id"].to_numpy(dtype=object)
    stage = np.asarray(stage, dtype=np.int64)
    acc = stage >= 0
    names = np.array([None, *order], dtype=object)[stage + 1]
    versions = np.array([None, *(version_of.get(n) for n in order)], dtype=object)[stage + 1]
    ts = np.array([None, *thresholds], dtype=object)[stage + 1]
    conf = np.full(len(ids), None, dtype=object)
    if acc.any():
        conf[acc] = conf_t[stage[acc], np.flatnonzero(acc)].astype(float)
    value = np.full(len(ids), None, dtype=object)
    if raw is not None and acc.any():
        key = pd.MultiIndex.from_arrays([ids[acc], names[acc], np.full(acc.sum(), spec.key)])
        value[acc] = raw.reindex(key).to_numpy(dtype=object)
    todo_rows = pd.DataFrame(
        {
            "item_id": ids,
            "metric": spec.key,
            "decision": np.where(acc, "accepted", "escalated"),
            "judge": names,
            "version": versions,
            "threshold": ts,
            "confidence": conf,
            "value": value,
        }
    )
    rated_rows = pd.DataFrame(
        {"item_id": rated, "metric": spec.key, "decision": "rated"}, columns=DECISION_COLUMNS
    )
    return pd.concat([rated_rows.astype(object), todo_rows.astype(object)], ignore_index=True)


def _item_split(
    stages: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_codes: int
) -> dict[str, int]:
    """Items as a whole: escalated when any certified metric is, else accepted when the judges
    decide some metric, else already rated. `stages`: per metric, the codes of its rated items,
    of its items to decide and the stage that accepted each (-1: escalated); counted over item
    codes (a million decision rows: a groupby of the ids took a second)."""
    seen = np.zeros(n_codes, dtype=bool)
    esc = np.zeros(n_codes, dtype=bool)
    acc = np.zeros(n_codes, dtype=bool)
    for rated, todo, stage in stages:
        seen[rated] = True
        seen[todo] = True
        esc[todo[stage < 0]] = True
        acc[todo[stage >= 0]] = True
    return {
        "n_items": int(seen.sum()),
        "accepted": int((acc & ~esc).sum()),
        "escalated": int(esc.sum()),
        "already_rated": int((seen & ~acc & ~esc).sum()),
    }


def escalated_ids(dec: pd.DataFrame, column: str = "item_id") -> list[str]:
    """The ids (`column` of the decisions: items, or pairs) escalated to humans, sorted."""
    if not len(dec):
        return []
    return sorted(set(dec.loc[dec["decision"] == "escalated", column].astype(str)))


__all__ = [
    "CONFORMAL",
    "Certified",
    "DECISION_COLUMNS",
    "MODES",
    "PAC",
    "certify",
    "escalated_ids",
    "fdr_text",
    "guarantee_text",
]
