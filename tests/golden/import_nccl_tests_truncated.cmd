import
nccl-tests
tests/data/nccl-tests/truncated_all_reduce.log
-o
/tmp/scalescope-golden-import-truncated.json
