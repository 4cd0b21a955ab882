collective
--print-params
