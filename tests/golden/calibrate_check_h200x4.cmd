calibrate
check
h200x4
