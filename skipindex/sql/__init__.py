"""The sql verb: Spark SQL over indexed tables, each table reference pruned.

Finds the table references of a query and where they sit in its text
(``references``); for each, the conditions every row it contributes must meet
(``derive``, over ``conjuncts`` and ``joins``: written, pushed through derived
tables, CTEs and set operations, carried across equi-joins); the tables each
name and their Spark schemas (``catalog``, with ``register``); frames over the
kept files (``frames``); join keys computed with Spark to prune the other side
(``dynamic``); and the query run with each pruned reference swapped for a view
of its kept files (``query``), with ``plan`` saying what was done and why.

May import: ``reading``, ``pruning``, ``store``, ``spark``, ``expressions``,
the base modules.
"""
