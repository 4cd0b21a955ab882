calibrate
fit
h200x4
--cluster
hgx-h200-4
