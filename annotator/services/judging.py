"""`annotator judge run`: score a study's items (or vote on its pairs in both orders) with an LLM
judge, resumably; each run belongs to a judge version (judge/versions.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence, Set
from typing import Any

from ..base.task import TaskState
from ..domain.errors import InputError
from ..judge.pairs import JudgePairVote, PairRequest, pair_task, run_pair_judge
from ..judge.prompt import prompt_hash
from ..judge.records import FewShot
from ..judge.runner import JudgeConfig, JudgeRequest, RunSummary, run_judge
from ..judge.schema import schema_metrics, version_schema_text
from ..judge.versions import judge_version
from ..store import judge_store
from ..store.items import views_by_item_id
from .study import Study

__all__ = [
    "JudgeConfig",
    "RunSummary",
    "judge_pairs",
    "judge_study",
    "judge_study_at",
    "record_offline_run",
]


class _StudyRequests(Sequence):
    """Requests built on demand, so only the items in flight hold their images."""

    def __init__(self, study: Study, item_ids: list[str]) -> None:
        self.study, self.item_ids = study, item_ids

    def __len__(self) -> int:
        return len(self.item_ids)

    def __getitem__(self, i: int) -> JudgeRequest:  # type: ignore[override]
        item_id = self.item_ids[i]
        view = views_by_item_id(self.study.db, [item_id])[item_id]
        read = self.study.media.read
        try:
            outputs, inputs = [read(m) for m in view.outputs], [read(m) for m in view.inputs]
            mask = read(view.mask) if view.mask else None
        except OSError as exc:
            # a media file went missing: this item fails as bad input, the run goes on
            return JudgeRequest(
                item_id=item_id,
                prompt=view.prompt,
                criteria=view.criteria,
                problem=f"an image of this item cannot be read ({exc.strerror or exc}); "
                "re-import the item's images",
            )
        # the judge is blind too: prompt, criteria and pixels only
        return JudgeRequest(
            item_id=item_id,
            prompt=view.prompt,
            criteria=view.criteria,
            output_images=outputs,
            input_images=inputs,
            mask=mask,
            text=view.text,
        )


class StudySink:
    """The runner's JudgeSink on the study database: every reply committed as it arrives."""

    def __init__(self, study: Study, run_pk: int, judge: str, version: str) -> None:
        self.study, self.run_pk, self.judge, self.version = study, run_pk, judge, version

    def done_item_ids(self) -> set[str]:
        return judge_store.scored_item_ids(self.study.db, self.judge, self.version)

    def record_score(self, score: Any) -> None:
        judge_store.record_score(
            self.study.db,
            self.run_pk,
            item_id=score.item_id,
            judge=score.judge,
            values=score.values,
            reason=score.reason,
            raw=score.raw,
            version=self.version,
            confidences=score.confidences,
        )

    def record_error(self, error: Any) -> None:
        judge_store.record_error(
            self.study.db,
            self.run_pk,
            item_id=error.item_id,
            kind=error.kind,
            message=error.message,
            raw=error.raw,
            attempts=error.attempts,
        )


class PairStudySink(StudySink):
    """Votes of the judge on pairs, one per order; an order that failed is recorded as an error
    on the item shown left."""

    def done_keys(self) -> set[str]:
        return judge_store.voted_pair_keys(self.study.db, self.judge)

    def record_vote(self, vote: JudgePairVote) -> None:
        judge_store.record_pair_vote(
            self.study.db,
            judge=vote.judge,
            pair_id=vote.pair_id,
            item_left=vote.item_left,
            item_right=vote.item_right,
            choice=vote.choice,
            reason=vote.reason,
        )

    # record_error is StudySink's: a failed order is kept on the item shown left (judge/pairs.py),
    # its message naming the pair


