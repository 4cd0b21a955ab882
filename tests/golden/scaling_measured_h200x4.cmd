scaling
--measured
validation/h200x4/measured
