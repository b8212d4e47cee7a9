"""Every keyboard shortcut of the app, declared in one table.

The label form has a *focused metric* (highlighted; Up/Down or Tab/Shift+Tab
move it, and it advances by itself after an answer). Answer keys act on it:
P / F for a gate, digits for a scale value, a choice option or a tag toggle,
X for "cannot judge". Zoom uses + / - and Ctrl+0 / Ctrl+1 in the label view
because plain digits answer scales there (an image view that has focus also
takes plain 0 and 1).

Users override a binding in the settings file (``keymap`` entry, action name ->
list of sequences, portable text as in ``QKeySequence.toString()``).

Public API: ``Action`` (name, label, defaults, group), ``ACTIONS``,
``Keymap(overrides: dict[str, list[str]] | None = None)`` with
``.sequences(action) -> list[QKeySequence]``, ``.hint(action) -> str`` (for the
visible key hint), ``.action_for(event: QKeyEvent) -> str | None``,
``.conflicts() -> list[tuple[str, str, str]]``; ``Keymap.from_settings(settings)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QKeySequence


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    defaults: tuple[str, ...]
    group: str


def _digits() -> tuple[Action, ...]:
    return tuple(
        Action(f"value_{d}", f"Answer {d} (scale value, option or tag number)", (str(d),), "answer")
        for d in range(10)
    )


ACTIONS: tuple[Action, ...] = (
    Action("pass", "PASS on the focused gate", ("P",), "answer"),
    Action("fail", "FAIL on the focused gate", ("F",), "answer"),
    *_digits(),
    Action("cannot_judge", "Cannot judge the focused metric", ("X",), "answer"),
    Action("clear", "Clear the focused metric", ("Backspace", "Delete"), "answer"),
    Action("next_metric", "Next metric", ("Down", "Tab", "J"), "navigate"),
    Action("prev_metric", "Previous metric", ("Up", "Backtab", "K"), "navigate"),
    Action("reason", "Write the reason", ("R",), "navigate"),
    Action("submit", "Submit and go to the next item", ("Return", "Enter"), "session"),
    Action("back", "Back to the previous item", ("Ctrl+Z",), "session"),
    Action("zoom_in", "Zoom in", ("+", "=", "Ctrl++"), "view"),
    Action("zoom_out", "Zoom out", ("-", "Ctrl+-"), "view"),
    Action("zoom_fit", "Fit image to window", ("Ctrl+0",), "view"),
    Action("zoom_actual", "Image at 100 %", ("Ctrl+1",), "view"),
    Action("toggle_mask", "Show or hide the edit mask", ("M",), "view"),
    Action("instructions", "Rubric instructions and keys", ("F1", "?"), "help"),
)
_BY_NAME = {a.name: a for a in ACTIONS}


def _normalise(seq: QKeySequence) -> str:
    return seq.toString(QKeySequence.SequenceFormat.PortableText)


class Keymap:
    def __init__(self, overrides: dict[str, list[str]] | None = None) -> None:
        self._seqs: dict[str, list[QKeySequence]] = {}
        overrides = overrides or {}
        for a in ACTIONS:
            texts = overrides.get(a.name, list(a.defaults))
            self._seqs[a.name] = [QKeySequence(t) for t in texts if not QKeySequence(t).isEmpty()]
        self._lookup: dict[str, str] = {}
        self._conflicts: list[tuple[str, str, str]] = []
        for a in ACTIONS:
            for s in self._seqs[a.name]:
                key = _normalise(s)
                if key in self._lookup and self._lookup[key] != a.name:
                    self._conflicts.append((key, self._lookup[key], a.name))
                    continue  # first declared wins
                self._lookup[key] = a.name

    @classmethod
    def from_settings(cls, settings) -> Keymap:  # noqa: ANN001 - AppSettings (avoid a cycle)
        return cls(settings.key_overrides() if settings is not None else None)

    def sequences(self, action: str) -> list[QKeySequence]:
        return list(self._seqs.get(action, []))

    def hint(self, action: str) -> str:
        """The first binding, as the user would read it ("P", "Ctrl+Z", "Enter")."""
        seqs = self._seqs.get(action) or []
        if not seqs:
            return ""
        text = seqs[0].toString(QKeySequence.SequenceFormat.NativeText)
        return {"Return": "Enter"}.get(text, text)

    def label(self, action: str) -> str:
        return _BY_NAME[action].label

    def conflicts(self) -> list[tuple[str, str, str]]:
        return list(self._conflicts)

    def action_for(self, event: QKeyEvent) -> str | None:
        """The action a key press triggers, or None."""
        key = event.key()
        if key in (Qt.Key.Key_unknown, Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta):
            return None
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        found = self._lookup.get(_normalise(QKeySequence(event.keyCombination().key() | mods)))
        if found is None and mods & Qt.KeyboardModifier.ShiftModifier:
            # Shifted symbols (?, +) arrive with Shift held on most layouts.
            no_shift = mods & ~Qt.KeyboardModifier.ShiftModifier
            found = self._lookup.get(_normalise(QKeySequence(event.keyCombination().key() | no_shift)))
        return found

    def help_rows(self) -> list[tuple[str, str, str]]:
        """(group, label, keys) for the instructions panel."""
        rows = []
        for a in ACTIONS:
            if a.name.startswith("value_") and a.name != "value_0":
                continue
            keys = ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in self._seqs[a.name])
            label = "Scale value / option / tag number" if a.name == "value_0" else a.label
            if a.name == "value_0":
                keys = "0 - 9"
            rows.append((a.group, label, keys))
        return rows