def _version(
    study: Study, config: JudgeConfig, what: str, examples: str | None = None
) -> tuple[str, str, str, dict]:
    """(version, prompt hash, schema, settings) of a run: items use the rubric's judge prompt
    and schema, pairs their own (a changed pair prompt is a new version); simulated annotators
    their prompt, and their examples (`examples`: judge/simulated.examples_hash) are part of
    the settings."""
    rubric = study.rubric
    if what == "pairs":
        task = pair_task(rubric, config)
        sha, schema = task.prompt_hash, task.schema_text
    elif config.simulated_annotators:
        from ..judge.simulated import simulated_item_task

        schema = version_schema_text(rubric, False)
        sha = simulated_item_task(rubric, config).prompt_hash
    else:
        field = config.confidence == "field"
        schema = version_schema_text(rubric, field)
        sha = prompt_hash(rubric, field)
    settings = {**config.settings(), "task": what}
    if examples is not None:
        settings["examples"] = examples
    return judge_version(config.model, sha, schema, settings), sha, schema, settings


def _start(
    study: Study, config: JudgeConfig, what: str, examples: str | None = None
) -> tuple[str, str, int]:
    """(judge name, version, run pk) of a new run."""
    judge = config.judge_name or config.model
    rubric = study.rubric
    version, sha, schema, settings = _version(study, config, what, examples)
    run_pk = judge_store.start_run(
        study.db,
        judge=judge,
        model=config.model,
        prompt_sha256=sha,
        schema=schema,
        base_url=config.base_url,
        rubric_version=rubric.version,
        version=version,
        settings=settings,
    )
    return judge, version, run_pk


def few_shot_panels(study: Study, n: int, k: int, *, seed: int = 0) -> list[list[FewShot]]:
    """The examples of `n` simulated annotators, `k` each: annotator j shows the answers of the
    rater with the j-th most answers (round robin when there are fewer raters), on `k` items that
    rater answered, drawn seeded, items outside the random human sample first (the calibration
    set stays as the raters left it), no item twice for one rater."""
    import random

    from ..stats.debiased import sample_of
    from .reporting import study_frames

    frames = study_frames(study)
    keys = [m.key for m in schema_metrics(study.rubric)]
    j = frames.judgements[frames.judgements["metric"].isin(keys)]
    if not len(j):
        raise InputError(
            "simulated annotators show human answers as examples: this study has none yet; "
            "rate some items first (or run the judge with --confidence)",
            field="--simulated-annotators",
        )
    sample = sample_of(frames.settings)
    sampled = {str(i) for i in (sample or {}).get("items", {})}
    by_rater = {str(r): g for r, g in j.groupby("rater", sort=False, observed=True)}
    raters = sorted(by_rater, key=lambda r: (-by_rater[r]["item_id"].nunique(), r))
    used: dict[str, set[str]] = {r: set() for r in raters}
    panels: list[list[FewShot]] = []
    for a in range(n):
        rater = raters[a % len(raters)]
        rows = by_rater[rater]
        pool = sorted(set(rows["item_id"].astype(str)) - used[rater])
        rng = random.Random(f"simulated-annotators|{seed}|{a}")
        outside = [i for i in pool if i not in sampled]
        inside = [i for i in pool if i in sampled]
        rng.shuffle(outside)
        rng.shuffle(inside)
        chosen = (outside + inside)[:k]
        if len(chosen) < k:
            raise InputError(
                f"--simulated-annotators {n} --shots {k}: rater {rater} has answered "
                f"{len(pool)} more items, {k} are needed; ask for fewer annotators or shots",
                field="--shots",
            )
        used[rater] |= set(chosen)
        requests = _StudyRequests(study, chosen)
        shots = []
        for i, item_id in enumerate(chosen):
            mine = rows[rows["item_id"].astype(str) == item_id]
            answers = {str(m): v for m, v in zip(mine["metric"], mine["value"], strict=True)}
            shots.append(FewShot(requests[i], answers))
        panels.append(shots)
    return panels


def simulated_cost(config: JudgeConfig, n_items: int, n_todo: int) -> str:
    """The line `judge run --simulated-annotators` prints before it calls anything."""
    n = config.simulated_annotators
    return (
        f"simulated annotators: {n} prompts x {config.shots} examples each: {n} calls per item "
        f"(each carrying {config.shots} examples' text and images); {n_todo} of {n_items} items "
        f"to score: {n * n_todo} calls"
    )


