"""The bottom layer: standard-library helpers every other layer may use.

`domain` holds the study's rules and does no I/O; what sits here is plumbing that several layers
need and that none of them owns: atomic file writes (base/atomic.py) and where a study lives
(base/location.py: folder, package or server URL; passwords cut) and long work's progress and
cancel state (base/task.py). Standard library only, and
no import of any other annotator package (tests/unit/test_layering.py)."""
