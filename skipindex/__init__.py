"""skipindex: file-level secondary indexes for data skipping on Parquet lakes."""
