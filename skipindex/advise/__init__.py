"""The intelligent stage: index kinds per column and a layout, chosen from the
workload by simulation on samples (``si.advise``, ``skipindex advise``).

May import: ``layout``, ``admin``, ``sql`` and everything below them.
"""
