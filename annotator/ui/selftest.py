"""`annotator --selftest`: the checks below the window (``services.selftest``) and those that
need Qt: a window opened offscreen and grabbed to PNG, the translations loaded, the Qt
plugins the app needs found. One line per check; the exit status is 1 when any failed.

It always runs offscreen (it sets ``QT_QPA_PLATFORM=offscreen`` for itself), so it works
on a build machine, in CI and on a rater's machine alike, display or not.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ..services.selftest import Check, _run


def _window(out: Path) -> Callable[[], str]:
    def run() -> str:
        from PySide6.QtGui import QImage

        from .main_window import MainWindow
        from .settings import AppSettings

        w = MainWindow(AppSettings(out / "settings.ini"))
        w.resize(1100, 720)
        w.show()
        try:
            png = out / "selftest-window.png"
            if not w.grab().save(str(png)):
                raise RuntimeError("the window could not be saved as PNG")
            img = QImage(str(png))
            colours = {
                img.pixel(x, y)
                for x in range(0, img.width(), 37)
                for y in range(0, img.height(), 29)
            }
            if img.isNull() or len(colours) < 3:
                raise RuntimeError("the grabbed window is blank")
            return f"{img.width()}x{img.height()} PNG, {png.stat().st_size // 1024} KiB ({png})"
        finally:
            w.close()
            w.shutdown()

    return run


def _translations(app: object) -> Callable[[], str]:
    def run() -> str:
        from . import i18n

        done = []
        for lang in i18n.LANGUAGES:
            if lang == i18n.SOURCE_LANGUAGE:
                continue
            got = i18n.install(app, lang)  # type: ignore[arg-type]
            text = i18n.translate("LabelView", "Submit ({key})")
            if got != lang or text == "Submit ({key})":
                raise RuntimeError(
                    f"the {lang} translation did not load ({i18n.qm_path(lang, build=False)})"
                )
            done.append(f"{lang} ({text.format(key='Enter')!r})")
        i18n.install(app, i18n.SOURCE_LANGUAGE)  # type: ignore[arg-type]
        return ", ".join(done)

    return run


def _plugins() -> str:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QLibraryInfo
    from PySide6.QtGui import QGuiApplication, QImage, QImageReader

    plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
    wanted = {"linux": "libqxcb.so", "win32": "qwindows.dll", "darwin": "libqcocoa.dylib"}.get(
        sys.platform
    )
    native = plugins / "platforms" / wanted if wanted else None
    if native is not None and not native.exists():
        raise RuntimeError(f"the platform plugin {native} is missing")
    img = QImage(8, 8, QImage.Format.Format_RGB32)
    buf = QByteArray()
    dev = QBuffer(buf)
    dev.open(QIODevice.OpenModeFlag.WriteOnly)
    # PySide6's stubs type the format as bytes; at run time only a str is accepted
    if not img.save(dev, "PNG"):  # type: ignore[call-overload]
        raise RuntimeError("PNG cannot be written")
    formats = sorted(bytes(f.data()).decode() for f in QImageReader.supportedImageFormats())
    return (
        f"platform {QGuiApplication.platformName()}, native plugin {native.name if native else '-'} present, "
        f"image formats {' '.join(formats[:8])}"
    )


def run_selftest() -> int:
    """Print one line per check; 0 when every check passed, else 1."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"  # chosen explicitly: the self-test needs no screen
    t0 = time.perf_counter()
    from ..services import selftest

    results: list[Check] = []
    for c in selftest.checks():
        print(c.line(), flush=True)
        results.append(c)
    from PySide6.QtCore import qInstallMessageHandler

    from .app import make_app

    # Qt's offscreen plugin warns about window hints it ignores: not a finding of the self-test.
    qInstallMessageHandler(
        lambda _mode, _ctx, msg: (
            None if "propagateSizeHints" in msg else print(f"qt: {msg}", file=sys.stderr)
        )
    )
    app = make_app(["annotator"])
    with tempfile.TemporaryDirectory(prefix="annotator-selftest-ui-") as tmp:
        keep = os.environ.get("ANNOTATOR_SELFTEST_OUT")  # where CI keeps the grabbed window
        out = Path(keep) if keep else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for name, fn in (
            ("qt plugins", _plugins),
            ("translations", _translations(app)),
            ("window", _window(out)),
        ):
            c = _run(name, fn)
            print(c.line(), flush=True)
            results.append(c)
    failed = [c.name for c in results if not c.ok]
    print(
        f"selftest: {len(results) - len(failed)} of {len(results)} checks passed in "
        f"{time.perf_counter() - t0:.1f} s" + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0
