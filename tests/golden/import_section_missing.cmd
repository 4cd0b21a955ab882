calibrate
import-section
interference
tests/data/profiles/compute_small.json
--into
/tmp/scalescope-golden-import-section.json
