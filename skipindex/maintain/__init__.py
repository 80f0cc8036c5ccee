"""The automatic stage: keep tables indexed and laid out as commits land
(``si.maintain``, ``si.table_changed``, ``skipindex maintain``).

May import: ``advise`` and everything below it.
"""
