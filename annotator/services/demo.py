"""The demo study: synthetic UI mockups from three generators with known
defects, a lenient judge (and a rubber-stamp one that adds nothing), the shipped anchor set,
and simulated raters who label, vote and (one of them) drift, all through the same services the
app uses.
Beside the 36 items everyone rated, a judge-only set (270 further variants, drawn small
with their text), then a random human sample drawn over all 306 and answered by the
simulated raters, so the report's debiased figures correct a judge on every item with
humans on a sample large enough for intervals.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from platformdirs import user_data_dir

from ..base.task import TaskState
from ..demo import scenario
from ..demo.simulate import SimulatedPairVoter, SimulatedRater
from ..store.anchors import anchors
from ..store.items import item_index
from .labeling import LabelSession
from .pairing import PairSession
from .resources import anchor_set
from .study import DB_NAME, Study

RUBRIC = "ui_mockup"  # shipped rubric and anchor set (services/resources.py)
ANCHOR_SET = "ui_mockup"
DEMO_RATER = "demo-rater"
SIMULATED_ANCHOR_EVERY = 2  # the simulated raters stand for a long programme: anchors come often
SIMULATED = (
    SimulatedRater("sim-steady", severity=0.0, noise=0.45),
    SimulatedRater("sim-severe", severity=0.6, noise=0.5),
    SimulatedRater("sim-lenient", severity=-0.4, noise=0.55),
    # drifts after the 18th of its 36 anchor answers: past the 15 the drift chart takes as the
    # rater's own start (a drift inside them reads as a standing offset, and whether the demo
    # showed it hung on which anchors came first)
    SimulatedRater("sim-drifting", severity=0.0, noise=0.45, drift_at=18, drift_shift=3.0),
)
PAIR_VOTERS = (
    SimulatedPairVoter(
        "sim-steady",
        {"gen-alpha": 1.2, "gen-beta": 0.0, "gen-gamma": -0.4},
        left_bias=0.5,
        tie_rate=0.1,
    ),
    SimulatedPairVoter(
        "sim-severe",
        {"gen-alpha": 1.0, "gen-beta": 0.1, "gen-gamma": -0.5},
        left_bias=0.5,
        tie_rate=0.1,
    ),
    SimulatedPairVoter(
        "sim-lenient",
        {"gen-alpha": 1.1, "gen-beta": 0.0, "gen-gamma": -0.3},
        left_bias=0.7,
        tie_rate=0.15,
    ),
)
# the judge on pairs, asked in both orders: it leans to the output shown first
JUDGE_PAIR_VOTER = SimulatedPairVoter(
    scenario.JUDGE_NAME,
    {"gen-alpha": 1.0, "gen-beta": 0.0, "gen-gamma": -0.4},
    left_bias=0.72,
    tie_rate=0.05,
)
OPERATOR = "ops-check"
SESSION_LENGTH = 12
# The demo's size: 6 cases x 3 generators x 2 variants = 36 items. Three variants (54 items) took
# 122 s to build on a loaded two-core box; two keep every planted story (the
# lenient judge, the drifting rater, the generators' defects: tests/unit/test_demo_study.py).
VARIANTS_PER_CASE = 2
# the build counts each unit of a stage to its task as it is done: task.count(done, total, stage)
STAGES = (scenario.MOCKUPS, "rater answers", "pair votes", "sampled items", "lead's decisions")


def default_demo_folder() -> Path:
    return Path(user_data_dir("annotator", appauthor=False)) / "demo-study"


# Items per generator (of 102: 12 rated first, 90 judge-only) in the demo's recorded human
# sample, and pairs per generator pair (of 114) in its pair sample: from 20 labels the debiased
# intervals hold (stats/debiased.py MIN_UNITS_FOR_INTERVAL), and 24 keeps a few over it
DEMO_SAMPLE = 24
# Raters on each sampled item the team had not rated: two, as a team deals a sample (the first
# 36 keep all four). With all four on them too, the judge-only set's many easy passes let the
# lenient judge pass the alt-test on instruction following (advantage 0.92 over 97 items), and
# the demo would no longer show a judge that cannot replace a rater; with two it fails it on
# every metric, and the build takes 2.5 s, not 7 s, longer
SAMPLE_OVERLAP = 2


def build_demo(
    folder: str | Path,
    *,
    variants_per_case: int = VARIANTS_PER_CASE,
    seed: int = scenario.DEMO_SEED,
    task: TaskState | None = None,
) -> Path:
    """Build the demo study at `folder` unless it is already there, counting each stage's units
    to `task` (STAGES); a cancel of `task` stops it at the next unit (Cancelled).

    It is built in a scratch folder (in memory where the system has /dev/shm: the thousand
    commits of the simulated raters each wait for the disk otherwise, half the build time) and
    moved into place whole, so an interrupted build (cancelled, Ctrl+C) leaves no half-built
    demo to reopen."""
    folder = Path(folder)
    if (folder / DB_NAME).exists():
        return folder
    shm = Path("/dev/shm")
    scratch = Path(
        tempfile.mkdtemp(
            prefix="annotator-demo-", dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None
        )
    )
    try:
        built = scratch / folder.name  # the folder's name is the study's name
        _build(built, variants_per_case=variants_per_case, seed=seed, task=task or TaskState())
        folder.parent.mkdir(parents=True, exist_ok=True)
        # copy beside the target, then rename: the move into place is one step
        landing = Path(tempfile.mkdtemp(prefix=".demo-", dir=folder.parent))
        try:
            shutil.copytree(built, landing / "study")
            if folder.exists() and not any(folder.iterdir()):
                folder.rmdir()
            os.replace(landing / "study", folder)
        finally:
            shutil.rmtree(landing, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


def _build(folder: Path, *, variants_per_case: int, seed: int, task: TaskState) -> None:
    study = Study.create(folder, RUBRIC)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            files = scenario.write_demo_inputs(
                Path(tmp),
                seed=seed,
                variants_per_case=variants_per_case,
                task=task,
            )
            study.import_items(files.manifest)
            # the judge's earlier version (with confidences) ran first; the lenient scores
            # imported next are its latest version, the one the report's figures read
            _earlier_judge_version(study, files.truths, seed)
            study.import_judge(files.judge_csv)
        with anchor_set(ANCHOR_SET) as anchors_file:
            study.import_anchors(anchors_file)
        _simulate_labels(study, files.truths, seed, task)
        _simulate_pairs(study, seed, task)
        _adjudicate_some(study, files.truths)
        # The newcomer's queues are built before the judge-only set comes in: they label and
        # vote on the items and pairs the simulated team did first, in the order they had
        # before the set existed (items imported later go at a queue's end)
        study.add_rater(DEMO_RATER, seed=seed * 100 + 98)
        LabelSession(study, DEMO_RATER).progress()
        PairSession(study, DEMO_RATER).progress()
        # then the judge-only set, and only then the recorded random sample, as a team does:
        # drawn over every item of a generator (and every pair of a generator pair), the
        # judge-only set's included, so the debiased figures cover all of them; DEMO_SAMPLE
        # of each is enough for their intervals
        extra = _judge_only_set(study, seed)
        from .sampling import draw, draw_pairs

        draw(study, n=DEMO_SAMPLE, share=None, seed=seed)
        draw_pairs(study, n=DEMO_SAMPLE, seed=seed)
        _rate_the_sample(study, extra, seed, task)
        task.count(0, 1, STAGES[4])
        _judge_pairs_both_orders(study, seed)
        _rubber_stamp_judge(study, [*files.truths, *extra])
        task.count(1, 1, STAGES[4])
    finally:
        study.close()


def _judge_only_set(study: Study, seed: int) -> dict[str, dict]:
    """Import the judge-only set and its pairs; returns its truths (item_id -> answers)."""
    with tempfile.TemporaryDirectory() as tmp:
        files = scenario.write_judge_only_inputs(Path(tmp), seed=seed)
        study.import_items(files.manifest)
        study.import_judge(files.judge_csv)
    from ..store.pairs import ensure_pairs

    ensure_pairs(study.db)  # their pairs (3 per variant), for the judge and the sample
    return files.truths


def _rate_the_sample(study: Study, truths: dict[str, dict], seed: int, task: TaskState) -> None:
    """The simulated team answers the sampled items no human has rated yet (those of the
    judge-only set: `truths`), every metric, as they answered the first 36: each item by
    SAMPLE_OVERLAP of them, dealt as `annotator assign --sample N --overlap 2` deals; and
    the voters vote on the sampled pairs among them. The items are taken straight from each
    rater's queue (the judge-only set sits at its end): the demo stores no assignments, so the
    newcomer and every view of the app keep the everyone-gets-everything study. No anchor
    comes between them, so the drift the anchors show is the one planted in the first 36."""
    from ..domain.assignment import deal
    from ..domain.records import ServedItem
    from ..stats.debiased import SAMPLE_SETTING
    from ..stats.debiased_pairs import PAIR_SAMPLE_SETTING
    from ..store.answers import queue_positions
    from ..store.items import view_of
    from ..store.pairs import pair_rows
    from .pairing import ServedPair

    settings = study.db.all_settings()
    sampled = set(settings[SAMPLE_SETTING]["items"]) & set(truths)
    sampled_pairs = set(settings[PAIR_SAMPLE_SETTING]["items"])
    index = item_index(study.db)
    by_id = {item_id: pk for pk, (item_id, _gen) in index.items()}
    pairs = [
        (pk, a, b)
        for pk, pid, a, b in pair_rows(study.db)
        if pid in sampled_pairs and index[a][0] in truths and index[b][0] in truths
    ]
    views = {pk: view_of(study.db, pk) for pk in {by_id[i] for i in sampled}}
    dealt = deal(sorted(views), [sim.name for sim in SIMULATED], SAMPLE_OVERLAP, seed)
    total = len(sampled) * SAMPLE_OVERLAP + len(pairs) * len(PAIR_VOTERS)
    done = 0
    for n, sim in enumerate(SIMULATED):
        rng = np.random.default_rng(seed * 100 + 50 + n)
        session = LabelSession(study, sim.name)  # its queue takes in the judge-only set
        session.defer_drift = True
        position = queue_positions(study.db, sim.name, study.rubric.version)
        mine = [pk for pk in views if sim.name in dealt.get(pk, ())]
        for pk in sorted(mine, key=lambda pk: position[pk]):
            answers = sim.answer(truths[index[pk][0]], study.rubric, rng)
            answers["reason"] = "simulated"
            served = ServedItem(pk, views[pk], position[pk], "live")
            session.submit(served, answers, time_ms=int(rng.integers(4000, 30000)))
            done += 1
            task.count(done, total, STAGES[3])
    for n, voter in enumerate(PAIR_VOTERS):
        rng = np.random.default_rng(seed * 1000 + 50 + n)
        pair_session = PairSession(study, voter.name)
        for pk, a, b in pairs:
            # the side each output is shown on, a seeded coin as the pair queue deals it
            left, right = (a, b) if rng.random() < 0.5 else (b, a)
            choice = voter.vote(index[left][1], index[right][1], rng)
            served_pair = ServedPair(
                pk, left, right, view_of(study.db, left), view_of(study.db, right), None, None
            )
            pair_session.vote(served_pair, choice, None, time_ms=int(rng.integers(2000, 15000)))
            done += 1
            task.count(done, total, STAGES[3])
    task.count(total, total, STAGES[3])


def _simulate_labels(study: Study, truths: dict[str, dict], seed: int, task: TaskState) -> None:
    index = item_index(study.db)
    refs = {pk: ref for pk, _set, ref, _rat in anchors(study.db)}
    every = study.setting("anchor_every")
    study.db.set_setting("anchor_every", SIMULATED_ANCHOR_EVERY)
    operator_limit = 6
    count = {"done": 0, "total": 0}

    def answered(queue: int) -> None:
        if not count["total"]:  # every simulated rater answers all: the first's queue, times
            count["total"] = queue * len(SIMULATED) + operator_limit
        count["done"] += 1
        task.count(count["done"], count["total"], STAGES[1])

    try:
        for n, sim in enumerate(SIMULATED):
            # fixed queue seeds: the same seed builds the same study, answer for answer
            study.add_rater(sim.name, expertise="simulated", seed=seed * 100 + 1 + n)
            _label_all(
                study,
                sim,
                truths,
                index,
                refs,
                np.random.default_rng(seed * 100 + n),
                on_answer=answered,
            )
        study.add_rater(OPERATOR, operator=True, expertise="staff spot check", seed=seed * 100 + 99)
        _label_all(
            study,
            SimulatedRater(OPERATOR, severity=2.0, noise=1.0),
            truths,
            index,
            refs,
            np.random.default_rng(seed),
            limit=operator_limit,
            on_answer=answered,
        )
        task.count(count["total"], count["total"], STAGES[1])
    finally:
        study.db.set_setting("anchor_every", every)


def _label_all(
    study, sim, truths, index, refs, rng, limit: int | None = None, on_answer=lambda _q: None
) -> None:
    anchor_n, done = 0, 0
    session = LabelSession(study, sim.name)
    queue = session.progress().total  # a read: what this rater will answer, anchors included
    # A simulated rater sees no drift alert, and the check stores nothing: skipping it saves a
    # statistics run per anchor answer (a quarter of the build); the report's drift is unchanged.
    session.defer_drift = True
    while (served := session.next()) is not None and (limit is None or done < limit):
        if (
            done and done % SESSION_LENGTH == 0
        ):  # raters work in sittings; an anchor may recur across them
            session = LabelSession(study, sim.name)
            session.defer_drift = True
            served = session.next()
            if served is None:  # the new sitting has nothing left to serve
                break
        if served.context == "anchor":
            truth, idx = refs[served.item_pk], anchor_n
            anchor_n += 1
        else:
            truth, idx = truths[index[served.item_pk][0]], None
        answers = sim.answer(truth, study.rubric, rng, anchor_index=idx)
        answers["reason"] = "simulated"
        session.submit(served, answers, time_ms=int(rng.integers(4000, 30000)))
        done += 1
        on_answer(queue)


def _adjudicate_some(study: Study, truths: dict[str, dict]) -> None:
    """The demo lead has resolved about ten findings, so the report's adjudication section and
    the review view have something to show: the judge's contradictions with the clear human
    consensus (at most half of them, never the last three, so the review view still opens on
    undecided ones), then, up to ten, items where the raters split, settled against what the
    screen shows (the demo's truth); the last quarter where the rubric text was the trouble.
    (At 36 items the judge contradicts a clear consensus only a few times: those alone left one
    decision, too few for the section.)"""
    from .adjudication import adjudicate, review_queue

    queue = review_queue(study)
    judged = [e for e in queue if "judge_contradicts" in e.reasons and e.consensus.clear]
    judged = judged[: max(0, min(12, len(judged) // 2, len(judged) - 3))]
    split = [
        e
        for e in queue
        if list(e.reasons) == ["humans_disagree"]
        # gates and scales: an empty set of tags would read as no answer
        and not isinstance(truths.get(e.item_id, {}).get(e.metric, ()), (list, tuple))
    ]
    split = split[: max(0, min(10 - len(judged), len(split) // 4))]
    todo = [(e, e.consensus.value, True) for e in judged]
    todo += [(e, truths[e.item_id][e.metric], False) for e in split]
    unclear_from = len(todo) - max(1, len(todo) // 4)
    for n, (e, value, with_humans) in enumerate(todo):
        text = ";".join(value) if isinstance(value, (list, tuple)) else str(value)
        if n >= unclear_from:
            reason = "the level texts do not say how to score a crowded but usable screen"
        elif with_humans:
            reason = "the humans are right: checked against the prompt's required sections"
        else:
            reason = "the raters split: checked the screen against the prompt's criteria"
        adjudicate(
            study,
            item_id=e.item_id,
            metric=e.metric,
            value=text,
            by="demo-lead",
            reason=reason,
            category=None if n < unclear_from else "rubric_unclear",
        )


def _simulate_pairs(study: Study, seed: int, task: TaskState) -> None:
    index = item_index(study.db)
    # the operator's spot checks (always "left") are stored but must move no figure
    operator = SimulatedPairVoter(OPERATOR, left_bias=0.99, tie_rate=0.0)
    operator_limit = 12
    voters = (*PAIR_VOTERS, operator)
    known: list[int] = []  # each voter's queue, as its session is opened (in order, as before)
    votes = 0
    for n, voter in enumerate(voters):
        rng = np.random.default_rng(seed * 1000 + n)
        session = PairSession(study, voter.name)
        limit = operator_limit if voter is operator else None
        if voter is not operator:
            known.append(session.progress().total)
        # the voters still to come are counted at the last queue's size
        total = sum(known) + known[-1] * (len(PAIR_VOTERS) - len(known)) + operator_limit
        done = 0
        while (served := session.next()) is not None and (limit is None or done < limit):
            choice = voter.vote(index[served.left_pk][1], index[served.right_pk][1], rng)
            session.vote(served, choice, None, time_ms=int(rng.integers(2000, 15000)))
            done += 1
            votes += 1
            task.count(votes, total, STAGES[2])
    total = votes
    task.count(total, total, STAGES[2])


def _earlier_judge_version(study: Study, truths: dict[str, dict], seed: int) -> None:
    import random

    rng = random.Random(f"demo-judge-v2|{seed}")
    scores = []
    for item_id in sorted(truths):
        values, reason, conf = scenario.careful_judge(truths[item_id], rng)
        scores.append((item_id, values, reason, conf))
    _record_judge(
        study, scenario.JUDGE_NAME, scenario.CAREFUL_MODEL, scenario.CAREFUL_PROMPT, scores
    )


def _record_judge(study: Study, judge: str, model: str, prompt: str, scores: list[tuple]) -> None:
    """A demo judge's scores recorded as an offline run of `model` with `prompt` (its version)."""
    from .judging import record_offline_run

    record_offline_run(
        study,
        judge=judge,
        model=model,
        prompt_sha256=hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
        settings={"confidence": "field", "task": "items"},
        scores=scores,
    )


def _judge_pairs_both_orders(study: Study, seed: int) -> None:
    from .judging import record_offline_pair_votes

    index = item_index(study.db)
    by_id = {item_id: gen for item_id, gen in index.values()}
    rng = np.random.default_rng(seed * 1000 + 99)
    votes = []
    from .judging import judge_pairs_of  # the openai client: not with the start page's import

    for pair_id, a, b in judge_pairs_of(study):
        for left, right in ((a, b), (b, a)):
            votes.append(
                (pair_id, left, right, JUDGE_PAIR_VOTER.vote(by_id[left], by_id[right], rng))
            )
    record_offline_pair_votes(study, scenario.JUDGE_NAME, votes)


def _rubber_stamp_judge(study: Study, item_ids: list[str]) -> None:
    """The second judge (scenario.rubber_stamp_judge) on every item, recorded last: the lead's
    decisions above read the lenient judge's contradictions alone, as before it came."""
    values, reason, conf = scenario.rubber_stamp_judge()
    scores = [(item_id, values, reason, conf) for item_id in sorted(item_ids)]
    _record_judge(
        study, scenario.STAMP_JUDGE_NAME, scenario.STAMP_MODEL, scenario.STAMP_PROMPT, scores
    )
