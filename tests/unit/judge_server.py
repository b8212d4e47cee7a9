"""A local OpenAI-compatible server for the judge tests.

It speaks POST /v1/responses and POST /v1/chat/completions with the response
bodies the real API returns (Responses: output -> message -> content ->
output_text | refusal; Chat Completions: choices -> message -> content |
refusal), so the tests drive the real `openai` client over real HTTP.

By default it answers every request with a reply that satisfies the JSON schema
sent in the request. Per item (found by a marker string anywhere in the request
body, e.g. "[[item-3]]" in the prompt) a script of actions can be queued; each
call consumes one action, and once the script runs out the default applies.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Ok:
    """A schema-valid reply; `values` overrides fields of the generated one."""

    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Status:
    """An HTTP error with an OpenAI-style error body."""

    code: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Sleep:
    """Sleep (longer than the client's timeout), then send a valid reply nobody reads."""

    seconds: float


@dataclass(frozen=True)
class Raw:
    """Send `text` as the model's output text (malformed JSON, schema-breaking JSON...)."""

    text: str


@dataclass(frozen=True)
class Body:
    """Send these exact bytes as a 200 reply (empty, HTML, garbage, absurdly nested JSON...)."""

    data: bytes
    content_type: str = "application/json"


@dataclass(frozen=True)
class Refuse:
    text: str = "I'm sorry, I can't help with that."


@dataclass
class Call:
    path: str
    marker: str | None
    headers: dict[str, str]
    body: dict[str, Any]
    started: float


def _example(schema: dict[str, Any]) -> Any:
    """A value that satisfies a (strict-subset) JSON schema."""
    if "anyOf" in schema:
        return _example(schema["anyOf"][0])
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: _example(v) for k, v in schema["properties"].items()}
    if kind == "array":
        return []
    if kind == "integer":
        return schema.get("maximum", 0)
    if kind == "number":
        return 0.0
    if kind == "boolean":
        return True
    return "Scripted reason."


_TOKEN = re.compile(r"\s+|[A-Za-z_]+|\d+|.", re.DOTALL)


def _wants_logprobs(body: dict[str, Any]) -> bool:
    return bool(body.get("logprobs")) or "message.output_text.logprobs" in (
        body.get("include") or []
    )


def _request_schema(path: str, body: dict[str, Any]) -> dict[str, Any] | None:
    if path.endswith("/responses"):
        fmt = (body.get("text") or {}).get("format") or {}
        return fmt.get("schema")
    fmt = body.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("schema")


