"""A PNG of a figure whose marks change from one step to the next, encoded fast: the figure is
rendered once with its boxes blank, and each step paints the marks of the step (a box's fill, its
border, its state's word, the values written on edges) into that rendering and compresses again
only the bands of rows whose marks changed (compressing the whole image was most of a click).
Numpy and zlib only: the figure and the marks' pixels are drawn by draw.py."""
from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

BAND = 32  # pixel rows of the PNG compressed together


@dataclass(frozen=True)
class Mark:
    """Something painted over the blank rendering: rows top to bottom (pixel rows, bottom excluded),
    a key that says what is painted (the same key paints the same pixels) and the painter, which
    draws it into a band of rows (an RGBA array) whose first row is start."""

    top: int
    bottom: int
    key: Hashable
    paint: Callable[[np.ndarray, int], None]


class BandedPng:
    """pixels: the blank rendering (an RGBA array).

    >>> png = BandedPng(np.full((4, 4, 4), 255, np.uint8))
    >>> png.encode([fill((0, 2, 0, 2), "#ff0000", png.pixels)])[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """

    def __init__(self, pixels: np.ndarray):
        self.pixels = pixels
        self._packed: dict[int, tuple] = {}

    def encode(self, marks: list[Mark]) -> bytes:
        """The PNG with every mark painted, in the order given."""
        check, packed = 1, []
        height, width = self.pixels.shape[:2]
        for band, start in enumerate(range(0, height, BAND)):
            inside = [m for m in marks if m.top < start + BAND and m.bottom > start]
            key = tuple(m.key for m in inside)
            cached = self._packed.get(band)
            if cached is None or cached[0] != key:
                cached = self._packed[band] = (key, *self._pack(start, inside))
            check = zlib.adler32(cached[1], check)
            packed.append(cached[2])
        # one zlib stream: its header, the bands (each ends on a full flush, so they join), an empty
        # final block, the checksum of the whole
        data = b"\x78\x01" + b"".join(packed) + b"\x03\x00" + struct.pack(">I", check)
        return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                + _chunk(b"IDAT", data) + _chunk(b"IEND", b""))

    def _pack(self, start: int, marks: list[Mark]) -> tuple[bytes, bytes]:
        """One band of rows painted: (its PNG scanlines, the same deflated)."""
        band = self.pixels[start:start + BAND].copy()
        for mark in marks:
            mark.paint(band, start)
        raw = np.hstack([np.zeros((len(band), 1), np.uint8), band.reshape(len(band), -1)]).tobytes()  # filter 0
        packer = zlib.compressobj(1, zlib.DEFLATED, -15)
        return raw, packer.compress(raw) + packer.flush(zlib.Z_FULL_FLUSH)


def fill(rect: tuple[int, int, int, int], color: str, pixels: np.ndarray) -> Mark:
    """The blank (white) pixels of the rendering pixels inside rect (top, bottom, left, right)
    filled with color."""
    top, bottom, left, right = rect
    right = min(right, pixels.shape[1])
    # the box's pixels filled once: a step copies them
    filled = pixels[top:bottom, left:right].copy()
    filled[(filled[..., :3] == 255).all(axis=-1), :3] = rgb_of(color)

    def paint(band: np.ndarray, start: int) -> None:
        r0, r1 = max(top - start, 0), max(min(bottom - start, len(band)), 0)
        if r1 > r0:
            band[r0:r1, left:right] = filled[r0 + start - top:r1 + start - top]

    return Mark(top, bottom, ("fill", rect, color), paint)


def border(rect: tuple[int, int, int, int], color: str, width: int, dash: tuple[int, int] | None) -> Mark:
    """A border of width pixels just inside rect, solid or dashed (dash: pixels on, pixels off)."""
    top, bottom, left, right = rect
    rgb = rgb_of(color)
    mask = np.zeros((bottom - top, right - left), bool)
    mask[:width], mask[-width:], mask[:, :width], mask[:, -width:] = True, True, True, True
    if dash is not None:
        on, off = dash
        rows, cols = np.indices(mask.shape)
        along = np.where((rows < width) | (rows >= mask.shape[0] - width), cols, rows)  # position along its side
        mask &= along % (on + off) < on

    rows, cols = np.nonzero(mask)  # row by row: a band's rows are one slice of them
    rows, cols = rows + top, cols + left

    def paint(band: np.ndarray, start: int) -> None:
        first, last = np.searchsorted(rows, [start, start + len(band)])
        inside = cols[first:last] < band.shape[1]
        band[rows[first:last][inside] - start, cols[first:last][inside], :3] = rgb

    return Mark(top, bottom, ("border", rect, color, width, dash), paint)


def stamp(at: tuple[int, int], sprite: np.ndarray, key: Hashable) -> Mark:
    """An RGBA sprite laid over the picture with its top left corner at (row, column)."""
    row, col = at
    height, width = sprite.shape[:2]
    alpha = sprite[..., 3:4].astype(np.float32) / 255
    colour = sprite[..., :3].astype(np.float32)

    def paint(band: np.ndarray, start: int) -> None:
        r0, r1 = max(row - start, 0), min(row + height - start, len(band))
        if r1 <= r0:
            return
        c1 = min(col + width, band.shape[1])
        region = band[r0:r1, col:c1, :3]
        a = alpha[r0 + start - row:r1 + start - row, :c1 - col]
        region[...] = np.rint(colour[r0 + start - row:r1 + start - row, :c1 - col] * a + region * (1 - a))

    return Mark(row, row + height, ("stamp", at, key), paint)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def rgb_of(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
