"""Spark's semantics, and Spark itself.

Owns what a Spark session makes of a table, so that the index holds what Spark
reads: a data file's columns as Spark reads them (``view``: INT96 in ``int96``,
LEGACY calendar rebasing in ``rebase``, the session settings in ``settings``),
the table's type over files of different physical types (``widening``), partition
folders typed and unescaped as Spark does (``partitions``); and the only code
that starts or drives a Spark session (``session``, ``progress``), where pyspark
is imported lazily, inside functions.

May import: ``skipindex.errors``, ``_types``, ``column_paths``, ``expressions``.
"""
