"""Run an LLM judge over items: bounded concurrency, counted retries, resumable.

Threads call the API; the thread that called `run_judge` does everything else
(progress callbacks and every sink call), so a sink backed by a database
session needs no locking.

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
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sized
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import openai

from ..domain.errors import InputError
from ..domain.rubric import Rubric
from ..domain.verdict import VerdictRules, compile_rules
from .prompt import chat_messages, prompt_hash, responses_input, system_prompt, user_parts
from .schema import ReplyError, judge_schema, schema_json, schema_name, validate_reply

log = logging.getLogger(__name__)

ERROR_KINDS = (
    "rate_limited",
    "server_error",
    "timeout",
    "connection",
    "malformed_json",
    "schema_violation",
    "refusal",
    "bad_request",  # the server rejected this item's request (400/413/422)
    "bad_input",  # an image of the item could not be read; nothing was sent
    "bad_reply",  # a 200 whose body is not an API response (empty, HTML, garbage, absurdly nested)
)
_TRANSIENT = frozenset({"rate_limited", "server_error", "timeout", "connection"})
LOCAL_API_KEY = "not-needed"  # sent to a --base-url server when OPENAI_API_KEY is unset
_MAX_MESSAGE = 500
MAX_RAW = 64 * 1024  # characters of a raw reply kept with an error: enough to see what came back


@dataclass(frozen=True)
class JudgeRequest:
    """One item as the judge sees it: the case and the output, nothing that names the generator."""

    item_id: str
    prompt: str
    criteria: str = ""
    output_images: list[bytes] = field(default_factory=list, repr=False)  # PNG bytes
    input_images: list[bytes] = field(default_factory=list, repr=False)  # edit inputs
    mask: bytes | None = field(default=None, repr=False)
    text: str | None = None  # a text output
    problem: str | None = None  # why the item cannot be sent (a media file missing): recorded as bad_input


@dataclass(frozen=True)
class JudgeConfig:
    model: str
    base_url: str | None = None
    api: Literal["responses", "chat"] = "responses"
    concurrency: int = 4
    max_retries: int = 4  # retries of 429/5xx/timeouts/connection errors per item
    timeout: float = 60.0  # seconds per request
    backoff_base: float = 0.5  # seconds before the first retry (then doubling, with jitter)
    backoff_max: float = 30.0
    retry_malformed: int = 1  # retries of a malformed or schema-breaking reply per item
    judge_name: str | None = None  # name the scores are stored under; defaults to model
    image_detail: Literal["low", "high", "auto"] = "high"
    temperature: float | None = None  # sent only when set (reasoning models reject it)
    max_output_tokens: int | None = None

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise InputError("the judge model name is empty", field="model")
        if self.api not in ("responses", "chat"):
            raise InputError(f"api must be 'responses' or 'chat', not '{self.api}'", field="api")
        if self.concurrency < 1:
            raise InputError("concurrency must be at least 1", field="concurrency")
        if self.max_retries < 0 or self.retry_malformed < 0:
            raise InputError("retry counts cannot be negative", field="max_retries")
        if self.timeout <= 0:
            raise InputError("timeout must be positive", field="timeout")

    @property
    def name(self) -> str:
        return self.judge_name or self.model


@dataclass(frozen=True)
class JudgeScore:
    item_id: str
    judge: str
    model: str
    values: dict[str, Any]  # metric key -> value typed as domain.rubric.parse_value
    verdict: str  # the judge's own verdict, PASS or FAIL
    reason: str
    raw: str  # the reply text exactly as received
    prompt_hash: str  # sha256 of system prompt + schema: what fixed the judge's task
    schema: str  # the JSON schema (canonical JSON text)
    latency_ms: float  # of the call that produced this reply
    attempts: int  # API calls made for this item, retries included
    rule_verdict: str | None = None  # the rubric's rules applied to `values` (None: undetermined)


@dataclass(frozen=True)
class JudgeError:
    item_id: str
    judge: str
    model: str
    kind: str  # one of ERROR_KINDS
    message: str
    raw: str | None  # the reply text, when there was one
    attempts: int


@dataclass(frozen=True)
class RunSummary:
    n_total: int
    n_skipped: int  # already scored before this run
    n_scored: int
    n_failed: int  # recorded as JudgeError
    errors_by_kind: dict[str, int]
    n_cancelled: int = 0  # not finished because `cancel` was set; nothing recorded
    n_attempts: int = 0  # API calls made in this run

    @property
    def n_unscored(self) -> int:
        """Items still without a score; the CLI exits 3 when this is not 0."""
        return self.n_failed + self.n_cancelled


class JudgeSink(Protocol):
    """Where results go. Called only from the thread that called run_judge."""

    def done_item_ids(self) -> set[str]:
        """Items that already have a score from this judge (an error does not count)."""
        ...

    def record_score(self, score: JudgeScore) -> None: ...

    def record_error(self, error: JudgeError) -> None: ...


ProgressFn = Callable[[int, int], None]


# ---- one item -------------------------------------------------------------------


class _Abort(Exception):
    """The run cannot go on (bad key, unknown model or URL)."""


class _ServerFailed(Exception):
    """A 200 reply that carries a failure instead of an answer; treated like a 5xx."""


@dataclass(frozen=True)
class _Cancelled:
    attempts: int


@dataclass(frozen=True)
class _Task:
    config: JudgeConfig
    rubric: Rubric
    rules: VerdictRules
    system: str
    schema: dict[str, Any]
    schema_text: str
    schema_name: str
    prompt_hash: str
    cancel: threading.Event


class _BadBody(Exception):
    """A 200 reply whose body is not a response of the API; `raw` is what came back."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


