set -u
export SCALESCOPE_CALIBRATE_BIN=devbin/scalescope-calibrate
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/r
calibrate/gpu/run_on_device.sh $OUT/r/interf4.json 300 --sections interf > $OUT/r/run4.txt 2>&1
echo "rc4=$?"
calibrate/gpu/run_on_device.sh $OUT/r/interf2.json 200 --gpus 2 --sections interf > $OUT/r/run2.txt 2>&1
echo "rc2=$?"
tail -5 $OUT/r/run4.txt $OUT/r/run2.txt
cd $OUT && tar czf interf.tgz r && rm -rf r
