calibrate
attention-check
validation/attention/packed23/check3-measured.json
--calibration
h200-gpu
