calibrate
check
validation/health/faults/h200x4-p2p-pcie.json
--strict
--format
json
