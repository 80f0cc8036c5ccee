"""Layout: rewrite a table so that rows with close values share files (``cluster``).

May import: ``indexing``, ``reading``, ``pruning``, ``store``, ``indexes``,
``spark``, ``expressions``, the base modules.
"""
