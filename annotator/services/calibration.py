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
        if not store.has_anchors(study.db):
            raise InputError(
                "this study has no anchors; import a set with `annotator import anchors`",
                field="anchors",
            )
        # the session first: a rater's role on a server reads the anchors only once calibrating
        self.session_pk = start_session(study.db, rater, "calibration")
        self._anchors = store.anchors(study.db, anchor_set)
        if not self._anchors:
            raise InputError(f"no anchor set named '{anchor_set}' in this study", field="anchors")
        self.anchor_set = anchor_set or self._anchors[0][1]
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


def verified_calibrations(study: Study, rater: str | None = None) -> list[dict[str, Any]]:
    """Calibration records with the lead's verdict. A rater's role on a server may not write the
    verdict (the server stores false, store/roles.py): a record whose app claimed a pass is judged
    again here, from the session's stored answers and the references, by the same rules."""
    recs = store.calibrations(study.db, rater)
    for rec in recs:
        if rec["qualified"] or not rec["result"].get("qualified"):
            continue
        rec["qualified"] = _verdict_of(study, rec)
    return recs


def _verdict_of(study: Study, rec: dict[str, Any]) -> bool:
    refs = {pk: (ref, why) for pk, _set, ref, why in store.anchors(study.db, rec["anchor_set"])}
    answers = store.calibration_answers(study.db, rec["session_pk"])
    results = [
        rules.feedback(study.rubric, normalise(study.rubric, ans), *refs[pk])
        for pk, ans in answers.items()
        if pk in refs
    ]
    if not results:
        return False
    return bool(rules.qualify(study.rubric, results, study.setting("qualification"))["qualified"])


def calibration_history(study_path: str, rater: str) -> list[dict[str, Any]]:
    study = Study.open(study_path, mode="read")
    try:
        return store.calibrations(study.db, rater)
    finally:
        study.close()
