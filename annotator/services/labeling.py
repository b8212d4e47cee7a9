"""A rater's label session: serve, submit, go back, progress, drift alerts.

Designed to be driven from one background worker thread (the UI's database
worker): every call is short and does its own transaction.
"""

from __future__ import annotations

import time
from typing import Any

from ..domain.answers import normalise, reason_of
from ..domain.records import Progress, ServedItem
from ..store import answers as store
from ..store.people import start_session
from .resend import ResendIds
from .study import Study


class LabelSession:
    def __init__(self, study: Study, rater: str) -> None:
        self.study = study
        self.rater = rater
        self.rubric = study.rubric
        self.session_pk = start_session(study.db, rater, "label")
        self.anchor_every = int(study.setting("anchor_every") or 0)
        store.ensure_queue(study.db, rater, self.rubric.version)
        self._started = time.monotonic()
        self._session_done = 0
        self._back_steps = 0  # how far back from the newest answer we are
        self._alert: dict | None = None
        self._alert_wait = 0  # live answers to wait before showing an alert
        self._alerted_at: set[tuple] = set()
        self.last_replaced_other = False
        self._frontier = 0  # every queue position below it is answered
        self._resend = ResendIds()

    # -- serving -----------------------------------------------------------------
    def next(self) -> ServedItem | None:
        """The first unanswered item (or an anchor due before it); None when done."""
        self._back_steps = 0
        served = store.next_item(
            self.study.db,
            self.rater,
            self.rubric.version,
            self.session_pk,
            anchor_every=self.anchor_every,
            start=self._frontier,
        )
        if served is not None and served.queue_position is not None:
            self._frontier = served.queue_position
        return served

    def back(self) -> ServedItem | None:
        """The item answered before the one on screen, with its current answers."""
        hist = store.session_history(self.study.db, self.session_pk)
        if self._back_steps >= len(hist):
            return None
        self._back_steps += 1
        return hist[len(hist) - self._back_steps]

    def submit(self, served: ServedItem, answers: dict[str, Any], time_ms: int | None) -> int:
        """Commit the judgement durably; a re-answer supersedes the earlier one.

        If this rater already answered the item elsewhere (a second window), the
        answer is kept as the newer judgement and `last_replaced_other` says so.
        Faults of the study raise one-line StudyErrors; nothing was written then,
        and the caller keeps the answer to submit again.
        """
        clean = normalise(self.rubric, answers)
        key = (served.item_pk, served.showing_pk, served.previous_judgement, served.context, clean)
        done = self._resend.send(
            key,
            lambda uid: store.submit(
                self.study.db,
                rater=self.rater,
                item_pk=served.item_pk,
                version=self.rubric.version,
                session_pk=self.session_pk,
                answers=clean,
                reason=reason_of(self.rubric, clean),
                time_ms=time_ms,
                context="anchor" if served.context == "anchor" else "live",
                showing_pk=served.showing_pk,
                queue_position=served.queue_position,
                supersedes=served.previous_judgement,
                uuid=uid,
            ),
        )
        self.last_replaced_other = done.replaced_other
        if served.previous_judgement is None:
            self._session_done += 1
        if served.context == "anchor":
            self._check_drift()
        elif self._alert_wait > 0:
            self._alert_wait -= 1
        return done.id

    # -- status ------------------------------------------------------------------
    def progress(self) -> Progress:
        done, total = store.progress_counts(
            self.study.db, self.rater, self.rubric.version, anchor_every=self.anchor_every
        )
        return Progress(done, total, self._session_done, time.monotonic() - self._started)

    def _check_drift(self) -> None:
        from ..stats.drift import check_rater_drift, live_deviations
        from .frames import rater_anchor_frames

        frames = rater_anchor_frames(self.study.db, self.rubric, self.rater)
        flag = check_rater_drift(
            live_deviations(frames.anchor_answers, self.rubric), rubric=self.rubric
        )
        if flag is None:
            return
        key = (flag["metric"], flag["direction"], flag["index"])
        if key not in self._alerted_at:
            self._alerted_at.add(key)
            self._alert = {"flagged": True, **flag}
            # shown only after the next live item, so the alert never marks the anchor just answered
            self._alert_wait = 1

    def take_drift_alert(self) -> dict | None:
        """A new drift flag, once, at an item boundary after the next live answer."""
        if self._alert is None or self._alert_wait > 0:
            return None
        alert, self._alert = self._alert, None
        return alert

    def image(self, sha256: str) -> bytes:
        return self.study.media.read(sha256)
