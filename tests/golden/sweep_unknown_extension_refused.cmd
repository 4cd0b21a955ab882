sweep
examples/sweep.json
-o
results.parquet