class JudgeServer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scripts: dict[str, list[Any]] = {}
        self.default: Any = Ok()
        self.calls: list[Call] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.ok_delay = 0.0  # seconds every successful reply takes
        # a request that asks for logprobs gets the reply split into tokens, each with the
        # logprob given here for its text (0.0, a sure token, otherwise)
        self.token_logprobs: dict[str, float] = {}
        # the default reply's fields from the request's raw text (a planted judge), or None
        self.decide: Any = None
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- control ----------------------------------------------------------------

    def script(self, marker: str, *actions: Any) -> None:
        with self._lock:
            self._scripts[marker] = list(actions)

    def clear_scripts(self) -> None:
        with self._lock:
            self._scripts = {k: [] for k in self._scripts}
            self.default = Ok()

    def reset_stats(self) -> None:
        with self._lock:
            self.calls = []
            self.max_in_flight = 0

    def calls_for(self, marker: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.marker == marker]

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> JudgeServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                server._handle(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a handler may still be sleeping out a timeout
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- serving ----------------------------------------------------------------

    def _next_action(self, text: str) -> tuple[str | None, Any]:
        with self._lock:
            for marker, actions in self._scripts.items():
                if marker in text:
                    return marker, (actions.pop(0) if actions else self.default)
            return None, self.default

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        started = time.monotonic()
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            length = int(h.headers.get("Content-Length", "0"))
            raw = h.rfile.read(length).decode("utf-8")
            body = json.loads(raw)
            marker, action = self._next_action(raw)
            with self._lock:
                self.calls.append(
                    Call(
                        h.path, marker, {k.lower(): v for k, v in h.headers.items()}, body, started
                    )
                )
            if h.path not in ("/v1/responses", "/v1/chat/completions"):
                self._send(
                    h,
                    404,
                    {
                        "error": {
                            "message": f"no route {h.path}",
                            "type": "invalid_request_error",
                            "param": None,
                            "code": None,
                        }
                    },
                )
                return
            self._serve(h, body, action)
        finally:
            self._done_with(h)

    def _done_with(self, h: BaseHTTPRequestHandler) -> None:
        """The request no longer counts as in flight (once: before its reply is written, since
        a client that has read the reply may send the next request before this thread ends)."""
        with self._lock:
            if not getattr(h, "_counted_out", False):
                h._counted_out = True  # type: ignore[attr-defined]
                self.in_flight -= 1

    def _serve(self, h: BaseHTTPRequestHandler, body: dict[str, Any], action: Any) -> None:
        if isinstance(action, Status):
            err = {
                "message": action.message,
                "type": "server_error" if action.code >= 500 else "requests",
                "param": None,
                "code": None,
            }
            self._send(h, action.code, {"error": err}, action.headers)
            return
        if isinstance(action, Sleep):
            time.sleep(action.seconds)
            action = Ok()
        if isinstance(action, Refuse):
            self._send(h, 200, self._reply(h.path, body, None, action.text))
            return
        if isinstance(action, Body):
            try:
                h.send_response(200)
                h.send_header("Content-Type", action.content_type)
                h.send_header("Content-Length", str(len(action.data)))
                h.end_headers()
                h.wfile.write(action.data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        if isinstance(action, Raw):
            self._send(h, 200, self._reply(h.path, body, action.text, None))
            return
        assert isinstance(action, Ok), action
        if self.ok_delay:
            time.sleep(self.ok_delay)
        schema = _request_schema(h.path, body)
        values = _example(schema) if schema else {}
        if self.decide is not None:
            values.update(self.decide(json.dumps(body)))
        values.update(action.values)
        text = json.dumps(values)
        reply = self._reply(h.path, body, text, None)
        if _wants_logprobs(body):
            tokens = [
                {"token": t, "logprob": self.token_logprobs.get(t, 0.0), "bytes": None}
                for t in _TOKEN.findall(text)
            ]
            if h.path.endswith("/responses"):
                reply["output"][0]["content"][0]["logprobs"] = [
                    {**t, "bytes": list(t["token"].encode()), "top_logprobs": []} for t in tokens
                ]
            else:
                reply["choices"][0]["logprobs"] = {
                    "content": [{**t, "top_logprobs": []} for t in tokens],
                    "refusal": None,
                }
        self._send(h, 200, reply)

    @staticmethod
    def _reply(
        path: str, body: dict[str, Any], text: str | None, refusal: str | None
    ) -> dict[str, Any]:
        now = int(time.time())
        usage_r = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        if path.endswith("/responses"):
            part = (
                {"type": "refusal", "refusal": refusal}
                if refusal is not None
                else {"type": "output_text", "text": text, "annotations": []}
            )
            return {
                "id": f"resp_{now}",
                "object": "response",
                "created_at": now,
                "status": "completed",
                "error": None,
                "incomplete_details": None,
                "model": body.get("model"),
                "output": [
                    {
                        "type": "message",
                        "id": f"msg_{now}",
                        "status": "completed",
                        "role": "assistant",
                        "content": [part],
                    }
                ],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "usage": usage_r,
            }
        message = {"role": "assistant", "content": text, "refusal": refusal}
        return {
            "id": f"chatcmpl-{now}",
            "object": "chat.completion",
            "created": now,
            "model": body.get("model"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        code: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            h.send_response(code)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            self._done_with(h)
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): exactly what a slow server sees
