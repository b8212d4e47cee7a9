"""What a user-given string may hold: ids and names one printable line, free text
without control characters other than tab and newline.

A NUL or ESC in an id ends up in file names, terminal output and CSV cells,
where it truncates or rewrites what the lead reads; refusing it at the door is
cheaper than escaping it everywhere. The same holds for invisible formatting
characters in a name: a right-to-left override (U+202E) makes "ana\u202etxt.exe"
read as another string, and a zero-width space makes two raters' names look alike.

The spreadsheet formula guard of CSV cells (`guard_cell` / `unguard_cell`) lives here too,
so the writers (reports, exports) and the reader (ingest) share one reversible rule.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import InputError

MAX_NAME = 200  # characters in an id or a name
# characters of one free-text answer or reason: the cell cap of an imported table (ingest/tables.py
# MAX_CELL), so whatever an import lets in the app, a package and a merge let in too, and no more
MAX_TEXT = 1 << 20
# C0 controls, DEL and C1 controls; free text keeps tab, newline and carriage return.
_NAME_BAD = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_TEXT_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


# Invisible characters that are not of category Cf (format) but render as nothing.
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0")


def _describe(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def _invisible(name: str) -> str | None:
    """The first bidirectional control, zero-width or other invisible formatting character
    (Unicode category Cf: U+200B-U+200F, U+202A-U+202E, U+2060-U+206F, U+FEFF, tags...)."""
    for ch in name:
        if ch in _INVISIBLE or unicodedata.category(ch) == "Cf":
            return ch
    return None


def check_name(
    value: str,
    what: str,
    *,
    source: str | None = None,
    line: int | None = None,
    field: str | None = None,
) -> str:
    """An id or a name: non-empty, one line, no control characters, at most MAX_NAME long."""
    name = value.strip()
    if not name:
        raise InputError(f"{what} is empty", source=source, line=line, field=field)
    check_text(name, what, source=source, line=line, field=field, multiline=False)
    check_visible(name, what, source=source, line=line, field=field)
    if len(name) > MAX_NAME:
        raise InputError(
            f"{what} is {len(name)} characters long; at most {MAX_NAME}",
            source=source,
            line=line,
            field=field,
        )
    return name


def person_name(
    value: str,
    what: str,
    *,
    source: str | None = None,
    line: int | None = None,
    field: str | None = None,
) -> str:
    """A rater's name: `check_name`, in Unicode's composed form (NFC: "José" typed as one letter
    or as "e" and an accent is one name), and no path separator or dot-only name (a rater's name
    becomes part of a file name: the outbox, a package)."""
    name = unicodedata.normalize(
        "NFC", check_name(value, what, source=source, line=line, field=field)
    )
    if "/" in name or "\\" in name or name.strip(".") == "":
        raise InputError(
            f"{what} '{name}' holds a path separator or only dots; choose a name without '/' or '\\'",
            source=source,
            line=line,
            field=field,
        )
    return name


# Letters of other scripts drawn like Latin ones (Unicode's confusables, the ones a keyboard or a
# paste can bring into a name), after case folding: "аna" with a Cyrillic а reads as "ana".
_LOOKALIKES = str.maketrans(
    {
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c",
        "\u0443": "y", "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0458": "j",
        "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04bb": "h", "\u04cf": "l",
        "\u0432": "b", "\u043a": "k", "\u043c": "m", "\u043d": "h", "\u0442": "t",
        "\u03b1": "a", "\u03bf": "o", "\u03c1": "p", "\u03bd": "v", "\u03c5": "u",
        "\u03b9": "i", "\u03ba": "k", "\u03c7": "x", "\u03b5": "e", "\u03c4": "t",
        "\u03b2": "b", "\u03b7": "n", "\u03bc": "u", "\u03b6": "z",
    }
)  # fmt: skip


def lookalike_key(name: str) -> str:
    """What a name reads as: compatibility forms folded (fullwidth "ＡＮＡ" is "ANA"), case
    folded ("Ana" is "ana"), and other scripts' Latin look-alikes made Latin. Two raters whose
    names share it would be told apart by no one reading a report."""
    return unicodedata.normalize("NFKC", name).casefold().translate(_LOOKALIKES)


def check_visible(
    value: str,
    what: str,
    *,
    source: str | None = None,
    line: int | None = None,
    field: str | None = None,
) -> str:
    """A name holds no bidirectional control or zero-width character (each would let it
    display as another name: "ana\u202egpj.exe", "ana\u200b" next to "ana")."""
    hidden = _invisible(value)
    if hidden is not None:
        label = unicodedata.name(hidden, "").lower() or "formatting character"
        raise InputError(
            f"{what} contains the invisible character {_describe(hidden)} ({label}), which makes "
            "a name display as another; remove it",
            source=source,
            line=line,
            field=field,
        )
    return value


def check_text(
    value: str,
    what: str,
    *,
    source: str | None = None,
    line: int | None = None,
    field: str | None = None,
    multiline: bool = True,
) -> str:
    """Free text (a prompt, a reason): no control characters but tab and line ends; with
    `multiline=False`, no line ends either (the rule of an id or a name, `check_name`)."""
    bad = (_TEXT_BAD if multiline else _NAME_BAD).search(value)
    if bad:
        raise InputError(
            f"{what} contains the control character {_describe(bad.group())}; remove it",
            source=source,
            line=line,
            field=field,
        )
    return value


# ---- the spreadsheet formula guard of CSV cells -------------------------------------------------

# A cell a spreadsheet would run as a formula (or that Excel strips: tab, carriage return).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _formula_shaped(text: str) -> bool:
    """Quotes, then a formula start: what the guard prefixes with one more quote."""
    rest = text.lstrip("'")
    if not rest.startswith(FORMULA_PREFIXES):
        return False
    # A plain number ("-0.2") is data in every spreadsheet; but "'-0.2" is guarded, so the
    # guard stays reversible: only the written value "'-0.2" can read back as "'-0.2".
    return rest != text or not _PLAIN_NUMBER.fullmatch(text)


def guard_cell(text: str) -> str:
    """A text cell as written to CSV: a leading quote when a spreadsheet would read it as a
    formula (Excel's own "this is text" mark, not shown in the cell). Reversible by
    `unguard_cell`: a text that already starts with quotes before a formula character gets one
    more, so "'=x" (a reason that starts with a quote) and "=x" stay apart."""
    return "'" + text if _formula_shaped(text) else text


def unguard_cell(text: str) -> str:
    """A CSV cell as read back: the guard `guard_cell` added, removed (a spreadsheet that saves
    the file drops it the same way)."""
    if text.startswith("'") and _formula_shaped(text[1:]):
        return text[1:]
    return text


def counted(n: int, one: str, many: str | None = None) -> str:
    """`n` with its noun in the right number: "1 session", "2 sessions" (English output of the
    CLI and reports; the app's words go through Qt's translations)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
