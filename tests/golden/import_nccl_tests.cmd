import
nccl-tests
tests/data/nccl-tests/all_reduce_g4_h200.log
tests/data/nccl-tests/alltoall_then_sendrecv_c0.log
-o
/tmp/scalescope-golden-import-nccl-tests.json
