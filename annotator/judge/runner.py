"""Run an LLM judge over items: bounded concurrency, counted retries, resumable.

Threads call the API; the thread that called `run_judge` does everything else
(the task's reports and every sink call), so a sink backed by a database
session needs no locking. A cancel of the task stops submitting, cuts a back-off short and
leaves what was not judged for the next run.

Retry policy (each retry is counted in `attempts`):
- 429, 5xx, 408/409, timeouts and connection errors are retried up to
  `max_retries` times with exponential backoff and jitter (at least the
  server's Retry-After);
- a reply that is not valid JSON or breaks the schema is retried
  `retry_malformed` times (default once) at once: sampling is not
  deterministic, so a second draw often conforms, while repeated failure
  means the server ignores the schema and retrying further only costs money;
- a refusal is not retried (the same material draws the same refusal);
- 400/413/422 are not retried (the request itself is at fault);
- 401, 403 and 404 stop the whole run with an InputError: the key, the model
  or the URL is wrong, and every other item would fail the same way.
A failure is recorded as a JudgeError with the raw reply, never as a score;
a second run picks up exactly the items without a score.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sized
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

import openai

from ..base.task import Cancelled, TaskState
from ..domain.errors import InputError
from ..domain.rubric import Rubric
from ..domain.verdict import compile_rules
from .calls import (
    BadBody,
    RunAborted,
    ServerFailed,
    backoff,
    bounded,
    call_chat,
    call_responses,
    classify,
    make_client,
    retry_after,
    short,
)
from .logprobs import answer_probabilities
from .prompt import prompt_hash, system_prompt, user_parts
from .records import (
    ERROR_KINDS,
    TRANSIENT,
    JudgeConfig,
    JudgeError,
    JudgeRequest,
    JudgeScore,
    JudgeSink,
    RunSummary,
    _Answer,
    _Cancelled,
    _Task,
)
from .schema import (
    ReplyError,
    judge_schema,
    schema_json,
    schema_metrics,
    schema_name,
    validate_reply,
)

__all__ = [
    "ERROR_KINDS",
    "JudgeConfig",
    "JudgeError",
    "JudgeRequest",
    "JudgeScore",
    "JudgeSink",
    "RunSummary",
    "make_client",
    "run_judge",
]

log = logging.getLogger(__name__)


def _judge_one(
    client: openai.OpenAI, task: _Task, request: JudgeRequest
) -> JudgeScore | JudgeError | _Cancelled:
    """Never raises but RunAborted: whatever one item's reply does, it ends as a score or a recorded error."""
    got = answer_or_error(
        client, task, request.item_id, request.problem, lambda: user_parts(request)
    )
    if not isinstance(got, _Answer):
        return got
    cfg = task.config
    reply = got.reply
    return JudgeScore(
        item_id=request.item_id,
        judge=cfg.name,
        model=cfg.model,
        values=reply.values,
        verdict=reply.verdict,
        reason=reply.reason,
        raw=got.raw,
        prompt_hash=task.prompt_hash,
        schema=task.schema_text,
        latency_ms=round(got.latency_ms, 3),
        attempts=got.attempts,
        rule_verdict=task.rules.evaluate(reply.values),
        confidences=got.confidences,
    )


def answer_or_error(
    client: openai.OpenAI,
    task: _Task,
    key: str,
    problem: str | None,
    parts: Callable[[], list],
) -> _Answer | JudgeError | _Cancelled:
    """One question about what `key` names (an item, a pair in one order), every failure ending
    as a recorded error: a known problem of the input or a part that cannot be read is
    `bad_input` (nothing sent), an SDK or reply shape nobody foresaw is `bad_reply` (this one
    fails, the run goes on). Only RunAborted escapes."""
    cfg = task.config

    def error(kind: str, message: str, attempts: int) -> JudgeError:
        return JudgeError(key, cfg.name, cfg.model, kind, message, None, attempts)

    if problem:
        return error("bad_input", problem, 0)
    try:
        try:
            shown = parts()
        except InputError as exc:
            return error("bad_input", exc.one_line(), 0)
        return ask(client, task, shown, key)
    except RunAborted:
        raise
    except Exception as exc:
        return error("bad_reply", short(f"unexpected {type(exc).__name__}: {exc}"), 1)


def ask(
    client: openai.OpenAI, task: _Task, parts: list, key: str
) -> _Answer | JudgeError | _Cancelled:
    """One question to the judge with the retry policy of this module; `key` names what is
    judged (an item id, a pair) in errors and logs."""
    cfg = task.config

    def error(kind: str, message: str, raw: str | None, attempts: int) -> JudgeError:
        return JudgeError(key, cfg.name, cfg.model, kind, message, bounded(raw), attempts)

    call = call_responses if cfg.api == "responses" else call_chat
    attempts = transient_retries = malformed_retries = 0
    while True:
        attempts += 1
        t0 = time.perf_counter()
        try:
            raw, refusal, tokens = call(client, task, parts)
        except BadBody as exc:
            if malformed_retries < cfg.retry_malformed and not task.state.cancelled:
                malformed_retries += 1
                continue
            return error("bad_reply", str(exc), exc.raw, attempts)
        except (openai.APIError, ServerFailed) as exc:
            if isinstance(exc, ServerFailed):
                kind, message = "server_error", str(exc)
            else:
                kind, message = classify(exc, cfg)
            if kind in TRANSIENT and transient_retries < cfg.max_retries:
                transient_retries += 1
                delay = backoff(cfg, transient_retries, retry_after(exc))
                log.info(
                    "judge %s: %s attempt %d: %s; retrying in %.2f s",
                    cfg.name,
                    key,
                    attempts,
                    kind,
                    delay,
                )
                if task.state.event.wait(delay):
                    return _Cancelled(attempts)
                continue
            body = getattr(exc, "body", None)
            raw_body = None if body is None else json.dumps(body, ensure_ascii=False, default=str)
            return error(kind, message, raw_body, attempts)
        latency_ms = (time.perf_counter() - t0) * 1000.0
        if refusal is not None:
            return error("refusal", short(f"the judge refused: {refusal}"), refusal, attempts)
        try:
            assert task.validate is not None
            reply = task.validate(raw)
        except ReplyError as exc:
            if malformed_retries < cfg.retry_malformed and not task.state.cancelled:
                malformed_retries += 1
                log.info(
                    "judge %s: %s attempt %d: %s (%s); asking again",
                    cfg.name,
                    key,
                    attempts,
                    exc.kind,
                    exc.message,
                )
                continue
            return error(exc.kind, short(exc.message), raw, attempts)
        if cfg.confidence == "logprobs":
            confidences = answer_probabilities(raw, tokens, task.keys)
        else:
            confidences = dict(getattr(reply, "confidences", None) or {})
        return _Answer(reply, raw, confidences, latency_ms, attempts)


