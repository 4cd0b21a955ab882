plan
--model
llama3-8b
--cluster
hgx-h200-4
