"""The clear-consensus rule's thresholds, light enough for the services and the UI to import
without the statistics; the rule itself is stats/consensus.py (`clear`, `contradicted`,
`metric_consensus`), used by the findings, the held-out human's rate, the review queue and the
gold alike.

A consensus is clear when at least MIN_HUMANS raters answered and, for nominal answers,
CLEAR_SHARE of them gave the same answer, or, on a scale, their answers span less than SCALE_GAP
points; a judge contradicts a scale's humans when it is SCALE_GAP or more outside their range.
"""

from __future__ import annotations

CLEAR_SHARE = 0.8
SCALE_GAP = 2.0
MIN_HUMANS = 2