def judge_study(study: Study, config: JudgeConfig, *, task: TaskState | None = None) -> RunSummary:
    """`judge run`: the judge scores every live item it has no score for. With simulated
    annotators the task is first told their cost (a line, before any call)."""
    study.require_lead("running the judge")
    if config.simulated_annotators:
        return _judge_simulated(study, config, task or TaskState())
    judge, version, run_pk = _start(study, config, "items")
    requests = _StudyRequests(study, judge_store.live_item_ids(study.db))
    return run_judge(
        requests,
        study.rubric,
        config,
        StudySink(study, run_pk, judge, version),
        task=task,
    )


def _judge_simulated(study: Study, config: JudgeConfig, task: TaskState) -> RunSummary:
    from ..judge.simulated import examples_hash, run_simulated

    panels = few_shot_panels(study, config.simulated_annotators, config.shots)
    judge, version, run_pk = _start(study, config, "items", examples_hash(panels))
    items = judge_store.live_item_ids(study.db)
    done = judge_store.scored_item_ids(study.db, judge, version)
    task.say(simulated_cost(config, len(items), sum(1 for i in items if i not in done)))
    return run_simulated(
        _StudyRequests(study, items),
        study.rubric,
        config,
        StudySink(study, run_pk, judge, version),
        panels,
        task=task,
    )


class _PairRequests(Sequence):
    """Pair requests built on demand (A|B as stored; the runner adds B|A). A pair voted in both
    orders (`done`) is only its ids: the runner skips both orders, so its images are not read."""

    def __init__(
        self, study: Study, pairs: list[tuple[str, str, str]], done: Set[str] = frozenset()
    ) -> None:
        self.study, self.pairs, self.done = study, pairs, done

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i: int) -> PairRequest:  # type: ignore[override]
        pair_id, a, b = self.pairs[i]
        if {f"{pair_id}|{a}", f"{pair_id}|{b}"} <= self.done:
            return PairRequest(pair_id=pair_id, item_left=a, item_right=b, prompt="")
        views = views_by_item_id(self.study.db, [a, b])
        read = self.study.media.read
        va, vb = views[a], views[b]
        try:
            left, right = [read(m) for m in va.outputs], [read(m) for m in vb.outputs]
            inputs = [read(m) for m in va.inputs]
        except OSError as exc:
            # a media file went missing: this pair fails as bad input, the run goes on
            return PairRequest(
                pair_id=pair_id,
                item_left=a,
                item_right=b,
                prompt=va.prompt,
                problem=f"an image of this pair cannot be read ({exc.strerror or exc}); "
                "re-import the items' images",
            )
        return PairRequest(
            pair_id=pair_id,
            item_left=a,
            item_right=b,
            prompt=va.prompt,
            criteria=va.criteria,
            left_images=left,
            right_images=right,
            left_text=va.text,
            right_text=vb.text,
            input_images=inputs,
        )


def judge_pairs(study: Study, config: JudgeConfig, *, task: TaskState | None = None) -> RunSummary:
    """`judge run --pairs`: the judge votes on every pair in both orders (A|B and B|A)."""
    study.require_lead("running the judge")
    if config.confidence != "none" or config.simulated_annotators:
        raise InputError(
            "pair votes keep no confidence: run `judge run --pairs` without --confidence or "
            "--simulated-annotators",
            field="--confidence",
        )
    pairs = judge_store.pairs_to_judge(study.db)
    if not pairs:
        raise InputError(
            "the study has no pairs to vote on; import pairs or let raters start pairwise work"
        )
    judge = config.judge_name or config.model
    before = judge_store.pair_run_versions(study.db, judge)
    done = judge_store.voted_pair_keys(study.db, judge)
    if done and _version(study, config, "pairs")[0] not in before:
        # pair votes are kept per judge name, not per version: a rerun with other settings
        # would be skipped as already voted, or mix two versions in one judge's figures
        raise InputError(
            f"judge '{judge}' already voted on pairs with other settings or another prompt; "
            "give this run its own --judge-name to compare the two",
            field="--judge-name",
        )
    judge, version, run_pk = _start(study, config, "pairs")
    return run_pair_judge(
        _PairRequests(study, pairs, done),
        study.rubric,
        config,
        PairStudySink(study, run_pk, judge, version),
        task=task,
    )


