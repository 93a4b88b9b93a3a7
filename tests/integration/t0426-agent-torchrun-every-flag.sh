#!/usr/bin/env bash
# Every flag of torchrun 2.15, read from its own --help: the torchrun face accepts each spelling, and each does on
# the worker's side what torchrun's does. A flag torchrun gains in a newer PyTorch fails here ("not in the table")
# before it fails a user. `cases` below has one row per flag: the flags to add to a one-node job, the command its
# workers run, and what the job must print; a row that says `elsewhere tNNNN` names the test that checks the
# effect with more than one node or against torchrun itself. --logs-specs and --event-log-handler name Python
# plugins: their defaults are accepted, anything else refused with one line saying why. --log-line-prefix-template
# is compared with torchrun 2.15's own console lines.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
py=$(peer_python)
cd "$test_tmp"
help=$(timeout 120 $py -m torch.distributed.run --help) || fail "torchrun 2.15 --help failed: $help"
# Every spelling in the options section: "  --nproc-per-node N, --nproc_per_node N", "  -r REDIRECTS, --redirects ..."
mapfile -t spellings < <(sed -n '/^options:/,$p' <<<"$help" | grep -E '^  -' | sed -E 's/^ +//' | grep -oE '(^|, )--?[a-zA-Z][a-zA-Z_-]*' |
  sed -E 's/^, //' | sort -u)
[ "${#spellings[@]}" -gt 40 ] || fail "read only ${#spellings[@]} flags from torchrun's --help: $help"

face() { timeout 60 "$HPCLAUNCH" torchrun "$@"; }
w='echo "LWS=$LOCAL_WORLD_SIZE GWS=$GROUP_WORLD_SIZE WS=$WORLD_SIZE ROLE=$ROLE_NAME RUN=$TORCHELASTIC_RUN_ID MAX=$TORCHELASTIC_MAX_RESTARTS ADDR=$MASTER_ADDR LR=$LOCAL_RANK CVD=$CUDA_VISIBLE_DEVICES SIG=$TORCHELASTIC_SIGNALS_TO_HANDLE LIBUV=$USE_LIBUV"'
printf 'import sys\nprint("module", __name__, sys.argv[1:])\n' >flagmod.py
printf 'import sys\nprint("script", __name__, sys.argv[1:])\n' >"$test_tmp/script.py"
port=$(free_port)
# name | flags (one word each, read with eval) | worker | what the output must hold
cases="help|-h|-|Usage: torchrun
nnodes|--nnodes 1|$w|GWS=1
nproc-per-node|--nproc-per-node 2|$w|LWS=2 GWS=1 WS=2
rdzv-backend|--rdzv-backend static --master-addr 127.0.0.1 --master-port $port|$w|ADDR=127.0.0.1
rdzv-endpoint|--rdzv-endpoint localhost:$port|$w|ADDR=localhost
rdzv-id|--rdzv-id job-77|$w|RUN=job-77
rdzv-conf|--rdzv-conf use_libuv=false,timeout=30|$w|LIBUV=0
standalone|--standalone --nproc-per-node 2|$w|WS=2
max-restarts|--max-restarts 3|$w|MAX=3
monitor-interval|--monitor-interval 0.5|$w|WS=1
start-method|--start-method forkserver|$w|WS=1
event-log-handler|--event-log-handler null|$w|WS=1
role|--role trainer|$w|ROLE=trainer
module|-m|flagmod a b|module __main__ ['a', 'b']
no-python|--no-python|$w|WS=1
run-path|--run-path|$test_tmp/script.py x|script __main__ ['x']
log-dir|--log-dir $test_tmp/logs --redirects 1|$w|
redirects|elsewhere t0425
tee|elsewhere t0425
log-line-prefix-template|elsewhere below: torchrun 2.15's own lines
local-ranks-filter|elsewhere t0425
duplicate-stdout-filters|elsewhere t0424
duplicate-stderr-filters|elsewhere t0424
node-rank|--nnodes 1 --node-rank 0 --rdzv-endpoint 127.0.0.1:$port|$w|GWS=1
master-addr|--master-addr localhost --master-port $port|$w|ADDR=localhost
master-port|--master-addr 127.0.0.1 --master-port $port|$w|ADDR=127.0.0.1
local-addr|--local-addr localhost|$w|ADDR=localhost
logs-specs|--logs-specs default|$w|WS=1
numa-binding|elsewhere t0415
signals-to-handle|--signals-to-handle SIGTERM,SIGUSR2|$w|SIG=SIGTERM,SIGUSR2
shutdown-timeout|elsewhere t0424
virtual-local-rank|--virtual-local-rank --nproc-per-node 2|$w|LR=0 CVD=1
print-completion|--print-completion bash|-|--log-line-prefix-template"
known=$(cut -d'|' -f1 <<<"$cases")

