"""The read verb: prune, then read the kept files with Spark.

Owns ``read()`` (``read``); reading a whole folder with the schema Spark inferred
once (``folder``); reading kept files by their row groups and pages where the row
sets make it pay (``row_groups`` plans, ``footers`` and ``costs`` price from the
files' footers, ``pages`` and ``thrift`` decode pages alone) and the Spark Python
data source that serves those reads (``source``).

May import: ``pruning``, ``store``, ``spark``, ``expressions``, the base modules.
"""
