"""The judge runner against a real local HTTP server, through the real `openai` client."""

from __future__ import annotations

import base64
import io
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, PngImagePlugin

from annotator.base.task import TaskState
from annotator.domain.errors import InputError
from annotator.domain.rubric import CANNOT_JUDGE
from annotator.ingest.rubrics import load_rubric
from annotator.judge import (
    JudgeConfig,
    JudgeError,
    JudgeRequest,
    JudgeScore,
    ReplyError,
    judge_schema,
    prompt_hash,
    run_judge,
    system_prompt,
    validate_reply,
)
from annotator.judge.prompt import strip_png_metadata

try:  # tests/unit may or may not be a package
    from .judge_server import JudgeServer, Ok, Raw, Refuse, Sleep, Status
except ImportError:
    from judge_server import JudgeServer, Ok, Raw, Refuse, Sleep, Status

ROOT = Path(__file__).resolve().parents[2]
RUBRICS = ROOT / "rubrics"
DATA = Path(__file__).resolve().parents[1] / "data"
SECRET_GENERATOR = "imagegen-secret-9"
KEY = "sk-test-sentinel-0123456789"


# ---- helpers ----------------------------------------------------------------------


class MemorySink:
    """The runner's own JudgeSink protocol, kept in memory."""

    def __init__(self) -> None:
        self.scores: dict[str, JudgeScore] = {}
        self.errors: list[JudgeError] = []
        self.threads: set[str] = set()

    def done_item_ids(self) -> set[str]:
        return set(self.scores)

    def record_score(self, score: JudgeScore) -> None:
        self.threads.add(threading.current_thread().name)
        assert score.item_id not in self.scores
        self.scores[score.item_id] = score

    def record_error(self, error: JudgeError) -> None:
        self.threads.add(threading.current_thread().name)
        self.errors.append(error)

    def errors_of(self, item_id: str) -> list[JudgeError]:
        return [e for e in self.errors if e.item_id == item_id]


def png(
    color: tuple[int, int, int], size: tuple[int, int] = (24, 16), *, tagged: bool = True
) -> bytes:
    """A real PNG; `tagged` adds what real generators write: a text chunk and a C2PA-like chunk."""
    im = Image.new("RGB", size, color)
    im.putpixel((1, 1), (255 - color[0], 7, 9))
    info = PngImagePlugin.PngInfo()
    if tagged:
        info.add_text("generator", SECRET_GENERATOR)
        info.add(b"caBX", f"c2pa claim_generator={SECRET_GENERATOR}".encode())
    buf = io.BytesIO()
    im.save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


def decode_data_url(url: str) -> bytes:
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix), url[:40]
    return base64.b64decode(url[len(prefix) :])


