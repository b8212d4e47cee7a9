"""A rater's unfinished answer, kept on disk until it is submitted.

Two metrics answered and a reason typed are work: a closed window (Alt+F4), a crash or a power
cut must not turn them into a blank item. The label view writes the form of the item on screen
here a moment after each change (one small JSON file per study and rater, beside the app's
settings, written atomically), restores it when that item comes up again, and removes it once the
answer is stored. A draft is never an answer: nothing here reaches the study until the rater
submits it, after seeing the item again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..base.atomic import atomic_write_text

__all__ = ["DraftStore"]


class DraftStore:
    """The one draft of a rater in a study: (item pk, answers), or nothing."""

    def __init__(self, folder: Path, study_key: str, rater: str) -> None:
        name = hashlib.sha256(f"{study_key}\0{rater}".encode()).hexdigest()[:32]
        self.path = Path(folder) / f"{name}.json"

    def load(self, item_pk: int) -> dict[str, Any] | None:
        """The draft answers of `item_pk`, or None (none kept, another item's, or unreadable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("item_pk") != item_pk:
            return None
        answers = data.get("answers")
        return answers if isinstance(answers, dict) and answers else None

    def save(self, item_pk: int, answers: dict[str, Any]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(
                self.path, json.dumps({"item_pk": item_pk, "answers": answers}, default=str)
            )
        except OSError:
            pass  # a draft is a convenience: a full disk must not stop the rater answering

    def clear(self, item_pk: int | None = None) -> None:
        """Remove the draft (only if it is `item_pk`'s, when given)."""
        if item_pk is not None and self.load(item_pk) is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
