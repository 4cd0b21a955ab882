calibrate
report
h200x4
--cluster
hgx-h200-4
--fit-groups
8
