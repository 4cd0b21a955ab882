collective
--op
all_reduce
--calibration
h200x4
--print-params
