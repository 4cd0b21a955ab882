# Shared by the budgeted device session scripts (session_blind24.sh, session_hostpath15.sh); source it after
# setting D (the session folder), LOG, BUDGET (s), T0 (the start, date +%s), PY and a pack() function.
#   left                      seconds of the budget left
#   stage NAME TIMEOUT_S CMD  runs CMD (stdin from /dev/null, output to LOG) with min(TIMEOUT_S, budget left - 5)
#                             seconds, records its command (D/commands.tsv), exit and time (D/stages.tsv), packs;
#                             a stage that no longer fits is skipped and recorded
#   nvlibs                    the CUDA runtime / NCCL library folders of the pip wheels, for the C++ programs
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
stage() {
  local name=$1 to=$2; shift 2
  local l=$(( $(left) - 5 )); [ $to -gt $l ] && to=$l
  if [ $to -lt 5 ]; then echo "== SKIP $name: budget spent" | tee -a $LOG; printf '%s\tskipped\t0\n' $name >> $D/stages.tsv; return 1; fi
  echo "== $(date -u +%T) [$(( $(date +%s) - T0 )) s] $name (timeout $to s): $*" | tee -a $LOG
  printf '%s\t%s\t%s\n' "$name" "$(date -u +%FT%TZ)" "$*" >> $D/commands.tsv
  local t rc
  t=$(date +%s)
  timeout -k 10 $to "$@" < /dev/null >> $LOG 2>&1
  rc=$?
  printf '%s\t%d\t%d\n' $name $rc $(( $(date +%s) - t )) | tee -a $D/stages.tsv $LOG
  pack; return $rc
}
nvlibs() {
  local sp; sp=$($PY -c 'import site;print(site.getsitepackages()[0])')
  find "$sp/nvidia" -name lib -type d 2>/dev/null | sort | tr '\n' :
}