# ---- the run -------------------------------------------------------------------


def item_task(rubric: Rubric, config: JudgeConfig, state: TaskState | None = None) -> _Task:
    """What every call of an item run shares; InputError if a metric shadows a reply field."""
    field = config.confidence == "field"
    schema = judge_schema(rubric, field)
    return _Task(
        config=config,
        rubric=rubric,
        rules=compile_rules(rubric),
        system=system_prompt(rubric, field),
        schema=schema,
        schema_text=schema_json(rubric, field),
        schema_name=schema_name(rubric),
        prompt_hash=prompt_hash(rubric, field),
        state=state or TaskState(),
        validate=lambda raw: validate_reply(rubric, raw, field),
        keys=tuple(m.key for m in schema_metrics(rubric)),
    )


def run_judge(
    requests: Iterable[JudgeRequest],
    rubric: Rubric,
    config: JudgeConfig,
    sink: JudgeSink,
    *,
    task: TaskState | None = None,
) -> RunSummary:
    """Judge every request whose item the sink has no score for; record each outcome.

    `requests` may be a lazy sequence (with len()) so that only the items in
    flight hold their images; any other iterable is read into a list first.
    Raises InputError before any call when the key or config is unusable, and
    after the in-flight items are recorded when the server refuses the key,
    the model or the URL.
    """
    return drive(
        requests,
        item_task(rubric, config, task),
        _judge_one,
        key=lambda r: r.item_id,
        done=set(sink.done_item_ids()),
        record_score=sink.record_score,
        record_error=sink.record_error,
    )


def drive(
    requests: Iterable[Any],
    task: _Task,
    judge_one: Callable[[openai.OpenAI, _Task, Any], Any],
    *,
    key: Callable[[Any], str],
    done: set[str],
    record_score: Callable[[Any], None],
    record_error: Callable[[JudgeError], None],
) -> RunSummary:
    """Run `judge_one` over the requests not `done` with bounded concurrency; every outcome is
    recorded from this thread, and counted to the task ("judged done/total")."""
    config = task.config
    if not isinstance(requests, Sized):
        requests = list(requests)
    total = len(requests)
    client = make_client(config)

    seen: set[str] = set()
    counts: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    abort: str | None = None

    def report() -> None:
        try:
            task.state.count(
                counts["skipped"] + counts["scored"] + counts["failed"], total, "judged"
            )
        except Cancelled:
            pass  # fill() submits nothing more; what is in flight is still recorded

    def pending() -> Iterator[Any]:
        for req in requests:
            # a request listed twice is judged once
            k = key(req)
            if k in done or k in seen:
                counts["skipped"] += 1
                continue
            seen.add(k)
            yield req

    todo = pending()
    in_flight: dict[Future, Any] = {}
    try:
        with ThreadPoolExecutor(config.concurrency, thread_name_prefix="judge") as pool:

            def fill() -> None:
                # submit lazily so at most `concurrency` requests hold their images
                while len(in_flight) < config.concurrency and abort is None:
                    if task.state.cancelled:
                        return
                    req = next(todo, None)
                    if req is None:
                        return
                    in_flight[pool.submit(judge_one, client, task, req)] = req

            fill()
            report()
            while in_flight:
                finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for fut in finished:
                    in_flight.pop(fut)
                    try:
                        outcome = fut.result()
                    except RunAborted as exc:
                        # the others in flight finish on their own (they hit the same refusal)
                        abort = abort or str(exc)
                        counts["cancelled"] += 1
                        continue
                    if isinstance(outcome, JudgeError):
                        record_error(outcome)
                        counts["failed"] += 1
                        counts["attempts"] += outcome.attempts
                        errors[outcome.kind] += 1
                    elif isinstance(outcome, _Cancelled):
                        counts["cancelled"] += 1
                        counts["attempts"] += outcome.attempts
                    else:
                        record_score(outcome)
                        counts["scored"] += 1
                        counts["attempts"] += outcome.attempts
                report()  # before fill(), so a report that cancels stops the next item
                fill()
    finally:
        client.close()
    for _ in todo:  # never submitted: cancelled, or (if already done) skipped
        counts["cancelled"] += 1
    if abort is not None:
        raise InputError(abort)
    return RunSummary(
        n_total=total,
        n_skipped=counts["skipped"],
        n_scored=counts["scored"],
        n_failed=counts["failed"],
        errors_by_kind=dict(errors),
        n_cancelled=counts["cancelled"],
        n_attempts=counts["attempts"],
    )
