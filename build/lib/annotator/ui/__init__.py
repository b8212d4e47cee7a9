"""The rater desktop app (PySide6). The only package that imports Qt.

Entry point: ``annotator.ui.app.run_app(study, rater, argv=None) -> int``.

Importing this package first applies ``keep_none_alive()``: PySide6 6.12.0 on
Python 3.11 drops one reference to ``None`` on EVERY call of a Qt method that
returns void (``obj.setObjectName("x")`` lowers ``sys.getrefcount(None)`` by
one), so after a few thousand calls the interpreter aborts with "none_dealloc:
deallocating None"; test runs also end in "bool_dealloc" (True/False lose
references the same way). Python 3.12+ makes these singletons immortal, which is
exactly what the fix below does by hand on older interpreters. Import ``annotator.ui`` (or any
module in it) before driving Qt from Python.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["keep_none_alive", "run_app"]


def _affected() -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("PySide6-Essentials") == "6.12.0" or version("PySide6") == "6.12.0"
    except PackageNotFoundError:
        return False


def keep_none_alive() -> None:
    """Make None, True and False effectively immortal on Python < 3.12 under the broken
    release (pyproject.toml excludes it; this guards an environment that has it anyway)."""
    if sys.version_info >= (3, 12) or not _affected():
        return
    for singleton in (None, True, False):
        refcnt = ctypes.c_ssize_t.from_address(id(singleton))  # ob_refcnt is the first field
        if refcnt.value < 1 << 40:
            # These are never freed, so a huge count changes nothing but the leak's reach.
            refcnt.value += 1 << 50


keep_none_alive()


def run_app(*args, **kwargs) -> int:  # noqa: ANN002, ANN003 - thin lazy forwarder
    """Start the app (imports Qt only when called)."""
    from .app import run_app as _run

    return _run(*args, **kwargs)