def pixels(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as im:
        return im.convert("RGB").tobytes()


def request(item_id: str, **kw: Any) -> JudgeRequest:
    # the marker in the prompt is how the server finds the item's script
    kw.setdefault("output_images", [png((40, 120, 200))])
    return JudgeRequest(
        item_id=item_id,
        prompt=f"A checkout screen [[{item_id}]]",
        criteria="Has a pay button.",
        **kw,
    )


def config(server: JudgeServer, **kw: Any) -> JudgeConfig:
    # generous: the machine is shared, and a spurious timeout would change the attempt counts
    kw.setdefault("timeout", 5.0)
    kw.setdefault("backoff_base", 0.01)
    return JudgeConfig(model="judge-model-x", base_url=server.base_url, **kw)


def user_content(call_body: dict[str, Any], api: str) -> list[dict[str, Any]]:
    msgs = call_body["input"] if api == "responses" else call_body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user"]
    return msgs[1]["content"]


@pytest.fixture
def server():
    with JudgeServer() as s:
        yield s


@pytest.fixture
def ui_rubric():
    return load_rubric(RUBRICS / "ui_mockup.toml")


@pytest.fixture(autouse=True)
def no_real_key(monkeypatch):
    # the tests talk to 127.0.0.1 only; a key from the environment must not be needed
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


# ---- schema and reply validation -------------------------------------------------


@pytest.mark.parametrize("path", sorted(RUBRICS.glob("*.toml")), ids=lambda p: p.stem)
def test_schema_is_strict_and_mirrors_the_rubric(path):
    rubric = load_rubric(path)
    schema = judge_schema(rubric)
    props = schema["properties"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(props)
    judged = [m.key for m in rubric.metrics if m.kind != "text"]
    assert list(props) == ["reason", *judged, "verdict"]
    for m in rubric.judged_metrics:
        p = props[m.key]
        if m.kind == "gate":
            assert p["enum"] == ["PASS", "FAIL", CANNOT_JUDGE]
        elif m.kind == "scale":
            integer, cj = p["anyOf"]
            assert (integer["type"], integer["minimum"], integer["maximum"]) == (
                "integer",
                m.min,
                m.max,
            )
            assert cj["enum"] == [CANNOT_JUDGE]
        elif m.kind == "tags":
            assert p["type"] == "array" and p["items"]["enum"] == list(m.options)
        elif m.kind == "choice":
            assert p["enum"] == [*m.options, CANNOT_JUDGE]
    assert props["verdict"]["enum"] == ["PASS", "FAIL"]
    assert props["reason"]["type"] == "string"
    # the judge is told every rule the verdict follows
    text = system_prompt(rubric)
    assert all(rule in text for rule in rubric.rules)


def test_valid_reply_is_typed(ui_rubric):
    reply = validate_reply(
        ui_rubric,
        '```json\n{"reason": "ok", "instruction_following": "PASS", "layout_hierarchy": 4.0, '
        '"text_rendering": "cannot_judge", "ui_affordance": "cannot_judge", '
        '"failure_tags": ["misspelled_text", "broken_layout", "misspelled_text"], "verdict": "FAIL"}\n```',
    )
    assert reply.values == {
        "instruction_following": "PASS",
        "layout_hierarchy": 4,
        "text_rendering": CANNOT_JUDGE,
        "ui_affordance": CANNOT_JUDGE,
        "failure_tags": ("broken_layout", "misspelled_text"),
    }
    assert type(reply.values["layout_hierarchy"]) is int
    assert (reply.verdict, reply.reason) == ("FAIL", "ok")


GOOD = {
    "reason": "r",
    "instruction_following": "PASS",
    "layout_hierarchy": 3,
    "text_rendering": "FAIL",
    "ui_affordance": 5,
    "failure_tags": [],
    "verdict": "PASS",
}


@pytest.mark.parametrize(
    ("change", "kind", "message"),
    [
        (
            {"layout_hierarchy": 7},
            "schema_violation",
            "field 'layout_hierarchy': 7 is outside 0..5",
        ),
        (
            {"layout_hierarchy": 2.5},
            "schema_violation",
            "field 'layout_hierarchy': 2.5 is not an integer 0..5",
        ),
        (
            {"layout_hierarchy": True},
            "schema_violation",
            "field 'layout_hierarchy': true is not an integer",
        ),
        (
            {"instruction_following": "pass"},
            "schema_violation",
            '"pass" is not one of PASS, FAIL, cannot_judge',
        ),
        (
            {"failure_tags": ["blurry"]},
            "schema_violation",
            "field 'failure_tags': \"blurry\" is not a tag",
        ),
        (
            {"failure_tags": "broken_layout"},
            "schema_violation",
            "expected a list of tags, got a string",
        ),
        (
            {"verdict": "cannot_judge"},
            "schema_violation",
            "field 'verdict': \"cannot_judge\" is not PASS or FAIL",
        ),
        ({"reason": None}, "schema_violation", "field 'reason': expected a string, got null"),
        (
            {"ui_affordance": None},
            "schema_violation",
            "field 'ui_affordance': null is not an integer",
        ),
        ({"extra": 1}, "schema_violation", "unexpected field 'extra'"),
        ({"text_rendering": ...}, "schema_violation", "missing field 'text_rendering'"),
    ],
)
def test_reply_breaking_the_schema_is_named_precisely(ui_rubric, change, kind, message):
    data = {**GOOD, **change}
    data = {k: v for k, v in data.items() if v is not ...}
    with pytest.raises(ReplyError) as err:
        validate_reply(ui_rubric, json.dumps(data))
    assert err.value.kind == kind
    assert message in err.value.message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ('{"reason": "r",', "not valid JSON"),
        ("[1, 2]", "expected a JSON object, got a list"),
        ('Sure! {"reason": "r"}', "not valid JSON"),
    ],
)
def test_malformed_reply(ui_rubric, text, message):
    with pytest.raises(ReplyError) as err:
        validate_reply(ui_rubric, text)
    assert err.value.kind == "malformed_json" and message in err.value.message


