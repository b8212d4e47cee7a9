"""Simulated raters and pair voters: seeded stand-ins for people, for the demo and tests.

Everything here is pure Python + numpy and independent of the database: a
service feeds a simulator the truth of an item (or the two generators of a pair)
and stores what comes back like any other answer.

Models (documented so the tests that lean on them are readable):

- `SimulatedRater.answer` on a scale: truth - severity + drift + N(0, noise),
  rounded and clipped to the metric's range. With noise 0.48 a rater is off by
  one point 30% of the time (15% each way), the "steady" rater of the drift tests.
- On a gate the rater reports the truth, flipped with probability `flip`; the
  PASS probability is then moved on the logit scale by -severity + drift (the
  base probability clamped to [0.01, 0.99] first), so a severe rater passes less
  and a lenient drift passes more. `flip` defaults to
  the one-sided probability that the scale noise crosses half a point, so a
  rater flips gates about as often as they are off by a point in one direction.
- Choices: truth, or with probability `flip` another option. Tags: the true set,
  with each option toggled with probability `tag_rate`.
- Drift: from anchor index `drift_at` on (the rater's 0-based count of live
  anchor answers) `drift_shift` scale points are added (positive = lenient), on
  the metric kinds named in `drift_kinds` (scales and gates by default).
- `SimulatedPairVoter.vote`: a tie with probability `tie_rate` (half "both",
  half "neither"), otherwise left wins with probability
  sigmoid(s_left - s_right + logit(left_bias) + N(0, noise)), a Bradley-Terry
  vote with an additive left logit; left_bias 0.5 is an unbiased voter.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..domain.rubric import CANNOT_JUDGE, FAIL, PASS, Metric, Rubric

__all__ = ["SimulatedPairVoter", "SimulatedRater", "logit", "sigmoid"]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def _normal_tail(z: float) -> float:
    """P(N(0, 1) > z), without scipy (demo stays numpy-only)."""
    return 0.5 * math.erfc(z / math.sqrt(2))


@dataclass
class SimulatedRater:
    name: str
    severity: float = 0.0
    noise: float = 0.48
    drift_at: int | None = None
    drift_shift: float = 0.0
    flip: float | None = None
    tag_rate: float = 0.03
    cannot_judge_rate: float = 0.0
    drift_kinds: tuple[str, ...] = ("scale", "gate")

    @property
    def gate_flip(self) -> float:
        if self.flip is not None:
            return self.flip
        if self.noise <= 0:
            return 0.0
        return _normal_tail(0.5 / self.noise)

    def drift(self, anchor_index: int | None) -> float:
        """Scale points added at this anchor index (0 before the planted shift)."""
        if self.drift_at is None or anchor_index is None or anchor_index < self.drift_at:
            return 0.0
        return self.drift_shift

    def answer(
        self,
        truth: Mapping[str, Any],
        rubric: Rubric,
        rng: np.random.Generator,
        anchor_index: int | None = None,
    ) -> dict[str, Any]:
        """Typed answers for every judged metric of `rubric` that `truth` covers.

        Tags are answered even without a truth (as the empty set plus noise);
        text metrics are left out. Values are typed as domain.rubric.parse_value.
        """
        shift = self.drift(anchor_index)
        out: dict[str, Any] = {}
        for m in rubric.metrics:
            if not m.judgeable:
                continue
            if not m.spec.multi and m.key not in truth:
                continue
            t = truth.get(m.key)
            if m.accepts_cannot_judge and (
                t == CANNOT_JUDGE or rng.random() < self.cannot_judge_rate
            ):
                out[m.key] = CANNOT_JUDGE
                continue
            out[m.key] = self._answer_by_kind[m.kind](self, m, t, shift, rng)
        return out

    def _ordinal(self, m: Metric, t: Any, shift: float, rng: np.random.Generator) -> Any:
        x = float(t) - self.severity + (shift if m.kind in self.drift_kinds else 0.0)
        if self.noise > 0:
            x += rng.normal(0.0, self.noise)
        step = m.step or 1
        # floor(x + 0.5), not round(): Python rounds halves to even, which skews a scale
        assert m.min is not None  # an ordinal metric has its lowest point
        k = math.floor((x - m.min) / step + 0.5)
        points = m.values()
        return points[min(max(k, 0), len(points) - 1)]

    def _gate(self, m: Metric, t: Any, shift: float, rng: np.random.Generator) -> str:
        flip = self.gate_flip
        p = 1.0 - flip if t == PASS else flip
        move = -self.severity + (shift if "gate" in self.drift_kinds else 0.0)
        if move:
            # clamp so that a flawless rater still reacts (a little) to severity
            p = sigmoid(logit(min(max(p, 0.01), 0.99)) + move)
        return PASS if rng.random() < p else FAIL

    def _choice(self, m: Metric, t: Any, shift: float, rng: np.random.Generator) -> str:
        if rng.random() < self.gate_flip and len(m.options) > 1:
            others = [o for o in m.options if o != t]
            return others[int(rng.integers(len(others)))]
        return t

    def _tags(self, m: Metric, t: Any, shift: float, rng: np.random.Generator) -> tuple[str, ...]:
        chosen = set(t or ())
        for opt in m.options:
            if rng.random() < self.tag_rate:
                chosen ^= {opt}
        return tuple(sorted(chosen))

    # the simulated rater's answer model, one per metric kind
    _answer_by_kind: ClassVar[dict[str, Callable[..., Any]]] = {
        "scale": _ordinal,
        "likert": _ordinal,
        "gate": _gate,
        "choice": _choice,
        "tags": _tags,
    }


@dataclass
class SimulatedPairVoter:
    name: str
    strengths: Mapping[str, float] = field(default_factory=dict)
    left_bias: float = 0.5
    tie_rate: float = 0.1
    noise: float = 0.0

    def p_left(self, gen_left: str, gen_right: str) -> float:
        """Probability that a decisive vote goes left (before per-vote noise)."""
        diff = self.strengths.get(gen_left, 0.0) - self.strengths.get(gen_right, 0.0)
        return sigmoid(diff + logit(self.left_bias))

    def vote(self, gen_left: str, gen_right: str, rng: np.random.Generator) -> str:
        if rng.random() < self.tie_rate:
            return "both" if rng.random() < 0.5 else "neither"
        diff = self.strengths.get(gen_left, 0.0) - self.strengths.get(gen_right, 0.0)
        if self.noise > 0:
            diff += rng.normal(0.0, self.noise)
        return "left" if rng.random() < sigmoid(diff + logit(self.left_bias)) else "right"
