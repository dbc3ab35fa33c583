"""The variant editor's text widget: a QPlainTextEdit with a Python highlighter and a line-number gutter
that can mark an error's line (PyQt6-QScintilla 2.14.1 needs libQt6PrintSupport, which the pinned PyQt6's
Qt does not ship, so it is not used)."""

from __future__ import annotations

from PyQt6.QtCore import QRect, QRegularExpression, QSize, Qt
from PyQt6.QtGui import QColor, QFont, QFontDatabase, QPainter, QSyntaxHighlighter, QTextCharFormat, QTextFormat
from PyQt6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

_KEYWORDS = ("False None True and as assert break class continue def del elif else except finally for from global "
             "if import in is lambda nonlocal not or pass raise return try while with yield").split()


def _format(colour: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    f = QTextCharFormat()
    f.setForeground(QColor(colour))
    if bold:
        f.setFontWeight(QFont.Weight.Bold)
    f.setFontItalic(italic)
    return f


class PythonHighlighter(QSyntaxHighlighter):
    """Keywords, decorators, numbers, strings and comments (triple-quoted strings across lines)."""

    RULES = [(QRegularExpression(rf"\b{k}\b"), _format("#0000a0", bold=True)) for k in _KEYWORDS] + [
        (QRegularExpression(r"@[\w.]+"), _format("#906000")),
        (QRegularExpression(r"\b\d+(\.\d*)?([eE][-+]?\d+)?\b|\b0x[0-9a-fA-F]+\b"), _format("#a000a0")),
        (QRegularExpression(r"\bdef\s+(\w+)|\bclass\s+(\w+)"), _format("#006080", bold=True)),
        (QRegularExpression(r"'[^'\\\n]*(\\.[^'\\\n]*)*'|\"[^\"\\\n]*(\\.[^\"\\\n]*)*\""), _format("#008000")),
        (QRegularExpression(r"#[^\n]*"), _format("#808080", italic=True)),
    ]
    TRIPLE = (QRegularExpression('"""'), QRegularExpression("'''"))
    STRING = _format("#008000")

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt naming)
        for pattern, fmt in self.RULES:
            it = pattern.globalMatch(text)
            while it.hasNext():
                m = it.next()
                self.setFormat(m.capturedStart(), m.capturedLength(), fmt)
        self.setCurrentBlockState(0)
        for state, delimiter in enumerate(self.TRIPLE, 1):
            if self._triple(text, delimiter, state):
                return

    def _triple(self, text: str, delimiter: QRegularExpression, state: int) -> bool:
        start = 0 if self.previousBlockState() == state else -1
        if start < 0:
            m = delimiter.match(text)
            start = m.capturedStart() if m.hasMatch() else -1
            offset = 3
        else:
            offset = 0
        while start >= 0:
            end = delimiter.match(text, start + offset)
            if end.hasMatch():
                length = end.capturedEnd() - start
                self.setFormat(start, length, self.STRING)
                nxt = delimiter.match(text, start + length)
                start, offset = (nxt.capturedStart(), 3) if nxt.hasMatch() else (-1, 3)
            else:
                self.setCurrentBlockState(state)
                self.setFormat(start, len(text) - start, self.STRING)
                return True
        return False


class _Gutter(QWidget):
    def __init__(self, editor: CodeEditor):
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event) -> None:  # noqa: N802
        self.editor.paint_gutter(event)


class CodeEditor(QPlainTextEdit):
    """Monospace text with line numbers in a gutter; ``mark_line(n)`` shows an error's line."""

    def __init__(self):
        super().__init__()
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self.gutter = _Gutter(self)
        self.highlighter = PythonHighlighter(self.document())
        self.error_line: int | None = None
        self.blockCountChanged.connect(lambda _: self.setViewportMargins(self.gutter_width(), 0, 0, 0))
        self.updateRequest.connect(self._scroll_gutter)
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 8 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    def _scroll_gutter(self, rect, dy) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        r = self.contentsRect()
        self.gutter.setGeometry(QRect(r.left(), r.top(), self.gutter_width(), r.height()))

    def paint_gutter(self, event) -> None:
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), QColor("#f0f0f0"))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            if block.isVisible():
                painter.setPen(QColor("#c00000") if number == self.error_line else QColor("#808080"))
                painter.drawText(0, top, self.gutter.width() - 4, height, Qt.AlignmentFlag.AlignRight, str(number))
            top += round(self.blockBoundingRect(block).height())
            block = block.next()
        painter.end()

    INDENT = "    "

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        """Python's indentation as you type: Return keeps the line's indent (one level more after a ':'), Tab
        indents by four spaces (Shift+Tab or Backspace in the indent removes one level)."""
        key, cursor = event.key(), self.textCursor()
        line = cursor.block().text()
        column = cursor.positionInBlock()
        indent = line[: len(line) - len(line.lstrip(" "))]
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            before = line[:column].rstrip()
            more = self.INDENT if before.endswith(":") and not before.lstrip().startswith("#") else ""
            cursor.insertText("\n" + indent[: column] + more)
            self.ensureCursorVisible()
            return
        if key == Qt.Key.Key_Tab and not cursor.hasSelection():
            cursor.insertText(" " * (len(self.INDENT) - column % len(self.INDENT)))
            return
        if (key == Qt.Key.Key_Backtab or key == Qt.Key.Key_Backspace) and not cursor.hasSelection() \
                and 0 < column <= len(indent) and (key == Qt.Key.Key_Backtab or column % len(self.INDENT) == 0):
            remove = column % len(self.INDENT) or len(self.INDENT)
            cursor.movePosition(cursor.MoveOperation.Left, cursor.MoveMode.KeepAnchor, min(remove, column))
            cursor.removeSelectedText()
            return
        super().keyPressEvent(event)

    def mark_line(self, line: int | None) -> None:
        """Highlight line ``line`` (1-based) and put the cursor there; None clears the mark."""
        self.error_line = line
        selections = []
        if line is not None and 1 <= line <= self.blockCount():
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor("#ffd8d8"))
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            cursor = self.textCursor()
            cursor.setPosition(self.document().findBlockByNumber(line - 1).position())
            selection.cursor = cursor
            selections.append(selection)
            self.setTextCursor(cursor)
            self.centerCursor()
        self.setExtraSelections(selections)
        self.gutter.update()