def test_png_metadata_is_stripped_and_pixels_kept():
    data = png((200, 30, 30))
    assert SECRET_GENERATOR.encode() in data
    clean = strip_png_metadata(data)
    assert SECRET_GENERATOR.encode() not in clean
    assert pixels(clean) == pixels(data)
    with Image.open(io.BytesIO(clean)) as im:
        assert "generator" not in im.info


# ---- runs against the local server ------------------------------------------------


def test_scripted_failures_are_retried_or_recorded_and_a_second_run_resumes(server, ui_rubric):
    server.script("[[ok]]")
    server.script("[[rate]]", Status(429, "Rate limit reached"))
    server.script("[[server]]", Status(500, "The server had an error"), Status(503, "overloaded"))
    # longer than the client timeout below, which is itself long enough that a loaded machine
    # (CI runs the suite on two workers) does not time out a reply that was sent at once
    server.script("[[slow]]", Sleep(7.0))
    server.script(
        "[[malformed]]", Raw('{"reason": "cut off'), Raw("Sure, here is my judgement: PASS")
    )
    server.script("[[malformed-once]]", Raw("not json"))
    out_of_range = json.dumps({**GOOD, "layout_hierarchy": 9})
    missing = json.dumps({k: v for k, v in GOOD.items() if k != "verdict"})
    server.script("[[out-of-range]]", Raw(out_of_range), Raw(out_of_range))
    server.script("[[missing]]", Raw(missing), Raw(missing))
    server.script("[[refusal]]", Refuse("I can't assist with rating this image."))
    server.script("[[always-500]]", *[Status(500)] * 10)
    server.script("[[bad-request]]", Status(400, "Invalid image"))
    ids = [
        "ok",
        "rate",
        "server",
        "slow",
        "malformed",
        "malformed-once",
        "out-of-range",
        "missing",
        "refusal",
        "always-500",
        "bad-request",
    ]
    sink = MemorySink()
    seen: list[tuple[int, int]] = []
    summary = run_judge(
        [request(i) for i in ids],
        ui_rubric,
        config(server, max_retries=3, concurrency=3, timeout=4.0),
        sink,
        task=TaskState(lambda _f, m: seen.append(_counted(m))),
    )

    # retried transient failures end in a score, with every call counted
    expected_attempts = {"ok": 1, "rate": 2, "server": 3, "slow": 2, "malformed-once": 2}
    assert {k: sink.scores[k].attempts for k in expected_attempts} == expected_attempts
    for k, n in expected_attempts.items():
        assert len(server.calls_for(f"[[{k}]]")) == n
    # failures are errors with the raw reply, never scores
    failed = {"malformed", "out-of-range", "missing", "refusal", "always-500", "bad-request"}
    assert set(sink.scores) == set(ids) - failed
    by_item = {e.item_id: e for e in sink.errors}
    assert set(by_item) == failed and len(sink.errors) == len(failed)
    assert (by_item["malformed"].kind, by_item["malformed"].attempts) == ("malformed_json", 2)
    assert by_item["malformed"].raw == "Sure, here is my judgement: PASS"
    assert (by_item["out-of-range"].kind, by_item["out-of-range"].attempts) == (
        "schema_violation",
        2,
    )
    assert by_item["out-of-range"].raw == out_of_range
    assert "field 'layout_hierarchy': 9 is outside 0..5" in by_item["out-of-range"].message
    assert (
        by_item["missing"].message == "missing field 'verdict'"
        and by_item["missing"].raw == missing
    )
    assert (by_item["refusal"].kind, by_item["refusal"].attempts) == ("refusal", 1)
    assert by_item["refusal"].raw == "I can't assist with rating this image."
    assert (by_item["always-500"].kind, by_item["always-500"].attempts) == ("server_error", 4)
    assert len(server.calls_for("[[always-500]]")) == 4  # 1 + max_retries, no hidden SDK retries
    assert (by_item["bad-request"].kind, by_item["bad-request"].attempts) == ("bad_request", 1)
    assert "Invalid image" in by_item["bad-request"].message

    assert summary.n_total == len(ids) and summary.n_skipped == 0
    assert (summary.n_scored, summary.n_failed, summary.n_unscored) == (5, 6, 6)
    assert summary.errors_by_kind == {
        "malformed_json": 1,
        "schema_violation": 2,
        "refusal": 1,
        "server_error": 1,
        "bad_request": 1,
    }
    assert summary.n_attempts == len(server.calls)
    assert seen[-1] == (len(ids), len(ids))
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert sink.threads == {
        threading.current_thread().name
    }  # the sink is never called from workers

    score = sink.scores["ok"]
    assert score.judge == score.model == "judge-model-x"
    assert score.values["layout_hierarchy"] == 5 and score.values["failure_tags"] == ()
    assert score.verdict == "PASS" and score.rule_verdict == "PASS"
    assert json.loads(score.raw)["verdict"] == "PASS"
    assert score.prompt_hash == prompt_hash(ui_rubric) and len(score.prompt_hash) == 64
    assert json.loads(score.schema) == judge_schema(ui_rubric)
    assert score.latency_ms > 0

    # second run against a healthy server: exactly the failed items are judged
    server.clear_scripts()
    server.reset_stats()
    again = run_judge([request(i) for i in ids], ui_rubric, config(server), sink)
    assert {c.marker for c in server.calls} == {f"[[{i}]]" for i in failed}
    assert len(server.calls) == len(failed)
    assert (again.n_skipped, again.n_scored, again.n_failed, again.n_unscored) == (5, 6, 0, 0)
    assert set(sink.scores) == set(ids)


