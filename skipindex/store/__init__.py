"""Where a table and its index live, and the index's persisted state.

Owns the table's location and listing (``location``, ``listing``, ``delta``),
the versioned manifests and their commit protocol (``manifest``), segments
(``segments``), the table's recorded schema (``schema``), the in-process caches
(``cache``), damage messages (``damage``), garbage collection (``vacuum``), and
the persisted cluster plans and what a listing taken during an in-place cluster
may show (``cluster_plan``, ``swaps``).

May import: ``indexes``, ``spark`` (its pyspark-free modules), ``expressions``,
the base modules.
"""
