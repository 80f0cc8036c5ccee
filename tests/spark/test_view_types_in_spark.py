"""Rust writers' files (view types in the stored Arrow schema) through the paths
that read them with pyarrow beside Spark: read() by row groups, si.sql's keys
read from a dimension's kept rows, cluster, and the advisor on tpchgen-cli's
own TPC-H orders (the issue's crash)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import skipindex as si
from skipindex.advise.advise import advise
from tests._support import exact_rows
from tests.unit.test_view_types import CLERKS, write_table

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("views")
    orders = write_table(root / "orders", pa.string_view(), pa.binary_view())
    si.build_index(
        str(orders),
        [si.BitSlicedBitmap("o_clerk"), si.EqualityBitmap("o_orderstatus"), si.Bloom("o_clerk")],
        spark=spark,
    )
    clerks = root / "clerks"
    clerks.mkdir()
    regions = ["EU" if n % 13 == 0 else "US" for n in range(len(CLERKS))]
    pq.write_table(
        pa.table(
            {
                "c_clerk": pa.array(CLERKS, pa.string_view()),
                "c_region": pa.array(regions, pa.string_view()),
            }
        ),
        clerks / "part-0.parquet",
    )
    si.build_index(str(clerks), [si.EqualityBitmap("c_region")], spark=spark)
    si.register(spark, "v_orders", str(orders))
    si.register(spark, "v_clerks", str(clerks))
    return {"orders": str(orders), "clerks": str(clerks)}


def test_read_by_row_groups_of_view_typed_files(spark, tables, used_row_groups):
    where = "o_clerk = 'Clerk#000000012' AND o_orderstatus = 'F'"
    expected = exact_rows(spark.read.parquet(tables["orders"]).filter(where))
    assert expected
    assert exact_rows(si.read(spark, tables["orders"], where)) == expected
    assert used_row_groups  # the kept file was read by its row groups, with pyarrow


def test_sql_reads_a_dimensions_view_typed_keys_from_its_kept_rows(spark, tables):
    query = (
        "SELECT o_orderstatus, count(*) AS n FROM v_orders JOIN v_clerks ON o_clerk = c_clerk "
        "WHERE c_region = 'EU' GROUP BY o_orderstatus"
    )
    plan = si.sql_plan(spark, query)
    assert exact_rows(plan.frame) == exact_rows(spark.sql(query))
    (keys,) = plan.joins
    assert keys.keys == 4, plan.explain()
    assert "kept rows" in keys.note, plan.explain()
    (orders,) = [r for r in plan.references if r.written == "v_orders"]
    assert orders.result is not None
    assert orders.result.kept < orders.result.total


def test_cluster_rewrites_view_typed_files_row_for_row(spark, tables, tmp_path):
    report = si.cluster(
        tables["orders"], str(tmp_path / "out"), by=["o_clerk", "o_orderstatus"], spark=spark
    )
    assert report.rows == pq.read_table(tables["orders"]).num_rows  # verified by cluster
    where = "o_clerk = 'Clerk#000000033'"
    assert exact_rows(si.read(spark, str(tmp_path / "out"), where)) == exact_rows(
        spark.read.parquet(tables["orders"]).filter(where)
    )


def test_advise_on_tpchgen_orders(tmp_path):
    """The issue's case: tpchgen-cli's orders (parquet-rs stores string_view)."""
    tool = shutil.which("tpchgen-cli") or str(Path(sys.executable).with_name("tpchgen-cli"))
    subprocess.run(
        [tool, "parquet", "-s", "0.01", "--tables=orders", f"--output-dir={tmp_path / 'gen'}"],
        check=True,
        capture_output=True,
    )
    folder = tmp_path / "orders"
    folder.mkdir()
    (tmp_path / "gen" / "orders.parquet").rename(folder / "orders.parquet")
    assert pa.types.is_string_view(pq.read_schema(folder / "orders.parquet").field("o_clerk").type)
    workload = {
        "status": "SELECT count(*) FROM orders WHERE o_orderstatus = 'F'",
        "priority": "SELECT count(*) FROM orders WHERE o_orderpriority = '1-URGENT'",
        "clerk": "SELECT count(*) FROM orders WHERE o_clerk = 'Clerk#000000042'",
    }
    advice = advise(folder, workload, sample_files=1)
    assert advice.estimates
