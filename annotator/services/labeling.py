"""A rater's label session: serve, submit, go back, progress, drift alerts.

Designed to be driven from one background worker thread (the UI's database
worker): every call is short and does its own transaction.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from ..domain.answers import normalise, reason_of
from ..domain.records import Progress, ServedItem
from ..store import answers as store
from ..store.anchors import checks_own_drift
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
        # a rater's role on a server reads no silent anchor's reference: no drift check here
        self._own_drift = checks_own_drift(study.db)
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
        # An anchor's drift check waits for `check_drift` (its own worker job, after the next
        # item is on screen): its first run imports the statistics stack (pandas, scipy), 2 s
        # on a quiet machine and 8-11 s on a loaded one, which inside the submit held the
        # worker and dropped the keys typed meanwhile.
        self.drift_due = False
        # The UI runs the check itself, once the statistics stack is imported (`check_drift`
        # as its own job); other callers get it at the next submit.
        self.defer_drift = False

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

    def submit(
        self,
        served: ServedItem,
        answers: dict[str, Any],
        time_ms: int | None,
        uuid: str | None = None,
    ) -> int:
        """Commit the judgement durably; a re-answer supersedes the earlier one.

        If this rater already answered the item elsewhere (a second window), the
        answer is kept as the newer judgement and `last_replaced_other` says so.
        Faults of the study raise one-line StudyErrors; nothing was written then,
        and the caller keeps the answer to submit again.
        """
        if not self.defer_drift:
            self.check_drift()  # one still due: before this answer counts, as it always was
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
            uid=uuid,
        )
        self.last_replaced_other = done.replaced_other
        if served.previous_judgement is None:
            self._session_done += 1
        if served.context == "anchor" and self.checks_drift:
            self.drift_due = True
        elif self._alert_wait > 0:
            self._alert_wait -= 1
        return done.id

    @property
    def in_doubt(self) -> str | None:
        """The UUID of the last answer whose write failed (it may be stored all the same: a
        connection lost after the commit); None once a write went through."""
        return self._resend.in_doubt

    # -- status ------------------------------------------------------------------
    def progress(self) -> Progress:
        done, total = store.progress_counts(
            self.study.db, self.rater, self.rubric.version, anchor_every=self.anchor_every
        )
        return Progress(done, total, self._session_done, time.monotonic() - self._started)

    def check_drift(self) -> None:
        """The drift check of the anchors answered since the last one (nothing when none was)."""
        if not self.drift_due:
            return
        self.drift_due = False
        self._check_drift()

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

    @property
    def checks_drift(self) -> bool:
        """Anchors are seeded into this rater's live work: their answers are checked for drift.
        False in a rater package: it deals its silent anchors as items it cannot tell apart
        (`anchor_every` 0 in the file), so it shows no drift notice; the lead's report checks
        them after merge (store/package_merge.py). False too for a rater's own login role on a server:
        it may not read the references (an answer could be corrected to them); the lead's
        dashboard checks its drift."""
        return self.anchor_every > 0 and self._own_drift

    def image(self, sha256: str) -> bytes:
        return self.study.media.read(sha256)


_WARM = threading.Event()
_WARM_LOCK = threading.Lock()
_warming: list[threading.Thread] = []


def _warm() -> None:
    try:
        from ..stats import drift  # noqa: F401
        from . import frames  # noqa: F401
    finally:
        _WARM.set()  # a failed import fails again, with its message, in the check itself


def warm_drift_check() -> None:
    """Import what the drift check needs (pandas, scipy: seconds on a loaded machine) on a
    background thread, once per process; `drift_check_ready()` says when it is done."""
    with _WARM_LOCK:
        if _warming or _WARM.is_set():
            return
        t = threading.Thread(target=_warm, name="warm-drift-check", daemon=True)
        _warming.append(t)
        t.start()


def drift_check_ready() -> bool:
    """The drift check runs without importing anything first (it takes milliseconds)."""
    if not _WARM.is_set() and "annotator.stats.drift" in sys.modules and not _warming:
        _WARM.set()  # imported by someone else meanwhile
    return _WARM.is_set()
