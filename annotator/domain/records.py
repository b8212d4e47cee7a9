"""Plain records passed between the store, the services and the UI.

The UI only ever gets these: never an ORM object, never a generator name or a
source path (ItemView has no field that could carry one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ItemSpec:
    """One validated manifest line, ready to store (media already encoded)."""

    item_id: str
    case_id: str
    prompt: str
    criteria: str | None
    generator: str
    outputs: tuple[str, ...] = ()  # media sha256
    inputs: tuple[str, ...] = ()
    mask: str | None = None
    seed: int | None = None
    slice: str | None = None
    text: str | None = None
    task_type: str | None = None
    source: str | None = None
    source_names: dict[str, str] = field(default_factory=dict)  # media sha -> original name

    def content_key(self) -> tuple:
        """What makes two imports of the same item_id the same item."""
        return (
            self.case_id,
            self.prompt,
            self.criteria or "",
            self.generator,
            self.outputs,
            self.inputs,
            self.mask,
            self.text,
        )


@dataclass(frozen=True)
class ItemView:
    """Everything a rater may see of an item, and nothing more."""

    display_code: str
    prompt: str
    criteria: str
    outputs: tuple[str, ...]
    inputs: tuple[str, ...] = ()
    mask: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class ServedItem:
    """One unit of label work: an item view plus where it sits in the queue."""

    item_pk: int
    view: ItemView
    queue_position: int | None
    context: str = "live"  # live | anchor | calibration
    showing_pk: int | None = None
    previous: dict[str, Any] | None = None  # answers when going back
    previous_reason: str | None = None
    previous_judgement: int | None = None


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    session_done: int
    session_seconds: float

    @property
    def pace_per_hour(self) -> float | None:
        if self.session_done < 1 or self.session_seconds <= 0:
            return None
        return self.session_done / self.session_seconds * 3600

    @property
    def seconds_left(self) -> float | None:
        pace = self.pace_per_hour
        if not pace:
            return None
        return (self.total - self.done) / pace * 3600


@dataclass(frozen=True)
class RaterInfo:
    name: str
    is_operator: bool
    expertise: str | None
    seed: int
