calibrate
attention-check
validation/attention/packed22/measured.json
--calibration
h200-gpu
