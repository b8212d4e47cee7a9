"""Study settings: JSON values by key, finite numbers only."""

from __future__ import annotations

import json
import math
from typing import Any

from sqlalchemy.orm import Session as OrmSession

from ..domain.errors import InputError
from .models import Setting


def to_json(value: Any, key: str) -> str:
    """JSON text of a setting; NaN and infinities are refused, naming the key."""

    def check(v: Any) -> None:
        if isinstance(v, float) and not math.isfinite(v):
            raise InputError(f"setting '{key}' holds {v}; use a finite number", field=key)
        if isinstance(v, dict):
            for x in v.values():
                check(x)
        elif isinstance(v, list):
            for x in v:
                check(x)

    check(value)
    return json.dumps(value, allow_nan=False)


def put(s: OrmSession, key: str, value: Any) -> None:
    text = to_json(value, key)
    row = s.get(Setting, key)
    if row is None:
        s.add(Setting(key=key, value=text))
    else:
        row.value = text


def write_defaults(s: OrmSession, values: dict[str, Any]) -> None:
    for k, v in values.items():
        put(s, k, v)
