"""Use cases shared by the UI and the CLI: open a study, import, label, vote,
calibrate, judge, report."""
