calibrate
import-section
gemm
calibrate/profiles/h200x2.json
--into
/tmp/scalescope-golden-import-section.json