def record_offline_run(
    study: Study,
    *,
    judge: str,
    model: str,
    prompt_sha256: str,
    settings: dict[str, Any],
    scores: list[tuple[str, dict[str, Any], str, dict[str, float]]],
) -> str:
    """Store a judge run made elsewhere (the demo's simulated judge) as one version:
    scores are (item_id, values, reason, confidences). Returns the version."""
    schema = version_schema_text(study.rubric, True)
    version = judge_version(model, prompt_sha256, schema, settings)
    run_pk = judge_store.start_run(
        study.db,
        judge=judge,
        model=model,
        prompt_sha256=prompt_sha256,
        schema=schema,
        base_url=None,
        rubric_version=study.rubric.version,
        version=version,
        settings=settings,
    )
    judge_store.record_scores(
        study.db,
        run_pk,
        judge,
        version,
        [
            (item_id, values, reason, json.dumps({"reason": reason, **values}), conf)
            for item_id, values, reason, conf in scores
        ],
    )
    return version


def judge_study_at(
    study_path: str, config: JudgeConfig, *, task: TaskState | None = None, pairs: bool = False
) -> RunSummary:
    study = Study.open(study_path)
    try:
        if pairs:
            return judge_pairs(study, config, task=task)
        return judge_study(study, config, task=task)
    finally:
        study.close()


def judge_pairs_of(study: Study) -> list[tuple[str, str, str]]:
    """(pair_id, item a, item b) of the study's pairs of live items."""
    return judge_store.pairs_to_judge(study.db)


def record_offline_pair_votes(
    study: Study, judge: str, votes: list[tuple[str, str, str, str]]
) -> None:
    """Store pair votes a judge cast elsewhere (the demo's): (pair_id, left, right, choice)."""
    judge_store.record_pair_votes(study.db, judge, [(*v, None) for v in votes])


# ---- judge compare ----------------------------------------------------------------------


def _resolve_ref(frames: Any, ref: str) -> tuple[str, str]:
    """(judge, version) of `name` (its latest version) or `name@version` (a prefix will do)."""
    from ..judge.versions import parse_judge_ref
    from ..stats.judge_versions import version_list

    name, version = parse_judge_ref(ref)
    known = sorted(frames.judge_score_versions["judge"].astype(str).unique())
    if name not in known:
        raise InputError(
            f"the study has no judge '{name}'; its judges: {', '.join(known) or 'none'}",
            field="judge",
        )
    versions = [v["version"] for v in version_list(frames, name)]
    if version is None:
        return name, versions[-1]
    # a version given whole is that version ("import" beside "import-2"); else a unique prefix
    hits = [version] if version in versions else [v for v in versions if v.startswith(version)]
    if len(hits) != 1:
        what = "matches no" if not hits else "matches more than one"
        raise InputError(
            f"'{ref}' {what} version of judge '{name}'; its versions: {', '.join(versions)}",
            field="judge",
        )
    return name, hits[0]


def compare_judges(
    study_path: str, a: str, b: str, *, n_boot: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """`annotator judge compare`: two judges or two versions of one on the same items, against
    the human consensus (stats/judge_versions.py), resolved to plain dicts."""
    from ..stats.answers import human_answers, item_table
    from ..stats.bootstrap import ItemBootstrap, check_n_boot, jsonable, resolve
    from ..stats.consensus import metric_specs
    from ..stats.judge_versions import compare_versions
    from .reporting import study_frames

    study = Study.open(study_path, mode="read")
    try:
        frames = study_frames(study)
    finally:
        study.close()
    ra, rb = _resolve_ref(frames, a), _resolve_ref(frames, b)
    specs = metric_specs(frames.rubric)
    items = item_table(frames)
    human = human_answers(frames, specs, items)
    plan = ItemBootstrap.for_items(items, check_n_boot(n_boot), seed)
    out = compare_versions(plan, frames, items, specs, human, ra, rb)
    plan.run()
    return jsonable(resolve(out))
