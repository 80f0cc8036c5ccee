"""Stored Roaring bitmaps (portable serialization) decoded into 64-bit words.

:func:`decode_many` reads every one-container bitmap of a batch (any file of up
to 65,536 rows, so every item of small files) with a few numpy passes over all
of them at once: bitset containers are copied as words, array containers
become row numbers set as bits, run containers a mask per word they touch.
Anything else (several
containers, or bytes that do not parse) goes through :func:`decode_words`, one
bitmap at a time, which raises IndexCorruptError on bytes that are not a bitmap
of the file. Decoding one bitmap at a time cost about 100 us each: minutes at
100,000 files.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from skipindex.errors import IndexCorruptError

__all__ = ["decode_many", "decode_words", "groups", "places"]

CHUNK_WORDS = 1024  # a Roaring container spans 65,536 rows
ARRAY_MAX = 4096
RUNS_COOKIE, NO_RUNS_COOKIE = 12347, 12346
GATHER_BYTES = 64 << 20  # bitset containers copied per numpy pass
ROWS_PER_PASS = 1 << 18  # rows of array containers (or runs) set per numpy pass
_ALL_SET = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
BITS_PER_ROW = 64  # files this sparse at most are set through one bool per row


def decode_words(data: Any, out: np.ndarray) -> None:
    """OR the rows of one portably serialized Roaring bitmap into ``out`` (uint64
    words). IndexCorruptError if the bytes are not one, or hold rows past ``out``."""
    try:
        _decode(memoryview(data).cast("B"), out)
    except (ValueError, IndexError, TypeError) as exc:
        raise IndexCorruptError(f"a stored Roaring bitmap does not decode: {exc}") from exc


def _decode(data: memoryview, out: np.ndarray) -> None:
    def u16(count: int, at: int) -> np.ndarray:
        if at + 2 * count > len(data):
            raise ValueError("truncated")
        return np.frombuffer(data, dtype="<u2", count=count, offset=at)

    if len(data) < 8:
        raise ValueError("shorter than a header")
    cookie = int.from_bytes(data[0:4], "little")
    if cookie & 0xFFFF == RUNS_COOKIE:
        size = (cookie >> 16) + 1
        at = 4 + (size + 7) // 8
        run_flags = np.frombuffer(data, dtype=np.uint8, count=(size + 7) // 8, offset=4)
        is_run = np.unpackbits(run_flags, bitorder="little")[:size].astype(bool)
        has_offsets = size >= 4
    elif cookie == NO_RUNS_COOKIE:
        size = int.from_bytes(data[4:8], "little")
        at, is_run, has_offsets = 8, np.zeros(size, dtype=bool), True
    else:
        raise ValueError(f"unknown cookie {cookie}")
    header = u16(2 * size, at).reshape(size, 2).astype(np.int64)
    at += 4 * size + (4 * size if has_offsets else 0)
    containers = zip(header[:, 0].tolist(), header[:, 1].tolist(), is_run.tolist(), strict=True)
    for key, card, run in containers:
        base = key * CHUNK_WORDS
        span = min(CHUNK_WORDS, len(out) - base)
        if span <= 0:
            raise ValueError(f"rows from {key << 16} exceed the file's {len(out) * 64} rows")
        if run:
            count = int(u16(1, at)[0])
            pairs = u16(2 * count, at + 2).reshape(count, 2).astype(np.int64)
            at += 2 + 4 * count
            if np.any(pairs[:, 0] + pairs[:, 1] >= CHUNK_WORDS * 64):
                raise ValueError("a run past the end of its container")
            bits = np.zeros(CHUNK_WORDS * 64 + 1, dtype=np.int8)
            np.add.at(bits, pairs[:, 0], 1)
            np.add.at(bits, np.minimum(pairs[:, 0] + pairs[:, 1] + 1, len(bits) - 1), -1)
            words = _pack(np.cumsum(bits[:-1]) > 0)
        elif card + 1 > ARRAY_MAX:
            if at + 8 * CHUNK_WORDS > len(data):
                raise ValueError("truncated")
            words = np.frombuffer(data, dtype="<u8", count=CHUNK_WORDS, offset=at)
            at += 8 * CHUNK_WORDS
        else:
            rows = u16(card + 1, at)
            at += 2 * (card + 1)
            bits_ = np.zeros(64 * max(span, (int(rows.max()) >> 6) + 1), dtype=bool)
            bits_[rows] = True
            words = _pack(bits_)
        if words[span:].any():
            raise ValueError(f"rows past the file's {len(out) * 64} rows")
        out[base : base + span] |= words[:span]


def _pack(bits: np.ndarray) -> np.ndarray:
    return np.packbits(bits, bitorder="little").view("<u8")


def decode_many(
    offsets: np.ndarray, data: memoryview, items: np.ndarray, rows: np.ndarray, out: np.ndarray
) -> None:
    """OR item ``items[k]`` (its bytes ``data[offsets[i]:offsets[i + 1]]``) into
    ``out[rows[k]]``; every target row distinct."""
    buf = np.frombuffer(data, dtype=np.uint8)
    start = offsets[items].astype(np.int64)
    end = offsets[items + 1].astype(np.int64)
    parsed = _Headers(buf, start, end)
    done = parsed.empty.copy()  # no bytes at all is not a bitmap: decode_words says so
    width = out.shape[1]
    span = min(CHUNK_WORDS, width)
    bitsets = np.flatnonzero(parsed.bitsets())
    for chunk in _chunks(bitsets, np.full(len(bitsets), 8 * CHUNK_WORDS), GATHER_BYTES):
        words = buf[parsed.body[chunk, None] + np.arange(8 * CHUNK_WORDS)].view("<u8")
        clean = ~words[:, span:].any(axis=1)  # rows past the file: left to decode_words
        out[rows[chunk[clean]], :span] |= words[clean, :span]
        done[chunk[clean]] = True
    for which, owner, row in parsed.container_rows():
        keep, good = _leave_past(which, owner, row >= 64 * width)
        _set_rows(out, rows[which], owner[keep], row[keep])
        done[good] = True
    for which, owner, first, last in parsed.container_runs():  # past the file or the container
        keep, good = _leave_past(which, owner, last >= min(64 * width, 1 << 16))
        _set_runs(out, rows[which], owner[keep], first[keep], last[keep])
        done[good] = True
    for k in np.flatnonzero(~done).tolist():
        decode_words(data[int(start[k]) : int(end[k])], out[rows[k]])


def _leave_past(
    which: np.ndarray, owner: np.ndarray, past: np.ndarray
) -> tuple[slice | np.ndarray, np.ndarray]:
    """The rows (or runs) to set, and their items: those of items with none
    ``past`` their file. The others are left to decode_words, which says what
    is wrong (and no pass over every item when none is: at a million files
    that was a fifth of the decoding)."""
    if not past.any():
        return slice(None), which
    bad = np.zeros(len(which), dtype=bool)
    bad[owner[past]] = True
    return ~bad[owner], which[~bad]


def places(starts: np.ndarray, counts: np.ndarray, step: int) -> np.ndarray:
    """``starts[g] + step * k`` for ``k < counts[g]``, group after group: one
    cumulative sum of ``step`` with a jump where a group starts (``np.repeat``
    and a rank per place cost several passes more; at a million small files
    these places are most of a row-level prune)."""
    starts, counts = starts[counts > 0], counts[counts > 0]
    steps = np.full(int(counts.sum()), step, dtype=np.int64)
    last = starts + step * (counts - 1)  # each group's last place
    steps[np.cumsum(counts) - counts] = starts - np.concatenate(([0], last[:-1]))
    return np.cumsum(steps)


def groups(counts: np.ndarray) -> np.ndarray:
    """Each row's group when the groups hold ``counts`` rows one after another
    (0 for the first's rows, 1 for the next's): a cumulative sum, no repeat."""
    total = int(counts.sum())
    return np.cumsum(np.bincount(np.cumsum(counts), minlength=total + 1)[:total])


def _set_rows(out: np.ndarray, targets: np.ndarray, owner: np.ndarray, row: np.ndarray) -> None:
    """OR row ``row[k]`` into ``out[targets[owner[k]]]`` (targets distinct).

    Where the files are small beside the rows set (a few words each, as in a
    lake of many small files), the rows land as one bool per row of the files,
    packed into words at once: ``bitwise_or.at`` costs about 20 ns a row, a
    scattered store and ``packbits`` a few. Sparse rows of large files keep
    ``bitwise_or.at``, which touches only their words."""
    width = out.shape[1]
    bits = len(targets) * width * 64
    if bits <= BITS_PER_ROW * len(row):
        mask = np.zeros(bits, dtype=bool)
        mask[owner * (width * 64) + row] = True
        out[targets] |= np.packbits(mask, bitorder="little").view("<u8").reshape(-1, width)
        return
    word = targets[owner] * width + (row >> 6)
    np.bitwise_or.at(out.reshape(-1), word, np.uint64(1) << (row & 63).astype(np.uint64))


def _set_runs(
    out: np.ndarray, targets: np.ndarray, owner: np.ndarray, first: np.ndarray, last: np.ndarray
) -> None:
    """OR rows ``first[k]..last[k]`` into ``out[targets[owner[k]]]`` a word at a
    time, never a row at a time (bit-sliced bitmaps of small files are runs of
    about six rows): each run's first word, its last, and any whole words between."""
    if len(first) == 0:
        return
    flat, width = out.reshape(-1), out.shape[1]
    lowest, highest = first >> 6, last >> 6
    word = targets[owner] * width + lowest
    start = (first & 63).astype(np.uint64)
    end = np.where(lowest == highest, last & 63, 63).astype(np.uint64)
    # The runs of one word are neighbours: OR them first, then each word once.
    _or_words(flat, word, (_ALL_SET >> (np.uint64(63) - end + start)) << start)
    longer = np.flatnonzero(highest > lowest)
    if len(longer):
        tail = word[longer] + (highest - lowest)[longer]
        _or_words(flat, tail, _ALL_SET >> (np.uint64(63) - (last[longer] & 63).astype(np.uint64)))
        whole = highest[longer] - lowest[longer] - 1
        flat[places(word[longer] + 1, whole, 1)] = _ALL_SET


