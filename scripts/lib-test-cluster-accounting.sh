# shellcheck shell=bash disable=SC2154  # dir, conf, ctld_port, wait_s: test-cluster.sh's
# Sourced by scripts/test-cluster.sh for TEST_CLUSTER_ACCOUNTING=1: the cluster's accounting, as a site has it.
# A MariaDB server of its own (data, socket, pid and log in DIR/mariadb; run as `nobody`: Debian's
# mariadb-server-core has the server without a service of the machine's or a `mysql` user; TCP on 127.0.0.1 only,
# at the port block's slurmctld port + 2), a slurmdbd at port + 3 storing into it (DIR/slurmdbd.conf), slurm.conf's
# AccountingStorageType=accounting_storage/slurmdbd, JobAcctGatherType=jobacct_gather/linux (sampled every
# second) and PrologFlags=Contain (extern steps), and `sacctmgr` entries: the cluster, the account `hpclaunch`, and
# the user root (and the caller) with it as their default account. Each start begins with an empty database (the
# job ids of a restarted cluster start again at FirstJobId); `stop` ends both daemons and removes DIR/mariadb. Uses
# test-cluster.sh's dir, conf, ctld_port, wait_s, die, pid_alive, pid_of and kill_pid.

acct_db_dir() { echo "$dir/mariadb"; }
acct_db_pidfile() { echo "$dir/mariadb/run/mariadbd.pid"; }
acct_dbd_pidfile() { echo "$dir/slurmdbd.pid"; }
acct_ports() { echo "$((ctld_port + 2)) $((ctld_port + 3))"; }  # MariaDB, slurmdbd: beside slurmctld's in its block

# The slurm.conf lines (appended by write_conf's caller).
acct_conf_lines() {
  cat <<EOF
# Accounting (TEST_CLUSTER_ACCOUNTING=1, scripts/lib-test-cluster-accounting.sh): slurmdbd on :$((ctld_port + 3)),
# MariaDB in $dir/mariadb. Usage sampled every second, so that a job of seconds has a MaxRSS.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$((ctld_port + 3))
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
# As most sites: each job's extern step (sacct's JOB.extern line). slurmctld says at its start that pam_slurm_adopt
# would need proctrack/cgroup: no pam_slurm_adopt here.
PrologFlags=Contain
EOF
}

# mariadbd and slurmdbd of this DIR whose pid file was lost: mariadbd by its --datadir, slurmdbd (no -f option:
# it finds slurmdbd.conf beside SLURM_CONF) by the SLURM_CONF in its environment. Never by name alone.
acct_own_pids() {
  local re p
  re=$(printf '%s' "$(acct_db_dir)/data" | sed 's/[][\.*^$+?(){}|]/\\&/g')
  pgrep -f -- "--datadir=$re( |\$)" || true
  for p in $(pgrep -x slurmdbd || true); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$conf" && echo "$p"
  done
  return 0
}

acct_down() {
  kill_pid "$(pid_of "$(acct_dbd_pidfile)")"
  kill_pid "$(pid_of "$(acct_db_pidfile)")"
  local p left
  for p in $(acct_own_pids); do kill_pid "$p"; done
  left=$(acct_own_pids)
  [ -z "$left" ] || die "mariadbd or slurmdbd of $dir still running after stop: pids $left"
  rm -rf "${dir:?}/mariadb" "$dir/slurmdbd.conf" "$(acct_dbd_pidfile)" "${dir:?}/accounting"
}

acct_sql() { mariadb --no-defaults -S "$(acct_db_dir)/run/mysqld.sock" -u root -e "$1"; }
acct_sacctmgr() { SLURM_CONF=$conf timeout 20 sacctmgr -i "$@" >>"$dir/log/sacctmgr.log" 2>&1; }

