validate
a100
--set
narayanan2021
--use-fit
validation/a100/vtrain-cluster.json