def _or_words(flat: np.ndarray, at: np.ndarray, masks: np.ndarray) -> None:
    """``flat[at] |= masks``, equal neighbours in ``at`` merged first."""
    starts = np.flatnonzero(np.concatenate(([True], at[1:] != at[:-1])))
    np.bitwise_or.at(flat, at[starts], np.bitwise_or.reduceat(masks, starts))


def _chunks(items: np.ndarray, sizes: np.ndarray, limit: int) -> list[np.ndarray]:
    """``items`` in consecutive groups of at most ``limit`` total size (or one item)."""
    if len(items) == 0:
        return []
    group = np.cumsum(sizes) // max(limit, 1)
    cuts = np.flatnonzero(np.diff(group)) + 1
    return np.split(items, cuts)


class _Headers:
    """The header of each item, where it is one container with key 0 (rows
    0..65,535): ``single``, ``is_run``, ``card`` and where the container starts."""

    def __init__(self, buf: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
        self.buf, self.end = buf, end
        length = end - start
        # Each item's first 16 bytes in one gather (a field is used only where
        # the item is long enough to hold it).
        head = _heads(buf, start)
        words = head.view("<u4")
        cookie = np.where(length >= 8, words[:, 0], 0)
        plain = (cookie == NO_RUNS_COOKIE) & (length >= 8)
        size = np.where(plain, words[:, 1], 0)
        self.empty = plain & (size == 0)
        plain &= (size == 1) & (length >= 16)
        runs = (cookie == RUNS_COOKIE) & (length >= 9)  # one container, run flags in a byte
        self.is_run = runs & (head[:, 4] & 1 == 1)
        # key and cardinality - 1: after the flag byte (runs) or the size (no runs)
        key = np.where(runs, _u16_at(head, 5), _u16_at(head, 8))
        self.card = (
            np.where(plain | runs, np.where(runs, _u16_at(head, 7), _u16_at(head, 10)), 0) + 1
        )
        self.body = np.where(runs, start + 9, start + 16)
        self.single = (plain | runs) & (key == 0)
        self.runs = np.where(runs, _u16_at(head, 9), 0)  # a run container's runs

    def bitsets(self) -> np.ndarray:
        return np.asarray(
            self.single
            & ~self.is_run
            & (self.card > ARRAY_MAX)
            & (self.body + 8 * CHUNK_WORDS <= self.end)
        )

    def container_rows(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(items, each row's place in items, its row) for the array
        containers, a bounded number of rows at a time, in order."""
        arrays = np.flatnonzero(
            self.single
            & ~self.is_run
            & (self.card <= ARRAY_MAX)
            & (self.body + 2 * self.card <= self.end)
        )
        for which in _chunks(arrays, self.card[arrays], ROWS_PER_PASS):
            counts = self.card[which]
            yield which, groups(counts), self._array_rows(self.body[which], counts)

    def container_runs(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(items, each run's place in items, its first row, its last row) for
        the run containers, a bounded number of runs at a time (each item's runs
        together and in order; the items in any order)."""
        runs = np.flatnonzero(
            self.single
            & self.is_run
            & (self.body + 2 + 4 * self.runs <= self.end)  # its runs all inside it
        )
        for chunk in _chunks(runs, self.runs[runs], ROWS_PER_PASS):
            pairs = self.body[chunk] + 2  # where each container's runs start
            # Runs are 4-byte (start, length - 1) pairs: those of containers whose
            # runs lie at one offset mod 4 are read as aligned 32-bit numbers, a
            # plain gather (a 4-byte window per run cost twice as much).
            for offset in range(4):
                which = chunk[pairs & 3 == offset]
                if len(which) == 0:
                    continue
                count = self.runs[which]
                aligned = self._aligned_u32(offset)
                pair = aligned[places((self.body[which] + 2 - offset) >> 2, count, 1)]
                first = (pair & 0xFFFF).astype(np.int32)  # (start, length - 1)
                yield which, groups(count), first, first + (pair >> 16).astype(np.int32)

    def _array_rows(self, body: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """The 16-bit rows of array containers starting at ``body``, ``counts`` each."""
        at = places(body, counts, 2)
        return np.asarray(sliding_window_view(self.buf, 2)[at].view("<u2")[:, 0], dtype=np.int64)

    def _aligned_u32(self, offset: int) -> np.ndarray:
        """The buffer as 32-bit numbers from byte ``offset``: a view, no copy."""
        usable = (len(self.buf) - offset) // 4 * 4
        return self.buf[offset : offset + usable].view("<u4")


def _heads(buf: np.ndarray, start: np.ndarray) -> np.ndarray:
    """The 16 bytes from each of ``start`` (zeros past the buffer's end), without
    copying the buffer: only its last 16 bytes are padded."""
    head = np.zeros((len(start), 16), dtype=np.uint8)
    inside = start <= len(buf) - 16
    if len(buf) >= 16:
        head[inside] = sliding_window_view(buf, 16)[start[inside]]
    base = max(len(buf) - 16, 0)
    tail = np.concatenate([buf[base:], np.zeros(16, dtype=np.uint8)])
    head[~inside] = sliding_window_view(tail, 16)[start[~inside] - base]
    return head


def _u16_at(head: np.ndarray, at: int) -> np.ndarray:
    """The little-endian 16-bit number at byte ``at`` of each row of ``head``."""
    return np.asarray(head[:, at].astype(np.int64) | head[:, at + 1].astype(np.int64) << 8)
