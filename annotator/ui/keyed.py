"""The one key dispatcher of the app's widgets.

A widget names the keymap contexts its keys belong to (`key_contexts`, looked up in order) and
gives its actions by name (`key_actions()`, named apart from `QWidget.actions`, its QActions); a
key the keymap maps to one of them runs it and is taken, any other key goes on to Qt. The
session views (label, pairwise, calibration, review), the dashboard, the image view and the
instructions dialog all dispatch through it; the keys themselves live only in
`ui/keymap.py`'s table. (A reason box's keys are an event filter on
the box, `session_view.ReasonKeys`: text keys are text there first.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtGui import QKeyEvent

from .keymap import Keymap


class KeyedWidget:
    """Mixed in before the Qt widget class: ``class View(KeyedWidget, QWidget)``."""

    keymap: Keymap
    key_contexts: tuple[str, ...] = ()

    def key_actions(self) -> dict[str, Callable[[], Any]]:
        """Action name -> handler (override)."""
        return {}

    def handler_for(self, event: QKeyEvent) -> Callable[[], Any] | None:
        """The handler the key pressed runs here, or None."""
        table = self.key_actions()
        for ctx in self.key_contexts:
            name = self.keymap.action_for(event, ctx)
            if name is not None and name in table:
                return table[name]
        return None

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        handler = self.handler_for(event)
        if handler is None:
            super().keyPressEvent(event)  # type: ignore[misc]
            return
        handler()
        event.accept()
