"""Agreement, consensus, reconciliation, pairwise models, drift. Pure functions
over numpy / pandas / scipy / krippendorff: no files, no database, no Qt."""
