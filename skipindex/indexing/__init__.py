"""The build verb: index a table's files with a Spark job, commit a new version.

Owns ``build_index()`` (``build``); the definitions specs give (``definitions``);
what a build reads, keeps and rewrites against the current index (``planning``);
the task code that indexes a bin of files into a segment, inside Spark or
in-process (``indexer``); the runners that schedule it (``runners``); expression
indexes, whose values Spark computes in a stage of their own (``expression_job``
on the driver, ``expression_task`` in the tasks) merged into the column segments
(``merging``); and the indexes chosen for a first build (``suggest``).

May import: ``store``, ``indexes``, ``spark``, ``expressions``, the base modules.
Not ``pruning`` or ``reading``: building never needs a query's answer.
"""
