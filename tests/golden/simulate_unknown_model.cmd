simulate
--model
gpt-7
--cluster
dgx-h100-8
--plan
gbs=8
