"""A judge's version: what makes two of its runs answer the same question the same way.

Two runs of one judge are the same version when model, prompt (instructions and
schema, by hash), schema and the settings that change answers agree; anything
else (a new prompt, another model, a temperature, asking for confidences) is a
new version whose scores are kept beside the old ones, so versions can be
compared on the same items. Scores imported from a file are version "import".
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..domain.errors import InputError

IMPORTED = "import"
# settings at these values leave the version as a run before versions existed had it (migration
# 0007 hashed those runs with no settings), so upgrading a study and running the same judge
# again resumes its run instead of starting a new version
DEFAULT_SETTINGS: dict[str, Any] = {
    "api": "responses",
    "image_detail": "high",
    "temperature": None,
    "max_output_tokens": None,
    "confidence": "none",
    "task": "items",
    "simulated_annotators": 0,
    "shots": 0,
}
VERSION_CHARS = 12  # hex digits shown and stored: 48 bits, collision-free for any one judge


def judge_version(
    model: str | None, prompt_sha256: str | None, schema: str | None, settings: Any
) -> str:
    """The version of a run: settings count only where they differ from DEFAULT_SETTINGS
    (migration 0007 uses the same recipe with no settings)."""
    if isinstance(settings, dict):
        changed = {
            k: v
            for k, v in settings.items()
            if k not in DEFAULT_SETTINGS or DEFAULT_SETTINGS[k] != v
        }
        settings = changed or None
    text = json.dumps([model, prompt_sha256, schema, settings], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:VERSION_CHARS]


def parse_judge_ref(ref: str) -> tuple[str, str | None]:
    """`name` or `name@version` -> (name, version or None); InputError when either part is empty."""
    name, sep, version = ref.strip().rpartition("@") if "@" in ref else (ref.strip(), "", "")
    if not name or (sep and not version):
        raise InputError(
            f"'{ref}' is not a judge: give its name, or name@version for one of its versions",
            field="judge",
        )
    return name, (version or None)
