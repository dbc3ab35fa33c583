"""A picture of one warp request (kernels.access.Request): its 32 lanes down the left, each with the byte offset
it touches in its array, and on the right where the request lands. Global memory: the 32-byte sectors it
touches, one box each, every lane joined to its sector (a coalesced warp of 4-byte lanes: 4 boxes; a strided
one: up to 32). Shared memory: the 32 banks across and the wavefronts down; each lane sits in its bank, in the
wavefront that serves it: the first wavefront of its group green, a replay (a bank conflict) red; lanes
reading one word share a cell (a broadcast)."""

from __future__ import annotations

from PyQt6.QtCore import QPointF, QRectF, QSize, Qt
from PyQt6.QtGui import QColor, QFontDatabase, QPainter, QPen
from PyQt6.QtWidgets import QSizePolicy, QWidget

from kernels.access.model import BANKS, WARP, lanes_per_wavefront_group

ARRAY_SPAN = 1 << 40  # each array's addresses in a trace start at a multiple of this (kernels/access)
GOOD, REPLAY, IDLE = QColor("#2ca02c"), QColor("#d62728"), QColor("#bbbbbb")
SECTOR_COLOURS = [QColor.fromHsv((37 * i) % 360, 150, 220) for i in range(32)]


def offset(address: int) -> int:
    """A lane's byte offset in its array (the trace gives each array its own base)."""
    return address % ARRAY_SPAN


def wavefront_rows(request) -> list:
    """Per lane: None (idle) or (bank, wavefront row counted over the whole request, is a replay)."""
    slots = request.bank_slots()
    group = lanes_per_wavefront_group(request.width)
    out: list = [None] * len(slots)
    base = 0
    for start in range(0, len(slots), group):
        taken = [s for s in slots[start:start + group] if s is not None]
        for lane in range(start, min(start + group, len(slots))):
            if slots[lane] is not None:
                bank, slot = slots[lane]
                out[lane] = (bank, base + slot, slot > 0)
        if taken:
            base += max(slot for _, slot in taken) + 1
    return out


MAX_ROW_PX = 16  # a lane's row at the labels' largest font (13 px)


