collective
--cluster
dgx-h100-8
--op
all_reduce
--gpus
16
