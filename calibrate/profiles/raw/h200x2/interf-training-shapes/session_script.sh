set -u
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
calibrate/gpu/run_on_device.sh $OUT/r/interf.json 200 --sections interf > $OUT/r/run.txt 2>&1
echo "rc=$?"
grep "summary" -A4 $OUT/r/run.txt
cd $OUT && tar czf interf.tgz r && rm -rf r
