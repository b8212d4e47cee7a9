"""Calibration sessions on an anchor set: answer, see the reference and its
rationale, and end with a qualify / not-yet verdict stored as a record."""

from __future__ import annotations

import random
import time
from typing import Any

from ..domain import calibration as rules
from ..domain.answers import normalise, reason_of
from ..domain.errors import InputError
from ..domain.records import ServedItem
from ..store import anchors as store
from ..store import answers as answer_store
from ..store.items import view_of
from ..store.people import start_session
from .study import Study


class CalibrationSession:
    def __init__(self, study: Study, rater: str, anchor_set: str | None = None) -> None:
        self.study = study
        self.rater = rater
        self.rubric = study.rubric
        self._anchors = store.anchors(study.db, anchor_set)
        if not self._anchors:
            raise InputError(
                "this study has no anchors; import a set with `annotator import anchors`",
                field="anchors",
            )
        self.anchor_set = anchor_set or self._anchors[0][1]
        self.session_pk = start_session(study.db, rater, "calibration")
        rng = random.Random(self.session_pk * 7919 + len(store.calibrations(study.db, rater)))
        rng.shuffle(self._anchors)
        self._index = 0
        self._results: list[list[rules.MetricFeedback]] = []
        self._started = time.monotonic()

    @property
    def total(self) -> int:
        return len(self._anchors)

    @property
    def index(self) -> int:
        return self._index

    def next(self) -> ServedItem | None:
        if self._index >= len(self._anchors):
            return None
        pk = self._anchors[self._index][0]
        view = view_of(self.study.db, pk)
        return ServedItem(pk, view, self._index, "calibration")

    def submit(
        self, served: ServedItem, answers: dict[str, Any], time_ms: int | None
    ) -> list[rules.MetricFeedback]:
        """Store the answer and return the feedback to show beside it."""
        clean = normalise(self.rubric, answers)
        answer_store.submit(
            self.study.db,
            rater=self.rater,
            item_pk=served.item_pk,
            version=self.rubric.version,
            session_pk=self.session_pk,
            answers=clean,
            reason=reason_of(self.rubric, clean),
            time_ms=time_ms,
            context="calibration",
            queue_position=self._index,
        )
        _, _, ref, rationale = self._anchors[self._index]
        fb = rules.feedback(self.rubric, clean, ref, rationale)
        self._results.append(fb)
        self._index += 1
        return fb

    def finish(self) -> dict[str, Any]:
        """The per-metric result and verdict, stored as a calibration record."""
        result = rules.qualify(self.rubric, self._results, self.study.setting("qualification"))
        result["n_anchors"] = len(self._results)
        result["id"] = store.add_calibration(
            self.study.db,
            rater=self.rater,
            session_pk=self.session_pk,
            anchor_set=self.anchor_set,
            version=self.rubric.version,
            result=result,
            qualified=result["qualified"],
        )
        return result

    def history(self) -> list[dict[str, Any]]:
        return store.calibrations(self.study.db, self.rater)

    def image(self, sha256: str) -> bytes:
        return self.study.media.read(sha256)


def calibration_history(study_path: str, rater: str) -> list[dict[str, Any]]:
    study = Study.open(study_path, mode="read")
    try:
        return store.calibrations(study.db, rater)
    finally:
        study.close()