def bounded(text: str | None) -> str | None:
    """A raw reply as stored: at most MAX_RAW characters, marked when cut."""
    if text is None or len(text) <= MAX_RAW:
        return text
    return text[:MAX_RAW] + f"\n[... {len(text) - MAX_RAW} more characters not kept]"


def _parsed(raw_response: Any) -> Any:
    """The SDK object of a raw HTTP reply, or _BadBody carrying the body text."""
    try:
        text = raw_response.text
    except Exception:  # undecodable bytes
        text = repr(raw_response.content[:MAX_RAW])
    try:
        return raw_response.parse()
    except RecursionError:
        raise _BadBody("the reply body is JSON nested too deep to read", text) from None
    except Exception as exc:
        what = "empty" if not text.strip() else ("HTML" if text.lstrip()[:1] == "<" else "not an API response")
        raise _BadBody(_short(f"the reply body is {what} ({type(exc).__name__})"), text) from None


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return float(value) / scale
            except ValueError:
                return None  # an HTTP date; fall back to our own backoff
    return None


def _classify(exc: openai.APIError, config: JudgeConfig) -> tuple[str, str]:
    """(error kind, one-line message) for an API exception; raises _Abort when nothing can work."""
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", f"no reply within {config.timeout:g} s"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return "connection", _short(f"cannot reach the server ({cause})")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        msg = _short(f"HTTP {status}: {exc.message}")
        if status == 429:
            return "rate_limited", msg
        if status >= 500 or status == 409:
            return "server_error", msg
        if status == 408:
            return "timeout", msg
        if status in (401, 403):
            raise _Abort(f"the server refused the API key ({msg}); check OPENAI_API_KEY")
        if status == 404:
            hint = (
                "; for a server that speaks only Chat Completions use --api chat"
                if config.api == "responses"
                else ""
            )
            raise _Abort(f"unknown model '{config.model}' or endpoint ({msg}){hint}")
        return "bad_request", msg
    return "server_error", _short(str(exc))


def _call_responses(client: openai.OpenAI, task: _Task, parts: list) -> tuple[str, str | None]:
    """(reply text, refusal text or None) from the Responses API."""
    cfg = task.config
    extra: dict[str, Any] = {}
    if cfg.temperature is not None:
        extra["temperature"] = cfg.temperature
    if cfg.max_output_tokens is not None:
        extra["max_output_tokens"] = cfg.max_output_tokens
    if cfg.base_url is None:
        extra["store"] = False  # OpenAI would otherwise keep the study's material for 30 days
    resp = _parsed(client.responses.with_raw_response.create(
        model=cfg.model,
        input=responses_input(task.system, parts, cfg.image_detail),
        text={
            "format": {
                "type": "json_schema",
                "name": task.schema_name,
                "schema": task.schema,
                "strict": True,
            }
        },
        **extra,
    ))
    if not hasattr(resp, "output"):
        raise _BadBody("the reply body is not a Responses API response", str(resp)[:MAX_RAW])
    error = getattr(resp, "error", None)
    if error is not None or getattr(resp, "status", None) == "failed":
        raise _ServerFailed(_short(f"the response failed: {getattr(error, 'message', error)}"))
    texts: list[str] = []
    refusals: list[str] = []
    for out in getattr(resp, "output", None) or []:
        if getattr(out, "type", None) != "message":
            continue  # reasoning summaries and the like
        for c in getattr(out, "content", None) or []:
            ctype = getattr(c, "type", None)
            if ctype == "output_text":
                texts.append(c.text or "")
            elif ctype == "refusal":
                refusals.append(c.refusal or "")
    if refusals:
        return "".join(texts), "\n".join(refusals)
    details = getattr(resp, "incomplete_details", None)
    if getattr(details, "reason", None) == "content_filter":
        return "".join(texts), "the reply was stopped by the content filter"
    return "".join(texts), None


