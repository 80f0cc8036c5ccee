"""Thrift's compact protocol, read and written generically: just enough to walk a
Parquet footer and page headers and write a footer back with a few fields changed.

A struct is a ``dict`` from field id to ``(type, value)`` in the order read, so
fields this module knows nothing about survive a round trip unchanged. Values:
``int`` (byte, i16, i32, i64), ``bool``, ``bytes`` (binary, and doubles kept as
their 8 raw bytes), lists as ``(element type, [values])``, structs as dicts.
Maps, sets and unknown types raise :class:`ThriftError`: the Parquet format uses
none, so the caller falls back to a reader that understands more.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BINARY", "I32", "I64", "LIST", "STRUCT", "Struct", "ThriftError", "dump", "load"]

BOOL_TRUE, BOOL_FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(1, 13)
BOOL = BOOL_TRUE  # how a bool field is kept: the value says which
_INTS = (BYTE, I16, I32, I64)

Struct = dict[int, tuple[int, Any]]


class ThriftError(ValueError):
    """Bytes this codec cannot read (malformed, truncated or a type it does not model)."""


def load(data: bytes | memoryview | Any, at: int = 0) -> tuple[Struct, int]:
    """The struct encoded at ``data[at:]`` and the offset just past it."""
    reader = _Reader(data, at)
    try:
        return reader.struct(), reader.at
    except IndexError as error:
        raise ThriftError("truncated Thrift struct") from error


def dump(struct: Struct) -> bytes:
    """``struct`` encoded (fields in their dict order)."""
    out = bytearray()
    _write_struct(out, struct)
    return bytes(out)


class _Reader:
    def __init__(self, data: Any, at: int) -> None:
        self.data = data
        self.at = at

    def byte(self) -> int:
        value = int(self.data[self.at])
        self.at += 1
        return value

    def varint(self) -> int:
        shift = value = 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 70:
                raise ThriftError("varint longer than 10 bytes")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def struct(self) -> Struct:
        fields: Struct = {}
        field_id = 0
        while True:
            head = self.byte()
            kind = head & 0x0F
            if kind == 0:
                return fields
            delta = head >> 4
            field_id = field_id + delta if delta else self.zigzag()
            if kind in (BOOL_TRUE, BOOL_FALSE):
                fields[field_id] = (BOOL, kind == BOOL_TRUE)
            else:
                fields[field_id] = (kind, self.value(kind))

    def value(self, kind: int) -> Any:
        if kind in _INTS:
            return self.byte() if kind == BYTE else self.zigzag()
        if kind == BINARY:
            size = self.varint()
            start, self.at = self.at, self.at + size
            if self.at > len(self.data):
                raise ThriftError("binary field runs past the end")
            return bytes(self.data[start : self.at])
        if kind == DOUBLE:
            start, self.at = self.at, self.at + 8
            return bytes(self.data[start : self.at])
        if kind == STRUCT:
            return self.struct()
        if kind == LIST:
            head = self.byte()
            size, element = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            if element in (BOOL_TRUE, BOOL_FALSE):
                return (BOOL, [self.byte() == 1 for _ in range(size)])
            return (element, [self.value(element) for _ in range(size)])
        raise ThriftError(f"Thrift type {kind} is not used by Parquet")


def _varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _zigzag(out: bytearray, value: int) -> None:
    _varint(out, (value << 1) ^ (value >> 63))


def _write_struct(out: bytearray, struct: Struct) -> None:
    last = 0
    for field_id, (kind, value) in struct.items():
        wire = (BOOL_TRUE if value else BOOL_FALSE) if kind == BOOL else kind
        delta = field_id - last
        if 0 < delta <= 15:
            out.append(delta << 4 | wire)
        else:
            out.append(wire)
            _zigzag(out, field_id)
        if kind != BOOL:
            _write_value(out, kind, value)
        last = field_id
    out.append(0)


def _write_value(out: bytearray, kind: int, value: Any) -> None:
    if kind == BYTE:
        out.append(value & 0xFF)
    elif kind in _INTS:
        _zigzag(out, value)
    elif kind == BINARY:
        _varint(out, len(value))
        out += value
    elif kind == DOUBLE:
        out += value
    elif kind == STRUCT:
        _write_struct(out, value)
    elif kind == LIST:
        element, items = value
        wire = BOOL_TRUE if element == BOOL else element
        if len(items) < 15:
            out.append(len(items) << 4 | wire)
        else:
            out.append(0xF0 | wire)
            _varint(out, len(items))
        for item in items:
            if element == BOOL:
                out.append(1 if item else 2)
            else:
                _write_value(out, element, item)
    else:
        raise ThriftError(f"Thrift type {kind} is not used by Parquet")
