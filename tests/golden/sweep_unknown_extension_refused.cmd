sweep
examples/sweep.json
-o
results.xlsx
