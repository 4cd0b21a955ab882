validate
a100
--set
narayanan2021
--format
csv
