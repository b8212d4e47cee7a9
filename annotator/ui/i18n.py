"""The app's languages: Qt's translation system, English as the source, Spanish shipped.

Every user-visible string of the UI goes through ``translate(context, text)``
(or ``QT_TRANSLATE_NOOP`` for tables built at import time, translated where they
are shown), with ``{name}`` placeholders filled by ``str.format`` afterwards, so
a translator sees whole sentences. ``pyside6-lupdate`` extracts them into
``translations/annotator_<lang>.ts`` beside this module (``packaging/i18n.sh update``).

The ``.ts`` files are the only committed form. The ``.qm`` a ``QTranslator``
loads is built from them by ``pyside6-lrelease``: by ``packaging/build.sh`` into
the bundle, and otherwise (a source checkout, a wheel) on first use into the
user's cache folder, rebuilt whenever the ``.ts`` is newer. One source of truth,
no binary to keep in step by hand.

The language is the system locale's unless the app setting ``language`` names
one ("en", "es"; "" or "system" follows the locale). Qt's own strings (key
names such as "Space", standard dialogs) come from Qt's ``qtbase_<lang>.qm``.

Report texts stay English (docs/raters.md, "Language"); rubric texts are per language in
the rubric file (``Rubric.localized``).

Public API: ``translate``, ``QT_TRANSLATE_NOOP``, ``LANGUAGES``, ``ts_path(lang)``,
``qm_path(lang, build=True) -> Path | None``, ``system_language()``,
``install(app, lang) -> str`` (the language installed), ``current_language()``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from ..base.atomic import atomic_path

HERE = Path(__file__).resolve().parent / "translations"
SOURCE_LANGUAGE = "en"
LANGUAGES: dict[str, str] = {"en": "English", "es": "Español"}
_installed: list[QTranslator] = []
_current = SOURCE_LANGUAGE


def translate(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """``QCoreApplication.translate``; the name lupdate looks for."""
    return QCoreApplication.translate(context, text, disambiguation, n)


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the name lupdate looks for
    """Marks `text` for extraction where it is declared; translated where it is shown."""
    return text


def ts_path(lang: str) -> Path:
    return HERE / f"annotator_{lang}.ts"


def _frozen_dir() -> Path | None:
    base = getattr(sys, "_MEIPASS", None)  # a PyInstaller bundle: the .qm was built into it
    return Path(base) / "annotator" / "ui" / "translations" if base else None


def _lrelease() -> str | None:
    found = shutil.which("pyside6-lrelease") or shutil.which("lrelease")
    if found:
        return found
    try:  # PySide6-Essentials ships the binary inside the package
        import PySide6

        exe = Path(PySide6.__file__).parent / ("lrelease.exe" if os.name == "nt" else "lrelease")
        return str(exe) if exe.exists() else None
    except ImportError:  # pragma: no cover
        return None


def _cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("annotator", appauthor=False)) / "i18n"


def build_qm(ts: Path, qm: Path) -> bool:
    """Run lrelease on `ts` into `qm` (written beside it first, then renamed: atomic)."""
    tool = _lrelease()
    if tool is None or not ts.exists():
        return False
    try:
        with atomic_path(qm) as tmp:
            r = subprocess.run(
                [tool, "-silent", str(ts), "-qm", str(tmp)], capture_output=True, text=True
            )
            if r.returncode != 0:
                raise FileNotFoundError(tmp)  # lrelease failed: the old file stays
    except FileNotFoundError:
        return False
    return True


def qm_path(lang: str, *, build: bool = True) -> Path | None:
    """The compiled translation for `lang`: in the bundle, beside the .ts, or built into the cache."""
    name = f"annotator_{lang}.qm"
    ts = ts_path(lang)
    for folder in (_frozen_dir(), HERE):
        if folder is not None and (folder / name).exists():
            q = folder / name
            if not ts.exists() or q.stat().st_mtime >= ts.stat().st_mtime:
                return q
    cached = _cache_dir() / name
    if cached.exists() and (not ts.exists() or cached.stat().st_mtime >= ts.stat().st_mtime):
        return cached
    if build and build_qm(ts, cached):
        return cached
    return None


def system_language() -> str:
    """The first UI language of the system locale that the app has, else English."""
    for name in QLocale.system().uiLanguages():
        lang = name.replace("_", "-").split("-")[0].lower()
        if lang in LANGUAGES:
            return lang
    return SOURCE_LANGUAGE


def chosen_language(setting: str | None) -> str:
    """The setting's language when it names one we have; otherwise the system's."""
    if setting and setting.lower() in LANGUAGES:
        return setting.lower()
    return system_language()


def install(app: QCoreApplication, lang: str) -> str:
    """Load `lang` (the app's strings and Qt's own) into `app`, replacing what was loaded.

    Returns the language in effect: English when `lang`'s translation cannot be had
    (the app then says nothing; English is always complete).
    """
    global _current
    for t in _installed:
        app.removeTranslator(t)
    _installed.clear()
    _current = SOURCE_LANGUAGE
    QLocale.setDefault(QLocale(lang if lang in LANGUAGES else SOURCE_LANGUAGE))
    if lang == SOURCE_LANGUAGE or lang not in LANGUAGES:
        return _current
    qm = qm_path(lang)
    if qm is None:
        return _current
    ours = QTranslator(app)
    if not ours.load(str(qm)):
        return _current
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    for base in ("qtbase",):
        qt = QTranslator(app)
        if qt.load(f"{base}_{lang}", qt_dir) or (
            _frozen_dir() and qt.load(f"{base}_{lang}", str(_frozen_dir()))
        ):
            app.installTranslator(qt)
            _installed.append(qt)
    app.installTranslator(ours)
    _installed.append(ours)
    _current = lang
    return _current


def current_language() -> str:
    return _current
