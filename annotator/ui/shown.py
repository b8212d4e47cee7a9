"""The one conversion of a value the study holds into the text a widget shows.

Values reach the screen from pandas frames and SQL rows: a missing one may be None, a float NaN,
``pandas.NA`` or ``NaT``, and a number may be a numpy scalar. Handing any of those to a Qt text
setter raises (``QTableWidgetItem(nan)`` is OverflowError; a crash in libshiboken follows), so
every view builds its texts through ``shown_text``: a missing value is the empty text, anything
else its ``str``. No Qt here: the rule is testable without a window.
"""

from __future__ import annotations

import math
from typing import Any


def is_blank(value: Any) -> bool:
    """None, NaN (float or numpy), pandas NA / NaT: nothing to show."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    kind = type(value).__name__
    if kind in ("NAType", "NaTType"):
        return True
    # numpy floating scalars (np.float32(nan)) are not float subclasses
    if kind.startswith("float") and hasattr(value, "dtype"):
        return bool(value != value)  # noqa: PLR0124 - NaN is the one value unequal to itself
    return False


def shown_text(value: Any, blank: str = "") -> str:
    """`value` as a widget's text: `blank` when it is missing, else its text (whole floats
    without ``.0``: a count read through pandas is a float)."""
    if is_blank(value):
        return blank
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if hasattr(value, "item") and hasattr(value, "dtype"):  # a numpy scalar: its Python value
        return shown_text(value.item(), blank)
    return str(value)


__all__ = ["is_blank", "shown_text"]
