simulate
--model
gpt3-175b
--cluster
h100-rail-ndr
--plan
tp=8,pp=8,dp=16,mbs=1,gbs=1536,schedule=1f1b,recompute=full
