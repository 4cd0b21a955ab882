#!/usr/bin/env bash
# Device session 11, fourth call (nvidia-h100-x1): issue 27's measurements a one-GPU machine allows: host-device
# copies pinned and pageable, both directions, from every NUMA node (scalescope-calibrate's host section, memory
# placed with mbind, `numactl -H` recorded), clocks, power and the PCIe link under load, and the health check of the
# profile it writes, run by the program and again by `scalescope calibrate check`. Needs devbin/ (carried):
# scalescope and scalescope-calibrate of one commit.
#   bash validation/device/session_health11.sh
# Everything lands in $OUT/health11.tar.gz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export SCALESCOPE_DATA_DIR=$PWD
source validation/device/guard.sh
W=/tmp/health11; rm -rf $W; mkdir -p $W
LOG=$W/session.log
device_environment $W/environment.txt
echo "devbin commit $(cat devbin/COMMIT)" >> $W/environment.txt
(numactl -H; lscpu) > $W/numa.txt 2>&1
nvidia-smi topo -m > $W/topo.txt 2>&1
pack() { tar czf $OUT/health11.tar.gz -C $W . ; }
echo "== $(date -u +%T) scalescope-calibrate --sections topo,mem" | tee -a $LOG
SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate timeout 300 bash calibrate/gpu/run_on_device.sh \
  $W/h100-health.json 200 --sections topo,mem >> $LOG 2>&1
echo "calibrate exit $?" | tee -a $LOG
pack
devbin/scalescope calibrate check $W/h100-health.json > $W/check.txt 2>&1; echo "check exit $?" >> $W/check.txt
devbin/scalescope calibrate check $W/h100-health.json --format json > $W/check.json 2>> $W/check.txt
devbin/scalescope calibrate check $W/h100-health.json --strict >> $LOG 2>&1; echo "check --strict exit $?" | tee -a $LOG
pack