def _call_chat(client: openai.OpenAI, task: _Task, parts: list) -> tuple[str, str | None]:
    """(reply text, refusal text or None) from Chat Completions."""
    cfg = task.config
    extra: dict[str, Any] = {}
    if cfg.temperature is not None:
        extra["temperature"] = cfg.temperature
    if cfg.max_output_tokens is not None:
        extra["max_completion_tokens"] = cfg.max_output_tokens
    resp = _parsed(client.chat.completions.with_raw_response.create(
        model=cfg.model,
        messages=chat_messages(task.system, parts, cfg.image_detail),
        response_format={
            "type": "json_schema",
            "json_schema": {"name": task.schema_name, "schema": task.schema, "strict": True},
        },
        **extra,
    ))
    if not hasattr(resp, "choices"):
        raise _BadBody("the reply body is not a Chat Completions response", str(resp)[:MAX_RAW])
    choices = getattr(resp, "choices", None) or []
    if not choices:
        raise _ServerFailed("the completion has no choices")
    message = choices[0].message
    text = getattr(message, "content", None) or ""
    refusal = getattr(message, "refusal", None)
    if refusal:
        return text, refusal
    if getattr(choices[0], "finish_reason", None) == "content_filter":
        return text, "the reply was stopped by the content filter"
    return text, None


def _backoff(config: JudgeConfig, retry: int, server_hint: float | None) -> float:
    # "equal jitter": half the exponential step fixed, half random, so retries of
    # items that failed together spread out but never fire immediately
    step = min(config.backoff_max, config.backoff_base * 2 ** (retry - 1))
    delay = step / 2 + random.uniform(0, step / 2)
    if server_hint is not None:
        delay = max(delay, min(server_hint, config.backoff_max))
    return delay


def _judge_one(
    client: openai.OpenAI, task: _Task, request: JudgeRequest
) -> JudgeScore | JudgeError | _Cancelled:
    """Never raises but _Abort: whatever one item's reply does, it ends as a score or a recorded error."""
    try:
        return _judge_one_unguarded(client, task, request)
    except _Abort:
        raise
    except Exception as exc:  # an SDK or reply shape nobody foresaw: this item fails, the run goes on
        cfg = task.config
        return JudgeError(request.item_id, cfg.name, cfg.model, "bad_reply",
                          _short(f"unexpected {type(exc).__name__}: {exc}"), None, 1)


def _judge_one_unguarded(
    client: openai.OpenAI, task: _Task, request: JudgeRequest
) -> JudgeScore | JudgeError | _Cancelled:
    cfg = task.config

    def error(kind: str, message: str, raw: str | None, attempts: int) -> JudgeError:
        return JudgeError(request.item_id, cfg.name, cfg.model, kind, message, bounded(raw), attempts)

    if request.problem:
        return error("bad_input", request.problem, None, 0)
    try:
        parts = user_parts(request)
    except InputError as exc:
        return error("bad_input", exc.one_line(), None, 0)
    call = _call_responses if cfg.api == "responses" else _call_chat
    attempts = transient_retries = malformed_retries = 0
    while True:
        attempts += 1
        t0 = time.perf_counter()
        try:
            raw, refusal = call(client, task, parts)
        except _BadBody as exc:
            if malformed_retries < cfg.retry_malformed and not task.cancel.is_set():
                malformed_retries += 1
                continue
            return error("bad_reply", str(exc), exc.raw, attempts)
        except (openai.APIError, _ServerFailed) as exc:
            if isinstance(exc, _ServerFailed):
                kind, message = "server_error", str(exc)
            else:
                kind, message = _classify(exc, cfg)
            if kind in _TRANSIENT and transient_retries < cfg.max_retries:
                transient_retries += 1
                delay = _backoff(cfg, transient_retries, _retry_after(exc))
                log.info(
                    "judge %s: item %s attempt %d: %s; retrying in %.2f s",
                    cfg.name, request.item_id, attempts, kind, delay,
                )
                if task.cancel.wait(delay):
                    return _Cancelled(attempts)
                continue
            body = getattr(exc, "body", None)
            raw_body = None if body is None else json.dumps(body, ensure_ascii=False, default=str)
            return error(kind, message, raw_body, attempts)
        latency_ms = (time.perf_counter() - t0) * 1000.0
        if refusal is not None:
            return error("refusal", _short(f"the judge refused: {refusal}"), refusal, attempts)
        try:
            reply = validate_reply(task.rubric, raw)
        except ReplyError as exc:
            if malformed_retries < cfg.retry_malformed and not task.cancel.is_set():
                malformed_retries += 1
                log.info(
                    "judge %s: item %s attempt %d: %s (%s); asking again",
                    cfg.name, request.item_id, attempts, exc.kind, exc.message,
                )
                continue
            return error(exc.kind, _short(exc.message), raw, attempts)
        return JudgeScore(
            item_id=request.item_id,
            judge=cfg.name,
            model=cfg.model,
            values=reply.values,
            verdict=reply.verdict,
            reason=reply.reason,
            raw=raw,
            prompt_hash=task.prompt_hash,
            schema=task.schema_text,
            latency_ms=round(latency_ms, 3),
            attempts=attempts,
            rule_verdict=task.rules.evaluate(reply.values),
        )


