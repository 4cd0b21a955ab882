scaling
--gbs
16
