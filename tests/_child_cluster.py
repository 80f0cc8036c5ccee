"""A cluster in a child process, to be killed from outside while it writes:
``python tests/_child_cluster.py ROOT``. It clusters ROOT in place by ``a, b``
on a local[2] session of its own."""

from __future__ import annotations

import sys

import skipindex as si
from skipindex.spark.session import local_session

if __name__ == "__main__":
    spark = local_session(2)
    si.cluster(sys.argv[1], by=["a", "b"], target_file_bytes=20_000, spark=spark)