def test_payload_is_blind_and_carries_images_as_data_urls(server):
    rubric = load_rubric(RUBRICS / "logo_edit.toml")
    logo, mask, out = png((10, 10, 10)), png((255, 255, 255), tagged=False), png((10, 10, 90))
    req = JudgeRequest(
        item_id="it-0042",
        prompt="Make the logo text blue [[edit-1]]",
        criteria="Only the wordmark changes.",
        output_images=[out],
        input_images=[logo],
        mask=mask,
    )
    sink = MemorySink()
    run_judge([req], rubric, config(server), sink)
    (call,) = server.calls
    assert call.path == "/v1/responses"
    body_text = json.dumps(call.body)
    assert SECRET_GENERATOR not in body_text and "it-0042" not in body_text
    assert call.body["model"] == "judge-model-x"
    fmt = call.body["text"]["format"]
    assert (fmt["type"], fmt["strict"], fmt["schema"]) == (
        "json_schema",
        True,
        judge_schema(rubric),
    )
    assert "store" not in call.body  # only sent to OpenAI itself
    assert call.body["input"][0]["content"] == system_prompt(rubric)
    content = user_content(call.body, "responses")
    kinds = [c["type"] for c in content]
    assert kinds == [
        "input_text",
        "input_text",
        "input_text",
        "input_image",
        "input_text",
        "input_image",
        "input_text",
        "input_image",
    ]
    texts = [c["text"] for c in content if c["type"] == "input_text"]
    assert texts[0].endswith("Make the logo text blue [[edit-1]]")
    assert texts[1] == "Criteria:\nOnly the wordmark changes."
    assert texts[2].startswith("Input image 1 of 1") and texts[3].startswith("Mask")
    assert texts[4].startswith("Output image 1 of 1 (the output to judge)")
    images = [decode_data_url(c["image_url"]) for c in content if c["type"] == "input_image"]
    assert [pixels(i) for i in images] == [pixels(logo), pixels(mask), pixels(out)]
    assert all(SECRET_GENERATOR.encode() not in i for i in images)
    assert sink.scores["it-0042"].values["edit_intent_correctness"] == 5


