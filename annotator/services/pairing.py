"""A rater's pairwise session: which output better meets the prompt and criteria?"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..domain.records import ItemView, Progress
from ..store import pairs as store
from ..store.people import start_session
from .resend import ResendIds
from .study import Study


@dataclass(frozen=True)
class ServedPair:
    pair_pk: int
    left_pk: int
    right_pk: int
    left: ItemView
    right: ItemView
    position: int | None
    seed: int | None
    previous_choice: str | None = None
    previous_reason: str | None = None
    previous_vote: int | None = None


class PairSession:
    def __init__(self, study: Study, rater: str) -> None:
        self.study = study
        self.rater = rater
        self.question = study.setting("pair_question")
        if not store.has_pairs(
            study.db
        ):  # designed once (by the lead's assign, or the first pair session)
            store.ensure_pairs(study.db)
        store.ensure_pair_queue(study.db, rater, int(study.setting("pair_raters_per_pair")))
        self.session_pk = start_session(study.db, rater, "pair")
        self._started = time.monotonic()
        self._session_done = 0
        self._back_steps = 0
        self.last_replaced_other = False
        self._resend = ResendIds()

    def next(self) -> ServedPair | None:
        self._back_steps = 0
        row = store.next_pair(self.study.db, self.rater)
        if row is None:
            return None
        pos, pair_pk, left, right, seed, lv, rv = row
        return ServedPair(pair_pk, left, right, lv, rv, pos, seed)

    def peek(self, served: ServedPair | None) -> ServedPair | None:
        """The pair that will follow `served`, without serving it (for decoding its images early)."""
        after = served.position if served is not None and served.position is not None else -1
        row = store.next_pair(self.study.db, self.rater, after=after)
        if row is None:
            return None
        pos, pair_pk, left, right, seed, lv, rv = row
        return ServedPair(pair_pk, left, right, lv, rv, pos, seed)

    def back(self) -> ServedPair | None:
        hist = store.votes_in_session(self.study.db, self.session_pk)
        if self._back_steps >= len(hist):
            return None
        self._back_steps += 1
        h = hist[len(hist) - self._back_steps]
        return ServedPair(
            h["pair_pk"],
            h["left"],
            h["right"],
            h["left_view"],
            h["right_view"],
            h["position"],
            h["seed"],
            h["choice"],
            h["reason"],
            h["vote"],
        )

    def vote(self, served: ServedPair, choice: str, reason: str | None, time_ms: int | None) -> int:
        """Commit the vote with the side shown; a re-vote supersedes the earlier one."""
        reason = (reason or "").strip() or None
        key = (served.pair_pk, served.previous_vote, choice, reason)
        done = self._resend.send(
            key,
            lambda uid: store.cast_vote(
                self.study.db,
                rater=self.rater,
                pair_pk=served.pair_pk,
                left=served.left_pk,
                right=served.right_pk,
                choice=choice,
                seed=served.seed,
                session_pk=self.session_pk,
                position=served.position,
                reason=reason,
                time_ms=time_ms,
                supersedes=served.previous_vote,
                uuid=uid,
            ),
        )
        self.last_replaced_other = done.replaced_other
        if served.previous_vote is None:
            self._session_done += 1
        return done.id

    def progress(self) -> Progress:
        done, total = store.pair_progress(self.study.db, self.rater)
        return Progress(done, total, self._session_done, time.monotonic() - self._started)

    def image(self, sha256: str) -> bytes:
        return self.study.media.read(sha256)
