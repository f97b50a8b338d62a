"""A PNG of a figure whose boxes change colour from one step to the next, encoded fast: the figure
is rendered once with blank boxes, and each step fills the blank pixels inside the boxes and
compresses again only the bands of rows whose boxes changed colour (compressing the whole image
was most of a click). Numpy and zlib only: the figure itself is drawn by draw.py."""
from __future__ import annotations

import struct
import zlib

import numpy as np

BAND = 32  # pixel rows of the PNG compressed together


class BandedPng:
    """pixels: the blank rendering (an RGBA array); rects: each box's (top, bottom, left, right);
    blank: the colour boxes have in the rendering (left as rendered).

    >>> png = BandedPng(np.full((4, 4, 4), 255, np.uint8), [(0, 2, 0, 2)], blank="#ffffff")
    >>> png.encode(["#ff0000"])[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """

    def __init__(self, pixels: np.ndarray, rects: list[tuple[int, int, int, int]], blank: str):
        self.pixels, self.rects, self.blank = pixels, rects, blank
        height = pixels.shape[0]
        self.bands = [(start, [i for i, (r0, r1, _, _) in enumerate(rects) if r0 < start + BAND and r1 > start])
                      for start in range(0, height, BAND)]
        self._packed: dict[int, tuple] = {}

    def encode(self, colors: list[str]) -> bytes:
        """The PNG with box i filled in colors[i]."""
        check, packed = 1, []
        for band, (start, boxes) in enumerate(self.bands):
            key = tuple(colors[i] for i in boxes)
            cached = self._packed.get(band)
            if cached is None or cached[0] != key:
                cached = self._packed[band] = (key, *self._pack(start, boxes, colors))
            check = zlib.adler32(cached[1], check)
            packed.append(cached[2])
        # one zlib stream: its header, the bands (each ends on a full flush, so they join), an empty
        # final block, the checksum of the whole
        data = b"\x78\x01" + b"".join(packed) + b"\x03\x00" + struct.pack(">I", check)
        height, width = self.pixels.shape[:2]
        return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
                + _chunk(b"IDAT", data) + _chunk(b"IEND", b""))

    def _pack(self, start: int, boxes: list[int], colors: list[str]) -> tuple[bytes, bytes]:
        """One band of rows painted: (its PNG scanlines, the same deflated)."""
        band = self.pixels[start:start + BAND].copy()
        for i in boxes:
            if colors[i] == self.blank:
                continue
            r0, r1, c0, c1 = self.rects[i]
            region = band[max(r0 - start, 0):max(min(r1 - start, len(band)), 0), c0:c1]
            blank = (region[..., :3] == 255).all(axis=-1)
            region[blank, :3] = _rgb(colors[i])
        raw = np.hstack([np.zeros((len(band), 1), np.uint8), band.reshape(len(band), -1)]).tobytes()  # filter 0
        packer = zlib.compressobj(1, zlib.DEFLATED, -15)
        return raw, packer.compress(raw) + packer.flush(zlib.Z_FULL_FLUSH)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)
