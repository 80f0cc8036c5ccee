# ruff: noqa: E501 -- query templates read best one per line
"""Small tables and a grammar of Spark SQL queries over them, for the differential
test of ``skipindex.sql`` against ``spark.sql`` (tests/spark/test_sql_differential.py).

Four tables, a few hundred rows each over several files, NULL-heavy, skewed and
with duplicate keys, laid out so that indexes skip some files:

* ``fact`` (8 files): ``id`` unique and rising through the files, ``k1`` (skewed,
  NULLs) and ``k2`` (strings) keys drifting with the file, ``d`` dates and ``ts``
  timestamps (near daylight-saving changes) rising, ``q``, ``amt`` (decimal),
  ``s`` (strings, non-ASCII), ``b`` (boolean);
* ``dim1`` (3 files): ``k1`` keys (two duplicated), ``region``, ``grp``, ``name``;
* ``dim2`` (2 files): ``k2`` keys, ``cat``, ``v``;
* ``pt``: partitioned by ``p`` (4 folders), ``k1`` and ``x``.

Queries are drawn from templates (joins of 2-4 tables, inner, outer, semi and
anti; CTEs referenced once or twice; derived tables with aggregates, windows and
LIMIT; IN, NOT IN, EXISTS and scalar subqueries; UNION ALL, UNION, EXCEPT,
INTERSECT; functions of columns; comma joins) with random conditions.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["INDEXES", "generate", "queries", "write_tables"]


def write_tables(root: Path) -> dict[str, Path]:
    """The four tables under ``root``; name -> folder."""
    rnd = random.Random(7)
    folders = {name: root / name for name in ("fact", "dim1", "dim2", "pt")}
    for folder in folders.values():
        folder.mkdir(parents=True)
    fact = pa.schema(
        [
            ("id", pa.int64()),
            ("k1", pa.int32()),
            ("k2", pa.string()),
            ("d", pa.date32()),
            ("ts", pa.timestamp("us", tz="UTC")),
            ("q", pa.int32()),
            ("amt", pa.decimal128(9, 2)),
            ("s", pa.string()),
            ("b", pa.bool_()),
        ]
    )
    edges = [
        datetime(2021, 3, 14, 9, 30, tzinfo=UTC),  # 01:30 -> 03:00 in Los Angeles
        datetime(2021, 3, 14, 10, 30, tzinfo=UTC),
        datetime(2021, 11, 7, 8, 30, tzinfo=UTC),  # 01:30 twice in Los Angeles
        datetime(2021, 11, 7, 9, 30, tzinfo=UTC),
        datetime(2021, 6, 30, 18, 15, tzinfo=UTC),  # midnight in Kathmandu (+05:45)
        datetime(2021, 6, 30, 18, 14, 59, tzinfo=UTC),
    ]
    for f in range(8):
        rows = []
        for i in range(60):
            ts = datetime(2021, 1, 1, tzinfo=UTC) + timedelta(hours=f * 1000 + rnd.randint(0, 1400))
            rows.append(
                {
                    "id": f * 60 + i,
                    "k1": _maybe(
                        rnd, 0.15, 1 if rnd.random() < 0.3 else rnd.randint(f * 4, f * 4 + 6)
                    ),
                    "k2": _maybe(rnd, 0.15, f"a{(f + rnd.randint(0, 2)) % 12}"),
                    "d": _maybe(
                        rnd, 0.1, date(2020, 1, 1) + timedelta(days=f * 45 + rnd.randint(0, 60))
                    ),
                    "ts": _maybe(rnd, 0.1, rnd.choice(edges) if rnd.random() < 0.1 else ts),
                    "q": _maybe(rnd, 0.1, rnd.randint(f * 5, f * 5 + 20)),
                    "amt": _maybe(rnd, 0.1, Decimal(rnd.randint(-500, 5000)) / 100),
                    "s": _maybe(
                        rnd, 0.1, rnd.choice(["", "ab", "abc", "b", "ba", "é", "zz", "日本"])
                    ),
                    "b": _maybe(rnd, 0.15, rnd.random() < 0.5),
                }
            )
        pq.write_table(
            pa.Table.from_pylist(rows, fact),
            folders["fact"] / f"part-{f}.parquet",
            row_group_size=20,
        )
    dim1 = pa.schema(
        [("k1", pa.int32()), ("name", pa.string()), ("region", pa.string()), ("grp", pa.int32())]
    )
    keys = [*range(36), 3, 7]
    for f in range(3):
        rows = [
            {
                "k1": k,
                "name": f"n{k}",
                "region": rnd.choice(["ASIA", "EU", "US", None]),
                "grp": rnd.choice([None, 1, 2, 3]),
            }
            for k in sorted(keys)[f::3]
        ]
        pq.write_table(pa.Table.from_pylist(rows, dim1), folders["dim1"] / f"part-{f}.parquet")
    dim2 = pa.schema([("k2", pa.string()), ("cat", pa.string()), ("v", pa.int32())])
    for f in range(2):
        names = [f"a{n}" for n in range(f * 8, f * 8 + 8)] + ([None] if f else [])
        rows = [
            {"k2": k, "cat": rnd.choice(["x", "y", None]), "v": rnd.randint(0, 9)} for k in names
        ]
        pq.write_table(pa.Table.from_pylist(rows, dim2), folders["dim2"] / f"part-{f}.parquet")
    pt = pa.schema([("k1", pa.int32()), ("x", pa.int32())])
    for p in range(4):
        (folders["pt"] / f"p={p}").mkdir()
        for f in range(2):
            rows = [
                {"k1": _maybe(rnd, 0.1, rnd.randint(0, 35)), "x": rnd.randint(p * 25, p * 25 + 30)}
                for _ in range(15)
            ]
            pq.write_table(
                pa.Table.from_pylist(rows, pt), folders["pt"] / f"p={p}" / f"part-{f}.parquet"
            )
    return folders


def _maybe(rnd: random.Random, share: float, value: Any) -> Any:
    return None if rnd.random() < share else value


# Index definitions per table: (kind, column).
INDEXES = {
    "fact": [
        ("minmax", "id"),
        ("minmax", "d"),
        ("minmax", "ts"),
        ("bloom", "k1"),
        ("minmax", "k1"),  # dimension keys outside every fact file's are left out
        ("equality_bitmap", "k2"),
        ("bitsliced_bitmap", "q"),
        ("range_bitmap", "amt"),
        ("minmax", "s"),
    ],
    "dim1": [("equality_bitmap", "region"), ("minmax", "k1"), ("bloom", "name")],
    "dim2": [("minmax", "k2"), ("bitsliced_bitmap", "v")],
    "pt": [("minmax", "x"), ("bloom", "k1")],
}


# ------------------------------------------------------------------ conditions


def _fact_leaf(r: random.Random, a: str) -> str:
    day = date(2020, 1, 1) + timedelta(days=r.randint(0, 400))
    hour = datetime(2021, 1, 1) + timedelta(hours=r.randint(0, 8500))
    return r.choice(
        [
            f"{a}.id < {r.randint(0, 480)}",
            f"{a}.id BETWEEN {r.randint(0, 300)} AND {r.randint(200, 480)}",
            f"{a}.k1 = {r.randint(0, 36)}",
            f"{a}.k1 IN ({r.randint(0, 36)}, {r.randint(0, 36)}, NULL)",
            f"{a}.k1 IS NULL",
            f"{a}.k1 NOT IN ({r.randint(0, 36)}, {r.randint(0, 36)})",
            f"{a}.k2 = 'a{r.randint(0, 12)}'",
            f"{a}.k2 IN ('a{r.randint(0, 12)}', 'a{r.randint(0, 12)}')",
            f"{a}.d >= DATE '{day}'",
            f"{a}.d < '{day}'",
            f"year({a}.d) = {r.choice([2020, 2021])}",
            f"month({a}.d) = {r.randint(1, 12)}",
            f"{a}.ts < TIMESTAMP '{hour}'",
            f"{a}.ts >= TIMESTAMP '2021-03-14 01:30:00'",
            f"to_date({a}.ts) = DATE '{hour.date()}'",
            f"{a}.ts BETWEEN TIMESTAMP '2021-11-07 01:00:00' AND TIMESTAMP '2021-11-07 02:00:00'",
            f"{a}.q > {r.randint(0, 55)}",
            f"{a}.q + 1 <= {r.randint(0, 55)}",
            f"{a}.amt <= {r.randint(-5, 50)}.50",
            f"{a}.s LIKE '{r.choice(['a', 'ab', 'b', ''])}%'",
            f"substring({a}.s, 1, 1) = '{r.choice(['a', 'b', 'z', 'é'])}'",
            f"{a}.s > '{r.choice(['a', 'b', 'é'])}'",
            f"{a}.b",
            f"NOT {a}.b",
            f"{a}.b IS NULL",
            f"coalesce({a}.q, -1) = -1",
            f"{a}.q IS NOT NULL",
            f"{a}.k1 <=> {r.choice(['NULL', '1'])}",
        ]
    )


def _dim1_leaf(r: random.Random, a: str) -> str:
    return r.choice(
        [
            f"{a}.region = '{r.choice(['ASIA', 'EU', 'US'])}'",
            f"{a}.region IN ('ASIA', 'US')",
            f"{a}.region IS NULL",
            f"{a}.grp = {r.randint(1, 3)}",
            f"{a}.k1 < {r.randint(0, 36)}",
            f"{a}.name = 'n{r.randint(0, 36)}'",
            f"{a}.grp IS NOT NULL",
        ]
    )


def _dim2_leaf(r: random.Random, a: str) -> str:
    return r.choice(
        [
            f"{a}.cat = '{r.choice(['x', 'y'])}'",
            f"{a}.v > {r.randint(0, 9)}",
            f"{a}.k2 = 'a{r.randint(0, 15)}'",
            f"{a}.cat IS NULL",
            f"{a}.k2 < 'a{r.randint(0, 15)}'",
        ]
    )


def _pt_leaf(r: random.Random, a: str) -> str:
    return r.choice(
        [
            f"{a}.p = {r.randint(0, 3)}",
            f"{a}.x > {r.randint(0, 100)}",
            f"{a}.k1 = {r.randint(0, 35)}",
        ]
    )


_LEAVES = {"fact": _fact_leaf, "dim1": _dim1_leaf, "dim2": _dim2_leaf, "pt": _pt_leaf}


def _cond(r: random.Random, table: str, a: str, depth: int = 0) -> str:
    leaf = _LEAVES[table]
    roll = r.random()
    if depth < 2 and roll < 0.25:
        return f"({_cond(r, table, a, depth + 1)} AND {_cond(r, table, a, depth + 1)})"
    if depth < 2 and roll < 0.4:
        return f"({_cond(r, table, a, depth + 1)} OR {_cond(r, table, a, depth + 1)})"
    if depth < 2 and roll < 0.45:
        return f"NOT ({_cond(r, table, a, depth + 1)})"
    return leaf(r, a)


# ------------------------------------------------------------------ queries

_JOINS = ["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "INNER JOIN"]


def _single(r: random.Random, t: dict[str, str]) -> str:
    c = _cond(r, "fact", "f")
    return r.choice(
        [
            f"SELECT f.id, f.k1, f.d, f.ts, f.amt FROM {t['fact']} f WHERE {c}",
            f"SELECT count(*), sum(q), min(d), max(amt) FROM {t['fact']} f WHERE {c}",
            f"SELECT k1, count(*), max(ts) FROM {t['fact']} f WHERE {c} GROUP BY k1",
            f"SELECT k2, sum(q) FROM {t['fact']} f WHERE {c} GROUP BY k2 HAVING count(*) > 1",
            f"SELECT * FROM {t['fact']} f WHERE {c} ORDER BY id LIMIT {r.randint(1, 20)}",
            f"SELECT DISTINCT k1, s FROM {t['fact']} AS f WHERE {c}",
        ]
    )


def _join2(r: random.Random, t: dict[str, str]) -> str:
    kind = r.choice(_JOINS)
    on_extra = f" AND {_cond(r, 'dim1', 'a')}" if r.random() < 0.4 else ""
    where = " AND ".join(
        x
        for x in (
            _cond(r, "fact", "f") if r.random() < 0.7 else "",
            _cond(r, "dim1", "a") if r.random() < 0.7 else "",
        )
        if x
    )
    where = f" WHERE {where}" if where else ""
    return (
        f"SELECT f.id, f.q, a.region, a.name FROM {t['fact']} f {kind} {t['dim1']} a "
        f"ON f.k1 = a.k1{on_extra}{where}"
    )


def _join_many(r: random.Random, t: dict[str, str]) -> str:
    parts = [f"SELECT f.id, a.grp, b.cat, o.x FROM {t['fact']} f"]
    parts.append(f"{r.choice(['JOIN', 'JOIN', 'LEFT JOIN'])} {t['dim1']} a ON f.k1 = a.k1")
    parts.append(f"{r.choice(['JOIN', 'JOIN', 'LEFT JOIN'])} {t['dim2']} b ON f.k2 = b.k2")
    if r.random() < 0.6:
        parts.append(f"{r.choice(['JOIN', 'LEFT JOIN'])} {t['pt']} o ON o.k1 = f.k1")
        conds = [_cond(r, "pt", "o")]
    else:
        parts[0] = parts[0].replace(", o.x", "")
        conds = []
    conds += [_cond(r, "dim1", "a"), _cond(r, "dim2", "b")]
    if r.random() < 0.5:
        conds.append(_cond(r, "fact", "f"))
    return " ".join(parts) + " WHERE " + " AND ".join(conds)


def _comma(r: random.Random, t: dict[str, str]) -> str:
    return (
        f"SELECT f.id, b.cat FROM {t['fact']} f, {t['dim2']} b "
        f"WHERE f.k2 = b.k2 AND {_cond(r, 'dim2', 'b')} AND {_cond(r, 'fact', 'f')}"
    )


def _semi(r: random.Random, t: dict[str, str]) -> str:
    c, ca = _cond(r, "fact", "f"), _cond(r, "dim1", "a")
    return r.choice(
        [
            f"SELECT f.id FROM {t['fact']} f LEFT SEMI JOIN {t['dim1']} a ON f.k1 = a.k1 AND {ca} WHERE {c}",
            f"SELECT f.id FROM {t['fact']} f LEFT ANTI JOIN {t['dim1']} a ON f.k1 = a.k1 AND {ca} WHERE {c}",
            f"SELECT f.id FROM {t['fact']} f WHERE f.k1 IN (SELECT a.k1 FROM {t['dim1']} a WHERE {ca}) AND {c}",
            f"SELECT f.id FROM {t['fact']} f WHERE f.k1 NOT IN (SELECT a.k1 FROM {t['dim1']} a WHERE {ca})",
            f"SELECT f.id FROM {t['fact']} f WHERE EXISTS (SELECT 1 FROM {t['dim1']} a WHERE a.k1 = f.k1 AND {ca})",
            f"SELECT f.id FROM {t['fact']} f WHERE NOT EXISTS (SELECT 1 FROM {t['dim1']} a WHERE a.k1 = f.k1 AND {ca}) AND {c}",
            f"SELECT f.id, (SELECT max(b.v) FROM {t['dim2']} b WHERE b.k2 = f.k2) AS mv FROM {t['fact']} f WHERE {c}",
            # keys across subqueries both ways (sql/semi_joins.py), and the shapes where
            # only one way holds: a grouped or aggregating EXISTS, IN outside WHERE
            f"SELECT f.id FROM {t['fact']} f WHERE {c} AND EXISTS (SELECT 1 FROM {t['dim1']} a WHERE a.k1 = f.k1 AND a.grp <> f.k1 AND {ca})",
            f"SELECT f.id FROM {t['fact']} f WHERE {c} AND EXISTS (SELECT a.k1 FROM {t['dim1']} a WHERE a.k1 = f.k1 GROUP BY a.k1 HAVING count(*) > 1)",
            f"SELECT f.id FROM {t['fact']} f WHERE EXISTS (SELECT count(*) FROM {t['dim1']} a WHERE a.k1 = f.k1 AND {ca}) AND {c}",
            f"SELECT f.id, f.k1 IN (SELECT a.k1 FROM {t['dim1']} a WHERE {ca}) AS hit FROM {t['fact']} f WHERE {c}",
        ]
    )


def _cte(r: random.Random, t: dict[str, str]) -> str:
    inner = _cond(r, "fact", "f")
    c1, c2 = _cond(r, "fact", "c"), _cond(r, "fact", "c2")
    head = f"WITH c AS (SELECT f.id, f.k1, f.q, f.d, f.ts, f.amt, f.s, f.b, f.k2 FROM {t['fact']} f WHERE {inner})"
    return r.choice(
        [
            f"{head} SELECT c.id, c.q FROM c WHERE {c1}",
            f"{head} SELECT c.id FROM c WHERE {c1} UNION ALL SELECT c2.id FROM c c2 WHERE {c2}",
            f"{head} SELECT c.id, c2.q FROM c JOIN c c2 ON c.id = c2.id + 1 WHERE {c1} AND {c2}",
            f"{head}, g AS (SELECT k1, count(*) AS n FROM c GROUP BY k1) SELECT * FROM g WHERE g.k1 < {r.randint(0, 36)}",
            f"WITH c AS (SELECT * FROM {t['fact']}) SELECT c.id FROM c WHERE {c1}",
        ]
    )


def _derived(r: random.Random, t: dict[str, str]) -> str:
    c, cw = _cond(r, "fact", "f"), _cond(r, "fact", "w")
    return r.choice(
        [
            f"SELECT w.id, w.rn FROM (SELECT f.*, row_number() OVER (PARTITION BY f.k1 ORDER BY f.id) AS rn FROM {t['fact']} f WHERE {c}) w WHERE w.rn <= 2 AND {cw}",
            f"SELECT w.id, w.k1 FROM (SELECT * FROM {t['fact']} f WHERE {c} ORDER BY f.id LIMIT {r.randint(1, 30)}) w WHERE {cw}",
            f"SELECT g.k1, g.n FROM (SELECT f.k1, count(*) AS n, max(f.q) AS q FROM {t['fact']} f GROUP BY f.k1) g WHERE g.k1 = {r.randint(0, 36)} OR g.q > 40",
            f"SELECT w.id, w.q FROM (SELECT f.id, f.q, f.k1, f.d, f.ts, f.amt, f.s, f.b, f.k2 FROM {t['fact']} f) w WHERE {cw}",
            f"SELECT w.id FROM (SELECT DISTINCT f.id, f.q, f.k1, f.d, f.ts, f.amt, f.s, f.b, f.k2 FROM {t['fact']} f WHERE {c}) w WHERE {cw}",
            f"SELECT w.id, w.t FROM (SELECT f.id, f.k1, f.q, f.d, f.ts, f.amt, f.s, f.b, f.k2, sum(f.q) OVER (PARTITION BY f.k2) AS t FROM {t['fact']} f) w WHERE {cw}",
        ]
    )


def _set_ops(r: random.Random, t: dict[str, str]) -> str:
    op = r.choice(["UNION ALL", "UNION", "EXCEPT", "INTERSECT", "UNION ALL"])
    cols = "f.id, f.k1, f.q, f.d, f.ts, f.amt, f.s, f.b, f.k2"
    a, b = _cond(r, "fact", "f"), _cond(r, "fact", "f")
    outer = _cond(r, "fact", "u")
    return r.choice(
        [
            f"SELECT u.id, u.q FROM (SELECT {cols} FROM {t['fact']} f WHERE {a} {op} SELECT {cols} FROM {t['fact']} f WHERE {b}) u WHERE {outer}",
            f"SELECT u.k1 FROM (SELECT f.k1 FROM {t['fact']} f {op} SELECT a.k1 FROM {t['dim1']} a) u WHERE u.k1 < {r.randint(0, 36)}",
            f"SELECT f.id FROM {t['fact']} f WHERE {a} {op} SELECT f.id FROM {t['fact']} f WHERE {b}",
            f"SELECT u.k1, u.x FROM (SELECT o.k1, o.x FROM {t['pt']} o {op} SELECT f.k1, f.q FROM {t['fact']} f) u WHERE u.x > {r.randint(0, 100)}",
        ]
    )


_TEMPLATES = [
    (_single, 3),
    (_join2, 4),
    (_join_many, 3),
    (_comma, 1),
    (_semi, 3),
    (_cte, 2),
    (_derived, 2),
    (_set_ops, 2),
]


def generate(r: random.Random, names: dict[str, str]) -> str:
    """One random query over the tables as ``names`` spells them."""
    templates, weights = zip(*_TEMPLATES, strict=True)
    return r.choices(templates, weights)[0](r, names)


def queries(count: int, spellings: list[dict[str, str]], seed: int = 20240) -> list[str]:
    """``count`` distinct queries (seeded: the same list every run), each over one
    of ``spellings`` of the table names (a registered view or ``parquet.`path```)."""
    r = random.Random(seed)
    found: dict[str, None] = {}
    while len(found) < count:
        found[generate(r, r.choice(spellings))] = None
    return list(found)
