"""The prune verb: which files can hold a row matching a predicate. No Spark.

Owns ``prune()`` (``prune``) and what it returns (``result``); the two-pass
evaluation of a bound predicate against index payloads (``evaluate``: file level,
then row level, as words across files in ``dense_walk``); which listed files the
index covers (``coverage``); partition values as an index (``partition_index``);
and the row groups the row sets leave (``row_groups``).

May import: ``store``, ``indexes``, ``spark`` (its pyspark-free modules only),
``expressions`` and the shared base modules. Never pyspark.
"""
