calibrate
import-power
tests/data/power/uncapped-sweep.json
--into
calibrate/profiles/h200-gpu.json
