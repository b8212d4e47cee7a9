"""The frozen app's entry point: the same `annotator` command as `pip install` gives."""

from annotator.cli import main

raise SystemExit(main())
