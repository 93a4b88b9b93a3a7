# Sourced by lib.sh, lib-trainer.sh and bench/trainer/run.sh. free_port: a TCP port nobody listens on here, drawn
# from 20000-49999 (below most of the kernel's ephemeral range, so an outgoing connection does not take it).
free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 30000))
    ss -ltn | grep -q ":$p " || { echo "$p"; return 0; }
  done
  return 1
}
