calibrate
check
h200x4
--cluster
no-such-cluster
