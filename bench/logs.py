"""A log-like table for the substring bench: messages, URLs, user agents, tags.

Words come from a real vocabulary: the identifiers and prose of the Python
standard library's own source (every word of 3-12 letters, drawn as often as it
occurs there, a natural Zipf-like spread), so common words sit in every file and
rare ones in a few. Rows are in time order (as logs arrive), 200 files of about
6 MB each. A few needles are planted in a handful of rows each (an
``OutOfMemoryError``, a ``kernel panic``, one user's id, a checkout URL, a rare
device): what a search for an incident looks for.

Everything is built with numpy and pyarrow compute (no per-row Python), from a
fixed seed: the same table on every machine with the same Python.
"""

from __future__ import annotations

import collections
import re
import sysconfig
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

FILES = 200
ROWS = 80_000  # per file: about 5.4 MB on disk, 1.1 GB in all
SERVICES = [f"svc-{name}" for name in (
    "auth", "billing", "cart", "catalog", "checkout", "search", "gateway", "ledger", "mail",
    "media", "orders", "payments", "profile", "ranking", "reviews", "shipping", "stock",
    "tax", "users", "web",
)]  # fmt: skip
HOSTS = [f"{a}.{b}.example.com" for a in ("api", "www", "cdn", "m", "shop") for b in
         ("eu", "us", "ap", "sa")]  # fmt: skip
AGENTS = [
    f"Mozilla/5.0 ({device}) AppleWebKit/537.36 (KHTML, like Gecko) {browser}/{major}.0.{minor} "
    f"Safari/537.36"
    for device in ("Windows NT 10.0; Win64; x64", "Macintosh; Intel Mac OS X 14_5",
                   "X11; Linux x86_64", "Linux; Android 14; Pixel 8", "Linux; Android 13; SM-S918B",
                   "iPhone; CPU iPhone OS 17_5 like Mac OS X", "iPad; CPU OS 17_5 like Mac OS X")
    for browser in ("Chrome", "Edg", "OPR")
    for major, minor in ((124, 6367), (125, 6422), (126, 6478))
]  # fmt: skip
EXCEPTIONS = ["NullPointerException", "IllegalStateException", "TimeoutException",
              "IOException", "SocketException", "IllegalArgumentException"]  # fmt: skip
# Planted needles: (column, text, rows that hold it)
NEEDLES = [
    ("message", "java.lang.OutOfMemoryError: Java heap space", 6),
    ("message", "kernel panic - not syncing", 3),
    ("message", "deadlock detected while waiting for ShareLock", 12),
    ("message", "user u0424242 exported all invoices", 4),
    ("url", "/checkout/confirm/9f3a7c", 5),
    ("user_agent", "Mozilla/5.0 (Nintendo Switch; WifiWebBrowser/4.1) NX/1.0", 8),
    ("message", "certificate has expired for host legacy-billing", 20),
    ("url", "/admin/debug/pprof", 2),
]


def vocabulary(limit: int = 20_000) -> tuple[pa.Array, np.ndarray]:
    """Words of the standard library's source and how often each occurs there."""
    counts: collections.Counter[str] = collections.Counter()
    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.glob("*.py")):
        counts.update(w.lower() for w in re.findall(r"[A-Za-z]{3,12}", path.read_text("latin-1")))
    words, weights = zip(*counts.most_common(limit), strict=True)
    probability = np.array(weights, dtype=np.float64)
    return pa.array(words, pa.string()), probability / probability.sum()


def _words(rng: np.random.Generator, vocab: pa.Array, p: np.ndarray, count: int) -> pa.Array:
    return vocab.take(pa.array(rng.choice(len(vocab), size=count, p=p)))


def _numbers(rng: np.random.Generator, low: int, high: int, count: int) -> pa.Array:
    return pc.cast(pa.array(rng.integers(low, high, size=count)), pa.string())


def _pick(rng: np.random.Generator, choices: list[str], count: int) -> pa.Array:
    return pa.array(choices, pa.string()).take(pa.array(rng.integers(0, len(choices), count)))


def _join(*parts: pa.Array | str) -> pa.Array:
    arrays = [p for p in parts if not isinstance(p, str)]
    count = len(arrays[0])
    full = [pa.array([p] * count, pa.string()) if isinstance(p, str) else p for p in parts]
    return pc.binary_join_element_wise(*full, "")


