validate
a100
--set
bogus
