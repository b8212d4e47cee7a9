"""What the judge runner takes and gives: requests, settings, scores, errors, the summary."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..base.task import TaskState
from ..domain.errors import InputError
from ..domain.rubric import Rubric
from ..domain.verdict import VerdictRules

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
TRANSIENT = frozenset({"rate_limited", "server_error", "timeout", "connection"})
LOCAL_API_KEY = "not-needed"  # sent to a --base-url server when OPENAI_API_KEY is unset
CONFIDENCE_SOURCES = ("none", "logprobs", "field")
MAX_MESSAGE = 500
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
    problem: str | None = (
        None  # why the item cannot be sent (a media file missing): recorded as bad_input
    )


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
    # where the judge's probability of each answer comes from (calibration): nowhere, the API's
    # token logprobs of the answer, or a `confidence` object the judge fills in (schema field)
    confidence: Literal["none", "logprobs", "field"] = "none"
    # Trust or Escalate's simulated annotators: each item asked `simulated_annotators` times, each
    # time after `shots` other items a human rater answered (judge/simulated.py); the answer is
    # the majority, the confidence the share of the asked agreeing with it. 0: off
    simulated_annotators: int = 0
    shots: int = 0

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
        if self.simulated_annotators < 0 or self.shots < 0:
            raise InputError(
                "simulated annotators and shots cannot be negative", field="simulated_annotators"
            )
        if self.simulated_annotators and (self.shots < 1 or self.confidence != "none"):
            raise InputError(
                "simulated annotators need at least one example each (--shots K) and are the "
                "confidence themselves: give them without --confidence",
                field="simulated_annotators",
            )
        if self.confidence not in CONFIDENCE_SOURCES:
            raise InputError(
                f"confidence must be one of {', '.join(CONFIDENCE_SOURCES)}, not "
                f"'{self.confidence}'",
                field="confidence",
            )

    def settings(self) -> dict[str, Any]:
        """The settings that change what the judge answers: part of its version (not the URL,
        the key, retries or concurrency, which change only how it is reached)."""
        return {
            "api": self.api,
            "image_detail": self.image_detail,
            "temperature": self.temperature,
            "max_output_tokens": self.max_output_tokens,
            "confidence": self.confidence,
            "simulated_annotators": self.simulated_annotators,
            "shots": self.shots,
        }

    @property
    def name(self) -> str:
        return self.judge_name or self.model


@dataclass(frozen=True)
class FewShot:
    """One worked example a simulated annotator sees before the item: an item a human rater
    answered, as the judge would see it, and that rater's answers (metric key -> typed value)."""

    request: JudgeRequest
    answers: dict[str, Any]


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
    # metric key -> the judge's probability that its answer is right (see JudgeConfig.confidence)
    confidences: dict[str, float] = field(default_factory=dict)


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
    n_cancelled: int = 0  # not finished because the run's task was cancelled; nothing recorded
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


# What one run carries between its calls (internal to the judge package, kept here so that
# runner, pairs and calls share it without importing each other).
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
    state: TaskState  # the caller's: its reports, and its cancel that a back-off waits on
    # the reply text -> a validated reply (raises ReplyError); items and pairs differ here only
    validate: Callable[[str], Any] | None = None
    keys: tuple[str, ...] = ()  # the answer fields whose logprobs are the judge's confidence


@dataclass(frozen=True)
class _Answer:
    reply: Any  # what task.validate returned
    raw: str
    confidences: dict[str, float]
    latency_ms: float
    attempts: int
