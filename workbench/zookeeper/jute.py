"""Jute binary archive: big-endian ints and longs, length-prefixed buffers and strings, -1 for null.

BinaryInputArchive / BinaryOutputArchive (zookeeper-jute/src/main/java/org/apache/jute/, release-3.8.4).
"""

from __future__ import annotations

import struct

from workbench.errors import WorkbenchError

_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
# BinaryInputArchive.maxBuffer: jute.maxbuffer defaults to 0xfffff; the reader allows an extra 1 KiB.
MAX_BUFFER = 0xFFFFF + 1024


class JuteError(WorkbenchError, ValueError):
    """Bytes that are not the record expected; `offset` is where reading failed."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at byte {offset}")
        self.offset = offset


class Reader:
    """Reads jute fields from a buffer, keeping the offset so errors can name a byte position."""

    def __init__(self, data: bytes | memoryview, offset: int = 0, end: int | None = None) -> None:
        self.data = memoryview(data)
        self.pos = offset
        self.end = len(self.data) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def _take(self, n: int, what: str) -> memoryview:
        if n > self.end - self.pos:
            raise EOFError(f"{what}: need {n} bytes at byte {self.pos}, {self.end - self.pos} left")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def int32(self, what: str = "int") -> int:
        return int(_INT.unpack(self._take(4, what))[0])

    def int64(self, what: str = "long") -> int:
        return int(_LONG.unpack(self._take(8, what))[0])

    def byte(self, what: str = "byte") -> int:
        return int(self._take(1, what)[0])

    def boolean(self, what: str = "boolean") -> bool:
        return self.byte(what) != 0

    def buffer(self, what: str = "buffer") -> bytes | None:
        start = self.pos
        n = self.int32(what)
        if n == -1:
            return None
        if n < -1 or n > MAX_BUFFER:
            raise JuteError(f"{what}: impossible length {n}", start)
        return bytes(self._take(n, what))

    def ustring(self, what: str = "ustring") -> str | None:
        raw = self.buffer(what)
        return None if raw is None else decode_ustring(raw)

    def vector_len(self, what: str = "vector") -> int:
        """Element count; -1 (null vector) is returned as -1 for the caller to keep."""
        start = self.pos
        n = self.int32(what)
        if n < -1 or n > self.remaining():
            raise JuteError(f"{what}: impossible length {n}", start)
        return n


class Writer:
    """Writes jute fields; the inverse of Reader, used to rewrite redacted files."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def int32(self, v: int) -> None:
        self.parts.append(_INT.pack(v))

    def int64(self, v: int) -> None:
        self.parts.append(_LONG.pack(v))

    def byte(self, v: int) -> None:
        self.parts.append(bytes((v & 0xFF,)))

    def boolean(self, v: bool) -> None:
        self.byte(1 if v else 0)

    def buffer(self, v: bytes | None) -> None:
        if v is None:
            self.int32(-1)
        else:
            self.int32(len(v))
            self.parts.append(bytes(v))

    def ustring(self, v: str | None) -> None:
        self.buffer(None if v is None else encode_ustring(v))

    def raw(self, v: bytes) -> None:
        self.parts.append(v)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)


def decode_ustring(raw: bytes) -> str:
    """UTF-8 as BinaryOutputArchive.stringToByteBuffer writes it: a character outside the BMP is two
    3-byte surrogate sequences (CESU-8), which Python's strict decoder refuses."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        s = raw.decode("utf-8", "surrogatepass")
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def encode_ustring(s: str) -> bytes:
    """The inverse of decode_ustring: non-BMP characters as surrogate pairs, each 3 bytes."""
    if all(ord(c) < 0x10000 for c in s):
        return s.encode("utf-8")
    units = []
    for c in s:
        cp = ord(c)
        if cp < 0x10000:
            units.append(c)
        else:
            cp -= 0x10000
            units.append(chr(0xD800 + (cp >> 10)) + chr(0xDC00 + (cp & 0x3FF)))
    return "".join(units).encode("utf-8", "surrogatepass")
