"""Image captions of the item display (annotator/ui/item_display.py): a lone image of its kind
is named plainly, several are numbered from 1 in the order they are laid out."""

from __future__ import annotations

from annotator.ui.item_display import _captioned


def test_a_lone_image_is_named_plainly_and_several_are_numbered():
    assert _captioned(("s1",), "Output", "Output {n}") == [("s1", "Output")]
    assert _captioned(("s1", "s2"), "Output", "Output {n}") == [
        ("s1", "Output 1"),
        ("s2", "Output 2"),
    ]
    assert _captioned((), "Input", "Input {n}") == []
