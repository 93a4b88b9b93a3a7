#!/usr/bin/env bash
# The agents' messages are sealed (HMAC-SHA256 over each message, both sides' nonces and its number): a real
# 2-node agent job on loopback whose node 1 talks to the store through a recording proxy (python3 asyncio). Then
# what the proxy captured is replayed to the store on new connections (as captured, and with a fresh hello): the
# store refuses and logs each, and the job finishes. A proxy that changes one byte of node 1's join gets node 1
# refused; the store is left waiting for a genuine node 1, which then joins. The store listens on the rendezvous
# address alone, not every interface.
source "$(dirname "$0")/lib.sh"
need_hpclaunch
need_cmd python3 ss
for v in $(env | grep -oE '^(SLURM|PBS|PMI|OMPI_COMM|HPCLAUNCH_)[A-Z_]*' || true); do unset "$v"; done
unset MASTER_ADDR MASTER_PORT
export HPCLAUNCH_RDZV_SECRET=5ea1ed5ea1ed5ea1ed5ea1ed5ea1ed00

cat >"$test_tmp/worker.sh" <<'EOF2'
#!/bin/bash
w=$(dirname "$0")/w
touch "$w/started.$RANK"
for _ in $(seq 1 600); do [ -f "$w/finish" ] && exit 0; sleep 0.05; done
exit 3
EOF2
chmod +x "$test_tmp/worker.sh"

# proxy.py LISTEN_PORT STORE_PORT MODE LOG: forwards one agent's connection to the store; writes each line the
# agent sent to LOG; MODE tamper changes one byte of the agent's second line (its join).
cat >"$test_tmp/proxy.py" <<'EOF2'
import asyncio, sys
listen, store, mode, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
async def pipe(reader, writer, record):
    n = 0
    while line := await reader.readline():
        if record:
            n += 1
            if mode == "tamper" and n == 2:
                line = line.replace(b'"nproc":2', b'"nproc":3')
            with open(log, "ab") as f: f.write(line)
        writer.write(line)
        await writer.drain()
    writer.close()
async def serve(r, w):
    sr, sw = await asyncio.open_connection("127.0.0.1", store)
    await asyncio.gather(pipe(r, sw, True), pipe(sr, w, False), return_exceptions=True)
async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", listen)
    open(log + ".ready", "w").close()
    await server.serve_forever()
asyncio.run(main())
EOF2
# replay.py STORE_PORT CAPTURE FRESH: connects to the store, reads its hello, sends the captured lines (with a
# fresh hello instead of the captured one when FRESH=1); prints what the store did: "closed" or "open".
cat >"$test_tmp/replay.py" <<'EOF2'
import os, socket, sys
port, capture, fresh = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
lines = open(capture, "rb").read().splitlines(keepends=True)
s = socket.create_connection(("127.0.0.1", port), timeout=10)
f = s.makefile("rb")
assert f.readline().startswith(b"hpclaunch-agent 1 ")
if fresh:
    lines[0] = b"hpclaunch-agent 1 " + os.urandom(16).hex().encode() + b"\n"
s.sendall(b"".join(lines))
try:
    print("closed" if f.readline() == b"" else "open")
except OSError:
    print("closed")
EOF2

node_env() {
  echo HPCLAUNCH_LOCAL_JOB=1 HPCLAUNCH_JOB_ID=local-t0416 "HPCLAUNCH_NODELIST=node[0-1]" HPCLAUNCH_NNODES=2 \
    HPCLAUNCH_NODE_RANK="$1" HPCLAUNCH_NODENAME="node$1" HPCLAUNCH_MASTER_ADDR_RULE=fixed \
    HPCLAUNCH_MASTER_ADDR_FIXED=127.0.0.1 HPCLAUNCH_MASTER_PORT="$2"
}
# start_agent I PORT: node I's agent in the background, reaching the store at PORT; output in aI.out, code in aI.rc.
start_agent() {
  rm -f "$test_tmp/a$1.rc"
  ( rc=0; exec 3>&-; env $(node_env "$1" "$2") timeout 60 "$HPCLAUNCH" agent --grace 5 --nproc-per-node 2 \
      -- "$test_tmp/worker.sh" >"$test_tmp/a$1.out" 2>&1 || rc=$?; echo $rc >"$test_tmp/a$1.rc" ) &
}
wait_for() {
  local file=$1
  wait_until --every 0.05 \
    --on-timeout 'echo "node 0: $(cat "$test_tmp/a0.out") /// node 1: $(cat "$test_tmp/a1.out")" >&2' 30 "$file" '[ -e "$file" ]'
}
start_proxy() {  # MODE LOG
  proxy_port=$(free_port)
  python3 "$test_tmp/proxy.py" "$proxy_port" "$port" "$1" "$2" 2>"$test_tmp/proxy.err" &
  proxy=$!
  wait_for "$2.ready"
}
new_case() { port=$(free_port); rm -rf "$test_tmp/w"; mkdir -p "$test_tmp/w"; }

