# Sourced by lib.sh, lib-trainer.sh and bench/trainer/run.sh. free_port: a TCP port nobody listens on here, drawn
# from 30000 up to just below the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by
# default): an outgoing connection never takes it between the draw and the bind (it did when ports were drawn up
# to 49999: t0410's store once failed with "Address already in use"), and it stays clear of the MASTER_PORTs that
# jobs derive from their ids (20000-29999, launcher/runtime/rendezvous.h). Where `ss` is missing (the GPU
# machine), a port counts as taken when a connection to it on 127.0.0.1 succeeds (bash's /dev/tcp).
port_listened() {
  if command -v ss >/dev/null 2>&1; then
    ss -ltn | grep -q ":$1 "
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
free_port() {
  local p low=32768 span
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  span=$((low - 30000))
  [ "$span" -ge 100 ] || span=2768
  for _ in $(seq 100); do
    p=$((30000 + RANDOM % span))
    port_listened "$p" || { echo "$p"; return 0; }
  done
  return 1
}
