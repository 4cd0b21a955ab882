calibrate
fit
tests/data/profiles/mini.json
--cluster
hgx-h200-4
--fit-ops
allreduce