# Starts MariaDB and slurmdbd, and makes the cluster, account and users; before slurmctld, which registers with
# slurmdbd at its start (and stops at once when slurmdbd has no record of its TRES).
acct_up() {
  local tool
  for tool in mariadb-install-db mariadbd mariadb slurmdbd sacctmgr; do
    command -v "$tool" >/dev/null || die "'$tool' not found; run scripts/install-deps.sh (Debian packages mariadb-server-core, mariadb-client-core, slurmdbd)"
  done
  local owner
  owner=nobody:$(id -gn nobody) || die "no user 'nobody' to run mariadbd as"
  local db_port dbd_port db
  read -r db_port dbd_port <<<"$(acct_ports)"
  db=$(acct_db_dir)
  rm -rf "$db"
  mkdir -p "$db/data" "$db/run"
  chown "$owner" "$db/data" "$db/run"
  # Small InnoDB files (114 MB by default, 26 MB so): the database holds a few jobs. Its temporary files in its own
  # folder: the caller's TMPDIR (a test's) is not nobody's to write.
  local small=(--innodb-log-file-size=8M --innodb-buffer-pool-size=32M --innodb-lock-wait-timeout=900
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --tmpdir="$db/run")
  mariadb-install-db --no-defaults --user=nobody --datadir="$db/data" --auth-root-authentication-method=socket \
    --skip-test-db "${small[@]}" >"$dir/log/mariadb-install-db.log" 2>&1 8>&- 9>&- \
    || die "mariadb-install-db failed; see $dir/log/mariadb-install-db.log"
  setsid mariadbd --no-defaults --user=nobody --datadir="$db/data" --socket="$db/run/mysqld.sock" --port="$db_port" \
    --bind-address=127.0.0.1 --skip-name-resolve --pid-file="$(acct_db_pidfile)" --log-error="$db/run/mariadbd.log" \
    "${small[@]}" --innodb-fast-shutdown=2 </dev/null >/dev/null 2>&1 8>&- 9>&- &
  for _ in $(seq 1 $((wait_s * 10))); do acct_sql "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done
  acct_sql "SELECT 1" >/dev/null 2>&1 || die "mariadbd does not answer on $db/run/mysqld.sock; see $db/run/mariadbd.log"
  local pass
  pass=$(head -c 12 /dev/urandom | md5sum | cut -c1-16)
  acct_sql "CREATE DATABASE slurm_acct_db; CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pass';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || die "cannot make slurmdbd's database and user in MariaDB"
  (
    umask 077  # slurmdbd refuses a slurmdbd.conf that others may read (it holds the password)
    cat >"$dir/slurmdbd.conf" <<EOF
# Written by scripts/test-cluster.sh (TEST_CLUSTER_ACCOUNTING=1): this cluster's slurmdbd, its MariaDB in $db.
AuthType=auth/none
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$(acct_dbd_pidfile)
LogFile=$dir/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=$pass
StorageLoc=slurm_acct_db
EOF
  )
  SLURM_CONF=$conf slurmdbd 8>&- 9>&- || die "slurmdbd did not start; see $dir/log/slurmdbd.log"
  # The first start makes its tables; sacctmgr answers once it listens.
  for _ in $(seq 1 $((wait_s * 5))); do
    SLURM_CONF=$conf timeout 5 sacctmgr -n list cluster >/dev/null 2>&1 && break
    sleep 0.2
  done
  SLURM_CONF=$conf timeout 5 sacctmgr -n list cluster >/dev/null 2>&1 \
    || die "slurmdbd does not answer on :$dbd_port after ${wait_s}s; see $dir/log/slurmdbd.log"
  local users=(root) u
  [ "$(id -un)" = root ] || users+=("$(id -un)")
  acct_sacctmgr add cluster test || die "sacctmgr add cluster failed; see $dir/log/sacctmgr.log"
  acct_sacctmgr add account hpclaunch cluster=test description=hpclaunch-tests organization=hpclaunch \
    || die "sacctmgr add account failed; see $dir/log/sacctmgr.log"
  for u in "${users[@]}"; do
    acct_sacctmgr add user "$u" account=hpclaunch defaultaccount=hpclaunch cluster=test \
      || die "sacctmgr add user $u failed; see $dir/log/sacctmgr.log"
  done
}
