"""Judge calibration: ECE and Brier on hand-computed cases, their bootstrap intervals by
simulation, confidences from a schema field and from token logprobs through the real `openai`
client against the local test server."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from annotator.ingest.rubrics import load_rubric
from annotator.judge import JudgeConfig, JudgeRequest, run_judge
from annotator.judge.logprobs import answer_probabilities, value_spans
from annotator.judge.schema import ReplyError, judge_schema, validate_reply
from annotator.stats.bootstrap import ItemBootstrap
from annotator.stats.judge_calibration import (
    debiased_ce,
    ece_brier,
    register_calibration,
    reliability_bins,
)

try:
    from .judge_server import JudgeServer, Ok
except ImportError:  # run as a plain module (rootdir on sys.path)
    from judge_server import JudgeServer, Ok

REPO = Path(__file__).resolve().parents[2]
RUBRIC = load_rubric(REPO / "rubrics" / "ui_mockup.toml")


def test_ece_and_brier_on_hand_computed_cases():
    # one item per bin: ECE is the mean |y - c|
    conf = [0.95, 0.85, 0.75, 0.65, 0.55, 0.15]
    y = [1, 1, 0, 1, 0, 0]
    ece, brier = ece_brier(conf, y)
    assert ece == pytest.approx((0.05 + 0.15 + 0.75 + 0.35 + 0.55 + 0.15) / 6)
    assert brier == pytest.approx((0.0025 + 0.0225 + 0.5625 + 0.1225 + 0.3025 + 0.0225) / 6)
    # shared bins: bin 0.9-1.0 holds four items (accuracy 3/4, confidence 0.9), bin 0.3-0.4 two
    # (accuracy 1/2, confidence 0.3): ECE = 4/6 * 0.15 + 2/6 * 0.2 = 1/6
    conf = [0.9, 0.9, 0.9, 0.9, 0.3, 0.3]
    y = [1, 1, 1, 0, 0, 1]
    ece, brier = ece_brier(conf, y)
    assert ece == pytest.approx(1 / 6)
    assert brier == pytest.approx((3 * 0.01 + 0.81 + 0.09 + 0.49) / 6)
    bins = reliability_bins(conf, y)
    assert [(b["low"], b["n"], b["accuracy"]) for b in bins] == [(0.3, 2, 0.5), (0.9, 4, 0.75)]
    assert bins[1]["confidence"] == pytest.approx(0.9)
    # a confidence of exactly 1 falls in the last bin, not past it
    assert reliability_bins([1.0], [1])[0]["high"] == 1.0


def test_the_bootstrap_registration_gives_the_same_point_estimates():
    rng = np.random.default_rng(3)
    conf = rng.uniform(0, 1, 80)
    y = (rng.uniform(0, 1, 80) < conf).astype(float)
    plan = ItemBootstrap(100, 300, 0)
    idx = rng.permutation(100)[:80]
    ece, brier, plugin = register_calibration(plan, idx, conf, y)
    plan.run()
    e, b = ece.resolve(), brier.resolve()
    ref_e, ref_b = ece_brier(conf, y)
    assert plugin.estimate == pytest.approx(ref_e) and b["estimate"] == pytest.approx(ref_b)
    assert e["estimate"] == pytest.approx(debiased_ce(conf, y))
    assert e["low"] <= e["estimate"] <= e["high"] and b["low"] <= b["estimate"] <= b["high"]
    assert e["n"] == 80


def test_brier_interval_covers_the_true_score_at_its_nominal_rate():
    # confidence ~ U(0.5, 1) and a judge exactly that often right: the true Brier score is
    # E[c (1 - c)] = 0.75 - 7/12 = 1/6
    truth = 1 / 6
    rng = np.random.default_rng(11)
    runs, hits = 200, 0
    for r in range(runs):
        conf = rng.uniform(0.5, 1.0, 120)
        y = (rng.uniform(0, 1, 120) < conf).astype(float)
        plan = ItemBootstrap(120, 400, r)
        _, brier, _ = register_calibration(plan, np.arange(120), conf, y)
        plan.run()
        b = brier.resolve()
        hits += b["low"] <= truth <= b["high"]
    # 95% nominal: the count of covering runs lies in the central 99.8% of Binomial(200, 0.95)
    lo, hi = binom.ppf(0.001, runs, 0.95), binom.ppf(0.999, runs, 0.95)
    assert lo <= hits <= hi, hits


def test_value_spans_follow_the_top_level_fields_only():
    text = '{"reason": "says \\"PASS\\": no", "gate": "PASS", "n": 4, "tags": ["a", "b"]}'
    spans = value_spans(text)
    assert text[slice(*spans["gate"])] == '"PASS"'
    assert text[slice(*spans["n"])] == "4"
    assert text[slice(*spans["tags"])] == '["a", "b"]'
    assert set(spans) == {"reason", "gate", "n", "tags"}


def test_answer_probabilities_multiply_the_value_tokens_and_refuse_a_mismatch():
    text = '{"g": "PASS", "s": 4}'
    tokens = [("{", 0.0), ('"g"', 0.0), (": ", 0.0), ('"', 0.0), ("PASS", math.log(0.7))]
    tokens += [('"', math.log(0.9)), (", ", 0.0), ('"s"', 0.0), (": ", 0.0), ("4", -0.5)]
    tokens += [("}", 0.0)]
    got = answer_probabilities(text, tokens, ["g", "s"])
    assert got["g"] == pytest.approx(0.7 * 0.9) and got["s"] == pytest.approx(math.exp(-0.5))
    assert answer_probabilities(text + " ", tokens, ["g"]) == {}  # tokens do not spell it
    assert answer_probabilities(text, None, ["g"]) == {}


def test_confidence_field_is_in_the_schema_and_checked():
    schema = judge_schema(RUBRIC, confidence=True)
    conf = schema["properties"]["confidence"]
    keys = [m.key for m in RUBRIC.judged_metrics]
    assert conf["required"] == keys and conf["additionalProperties"] is False
    assert "confidence" not in judge_schema(RUBRIC)["properties"]
    reply = {
        "reason": "ok",
        "instruction_following": "PASS",
        "layout_hierarchy": 4,
        "text_rendering": "FAIL",
        "ui_affordance": 3,
        "failure_tags": [],
        "verdict": "FAIL",
        "confidence": dict.fromkeys(keys, 0.5),
    }
    import json

    assert validate_reply(RUBRIC, json.dumps(reply), True).confidences == dict.fromkeys(keys, 0.5)
    with pytest.raises(ReplyError, match="unexpected field 'confidence'"):
        validate_reply(RUBRIC, json.dumps(reply))
    reply["confidence"]["layout_hierarchy"] = 1.5
    with pytest.raises(ReplyError, match="'layout_hierarchy' is 1.5, not a number 0..1"):
        validate_reply(RUBRIC, json.dumps(reply), True)


class _Sink:
    def __init__(self) -> None:
        self.scores, self.errors = [], []

    def done_item_ids(self) -> set[str]:
        return {s.item_id for s in self.scores}

    def record_score(self, score) -> None:
        self.scores.append(score)

    def record_error(self, error) -> None:
        self.errors.append(error)


def _requests(n: int) -> list[JudgeRequest]:
    return [JudgeRequest(item_id=f"it-{i}", prompt=f"p{i}", text="output") for i in range(n)]


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_logprobs_through_the_real_client_become_confidences(api, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with JudgeServer() as server:
        server.token_logprobs = {"PASS": math.log(0.8), "5": math.log(0.6)}
        sink = _Sink()
        cfg = JudgeConfig(model="m", base_url=server.base_url, api=api, confidence="logprobs")
        summary = run_judge(_requests(3), RUBRIC, cfg, sink)
        assert summary.n_scored == 3 and not sink.errors
        body = server.calls[0].body
        if api == "chat":
            assert body["logprobs"] is True
        else:
            assert body["include"] == ["message.output_text.logprobs"]
    for sc in sink.scores:
        # the server's default answers: gates PASS, scales at their maximum (5)
        assert sc.confidences["instruction_following"] == pytest.approx(0.8)
        assert sc.confidences["layout_hierarchy"] == pytest.approx(0.6)
        assert sc.confidences["failure_tags"] == pytest.approx(1.0)


def test_confidence_field_through_the_real_client(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    keys = [m.key for m in RUBRIC.judged_metrics]
    with JudgeServer() as server:
        server.default = Ok({"confidence": dict.fromkeys(keys, 0.25)})
        sink = _Sink()
        cfg = JudgeConfig(model="m", base_url=server.base_url, api="chat", confidence="field")
        run_judge(_requests(2), RUBRIC, cfg, sink)
        sent = server.calls[0].body["response_format"]["json_schema"]["schema"]
        assert "confidence" in sent["properties"]
    assert [s.confidences for s in sink.scores] == [dict.fromkeys(keys, 0.25)] * 2
    # a different task, so a different prompt hash (and so a different judge version)
    assert sink.scores[0].prompt_hash != run_hash_without_confidence()


def run_hash_without_confidence() -> str:
    from annotator.judge import prompt_hash

    return prompt_hash(RUBRIC)


def test_a_token_without_a_logprob_gives_no_confidence_rather_than_certainty():
    from types import SimpleNamespace as T

    from annotator.judge.calls import _tokens

    assert _tokens([T(token='{"a"', logprob=-0.1), T(token=":1}", logprob=-0.2)]) == [
        ('{"a"', -0.1),
        (":1}", -0.2),
    ]
    assert _tokens([T(token='{"a"', logprob=-0.1), T(token=":1}", logprob=None)]) is None
    assert _tokens([T(token='{"a"', logprob=-0.1), T(token=":1}")]) is None
    assert _tokens([]) is None