# 1. Node 1 through the recording proxy: the job runs; then every captured message is replayed to the store.
new_case
start_agent 0 "$port"
start_proxy record "$test_tmp/capture"
start_agent 1 "$proxy_port"
for r in 0 1 2 3; do wait_for "$test_tmp/w/started.$r"; done
grep -q '"type":"join"' "$test_tmp/capture" || fail "the proxy saw no join: $(cat "$test_tmp/capture")"
grep -q "$HPCLAUNCH_RDZV_SECRET" "$test_tmp/capture" && fail "the secret went over the wire: $(cat "$test_tmp/capture")"
assert_eq closed "$(python3 "$test_tmp/replay.py" "$port" "$test_tmp/capture" 0)" "the store, to a replay of a whole capture"
assert_eq closed "$(python3 "$test_tmp/replay.py" "$port" "$test_tmp/capture" 1)" "the store, to a replay with a fresh hello"
touch "$test_tmp/w/finish"
wait_for "$test_tmp/a0.rc"
wait_for "$test_tmp/a1.rc"
kill "$proxy" 2>/dev/null || true
assert_eq "0 0" "$(cat "$test_tmp/a0.rc") $(cat "$test_tmp/a1.rc")" "exit codes after the replays ($(cat "$test_tmp/a0.out"))"
refused=$(grep -c "refused a peer from 127.0.0.1:[0-9]*: wrong or missing HPCLAUNCH_RDZV_SECRET, or a message altered" \
  "$test_tmp/a0.out" || true)
assert_eq 2 "$refused" "replays refused by the store ($(cat "$test_tmp/a0.out"))"
wait

# 2. One byte of node 1's join changed in flight: node 1 is refused; a genuine node 1 then joins and the job ends.
new_case
start_agent 0 "$port"
start_proxy tamper "$test_tmp/tampered"
rm -f "$test_tmp/a1.rc"
rc=0
out=$(env $(node_env 1 "$proxy_port") timeout 60 "$HPCLAUNCH" agent --nproc-per-node 2 -- "$test_tmp/worker.sh" 2>&1) || rc=$?
kill "$proxy" 2>/dev/null || true
assert_eq 1 "$rc" "exit code of the agent whose join was altered ($out)"
assert_contains "$out" "rendezvous store" "why the agent whose join was altered stopped"
grep -q '"nproc":3' "$test_tmp/tampered" || fail "the proxy did not alter the join: $(cat "$test_tmp/tampered")"
[ -e "$test_tmp/w/started.2" ] && fail "a worker started for the altered join"
start_agent 1 "$port"
for r in 0 1 2 3; do wait_for "$test_tmp/w/started.$r"; done
touch "$test_tmp/w/finish"
wait_for "$test_tmp/a0.rc"
wait_for "$test_tmp/a1.rc"
assert_eq "0 0" "$(cat "$test_tmp/a0.rc") $(cat "$test_tmp/a1.rc")" "exit codes after the altered join"
assert_contains "$(cat "$test_tmp/a0.out")" "a message altered on the way"
wait

# 3. The store listens on the rendezvous address, not on every interface: on this machine's own non-loopback
#    address when it has one (on loopback, loopback alone).
addr=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$' | grep -v '^127\.' | head -1 || true)
addr=${addr:-127.0.0.1}
new_case
env $(node_env 0 "$port") HPCLAUNCH_MASTER_ADDR_FIXED="$addr" timeout 60 "$HPCLAUNCH" agent --rdzv-timeout 20 \
  --nproc-per-node 1 -- "$test_tmp/worker.sh" >"$test_tmp/bind.out" 2>&1 &
lone=$!
wait_until --every 0.05 30 "the lone agent's store to listen on port $port" 'ss -ltn | grep ":$port "'
listen=$(ss -ltn | awk -v p=":$port" '$4 ~ p"$" { print $4 }')
kill -TERM "$lone" 2>/dev/null || true
wait "$lone" || true
assert_eq "$addr:$port" "$listen" "where the store listens (rendezvous address $addr; $(cat "$test_tmp/bind.out"))"
note "store bound to $addr:$port only"
