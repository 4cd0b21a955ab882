scaling
--measured
validation/h200x4/measured
--calibration
h200x4
