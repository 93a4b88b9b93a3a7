# Sourced by lib.sh and lib-trainer.sh (the trainer's scripts, which have a `fail` of their own).

# wait_until [--every S] [--on-timeout CMD] SECONDS WHAT CONDITION: the one way a test waits. Evaluates the shell
# text CONDITION every S seconds (default 0.1) until it holds, and fails the test, naming WHAT, the limit and what
# the last try printed, once SECONDS have passed without it. CONDITION runs in this shell (what it sets stays set,
# e.g. the state it read) with its output kept aside for that message; --on-timeout's CMD runs before the failure
# (to cancel what would outlive the test). CONDITION cannot read a caller's $1, $2...: they are wait_until's own
# there; name them first. A bound against hangs, never a timing assertion: give it plenty.
wait_until() {
  # Its names start with _wu_: CONDITION is evaluated here and may set or read the caller's variables.
  local _wu_every=0.1 _wu_on_timeout="" _wu_limit _wu_what _wu_cond _wu_deadline _wu_out _wu_last
  local _wu_stderr=2
  while [ $# -gt 3 ]; do
    case $1 in
      --every) _wu_every=$2; shift 2 ;;
      --on-timeout) _wu_on_timeout=$2; shift 2 ;;
      *) fail "wait_until: unknown option '$1'; use --every S or --on-timeout CMD before SECONDS WHAT CONDITION" ;;
    esac
  done
  [ $# -eq 3 ] || fail "wait_until: expected SECONDS WHAT CONDITION, got $# argument(s): $*"
  _wu_limit=$1 _wu_what=$2 _wu_cond=$3
  [[ $_wu_limit =~ ^[0-9]+$ ]] || fail "wait_until: the limit '$_wu_limit' is not whole seconds"
  _wu_deadline=$((${EPOCHREALTIME//[.,]/} + _wu_limit * 1000000))
  _wu_out=$(mktemp)
  exec {_wu_stderr}>&2
  while :; do
    if eval "$_wu_cond" >"$_wu_out" 2>&1; then exec {_wu_stderr}>&-; rm -f "$_wu_out"; return 0; fi
    [ "${EPOCHREALTIME//[.,]/}" -lt "$_wu_deadline" ] || break
    sleep "$_wu_every"
  done
  exec {_wu_stderr}>&-
  _wu_stderr=2
  _wu_last=$(tail -n 20 "$_wu_out")
  rm -f "$_wu_out"
  [ -z "$_wu_on_timeout" ] || eval "$_wu_on_timeout" || true
  fail "waited $_wu_limit s for $_wu_what; the last check ($_wu_cond) printed: $_wu_last"
}
