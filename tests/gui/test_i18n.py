"""Spanish, and ready for more languages.

* every string the UI code marks for translation is in the Spanish .ts, translated, with
  the same ``{placeholders}``;
* walking every screen in Spanish finds no English the app wrote (the study's own
  content - prompts, names, the report's tables - is the study's, flagged ``content``);
* rubric texts come from the rubric file per language, and translations never change the
  rubric's version.
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gui_support import RATER, build_study
from PySide6.QtWidgets import QApplication, QWidget
from screens import walk_screens

from annotator.domain.rubric import parse_rubric, rubric_from_canonical
from annotator.ingest.rubrics import load_rubric
from annotator.ui import i18n

UI = Path(i18n.__file__).resolve().parent
TS = i18n.ts_path("es")
PLACEHOLDER = re.compile(r"\{[a-z_]*\}")
# Words that are English and not Spanish: one of them in a visible string means the app left
# English on screen. (Key names come from Qt's own translation: "Espacio", "Retroceso"...)
ENGLISH = set(
    """the and of to is are your you with for this that open press answer answers item items
study rater raters next back submit cannot can't judge keys which better both neither loading
saving start choose pick add new close quit mode pairwise fit reason optional verdict rules prompt
criteria input output mask shown hidden done per hour session every thank result not yet qualified share
needed history before after change when anchor reference recompute cancel computing page waiting sync
instructions dashboard label from what who here there pass fail none metric metrics lead blinded leave
leaving stay opening closing language system rating still try demo package server folder left right
enter space""".split()
)


def _calls() -> list[tuple[str, str, Path]]:
    """(context, text, file) of every translate / QT_TRANSLATE_NOOP call with literal arguments."""
    out = []
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", "")
            )
            if (
                name in ("translate", "QT_TRANSLATE_NOOP")
                and len(node.args) >= 2
                and all(
                    isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args[:2]
                )
            ):
                out.append((node.args[0].value, node.args[1].value, path))
    return out


def _ts() -> dict[tuple[str, str], str]:
    out = {}
    for ctx in ET.parse(TS).getroot().findall("context"):
        name = ctx.find("name").text
        for m in ctx.findall("message"):
            tr = m.find("translation")
            out[(name, m.find("source").text)] = (
                "" if tr.get("type") in ("unfinished", "obsolete") else (tr.text or "")
            )
    return out


def test_every_marked_string_is_translated_with_its_placeholders():
    ts = _ts()
    calls = _calls()
    assert len(calls) > 300
    missing = [(c, t, p.name) for c, t, p in calls if (c, t) not in ts]
    assert not missing, f"not in {TS.name} (run packaging/i18n.sh update): {missing[:5]}"
    untranslated = [k for k, v in ts.items() if not v]
    assert not untranslated, untranslated[:5]
    wrong = [
        (k, v)
        for k, v in ts.items()
        if set(PLACEHOLDER.findall(k[1])) != set(PLACEHOLDER.findall(v))
    ]
    assert not wrong, wrong[:5]
    # nothing marked in the code is formatted before it is translated
    assert not [t for _c, t, _p in calls if t.startswith('f"')]


def _visible_strings(root: QWidget, drop: list[str]) -> list[tuple[str, str]]:
    """(widget class, text) for what the app wrote in a visible widget tree; widgets flagged
    ``content`` (the study's words) and their children are skipped."""
    from gui_support import widget_strings

    out = []
    todo = [root]
    while todo:
        w = todo.pop()
        if not w.isVisible() or w.property("content"):
            continue
        for text in widget_strings_shallow(w, widget_strings):
            for d in drop:
                text = text.replace(d, " ")
            out.append((type(w).__name__, text))
        todo += [c for c in w.findChildren(QWidget) if c.parentWidget() is w]
    return out


def widget_strings_shallow(w: QWidget, collect) -> list[str]:  # noqa: ANN001
    """Strings of `w` itself (not its children), reusing gui_support's collector on a bare copy."""
    from PySide6.QtWidgets import (
        QAbstractButton,
        QComboBox,
        QGroupBox,
        QLabel,
        QLineEdit,
        QMainWindow,
    )

    out = [w.toolTip(), w.accessibleName(), w.accessibleDescription()]
    if isinstance(w, (QLabel, QAbstractButton, QLineEdit)):
        out.append(w.text())
    if isinstance(w, QLineEdit):
        out.append(w.placeholderText())
    if isinstance(w, QGroupBox):
        out.append(w.title())
    if isinstance(w, QComboBox):
        out += [w.itemText(i) for i in range(w.count())]
    if isinstance(w, QMainWindow):
        out.append(w.statusBar().currentMessage())
        out += [a.text() for a in w.menuBar().actions()]
        for a in w.menuBar().actions():
            if a.menu() is not None:
                out += [x.text() for x in a.menu().actions() if x.isVisible()]
    return [s for s in out if s]


def _english(text: str) -> list[str]:
    words = re.findall(r"[a-z']+", text.lower().replace("&", ""))
    return [w for w in words if w in ENGLISH]


@pytest.fixture
def spanish(qapp):
    lang = i18n.install(qapp, "es")
    assert lang == "es", "the Spanish translation did not load"
    yield
    i18n.install(qapp, "en")


def test_every_screen_in_spanish_shows_no_english(qtbot, tmp_path, spanish, screenshot_dir):
    built = build_study(tmp_path, "ui", anchors=True, anchor_every=0)
    drop = [RATER, "study", "annotator"]  # the study's and the rater's names, the app's name
    found: dict[str, list] = {}
    for name, win in walk_screens(qtbot, built.folder):
        bad = [(cls, text) for cls, text in _visible_strings(win, drop) if _english(text)]
        if bad:
            found[name] = bad[:4]
        if name == "label_answered":
            assert win.grab().save(str(screenshot_dir / "label_es.png"))
        if name == "label":
            form = win.current_view.form
            titles = [r.title.text() for r in form.rows]
            assert any("Cumplimiento de la instrucción" in t for t in titles), (
                titles
            )  # the rubric's Spanish
            assert form.rows[0].pass_btn.text().startswith("APROBADO")
    assert not found, found


def test_language_from_the_system_with_an_override(qtbot, qapp, monkeypatch):
    from PySide6.QtCore import QLocale

    QLocale.setDefault(QLocale("es_ES"))
    monkeypatch.setattr(QLocale, "system", staticmethod(lambda: QLocale("es_ES")))
    assert i18n.chosen_language("") == "es" and i18n.chosen_language("system") == "es"
    assert i18n.chosen_language("en") == "en"
    monkeypatch.setattr(QLocale, "system", staticmethod(lambda: QLocale("de_DE")))
    assert i18n.chosen_language("") == "en"  # a language the app does not have: English
    # The menu switches it now (and for the next start); the open view is rebuilt in it.
    from annotator.ui.main_window import MainWindow
    from annotator.ui.settings import AppSettings

    w = MainWindow(AppSettings())
    qtbot.addWidget(w)
    try:
        w.language_actions["es"].trigger()
        assert w.settings.language() == "es" and i18n.current_language() == "es"
        assert w.start.study_box.title() == "1. Estudio"
        w.language_actions["system"].trigger()
        assert w.settings.language() == ""
    finally:
        i18n.install(qapp, "en")
        w.close()
    assert QApplication.translate("LabelView", "Submit ({key})") == "Submit ({key})"


def test_rubric_translations_are_outside_the_version(tmp_path):
    root = Path(__file__).resolve().parents[2] / "rubrics"
    for path in sorted(root.glob("*.toml")):
        r = load_rubric(path)
        assert "es" in r.languages(), path.name
        text = path.read_text(encoding="utf-8")
        plain = re.sub(r'instructions_es = """.*?"""\n', "", text, flags=re.S)
        plain = "\n".join(line for line in plain.splitlines() if not re.match(r"^\w+_es\s*=", line))
        assert parse_rubric(plain).version == r.version  # adding translations kept the version
        es = r.localized("es")
        assert es.version == r.version and es.metrics[0].label != r.metrics[0].label
        stored = rubric_from_canonical(r.canonical_text())  # what a study keeps
        assert stored.version == r.version and stored.localized("es").title == es.title
    bad = 'id = "x"\n[[metrics]]\nkey = "g"\nkind = "scale"\nmin = 0\nmax = 2\nlevels = {2 = "a"}\nlevels_es = {1 = "b"}\n'
    with pytest.raises(Exception, match="levels_es"):
        parse_rubric(bad)
