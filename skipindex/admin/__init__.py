"""Verbs that look after an index: ``describe``, ``drop_index``, ``repair``.

May import: ``indexing`` (repair rebuilds), ``store``, ``indexes``, ``spark``,
``expressions``, the base modules.
"""
