"""The TIFA v1.0 figures the reports must reproduce, written down once (tests/data/tifa/README.md
says where each comes from). Imported by test_real_data.py, test_interop_real_data.py and
test_stats_report_model.py."""

from __future__ import annotations

# Published: the TIFA README's stored outputs of human_annotations/compute_correlation.ipynb,
# judge -> (Pearson, Kendall tau-b) against the mean human rating on 800 items.
TIFA_PUBLISHED = {
    "tifa_mplug-large": (0.5967201059577838, 0.4717164648720951),
    "tifa_blip2-flant5xl": (0.5589831246126169, 0.4359972113027652),
    "clipscore_vitb32": (0.3318181645103688, 0.2314458979024208),
}

# Recomputed with the krippendorff package 0.9.0 (not published): the humans' alpha by level,
# for the two TIFA slots (ratings.csv) and the five DSG raters (ratings_dsg.csv).
HUMAN_ALPHA = {
    "ratings.csv": {
        "nominal": 0.375033,  # six decimals: the README's table
        "ordinal": 0.718576365975048,
        "interval": 0.6795412919937922,
    },
    "ratings_dsg.csv": {
        "nominal": 0.396883,
        "ordinal": 0.6854298173736764,
        "interval": 0.6844080126694962,
    },
}
# Recomputed with scipy (not published): the mean of the five DSG ratings against each judge.
DSG_KENDALL = {
    "tifa_mplug-large": 0.470299,
    "tifa_blip2-flant5xl": 0.432632,
    "clipscore_vitb32": 0.190572,
}