def test_chat_api_on_real_text_items(server, caplog):
    # real text outputs (PandaLM); the manifest names generators, which must not reach the judge
    items = [json.loads(x) for x in (DATA / "pandalm" / "items.jsonl").read_text().splitlines()[:6]]
    responses = {
        r["item_id"]: r
        for r in map(
            json.loads, (DATA / "pandalm" / "responses.jsonl").read_text().splitlines()[:6]
        )
    }
    rubric = load_rubric(RUBRICS / "ui_mockup.toml")
    reqs = [
        JudgeRequest(
            item_id=it["item_id"],
            prompt=f"{it['prompt']}\n\n{responses[it['item_id']]['input']} [[{it['item_id']}]]",
            text=responses[it["item_id"]]["response"],
        )
        for it in items
    ]
    first, second, third = (f"[[{it['item_id']}]]" for it in items[:3])
    server.script(first, Status(429, headers={"retry-after-ms": "150"}))
    server.script(second, Refuse("no"))
    server.script(third, Ok({"layout_hierarchy": 1}))
    sink = MemorySink()
    caplog.set_level(logging.INFO, logger="annotator.judge.runner")
    summary = run_judge(reqs, rubric, config(server, api="chat", judge_name="local-judge"), sink)

    assert (summary.n_scored, summary.n_failed, summary.errors_by_kind) == (5, 1, {"refusal": 1})
    assert sink.errors[0].item_id == items[1]["item_id"] and sink.errors[0].raw == "no"
    assert sink.scores[items[0]["item_id"]].attempts == 2
    assert len(server.calls_for(first)) == 2
    # the wait chosen is the server's retry-after-ms (150 ms), not our 10 ms backoff: what the
    # runner decided, not the time that passed, which a loaded machine stretches either way
    retries = [r.getMessage() for r in caplog.records if "retrying in" in r.getMessage()]
    assert len(retries) == 1 and "rate_limited" in retries[0], retries
    assert retries[0].endswith("retrying in 0.15 s"), retries
    # the judge's verdict and the rubric's verdict are both kept; a disagreement is not repaired
    third_score = sink.scores[items[2]["item_id"]]
    assert (third_score.verdict, third_score.rule_verdict) == ("PASS", "FAIL")
    assert third_score.judge == "local-judge" and third_score.model == "judge-model-x"
    generators = {it["generator"] for it in items}
    for call in server.calls:
        assert call.path == "/v1/chat/completions"
        assert call.headers["authorization"] == "Bearer not-needed"
        body = json.dumps(call.body)
        assert not any(g in body for g in generators)
        rf = call.body["response_format"]
        assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
        assert rf["json_schema"]["schema"] == judge_schema(rubric)
        (text_part, output_part) = user_content(call.body, "chat")
        assert text_part["type"] == output_part["type"] == "text"
        assert output_part["text"].startswith("Output text (the output to judge):\n<output>\n")


def test_chat_images_are_image_url_parts(server, ui_rubric):
    sink = MemorySink()
    run_judge([request("chat-img")], ui_rubric, config(server, api="chat"), sink)
    content = user_content(server.calls[0].body, "chat")
    (image,) = [c for c in content if c["type"] == "image_url"]
    assert image["image_url"]["detail"] == "high"
    assert pixels(decode_data_url(image["image_url"]["url"])) == pixels(png((40, 120, 200)))


def _counted(message: str) -> tuple[int, int]:
    """(done, total) of the runner's report "judged done/total"."""
    done, total = message.removeprefix("judged ").split("/")
    return int(done), int(total)


def test_concurrency_is_bounded(server, ui_rubric):
    server.ok_delay = 0.15
    sink = MemorySink()
    summary = run_judge(
        [request(f"c{i}") for i in range(10)], ui_rubric, config(server, concurrency=3), sink
    )
    assert summary.n_scored == 10
    # the bound is what is promised; that calls overlapped at all depends on the scheduler
    assert 1 <= server.max_in_flight <= 3
    assert min(s.latency_ms for s in sink.scores.values()) >= 150


