"""The label view's widgets: the drift notice above the item, the item's prompt and criteria
header, the pictures beside the rubric form, its message line and buttons, the done page and the
status line of progress and zoom keys.

Built once, when the view is made (``LabelLayout._build``): every control keeps the name the rest
of the view, the window and the tests read (``form``, ``item_panel``, ``message``, ``banner``,
``progress_label`` ...), so this is a mixin of ``LabelView`` rather than a widget of its own, and
the widget tree is the view's. The texts keep the label view's translation context. At the
window's minimum size every control stays whole; the pictures get the larger share of the width
the first time the view is shown.
Tested in tests/gui/test_label_form.py, tests/gui/test_min_size_controls.py,
tests/gui/test_accessibility.py and tests/gui/test_screen_sizes.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from .drift_notice import DriftBanner
from .i18n import translate
from .item_display import ItemDisplay
from .rubric_form import FormScroll, RubricForm
from .style import relative_font, set_accessible

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from ..domain.rubric import Rubric
    from .session_view import SessionView as _View
else:
    _View = object

__all__ = ["CALM_MS", "LabelLayout"]

CALM_MS = 4000


class LabelLayout(_View):
    """The label view's controls (a mixin of ``LabelView``; see the module docstring)."""

    if TYPE_CHECKING:  # what the layout reads of its view (LabelView sets or defines each)
        rubric: Rubric
        recalibrationRequested: SignalInstance  # noqa: N815 - Qt signal naming

        def _toggle_instructions(self) -> bool: ...
        def _form_changed(self) -> None: ...
        def open_package_folder(self) -> bool: ...

    def _build(self) -> None:
        """Every control of the view, once (the item's page, the loading and done pages)."""
        outer = QVBoxLayout(self)
        outer.setContentsMargins(10, 8, 10, 6)
        outer.setSpacing(6)
        self.banner = DriftBanner(self.keymap, self)
        self.banner.recalibrate.connect(self.recalibrationRequested)
        outer.addWidget(self.banner)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack, 1)
        self.loading = QLabel(translate("LabelView", "Opening the label session…"))
        self.loading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.loading.setWordWrap(True)
        self.stack.addWidget(self.loading)

        work = QWidget()
        wl = QVBoxLayout(work)
        wl.setContentsMargins(0, 0, 0, 0)
        wl.setSpacing(6)
        wl.addWidget(self._header())
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        self.item_panel = ItemDisplay(self.keymap)
        split.addWidget(self.item_panel)
        split.addWidget(self._form_side())
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.splitter = split
        self._sized = False
        wl.addWidget(split, 1)
        self.stack.addWidget(work)
        self.work = work

        self.done_page = QWidget()
        dl = QVBoxLayout(self.done_page)
        dl.addStretch(1)
        self.done_label = QLabel()
        self.done_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.done_label.setWordWrap(True)
        self.done_label.setFont(relative_font(self.done_label, 1.3))
        dl.addWidget(self.done_label)
        # A package's work goes back to the lead as the same file: where it is, and its folder.
        self.send_back_label = QLabel()
        self.send_back_label.setObjectName("sendBack")
        self.send_back_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.send_back_label.setWordWrap(True)
        self.send_back_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        dl.addWidget(self.send_back_label)
        self.open_folder_btn = QPushButton(
            translate("LabelView", "Open the folder that holds it ({key})").format(
                key=self.keymap.hint("submit")
            )
        )
        self.open_folder_btn.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # its key: Enter, here
        self.open_folder_btn.setObjectName("openPackageFolder")
        set_accessible(
            self.open_folder_btn,
            translate("LabelView", "Open the folder that holds it"),
            translate("LabelView", "Shows the package file in the file manager, to send it back"),
        )
        self.open_folder_btn.clicked.connect(self.open_package_folder)
        dl.addWidget(self.open_folder_btn, 0, Qt.AlignmentFlag.AlignHCenter)
        dl.addStretch(1)
        is_package = bool(getattr(self.snapshot, "is_package", False))
        self.send_back_label.setVisible(is_package)
        self.open_folder_btn.setVisible(is_package)
        self.stack.addWidget(self.done_page)

        self.progress_label = QLabel()
        self.progress_label.setFont(relative_font(self.progress_label, 0.95))
        k = self.keymap.hint
        self.zoom_hint = QLabel(
            translate(
                "LabelView",
                "Zoom {zin} / {zout}, fit {fit}, 100 % {actual}, wheel and drag on the image",
            ).format(
                zin=k("zoom_in"), zout=k("zoom_out"), fit=k("zoom_fit"), actual=k("zoom_actual")
            )
        )
        set_accessible(
            self.progress_label,
            translate("LabelView", "Progress"),
            translate("LabelView", "Items done, this session, pace and time left"),
        )
        set_accessible(self.zoom_hint, translate("LabelView", "Zoom keys"), self.zoom_hint.text())
        set_accessible(
            self.done_label,
            translate("LabelView", "All done"),
            translate("LabelView", "Every item in your queue is answered"),
        )
        set_accessible(
            self.loading,
            translate("LabelView", "Opening"),
            translate("LabelView", "The label session is opening"),
        )
        self.zoom_hint.setFont(relative_font(self.zoom_hint, 0.9))
        status = QHBoxLayout()
        status.addWidget(self.progress_label, 1)
        status.addWidget(self.zoom_hint)
        outer.addLayout(status)
        self._calm = QTimer(self)
        self._calm.setSingleShot(True)
        self._calm.timeout.connect(lambda: self.message.setText(""))

    def _header(self) -> QFrame:
        """Prompt and criteria stay visible: the rubric is judged against them."""
        head = QFrame()
        head.setFrameShape(QFrame.Shape.StyledPanel)
        hl = QGridLayout(head)
        hl.setContentsMargins(10, 6, 10, 6)
        hl.setHorizontalSpacing(10)
        hl.setVerticalSpacing(3)
        self.code_label = QLabel()
        self.code_label.setFont(relative_font(self.code_label, 0.9))
        self.code_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        titles = []
        for text in (translate("LabelView", "Prompt"), translate("LabelView", "Criteria")):
            title = QLabel(text)
            title.setFont(relative_font(title, 1.0, bold=True))
            titles.append(title)
        self.prompt_label = QLabel()
        self.criteria_label = QLabel()
        set_accessible(
            self.prompt_label,
            titles[0].text(),
            translate("LabelView", "What the output was asked to be"),
        )
        set_accessible(
            self.criteria_label,
            titles[1].text(),
            translate("LabelView", "What the output is judged against"),
        )
        set_accessible(
            self.code_label,
            translate("LabelView", "Item code"),
            translate("LabelView", "The item's opaque code (it names nothing)"),
        )
        for lab in (self.prompt_label, self.criteria_label, self.code_label):
            lab.setProperty("content", True)  # the study's text, not the app's
        for lab in (self.prompt_label, self.criteria_label):
            lab.setWordWrap(True)
            lab.setTextFormat(Qt.TextFormat.PlainText)
            lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            lab.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.prompt_label.setFont(relative_font(self.prompt_label, 1.08))
        hl.addWidget(titles[0], 0, 0, Qt.AlignmentFlag.AlignTop)
        hl.addWidget(self.prompt_label, 0, 1)
        hl.addWidget(self.code_label, 0, 2)
        hl.addWidget(titles[1], 1, 0, Qt.AlignmentFlag.AlignTop)
        hl.addWidget(self.criteria_label, 1, 1, 1, 2)
        hl.setColumnStretch(1, 1)
        # A plain frame (no scroll area): prompt and criteria are never hidden behind a scroll.
        head.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.head = head
        return head

    def _form_side(self) -> QWidget:
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(6, 0, 0, 0)
        rl.setSpacing(6)
        self.form = RubricForm(self.rubric, self.keymap)
        set_accessible(
            self.form,
            translate("LabelView", "Answer form"),
            translate(
                "LabelView", "One row per metric of the rubric; the framed one takes the keys"
            ),
        )
        self.form.changed.connect(self._form_changed)
        self.form_scroll = FormScroll()
        self.form_scroll.setWidget(self.form)
        self.form_scroll.follow(self.form)
        rl.addWidget(self.form_scroll, 1)
        rl.addWidget(
            self.form.verdict_label
        )  # stays in view beside the buttons, whatever the scroll
        rl.addWidget(self.message)
        edit = self.form.reason_edit()
        if edit is not None:
            self.reason_keys(
                edit,
                {
                    "submit": self._submit_from_reason,
                    "leave_reason": self.back_to_keys,
                    "instructions": self._toggle_instructions,
                },
            )
        buttons = QHBoxLayout()
        k = self.keymap.hint
        self.help_btn = QPushButton(
            translate("LabelView", "Instructions ({key})").format(key=k("instructions"))
        )
        self.back_btn = QPushButton(translate("LabelView", "Back ({key})").format(key=k("back")))
        self.submit_btn = QPushButton(
            translate("LabelView", "Submit ({key})").format(key=k("submit"))
        )
        for b, action, name in (
            (self.help_btn, "instructions", translate("LabelView", "Instructions")),
            (self.back_btn, "back", translate("LabelView", "Back")),
            (self.submit_btn, "submit", translate("LabelView", "Submit")),
        ):
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.clicked.connect(lambda _=False, a=action: self.apply_action(a))
            set_accessible(b, name, f"{self.keymap.label(action)} ({k(action)})")
        self.submit_btn.setDefault(True)
        buttons.addWidget(self.help_btn)
        buttons.addStretch(1)
        buttons.addWidget(self.back_btn)
        buttons.addWidget(self.submit_btn)
        rl.addLayout(buttons)
        # The scroll area scrolls only vertically, so it must be as wide as the widest row of
        # answer buttons, and the side as wide as its own row of buttons: at the window's
        # minimum size every control stays whole.
        margins = rl.contentsMargins()
        right.setMinimumWidth(
            max(
                self.fontMetrics().averageCharWidth() * 46,
                self.form.minimumSizeHint().width()
                + self.form_scroll.verticalScrollBar().sizeHint().width(),
                buttons.minimumSize().width(),
            )
            + margins.left()
            + margins.right()
        )
        return right

    def _size_once(self) -> None:
        """The splitter's shares, the first time the view is shown."""
        if not self._sized:
            # Pictures get the larger share; the form keeps a readable width.
            self._sized = True
            total = max(self.width(), 800)
            side = self.splitter.widget(1)
            form_w = max(side.minimumWidth() if side is not None else 0, int(total * 0.4))
            self.splitter.setSizes([total - form_w, form_w])

    def _say(self, text: str, *, calm: bool = True) -> None:
        """One line on the message line; a calm one clears itself after CALM_MS."""
        self.message.setText(text)
        if calm:
            self._calm.start(CALM_MS)
