"""Every keyboard shortcut of the app, declared in one table (as Anki's reviewer does).

Each action belongs to one or more *contexts*: ``global`` (the main window,
active everywhere), ``label`` (the label view and the calibration answer
screen), ``pair``, ``reason`` (a reason box being typed in; its view's keys
that do not type text act there too), ``feedback`` (calibration feedback and
verdict), ``dashboard``, ``review`` (the lead's review view: the answer keys of
the label form act on the entry's metric), ``image`` (an image view that has the keyboard focus)
and ``dialog``. Views do
not compare key codes: they ask ``keymap.action_for(event, context)`` and run
the handler their own table gives for that action name.

The label form has a *focused metric*; answer keys act on it (P / F for a gate,
digits for a scale value, a likert point, a choice option or a tag toggle, X
for "cannot judge"). Zoom uses + / - and Ctrl+0 / Ctrl+1 because plain digits
answer (an image view that has focus also takes plain 0 and 1).

Users override bindings in a keys file (``keys.toml`` beside the settings file,
see docs/raters.md "Keys"): ``action = ["Key", ...]``. A clash (two actions of contexts
active together on one key) keeps the action declared first here and is
reported, with unknown actions and unreadable keys, in ONE line at start-up
(``Keymap.problems()``), never dropped silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QKeySequence

from .i18n import QT_TRANSLATE_NOOP, translate

CONTEXTS = (
    "global",
    "label",
    "pair",
    "reason",
    "feedback",
    "dashboard",
    "review",
    "image",
    "dialog",
)
_MODIFIER_KEYS = (
    Qt.Key.Key_unknown,
    Qt.Key.Key_Shift,
    Qt.Key.Key_Control,
    Qt.Key.Key_Alt,
    Qt.Key.Key_Meta,
)


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    defaults: tuple[str, ...]
    contexts: tuple[str, ...]


def _a(name: str, label: str, keys: tuple[str, ...], *contexts: str) -> Action:
    return Action(name, label, keys, contexts)


_SESSION = ("label", "pair")
_ANSWER = ("label", "review")  # the form's answer keys; the review view answers one metric
_IMAGES = (*_SESSION, "review")
ACTIONS: tuple[Action, ...] = (
    # main window
    _a("open_study", QT_TRANSLATE_NOOP("keymap", "Open a study folder"), ("Ctrl+O",), "global"),
    _a(
        "open_package",
        QT_TRANSLATE_NOOP("keymap", "Open a rater package (.annot)"),
        ("Ctrl+Shift+O",),
        "global",
    ),
    _a(
        "connect_server",
        QT_TRANSLATE_NOOP("keymap", "Open a study on a server"),
        ("Ctrl+Shift+S",),
        "global",
    ),
    _a(
        "leave_rater",
        QT_TRANSLATE_NOOP("keymap", "Leave rater mode (the study lead's views)"),
        ("Ctrl+Shift+E",),
        "global",
    ),
    _a("new_study", QT_TRANSLATE_NOOP("keymap", "New study"), ("Ctrl+N",), "global"),
    _a("add_rater", QT_TRANSLATE_NOOP("keymap", "Add a rater"), ("Ctrl+Shift+A",), "global"),
    _a("start_page", QT_TRANSLATE_NOOP("keymap", "Start page"), ("Ctrl+Shift+H",), "global"),
    _a("close_study", QT_TRANSLATE_NOOP("keymap", "Close the study"), ("Ctrl+Shift+W",), "global"),
    _a("quit", QT_TRANSLATE_NOOP("keymap", "Quit"), ("Ctrl+Q",), "global"),
    _a("mode_label", QT_TRANSLATE_NOOP("keymap", "Label mode"), ("Ctrl+Shift+L",), "global"),
    _a("mode_pairwise", QT_TRANSLATE_NOOP("keymap", "Pairwise mode"), ("Ctrl+Shift+P",), "global"),
    _a(
        "mode_calibration",
        QT_TRANSLATE_NOOP("keymap", "Calibration mode"),
        ("Ctrl+Shift+C",),
        "global",
    ),
    _a(
        "mode_dashboard",
        QT_TRANSLATE_NOOP("keymap", "Dashboard (study lead)"),
        ("Ctrl+Shift+D",),
        "global",
    ),
    _a(
        "mode_review",
        QT_TRANSLATE_NOOP("keymap", "Review and adjudicate (study lead)"),
        ("Ctrl+Shift+R",),
        "global",
    ),
    # label form (label view, calibration answer screen)
    _a("pass", QT_TRANSLATE_NOOP("keymap", "PASS on the focused gate"), ("P",), *_ANSWER),
    _a("fail", QT_TRANSLATE_NOOP("keymap", "FAIL on the focused gate"), ("F",), *_ANSWER),
    *(
        _a(
            f"value_{d}",
            QT_TRANSLATE_NOOP(
                "keymap", "Answer this digit (scale value, point, option or tag number)"
            ),
            (str(d),),
            *_ANSWER,
        )
        for d in range(10)
    ),
    _a(
        "cannot_judge",
        QT_TRANSLATE_NOOP("keymap", "Cannot judge the focused metric"),
        ("X",),
        *_ANSWER,
    ),
    _a(
        "clear",
        QT_TRANSLATE_NOOP("keymap", "Clear the focused metric"),
        ("Backspace", "Delete"),
        *_ANSWER,
    ),
    _a("next_metric", QT_TRANSLATE_NOOP("keymap", "Next metric"), ("Down", "Tab", "J"), "label"),
    _a(
        "prev_metric",
        QT_TRANSLATE_NOOP("keymap", "Previous metric"),
        ("Up", "Backtab", "K"),
        "label",
    ),
    _a("reason", QT_TRANSLATE_NOOP("keymap", "Write the reason"), ("R",), *_ANSWER),
    _a(
        "dismiss", QT_TRANSLATE_NOOP("keymap", "Close the notice above the item"), ("Esc",), "label"
    ),
    _a(
        "leave_reason",
        QT_TRANSLATE_NOOP("keymap", "Leave the reason box (back to the keys)"),
        ("Esc",),
        "reason",
    ),
    _a(
        "submit",
        QT_TRANSLATE_NOOP("keymap", "Submit and go to the next item"),
        ("Return", "Enter"),
        *_ANSWER,
    ),
    _a(
        "instructions",
        QT_TRANSLATE_NOOP("keymap", "Rubric instructions and keys"),
        ("F1", "?"),
        "label",
    ),
    # shared by the label and pair views
    _a(
        "back",
        QT_TRANSLATE_NOOP("keymap", "Back to the previous item or pair"),
        ("Ctrl+Z",),
        *_SESSION,
    ),
    _a("zoom_in", QT_TRANSLATE_NOOP("keymap", "Zoom in"), ("+", "=", "Ctrl++"), *_IMAGES),
    _a("zoom_out", QT_TRANSLATE_NOOP("keymap", "Zoom out"), ("-", "Ctrl+-"), *_IMAGES),
    _a("zoom_fit", QT_TRANSLATE_NOOP("keymap", "Fit images to the window"), ("Ctrl+0",), *_IMAGES),
    _a("zoom_actual", QT_TRANSLATE_NOOP("keymap", "Images at 100 %"), ("Ctrl+1",), *_IMAGES),
    _a("toggle_mask", QT_TRANSLATE_NOOP("keymap", "Show or hide the edit mask"), ("M",), *_IMAGES),
    # pair view
    _a("vote_left", QT_TRANSLATE_NOOP("keymap", "Left is better"), ("1", "Left"), "pair"),
    _a("vote_right", QT_TRANSLATE_NOOP("keymap", "Right is better"), ("2", "Right"), "pair"),
    _a("vote_both", QT_TRANSLATE_NOOP("keymap", "Both meet it"), ("3", "B"), "pair"),
    _a("vote_neither", QT_TRANSLATE_NOOP("keymap", "Neither meets it"), ("4", "N"), "pair"),
    _a(
        "pair_reason",
        QT_TRANSLATE_NOOP("keymap", "Type a reason for the vote"),
        ("R", "Tab"),
        "pair",
    ),
    _a(
        "pair_reason_done",
        QT_TRANSLATE_NOOP("keymap", "Back to voting from the reason"),
        ("Esc", "Return", "Enter"),
        "pair",
    ),
    _a(
        "forward",
        QT_TRANSLATE_NOOP("keymap", "Forward to the first pair without a vote"),
        ("Ctrl+Shift+Z",),
        "pair",
    ),
    # calibration feedback and verdict
    _a(
        "continue",
        QT_TRANSLATE_NOOP("keymap", "Continue (next anchor, or done on the result)"),
        ("Return", "Enter", "Space"),
        "feedback",
    ),
    _a("finish", QT_TRANSLATE_NOOP("keymap", "Leave the calibration result"), ("Esc",), "feedback"),
    # dashboard
    _a(
        "refresh",
        QT_TRANSLATE_NOOP("keymap", "Recompute the report"),
        ("F5", "Ctrl+R"),
        "dashboard",
    ),
    _a("cancel", QT_TRANSLATE_NOOP("keymap", "Cancel the computation"), ("Esc",), "dashboard"),
    _a(
        "live",
        QT_TRANSLATE_NOOP("keymap", "Follow the study's changes (on or off)"),
        ("L",),
        "dashboard",
    ),
    _a("page_down", QT_TRANSLATE_NOOP("keymap", "Page down"), ("PgDown", "Space"), "dashboard"),
    _a("page_up", QT_TRANSLATE_NOOP("keymap", "Page up"), ("PgUp", "Shift+Space"), "dashboard"),
    _a("line_down", QT_TRANSLATE_NOOP("keymap", "Scroll down"), ("Down", "J"), "dashboard"),
    _a("line_up", QT_TRANSLATE_NOOP("keymap", "Scroll up"), ("Up", "K"), "dashboard"),
    _a("top", QT_TRANSLATE_NOOP("keymap", "Top of the page"), ("Home", "Ctrl+Home"), "dashboard"),
    _a("bottom", QT_TRANSLATE_NOOP("keymap", "End of the page"), ("End", "Ctrl+End"), "dashboard"),
    _a(
        "next_section",
        QT_TRANSLATE_NOOP("keymap", "Next section"),
        ("Ctrl+Down", "]", "N"),
        "dashboard",
    ),
    _a(
        "prev_section",
        QT_TRANSLATE_NOOP("keymap", "Previous section"),
        ("Ctrl+Up", "[", "Shift+N"),
        "dashboard",
    ),
    # the lead's review view (answer keys: the label form's, on the entry's metric)
    _a("review_next", QT_TRANSLATE_NOOP("keymap", "Next entry"), ("Down", "J"), "review"),
    _a("review_prev", QT_TRANSLATE_NOOP("keymap", "Previous entry"), ("Up", "K"), "review"),
    _a(
        "review_category",
        QT_TRANSLATE_NOOP("keymap", "Next reason category"),
        ("C",),
        "review",
    ),
    _a(
        "review_adjudicator",
        QT_TRANSLATE_NOOP("keymap", "Write who decides (the adjudicator)"),
        ("A",),
        "review",
    ),
    _a(
        "review_promote",
        QT_TRANSLATE_NOOP("keymap", "Promote the item to an anchor (asks for a rationale)"),
        ("Ctrl+P",),
        "review",
    ),
    _a(
        "review_decided",
        QT_TRANSLATE_NOOP("keymap", "Show or hide the entries already decided"),
        ("H",),
        "review",
    ),
    _a(
        "review_filter_metric",
        QT_TRANSLATE_NOOP("keymap", "Filter: next metric"),
        ("Shift+M",),
        "review",
    ),
    _a(
        "review_filter_generator",
        QT_TRANSLATE_NOOP("keymap", "Filter: next generator"),
        ("Shift+G",),
        "review",
    ),
    _a(
        "review_filter_case",
        QT_TRANSLATE_NOOP("keymap", "Filter: next case"),
        ("Shift+C",),
        "review",
    ),
    _a(
        "review_filter_rater",
        QT_TRANSLATE_NOOP("keymap", "Filter: next rater"),
        ("Shift+R",),
        "review",
    ),
    _a(
        "review_clear_filters",
        QT_TRANSLATE_NOOP("keymap", "Clear every filter"),
        ("Shift+Backspace",),
        "review",
    ),
    _a(
        "review_reload",
        QT_TRANSLATE_NOOP("keymap", "Read the review queue again"),
        ("F5",),
        "review",
    ),
    # an image view with the keyboard focus
    _a("image_zoom_in", QT_TRANSLATE_NOOP("keymap", "Zoom in"), ("+", "="), "image"),
    _a("image_zoom_out", QT_TRANSLATE_NOOP("keymap", "Zoom out"), ("-",), "image"),
    _a("image_fit", QT_TRANSLATE_NOOP("keymap", "Fit to the window"), ("0",), "image"),
    _a("image_actual", QT_TRANSLATE_NOOP("keymap", "100 %"), ("1",), "image"),
    _a("image_mask", QT_TRANSLATE_NOOP("keymap", "Show or hide the edit mask"), ("M",), "image"),
    # dialogs
    _a("close_dialog", QT_TRANSLATE_NOOP("keymap", "Close the dialog"), ("Esc",), "dialog"),
)
BY_NAME = {a.name: a for a in ACTIONS}
assert len(BY_NAME) == len(ACTIONS), "action names are unique"


def _portable(seq: QKeySequence) -> str:
    return seq.toString(QKeySequence.SequenceFormat.PortableText)


# Qt's names of keys no keyboard prints: the key as its cap reads (Shift+Tab is what Qt calls
# Backtab; the Return key is the one marked Enter, "Intro" in Spanish).
_AS_LABELLED = {"Return": "Enter", "Backtab": "Shift+Tab"}


def _shown(seq: QKeySequence) -> str:
    """A key as the keyboard labels it, in the app's language (Qt translates the names)."""
    text = _portable(seq)
    for qt_name, cap in _AS_LABELLED.items():
        if text.endswith(qt_name):
            head = text[: -len(qt_name)]
            if cap.startswith("Shift+") and "Shift+" in head:
                cap = cap[len("Shift+") :]
            seq = QKeySequence(head + cap)
            break
    shown = seq.toString(QKeySequence.SequenceFormat.NativeText)
    # untranslated, Qt writes "PgDown"; the key cap reads "PgDn" (Spanish Qt: "AvPág")
    return shown.replace("PgDown", "PgDn")


