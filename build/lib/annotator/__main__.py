from annotator.cli import main

raise SystemExit(main())
