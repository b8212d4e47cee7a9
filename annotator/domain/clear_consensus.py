"""The clear-consensus rule's thresholds: one definition for the findings (stats) and the lead's
review queue (services), so that "the judge contradicts a clear consensus" means the same in both.

A consensus is clear when at least MIN_HUMANS raters answered and, for nominal answers,
CLEAR_SHARE of them gave the same answer, or, on a scale, their answers span less than SCALE_GAP
points.
"""

from __future__ import annotations

CLEAR_SHARE = 0.8
SCALE_GAP = 2.0
MIN_HUMANS = 2
