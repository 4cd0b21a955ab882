calibrate
import-mamba
tests/data/mamba/bad_groups.json
--into
calibrate/profiles/h200-gpu.json