def _messages(rng: np.random.Generator, vocab: pa.Array, p: np.ndarray, count: int) -> pa.Array:
    """Five templates, mixed row by row."""

    def w() -> pa.Array:
        return _words(rng, vocab, p, count)

    shapes = [
        _join("GET /api/v1/", w(), "/", _numbers(rng, 1, 10**6, count), " 200 ",
              _numbers(rng, 1, 900, count), "ms"),
        _join("connection to ", _pick(rng, HOSTS, count), " timed out after ",
              _numbers(rng, 1000, 30000, count), " ms while ", w(), " ", w()),
        _join("user u", _numbers(rng, 10**6, 9 * 10**6, count), " ", w(), " ", w(), " ", w()),
        _join(_pick(rng, EXCEPTIONS, count), ": ", w(), " ", w(), " in ", w(), ".", w(), "()"),
        _join(w(), " ", w(), " ", w(), " ", w(), " ", w(), " ", w()),
    ]  # fmt: skip
    which = rng.integers(0, len(shapes), count)
    out = shapes[0]
    for k in range(1, len(shapes)):
        out = pc.if_else(pa.array(which == k), shapes[k], out)
    return out


def _urls(rng: np.random.Generator, vocab: pa.Array, p: np.ndarray, count: int) -> pa.Array:
    return _join("https://", _pick(rng, HOSTS, count), "/", _words(rng, vocab, p, count), "/",
                 _words(rng, vocab, p, count), "/", _numbers(rng, 1, 10**7, count), "?q=",
                 _words(rng, vocab, p, count))  # fmt: skip


def _tags(rng: np.random.Generator, vocab: pa.Array, p: np.ndarray, count: int) -> pa.Array:
    """0-4 tags a row, from the 200 most common words."""
    lengths = rng.integers(0, 5, count)
    values = vocab.take(pa.array(rng.integers(0, 200, int(lengths.sum()))))
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _planted(rng: np.random.Generator) -> dict[int, list[tuple[str, int, str]]]:
    """Per file: the (column, row, text) of the needles planted in it."""
    out: dict[int, list[tuple[str, int, str]]] = collections.defaultdict(list)
    for column, text, rows in NEEDLES:
        for at in rng.choice(FILES * ROWS, size=rows, replace=False).tolist():
            file, row = divmod(at, ROWS)
            out[file].append((column, row, text))
    return out


def generate(folder: Path) -> Path:
    """The table in ``folder`` (made once: a _READY file, hidden from Spark, marks it done)."""
    if (folder / "_READY").exists():
        return folder
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    vocab, p = vocabulary()
    rng = np.random.default_rng(65)
    planted = _planted(rng)
    start = np.datetime64("2026-11-01T00:00:00", "us")
    for file in range(FILES):
        count = ROWS
        offsets = np.sort(rng.integers(0, 3_600_000_000, count)) + file * 3_600_000_000
        columns = {
            "ts": pa.array(start + offsets.astype("timedelta64[us]"), pa.timestamp("us", "UTC")),
            "level": _pick(rng, ["INFO"] * 16 + ["WARN"] * 3 + ["ERROR", "DEBUG"], count),
            "service": _pick(rng, SERVICES, count),
            "message": _messages(rng, vocab, p, count),
            "url": _urls(rng, vocab, p, count),
            "user_agent": _pick(rng, AGENTS, count),
            "status": pa.array(rng.choice([200, 201, 204, 301, 404, 500, 503], count,
                                          p=[.8, .05, .05, .03, .04, .02, .01]), pa.int32()),
            "tags": _tags(rng, vocab, p, count),
        }  # fmt: skip
        for column, row, text in planted.get(file, []):
            mask = np.zeros(count, dtype=bool)
            mask[row] = True
            replaced = pc.replace_with_mask(columns[column], pa.array(mask), pa.array([text]))
            columns[column] = replaced
        table = pa.table(columns)
        pq.write_table(table, folder / f"part-{file:05d}.parquet", row_group_size=ROWS // 4)
    (folder / "_READY").write_text(f"{time.perf_counter() - started:.0f} s\n")
    return folder