class WarpPicture(QWidget):
    """``show_request(request)`` draws it; None clears the picture with a line saying what to pick."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.request = None
        self.empty_text = "pick a line with memory requests in the source on the left"
        self.setMinimumSize(360, 272)  # 32 lanes of 8 px and more
        # and no taller than 32 lanes at the largest label font: the height beyond goes to the source beside it
        self.setMaximumHeight(MAX_ROW_PX * WARP + 8)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(7.0, font.pointSizeF() - 1))
        self.setFont(font)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt naming)
        return QSize(560, 480)

    def show_request(self, request) -> None:
        self.request = request
        self.update()

    # ------------------------------------------------------------------ what is drawn (tests read these)
    def lane_rows(self) -> list:
        """Per lane: None (idle) or its text on the left."""
        r = self.request
        if r is None:
            return []
        return [None if a is None else f"{lane:2d} +{offset(a):#07x}" for lane, a in enumerate(r.lanes)]

    def targets(self) -> list:
        """Global: the sectors, as (first byte offset) in drawing order; shared: (bank, row, replay) per lane."""
        r = self.request
        if r is None:
            return []
        if r.space == "shared":
            return wavefront_rows(r)
        return sorted({offset(s * 32) for s in r.sectors()})

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor("white"))
        r = self.request
        if r is None:
            painter.setPen(QColor(150, 150, 150))
            painter.drawText(QRectF(self.rect()), Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                             self.empty_text)
            painter.end()
            return
        row_h = max(6.0, (self.height() - 8) / WARP)
        font = painter.font()
        font.setPixelSize(max(6, min(13, int(row_h) - 1)))  # 32 lanes fit the height, labels never overlap
        painter.setFont(font)
        metrics = painter.fontMetrics()
        lane_w = metrics.horizontalAdvance("31 +0x00000000") + 8
        for lane, text in enumerate(self.lane_rows()):
            rect = QRectF(4, 4 + lane * row_h, lane_w, row_h)
            painter.setPen(IDLE if text is None else QColor("black"))
            painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, text if text is not None else f"{lane:2d} idle")
        area = QRectF(lane_w + 16, 4, self.width() - lane_w - 20, row_h * WARP)
        if r.space == "shared":
            self._paint_banks(painter, area, row_h)
        else:
            self._paint_sectors(painter, area, row_h)
        painter.end()

    def _paint_sectors(self, painter, area: QRectF, row_h: float) -> None:
        r = self.request
        sectors = sorted(set(r.sectors()))
        if not sectors:
            return
        box_h = min(row_h * 1.6, area.height() / len(sectors))
        box = QRectF(area.right() - min(150.0, area.width() * 0.45), area.top(), min(150.0, area.width() * 0.45), box_h)
        place = {}
        for k, s in enumerate(sectors):
            rect = QRectF(box.left(), area.top() + k * box_h, box.width(), box_h - 2)
            place[s] = rect
            painter.fillRect(rect, SECTOR_COLOURS[k % len(SECTOR_COLOURS)])
            painter.setPen(QColor("black"))
            painter.drawText(rect.adjusted(4, 0, 0, 0), Qt.AlignmentFlag.AlignVCenter, f"sector +{offset(s * 32):#x}")
        colour_of = {s: SECTOR_COLOURS[k % len(SECTOR_COLOURS)] for k, s in enumerate(sectors)}
        for lane, hit in enumerate(r.lane_sectors()):
            if hit is None:
                continue
            y = area.top() + (lane + 0.5) * row_h
            for s in hit:
                painter.setPen(QPen(colour_of[s].darker(130), 1.2))
                target = place[s]
                painter.drawLine(QPointF(area.left(), y), QPointF(target.left(), target.center().y()))

    def _paint_banks(self, painter, area: QRectF, row_h: float) -> None:
        cells = wavefront_rows(self.request)
        rows = max((c[1] for c in cells if c is not None), default=0) + 1
        cell_w = area.width() / BANKS
        cell_h = min(row_h * 1.5, (area.height() - row_h) / max(rows, 1))
        painter.setPen(QColor(120, 120, 120))
        metrics = painter.fontMetrics()
        every = next((s for s in (1, 2, 4, 8, 16) if metrics.horizontalAdvance("28") + 4 <= s * cell_w), 32)
        painter.drawText(QRectF(area.left(), area.top() - 2, area.width(), row_h), Qt.AlignmentFlag.AlignRight,
                         "banks →")
        for bank in range(0, BANKS, every):  # the banks' numbers across the top, as many as fit
            painter.drawText(QRectF(area.left() + bank * cell_w, area.top() + row_h * 0.5, cell_w * every, row_h),
                             Qt.AlignmentFlag.AlignLeft, str(bank))
        top = area.top() + row_h * 1.6
        for row in range(rows):
            painter.setPen(QColor(220, 220, 220))
            for bank in range(BANKS):
                painter.drawRect(QRectF(area.left() + bank * cell_w, top + row * cell_h, cell_w, cell_h))
        in_cell: dict[tuple[int, int], list[int]] = {}
        replay_of = {}
        for lane, c in enumerate(cells):
            if c is not None:
                in_cell.setdefault((c[0], c[1]), []).append(lane)
                replay_of[(c[0], c[1])] = c[2]
        for (bank, row), lanes in in_cell.items():
            rect = QRectF(area.left() + bank * cell_w + 1, top + row * cell_h + 1, cell_w - 2, cell_h - 2)
            painter.fillRect(rect, REPLAY if replay_of[(bank, row)] else GOOD)
            painter.setPen(QColor("white"))
            label = str(lanes[0]) if len(lanes) == 1 else f"{len(lanes)}"
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, label)
        painter.setPen(QColor("black"))
        line_h = painter.fontMetrics().height()
        painter.drawText(QRectF(area.left(), top + rows * cell_h + 4, area.width(), line_h * 4),
                         Qt.TextFlag.TextWordWrap,
                         f"{rows} wavefront(s) down, banks across: each cell is the lane it serves (a number of lanes "
                         "where they read one word: a broadcast); red: a replay, a bank conflict")