def test_cancel_leaves_the_rest_for_the_next_run(server, ui_rubric):
    sink = MemorySink()
    reqs = [request(f"k{i}") for i in range(6)]

    def report(fraction: float | None, message: str) -> None:
        if message == "judged 2/6":
            task.cancel()

    task = TaskState(report)
    summary = run_judge(reqs, ui_rubric, config(server, concurrency=1), sink, task=task)
    assert (summary.n_scored, summary.n_failed, summary.n_cancelled) == (2, 0, 4)
    assert summary.n_unscored == 4 and len(server.calls) == 2
    again = run_judge(reqs, ui_rubric, config(server), sink)
    assert (again.n_skipped, again.n_scored, again.n_unscored) == (2, 4, 0)


def test_cancel_interrupts_a_backoff(server, ui_rubric):
    server.script("[[wait]]", *[Status(503)] * 5)
    task = TaskState()
    threading.Timer(0.2, task.cancel).start()
    sink = MemorySink()
    summary = run_judge(
        [request("wait")], ui_rubric, config(server, backoff_base=20.0), sink, task=task
    )
    # nothing recorded: the item is not at fault, it simply stays unscored
    assert (summary.n_cancelled, summary.n_failed, sink.errors, sink.scores) == (1, 0, [], {})


@pytest.mark.parametrize(
    ("status", "api", "hint"),
    [(401, "responses", "OPENAI_API_KEY"), (404, "responses", "--api chat")],
)
def test_wrong_key_or_model_stops_the_run(server, ui_rubric, status, api, hint):
    server.default = Status(status, "nope")
    sink = MemorySink()
    with pytest.raises(InputError) as err:
        run_judge(
            [request(f"a{i}") for i in range(8)],
            ui_rubric,
            config(server, api=api, concurrency=2),
            sink,
        )
    assert hint in str(err.value)
    assert len(server.calls) <= 2  # no more submissions after the first refusal
    assert sink.errors == [] and sink.scores == {}


def test_api_key_comes_from_the_environment_and_is_never_recorded(server, ui_rubric, monkeypatch):
    with pytest.raises(InputError, match="OPENAI_API_KEY is not set"):
        run_judge([request("x")], ui_rubric, JudgeConfig(model="m"), MemorySink())
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.script("[[bad]]", Raw("nope"), Raw("nope"))
    sink = MemorySink()
    run_judge([request("x"), request("bad")], ui_rubric, config(server), sink)
    assert {c.headers["authorization"] for c in server.calls} == {f"Bearer {KEY}"}
    assert KEY not in repr(sink.scores) + repr(sink.errors)
    assert KEY not in repr(config(server))


def test_unreadable_image_is_recorded_without_a_call(server, ui_rubric):
    sink = MemorySink()
    broken = png((1, 2, 3))[:60]
    summary = run_judge(
        [request("broken", output_images=[broken])], ui_rubric, config(server), sink
    )
    assert server.calls == []
    (err,) = sink.errors
    assert (err.kind, err.attempts, summary.n_failed) == ("bad_input", 0, 1)
    assert "output image 1 is not a readable image" in err.message


def test_jpeg_output_is_sent_as_clean_png(server, ui_rubric):
    im = Image.new("RGB", (16, 16), (90, 10, 10))
    buf = io.BytesIO()
    exif = Image.Exif()
    exif[0x0131] = SECRET_GENERATOR  # Software tag
    im.save(buf, format="JPEG", exif=exif, quality=95)
    jpeg = buf.getvalue()
    assert SECRET_GENERATOR.encode() in jpeg
    run_judge([request("jpeg", output_images=[jpeg])], ui_rubric, config(server), MemorySink())
    content = user_content(server.calls[0].body, "responses")
    (image,) = [decode_data_url(c["image_url"]) for c in content if c["type"] == "input_image"]
    assert SECRET_GENERATOR.encode() not in image
    assert pixels(image) == pixels(jpeg)


def test_rubric_whose_metric_shadows_verdict_is_refused(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('id = "r"\n[[metrics]]\nkey = "verdict"\nkind = "gate"\n', encoding="utf-8")
    with pytest.raises(InputError, match="clashes with the judge's own 'verdict' field"):
        judge_schema(load_rubric(path))
