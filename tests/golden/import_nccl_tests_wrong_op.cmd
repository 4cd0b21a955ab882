import
nccl-tests
tests/data/nccl-tests/all_reduce_g4_h200.log
--op
reduce_scatter
-o
/tmp/scalescope-golden-import-wrong-op.json