# 1. Every spelling is known here and accepted by the face (an option's value: the row's, or a plain one).
for s in "${spellings[@]}"; do
  name=$(sed -E 's/^-+//; s/_/-/g' <<<"$s")
  case $s in -h) name=help ;; -m) name=module ;; -r) name=redirects ;; -t) name=tee ;; esac
  grep -qx "$name" <<<"$known" || fail "torchrun 2.15 has $s, which this test does not know: make the face take it \
(cli/cmd_agent.cc), docs/agent.md say what it does, and add its row to cases"
  out=$(face --help 2>&1) || fail "hpclaunch torchrun --help failed: $out"
  grep -qE -- "(^|[ ,])$s([ ,=]|$)" <<<"$out" || fail "hpclaunch torchrun --help does not list $s"
done
note "${#spellings[@]} spellings from torchrun 2.15's --help, each in the face's --help"

# 2. What each flag does, in a one-node job of the torchrun face.
while IFS='|' read -r name flags worker want; do
  [[ $flags == elsewhere* ]] && continue
  eval "args=($flags)"
  if [ "$worker" = - ]; then
    out=$(face "${args[@]}" 2>&1) || fail "$name: hpclaunch torchrun ${args[*]} failed: $out"
  elif [[ $name == module || $name == run-path ]]; then
    # shellcheck disable=SC2086
    out=$(HPCLAUNCH_PYTHON=$py face --nproc-per-node 1 "${args[@]}" $worker 2>&1) || fail "$name: $out"
  else
    out=$(face --nproc-per-node 1 "${args[@]}" --no-python sh -c "$worker" 2>&1) || fail "$name: ${args[*]}: $out"
  fi
  [ -z "$want" ] || assert_contains "$out" "$want" "$name (${args[*]})"
done <<<"$cases"
# --log-dir with --redirects 1: the worker's stdout in the file only.
assert_contains "$(cat logs/attempt_0/rank_0/stdout.log)" "LWS=1" "--log-dir: the rank's stdout.log"
# --nproc-per-node xpu: one worker per Intel GPU; with none, both refuse it (a machine with one runs both).
ref=0 ours=0
env -i PATH=/usr/bin:/bin HOME="$test_tmp" timeout 120 $py -m torch.distributed.run --standalone --nproc-per-node xpu \
  --no-python true >/dev/null 2>&1 || ref=$?
face --standalone --nproc-per-node xpu --no-python true >xpu.out 2>&1 || ours=$?
assert_eq "$([ $ref = 0 ] && echo runs || echo refused)" "$([ $ours = 0 ] && echo runs || echo refused)" \
  "--nproc-per-node xpu, torchrun 2.15 (first) and ours ($(cat xpu.out))"
# Refused, each with one line naming the flag and why: Python plugins.
assert_fails "--logs-specs: 'mine' is a Python plugin" face --logs-specs mine --no-python true
assert_fails "--event-log-handler: 'console' names a handler in torch's Python events registry" \
  face --event-log-handler console --no-python true
# --print-completion bash: the script completes a flag in bash.
completion=$(face --print-completion bash)
got=$(bash -c "$completion"'
  words=$(complete -p torchrun | sed -E "s/.*-W .([^'\'']*).*/\1/"); compgen -W "$words" -- --log-line-p')
assert_eq "--log-line-prefix-template" "$got" "bash completes --log-line-p"

# 3. --log-line-prefix-template (and its variable): the console lines of torchrun 2.15 and of the face.
tmpl='${hostname}|${rank}|${local_rank}|${role_name}|$$|'
printf '#!/bin/sh\necho "line $LOCAL_RANK"\n' >w.sh && chmod +x w.sh
env -i PATH=/usr/bin:/bin HOME="$test_tmp" timeout 120 $py -m torch.distributed.run --standalone --nproc-per-node 2 \
  --role r --tee 1 --log-line-prefix-template "$tmpl" --no-python ./w.sh >ref.out 2>ref.err || fail "torchrun: $(cat ref.err)"
env -i PATH=/usr/bin:/bin HOME="$test_tmp" timeout 60 "$HPCLAUNCH" torchrun --standalone --nproc-per-node 2 \
  --role r --tee 1 --log-line-prefix-template "$tmpl" --no-python ./w.sh >our.out 2>our.err || fail "face: $(cat our.err)"
want=$(grep line ref.out | sort)
assert_eq "$(hostname)|1|1|r|\$|line 1" "$(tail -1 <<<"$want")" "torchrun 2.15's own prefix (the reference)"
assert_eq "$want" "$(grep line our.out | sort)" "console lines with --log-line-prefix-template, torchrun 2.15 and ours"
env -i PATH=/usr/bin:/bin TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='<${rank}> ' timeout 60 "$HPCLAUNCH" torchrun \
  --standalone --tee 1 --no-python ./w.sh >env.out 2>&1 || fail "face: $(cat env.out)"
assert_eq "<0> line 0" "$(cat env.out)" "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE, as torchrun reads it"
echo ok
