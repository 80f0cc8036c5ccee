"""The sql verb: Spark SQL over indexed tables, each table reference pruned.

Finds the table references of a query and where they sit in its text
(``references``); for each, the conditions every row it contributes must meet
(``derive``, over ``conjuncts`` and ``joins``: written, pushed through derived
tables, CTEs and set operations, carried across equi-joins); the tables each
name and their Spark schemas (``catalog``, with ``register``); frames over the
kept files (``frames``, ``run``); join keys that prune the other side of a
join, in rounds of passes (``key_rounds``; measured and read by
``key_sources``: from a side's kept rows by ``local_keys``, asked of Spark by
``dynamic``, bounded by ``file_ranges``; whether to try by ``key_choice``,
``key_spread`` and ``worth``; written by ``key_use``), every
knob in ``policy``; and the user's text run with each pruned reference's name
swapped for its frame (``text``), with ``plan`` saying what was done and why
(``query`` runs the passes in order).

May import: ``reading``, ``pruning``, ``store``, ``spark``, ``expressions``,
the base modules.
"""
