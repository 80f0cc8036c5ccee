"""The intelligent stage: index kinds per column and a layout, chosen from the
workload by simulation on samples (``si.advise``, ``skipindex advise``).

May import: ``maintain`` and everything below it.
"""
