"""Private scratch folders of one process (an import's encoded images, a merge's copy of a
package), named by the process that made them, so that the folders of a process that was killed
(a timeout, a crash) are removed by the next one that makes its own.
Tested in tests/unit/test_security_inputs.py.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

__all__ = ["scratch_dir", "sweep"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def sweep(kind: str, base: str | None = None) -> int:
    """Remove the `annotator-<kind>-<pid>-*` folders whose process is gone; how many."""
    root = Path(base or tempfile.gettempdir())
    named = re.compile(rf"^annotator-{re.escape(kind)}-(\d+)-")
    removed = 0
    try:
        entries = list(root.iterdir())
    except OSError:
        return 0
    for entry in entries:
        m = named.match(entry.name)
        if m and int(m.group(1)) != os.getpid() and not _alive(int(m.group(1))):
            try:
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                    removed += 1
            except OSError:
                pass  # another user's, or being removed: left alone
    return removed


def scratch_dir(kind: str) -> Path:
    """A new private folder `annotator-<kind>-<pid>-XXXX` in the temporary folder, after removing
    those that killed processes left."""
    sweep(kind)
    return Path(tempfile.mkdtemp(prefix=f"annotator-{kind}-{os.getpid()}-"))