def _together(context: str) -> tuple[str, ...]:
    """The contexts whose keys are live at once with `context` (global is live everywhere)."""
    return ("global",) if context == "global" else ("global", context)


class Keymap:
    """The table with the user's overrides applied; lookups by context."""

    def __init__(self, overrides: dict[str, list[str]] | None = None, *, source: str = "") -> None:
        self.source = source
        self._problems: list[str] = []
        self._seqs: dict[str, list[QKeySequence]] = {
            a.name: [QKeySequence(t) for t in a.defaults] for a in ACTIONS
        }
        for name, texts in (overrides or {}).items():
            if name not in BY_NAME:
                self._problems.append(f"'{name}' is not an action")
                continue
            seqs = []
            for t in texts:
                seq = QKeySequence(str(t))
                if seq.isEmpty() or seq.count() != 1 or not _portable(seq):
                    self._problems.append(f"'{t}' for {name} is not a key")
                else:
                    seqs.append(seq)
            self._seqs[name] = seqs
        self._lookup: dict[str, dict[str, str]] = {c: {} for c in CONTEXTS}
        clashes: set[tuple[str, str, str]] = set()
        for ctx in CONTEXTS:
            table = self._lookup[ctx]
            for a in ACTIONS:
                if not set(a.contexts) & set(_together(ctx)):
                    continue
                for s in self._seqs[a.name]:
                    key = _portable(s)
                    held = table.get(key)
                    if held is not None and held != a.name:
                        # Once per clash, named in the first context it shows in (the answer
                        # keys are live in both the label and the review view).
                        if (key, held, a.name) not in clashes:
                            clashes.add((key, held, a.name))
                            self._problems.append(
                                f"{key} is bound to both {held} and {a.name} ({ctx}): {held} kept"
                            )
                        continue  # the action declared first wins
                    table[key] = a.name

    @classmethod
    def from_settings(cls, settings) -> Keymap:  # noqa: ANN001 - AppSettings (avoids an import cycle)
        if settings is None or not hasattr(settings, "key_overrides"):
            return cls()
        overrides, errors = settings.key_overrides_checked()
        km = cls(overrides, source=str(settings.keys_path))
        km._problems[:0] = errors
        return km

    # -- queries -------------------------------------------------------------------
    def sequences(self, action: str) -> list[QKeySequence]:
        return list(self._seqs.get(action, []))

    def hint(self, action: str) -> str:
        """The first binding, as the user reads it ("P", "Ctrl+Z", "Enter"; Qt names keys in the
        app's language: "Intro", "Espacio")."""
        seqs = self._seqs.get(action) or []
        return _shown(seqs[0]) if seqs else ""

    def hints(self, action: str, sep: str = " / ") -> str:
        """Every binding ("1 / Left"); Return and Enter read alike, so they show once."""
        return sep.join(dict.fromkeys(_shown(s) for s in self._seqs.get(action) or []))

    def label(self, action: str) -> str:
        """The action's description in the app's language."""
        return translate("keymap", BY_NAME[action].label)

    def problems(self) -> list[str]:
        """Clashes, unknown actions and unreadable keys (empty for the defaults)."""
        return list(self._problems)

    def problem_line(self) -> str | None:
        """Every problem in one line for the start-up report, or None."""
        if not self._problems:
            return None
        where = f" in {self.source}" if self.source else ""
        return f"key overrides{where}: " + "; ".join(self._problems)

    def action_for(self, event: QKeyEvent, context: str) -> str | None:
        """The action a key press triggers in `context` (global keys included), or None."""
        if event.key() in _MODIFIER_KEYS:
            return None
        table = self._lookup[context]
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        found = table.get(_portable(QKeySequence(event.keyCombination().key() | mods)))
        text = event.text()
        if (
            found is None
            and mods & Qt.KeyboardModifier.ShiftModifier
            and text
            and text.isprintable()
            and not text.isalnum()
        ):
            # Shifted symbols (?, +) arrive with Shift held on most layouts.
            no_shift = mods & ~Qt.KeyboardModifier.ShiftModifier
            found = table.get(_portable(QKeySequence(event.keyCombination().key() | no_shift)))
        return found

    def help_rows(self, context: str) -> list[tuple[str, str]]:
        """(keys, label) for an instructions panel; the ten digit actions as one row."""
        rows: list[tuple[str, str]] = []
        for a in ACTIONS:
            if context not in a.contexts or (a.name.startswith("value_") and a.name != "value_0"):
                continue
            if a.name == "value_0":
                rows.append(
                    (
                        "0 - 9",
                        translate("keymap", "Scale value, likert point, option or tag number"),
                    )
                )
                continue
            rows.append((self.hints(a.name, ", "), self.label(a.name)))
        return rows


def types_text(event: QKeyEvent) -> bool:
    """True when the key types a character into a text box (no Ctrl / Alt / Meta held)."""
    mods = event.modifiers()
    if mods & (
        Qt.KeyboardModifier.ControlModifier
        | Qt.KeyboardModifier.AltModifier
        | Qt.KeyboardModifier.MetaModifier
    ):
        return False
    text = event.text()
    return bool(text) and text.isprintable()
