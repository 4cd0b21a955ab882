collective
--cluster
dgx-h100-8
--op
allreduce
--gpus
8
