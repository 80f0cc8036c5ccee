"""Layout: rewrite a table so that rows with close values share files (``cluster``)."""
