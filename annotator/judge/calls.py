"""One call to the API and what can come back: the Responses API or Chat Completions
through the real `openai` client, a 200 body that is not a response, the error
kinds of a failed call, backoff, and the client itself (the SDK's retries off)."""

from __future__ import annotations

import os
import random
from typing import TYPE_CHECKING, Any, cast

import openai

from ..domain.errors import InputError
from .prompt import chat_messages, responses_input
from .records import LOCAL_API_KEY, MAX_MESSAGE, MAX_RAW, JudgeConfig

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.responses import ResponseInputParam

    from .records import _Task


class RunAborted(Exception):
    """The run cannot go on (bad key, unknown model or URL)."""


class ServerFailed(Exception):
    """A 200 reply that carries a failure instead of an answer; treated like a 5xx."""


class BadBody(Exception):
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
    """The SDK object of a raw HTTP reply, or BadBody carrying the body text."""
    try:
        text = raw_response.text
    except Exception:  # undecodable bytes
        text = repr(raw_response.content[:MAX_RAW])
    try:
        return raw_response.parse()
    except RecursionError:
        raise BadBody("the reply body is JSON nested too deep to read", text) from None
    except Exception as exc:
        what = (
            "empty"
            if not text.strip()
            else ("HTML" if text.lstrip()[:1] == "<" else "not an API response")
        )
        raise BadBody(short(f"the reply body is {what} ({type(exc).__name__})"), text) from None


def short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def retry_after(exc: BaseException) -> float | None:
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


def classify(exc: openai.APIError, config: JudgeConfig) -> tuple[str, str]:
    """(error kind, one-line message) for an API exception; raises RunAborted when nothing can work."""
    if isinstance(exc, openai.APITimeoutError):
        return "timeout", f"no reply within {config.timeout:g} s"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return "connection", short(f"cannot reach the server ({cause})")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        msg = short(f"HTTP {status}: {exc.message}")
        if status == 429:
            return "rate_limited", msg
        if status >= 500 or status == 409:
            return "server_error", msg
        if status == 408:
            return "timeout", msg
        if status in (401, 403):
            raise RunAborted(f"the server refused the API key ({msg}); check OPENAI_API_KEY")
        if status == 404:
            hint = (
                "; for a server that speaks only Chat Completions use --api chat"
                if config.api == "responses"
                else ""
            )
            raise RunAborted(f"unknown model '{config.model}' or endpoint ({msg}){hint}")
        return "bad_request", msg
    return "server_error", short(str(exc))


Reply = tuple[str, str | None, list[tuple[str, float]] | None]


def _tokens(items: Any) -> list[tuple[str, float]] | None:
    """(token, logprob) of every token, or None (no confidence) when any token lacks a numeric
    logprob: a missing one must not read as certainty."""
    if not items:
        return None
    out = []
    for t in items:
        lp = getattr(t, "logprob", None)
        if not isinstance(lp, int | float) or isinstance(lp, bool):
            return None
        out.append((str(getattr(t, "token", "")), float(lp)))
    return out


def call_responses(client: openai.OpenAI, task: _Task, parts: list) -> Reply:
    """(reply text, refusal text or None, token logprobs or None) from the Responses API."""
    cfg = task.config
    extra: dict[str, Any] = {}
    if cfg.confidence == "logprobs":
        extra["include"] = ["message.output_text.logprobs"]
    if cfg.temperature is not None:
        extra["temperature"] = cfg.temperature
    if cfg.max_output_tokens is not None:
        extra["max_output_tokens"] = cfg.max_output_tokens
    if cfg.base_url is None:
        extra["store"] = False  # OpenAI would otherwise keep the study's material for 30 days
    resp = _parsed(
        client.responses.with_raw_response.create(
            model=cfg.model,
            # prompt.py builds the wire JSON as plain dicts; they are the SDK's TypedDicts' shape
            input=cast("ResponseInputParam", responses_input(task.system, parts, cfg.image_detail)),
            text={
                "format": {
                    "type": "json_schema",
                    "name": task.schema_name,
                    "schema": task.schema,
                    "strict": True,
                }
            },
            **extra,
        )
    )
    if not hasattr(resp, "output"):
        raise BadBody("the reply body is not a Responses API response", str(resp)[:MAX_RAW])
    error = getattr(resp, "error", None)
    if error is not None or getattr(resp, "status", None) == "failed":
        raise ServerFailed(short(f"the response failed: {getattr(error, 'message', error)}"))
    texts: list[str] = []
    refusals: list[str] = []
    tokens: list[tuple[str, float]] = []
    for out in getattr(resp, "output", None) or []:
        if getattr(out, "type", None) != "message":
            continue  # reasoning summaries and the like
        for c in getattr(out, "content", None) or []:
            ctype = getattr(c, "type", None)
            if ctype == "output_text":
                texts.append(c.text or "")
                tokens.extend(_tokens(getattr(c, "logprobs", None)) or [])
            elif ctype == "refusal":
                refusals.append(c.refusal or "")
    if refusals:
        return "".join(texts), "\n".join(refusals), None
    details = getattr(resp, "incomplete_details", None)
    if getattr(details, "reason", None) == "content_filter":
        return "".join(texts), "the reply was stopped by the content filter", None
    return "".join(texts), None, tokens or None


def call_chat(client: openai.OpenAI, task: _Task, parts: list) -> Reply:
    """(reply text, refusal text or None, token logprobs or None) from Chat Completions."""
    cfg = task.config
    extra: dict[str, Any] = {}
    if cfg.confidence == "logprobs":
        extra["logprobs"] = True
    if cfg.temperature is not None:
        extra["temperature"] = cfg.temperature
    if cfg.max_output_tokens is not None:
        extra["max_completion_tokens"] = cfg.max_output_tokens
    resp = _parsed(
        client.chat.completions.with_raw_response.create(
            model=cfg.model,
            messages=cast(
                "list[ChatCompletionMessageParam]",
                chat_messages(task.system, parts, cfg.image_detail),
            ),
            response_format={
                "type": "json_schema",
                "json_schema": {"name": task.schema_name, "schema": task.schema, "strict": True},
            },
            **extra,
        )
    )
    if not hasattr(resp, "choices"):
        raise BadBody("the reply body is not a Chat Completions response", str(resp)[:MAX_RAW])
    choices = getattr(resp, "choices", None) or []
    if not choices:
        raise ServerFailed("the completion has no choices")
    message = choices[0].message
    text = getattr(message, "content", None) or ""
    refusal = getattr(message, "refusal", None)
    if refusal:
        return text, refusal, None
    if getattr(choices[0], "finish_reason", None) == "content_filter":
        return text, "the reply was stopped by the content filter", None
    logprobs = getattr(choices[0], "logprobs", None)
    return text, None, _tokens(getattr(logprobs, "content", None))


def backoff(config: JudgeConfig, retry: int, server_hint: float | None) -> float:
    # "equal jitter": half the exponential step fixed, half random, so retries of
    # items that failed together spread out but never fire immediately
    step = min(config.backoff_max, config.backoff_base * 2 ** (retry - 1))
    delay = step / 2 + random.uniform(0, step / 2)
    if server_hint is not None:
        delay = max(delay, min(server_hint, config.backoff_max))
    return delay


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
