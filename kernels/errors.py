"""Errors that reach the user as one line (CLI) or a message (GUI), and the helpers that keep that line
short and harmless: user text echoed in a message goes through :func:`shown` (control characters escaped,
long text cut), whole numbers typed by the user go through :func:`whole` (a bounded digit count, so a 5000-digit number
is one line, never Python's own error), and lists typed as 'a,b,c' through :func:`items` (one rule for
every list: no empty item)."""

from __future__ import annotations

# More digits than any count, size or block the app accepts (2**63 has 19): refused before int() is asked
MAX_DIGITS = 19
SHOWN_CHARS = 40


class InputError(ValueError):
    """A bad value from the user: the message names the value and what is allowed."""


class BackendUnavailable(InputError):
    """The chosen backend cannot run in this process (no GPU, simulator not selected in time)."""


def printable(text) -> str:
    """``text`` with every non-printable character (terminal escapes, newlines, bidi controls) written
    as its Python escape, so a name or path echoed on a terminal cannot act on it or split a line."""
    text = str(text)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def shown(text, limit: int = SHOWN_CHARS) -> str:
    """User text for a message: quoted as repr does (control characters escaped) and cut after ``limit``
    characters, saying how long it was."""
    text = str(text)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text)} characters)"


def whole(text, what: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """The whole number in ``text`` (surrounding blanks allowed), else InputError naming ``what``;
    more than MAX_DIGITS digits is refused as too large without converting it."""
    digits = str(text).strip()
    body = digits[1:] if digits[:1] in "+-" else digits
    if not body.isdigit() or not body.isascii():
        raise InputError(f"{what} {shown(text)} is not a whole number")
    if len(body.lstrip("0")) > MAX_DIGITS:
        raise InputError(f"{what} {shown(digits)} is too large" +
                         (f"; allowed {minimum if minimum is not None else ''}..{maximum}" if maximum is not None else ""))
    value = int(digits)
    if minimum is not None and value < minimum and maximum is None:
        raise InputError(f"{what} {value} must be at least {minimum}")
    if (maximum is not None and value > maximum) or (minimum is not None and value < minimum):
        raise InputError(f"{what} {value} is out of range; allowed {minimum if minimum is not None else ''}..{maximum}")
    return value


def one_of(value, choices, what: str):
    """``value`` when it is one of ``choices``, else InputError: "WHAT 'value' is not one of a, b, c"."""
    if value not in choices:
        raise InputError(f"{what} {shown(value)} is not one of {', '.join(map(str, choices))}")
    return value


def one_line(exc: BaseException) -> str:
    """An exception as one readable line (numba's typing errors span many, with terminal colours)."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    detail = next((ln for ln in lines[1:] if not ln.startswith(("File", "<source", "During"))), "")
    first = lines[0] if lines else ""
    return f"{type(exc).__name__}: {first}" + (f" {detail}" if detail and len(first) < 80 else "")


def items(text, what: str, noun: str = "item") -> list[str]:
    """The items of a comma-separated list ('a, b,c'), blanks around them dropped; InputError naming ``what``
    for an empty item ('1,,2', a comma at either end) or no item at all: a list never silently shrinks.
    ``noun``: what an item is called in the message (a name, a value)."""
    parts = [part.strip() for part in str(text).split(",")]
    if parts == [""]:
        raise InputError(f"{what} needs at least one value")
    if "" in parts:
        raise InputError(f"{what} {shown(text)} has an empty {noun} (two commas in a row, or one at an end)")
    return parts


def whole_items(text, what: str, minimum: int | None = None, maximum: int | None = None) -> list[int]:
    """The whole numbers of a comma-separated list (:func:`items`, each through :func:`whole`)."""
    return [whole(part, what, minimum, maximum) for part in items(text, what)]