# ---- the run -------------------------------------------------------------------


def make_client(config: JudgeConfig) -> openai.OpenAI:
    """An OpenAI client with the SDK's own retries off (ours are counted).

    The key comes from OPENAI_API_KEY only and stays inside the client.
    """
    key = os.environ.get("OPENAI_API_KEY")
    if not key:
        if config.base_url is None:
            raise InputError(
                "OPENAI_API_KEY is not set; export it, or give --base-url for a local server"
            )
        key = LOCAL_API_KEY
    return openai.OpenAI(
        api_key=key, base_url=config.base_url, max_retries=0, timeout=config.timeout
    )


def run_judge(
    requests: Iterable[JudgeRequest],
    rubric: Rubric,
    config: JudgeConfig,
    sink: JudgeSink,
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> RunSummary:
    """Judge every request whose item the sink has no score for; record each outcome.

    `requests` may be a lazy sequence (with len()) so that only the items in
    flight hold their images; any other iterable is read into a list first.
    Raises InputError before any call when the key or config is unusable, and
    after the in-flight items are recorded when the server refuses the key,
    the model or the URL.
    """
    schema = judge_schema(rubric)  # InputError if a metric shadows verdict/reason
    system = system_prompt(rubric)
    task = _Task(
        config=config,
        rubric=rubric,
        rules=compile_rules(rubric),
        system=system,
        schema=schema,
        schema_text=schema_json(rubric),
        schema_name=schema_name(rubric),
        prompt_hash=prompt_hash(rubric),
        cancel=cancel if cancel is not None else threading.Event(),
    )
    if not isinstance(requests, Sized):
        requests = list(requests)
    total = len(requests)
    done_before = set(sink.done_item_ids())
    client = make_client(config)

    seen: set[str] = set()
    counts: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    abort: str | None = None

    def report() -> None:
        if progress is not None:
            progress(counts["skipped"] + counts["scored"] + counts["failed"], total)

    def pending() -> Iterator[JudgeRequest]:
        for req in requests:
            # an item listed twice is judged once
            if req.item_id in done_before or req.item_id in seen:
                counts["skipped"] += 1
                continue
            seen.add(req.item_id)
            yield req

    todo = pending()
    in_flight: dict[Future, JudgeRequest] = {}
    try:
        with ThreadPoolExecutor(config.concurrency, thread_name_prefix="judge") as pool:

            def fill() -> None:
                # submit lazily so at most `concurrency` items hold their images
                while len(in_flight) < config.concurrency and abort is None:
                    if task.cancel.is_set():
                        return
                    req = next(todo, None)
                    if req is None:
                        return
                    in_flight[pool.submit(_judge_one, client, task, req)] = req

            fill()
            report()
            while in_flight:
                finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
                for fut in finished:
                    in_flight.pop(fut)
                    try:
                        outcome = fut.result()
                    except _Abort as exc:
                        # the others in flight finish on their own (they hit the same refusal)
                        abort = abort or str(exc)
                        counts["cancelled"] += 1
                        continue
                    if isinstance(outcome, JudgeScore):
                        sink.record_score(outcome)
                        counts["scored"] += 1
                        counts["attempts"] += outcome.attempts
                    elif isinstance(outcome, JudgeError):
                        sink.record_error(outcome)
                        counts["failed"] += 1
                        counts["attempts"] += outcome.attempts
                        errors[outcome.kind] += 1
                    else:
                        counts["cancelled"] += 1
                        counts["attempts"] += outcome.attempts
                report()  # before fill(), so a progress callback that cancels stops the next item
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
