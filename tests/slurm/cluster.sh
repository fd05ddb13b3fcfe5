#!/usr/bin/env bash
# A real Slurm cluster on the emulated nodes (tests/netns): slurmctld in the
# head namespace, one slurmd in each node's namespace (with a UTS namespace
# whose hostname is the node's name, as a real node has), munge for their
# authentication. Debian's slurmctld, slurmd, slurm-client and munge.
#
#   cluster.sh start [N]   make N nodes (default 3) and start the cluster;
#                          waits until every node is idle
#   cluster.sh stop        stop the daemons (the namespaces stay: teardown.sh)
#   cluster.sh env         the environment a client needs (eval it)
#
# Clients (salloc, sbatch, srun, sinfo) run in the head namespace or on a
# node, with SLURM_CONF=/run/btlft-slurm/slurm.conf: the slurmctld exists
# only on 10.77.0.0/24. Nothing under /etc is written. Exits 77 when this
# machine cannot run it (no namespaces, no Slurm or munge installed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../netns/common.sh"

STATE=/run/btlft-slurm
CONF=$STATE/slurm.conf
NODE_TMP=$STATE/node-tmp
# A node that stops answering is DOWN after this many seconds.
SLURMD_TIMEOUT=${BTL_FT_SLURMD_TIMEOUT:-10}

unavailable() { echo "btlft slurm: $*" >&2; exit 77; }

write_conf() {
  local n=$1 k names=()
  for k in $(seq 0 $((n - 1))); do names+=("$(node_name "$k")"); done
  rm -rf "$STATE/ctld"
  mkdir -p "$STATE/ctld"
  {
    echo "# written by tests/slurm/cluster.sh: $n emulated nodes"
    echo "ClusterName=btlft"
    echo "SlurmctldHost=$HEAD($NET.$HEAD_OCTET)"
    echo "AuthType=auth/munge"
    echo "MailProg=/bin/true"
    echo "CredType=cred/munge"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$STATE/ctld"
    echo "SlurmctldPidFile=$STATE/slurmctld.pid"
    echo "SlurmctldLogFile=$STATE/slurmctld.log"
    echo "SlurmdSpoolDir=$STATE/spool-%n"
    echo "SlurmdPidFile=$STATE/slurmd-%n.pid"
    echo "SlurmdLogFile=$STATE/slurmd-%n.log"
    echo "SlurmdDebug=info"
    # each node's own, mounted by node_mounts.sh (Slurm's PMIx plugin works there)
    echo "TmpFS=$NODE_TMP"
    # processes, not cgroups: the emulated nodes share this machine's cgroups
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "SwitchType=switch/none"
    echo "MpiDefault=none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "SchedulerType=sched/builtin"
    echo "SlurmdTimeout=$SLURMD_TIMEOUT"
    echo "SlurmctldTimeout=30"
    echo "MessageTimeout=5"
    echo "KillWait=5"
    echo "ReturnToService=2"
    echo "InactiveLimit=0"
    for k in $(seq 0 $((n - 1))); do
      echo "NodeName=$(node_name "$k") NodeAddr=$NET.$(node_octet "$k") CPUs=$(nproc) State=UNKNOWN"
    done
    echo "PartitionName=emulated Nodes=$(IFS=,; echo "${names[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
  } > "$CONF"
  # cgroup.conf beside slurm.conf: the version this machine mounts
  echo "CgroupPlugin=cgroup/$(cgroup_version)" > "$STATE/cgroup.conf"
}

# v2 when the unified hierarchy is all there is, v1 otherwise (Slurm 22.05
# refuses the hybrid layout; it reads the v1 controllers then).
cgroup_version() {
  if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then echo v2; else echo v1; fi
}

# One munged serves every namespace: its socket is a file, not a port.
start_munge() {
  if munge -n 2>/dev/null | unmunge > /dev/null 2>&1; then return 0; fi
  [ -f /etc/munge/munge.key ] || unavailable "no /etc/munge/munge.key (reinstall munge)"
  install -d -o munge -g munge -m 755 /run/munge
  runuser -u munge -- munged || unavailable "munged does not start"
  touch "$STATE/munged-ours"
  munge -n | unmunge > /dev/null || unavailable "munge does not work"
}

# $1 namespace; the rest: the daemon and its arguments, run in the
# namespace under a hostname of its own, in the background, logged.
# `ip netns exec` gives it a mount namespace of its own, where
# node_mounts.sh adds what a real node has: cgroups, and a temporary
# directory of its own.
in_node() {
  local ns=$1; shift
  mkdir -p "$NODE_TMP"
  BTLFT_NODE_TMP=$NODE_TMP setsid ip netns exec "$ns" unshare --uts sh -c \
    'hostname "$0" && . "$1" && shift && exec "$@"' "$ns" "$here/node_mounts.sh" "$@" \
    > "$STATE/$ns.out" 2>&1 < /dev/null &
}

wait_idle() {
  local n=$1 deadline=$((SECONDS + 60)) idle
  while ((SECONDS < deadline)); do
    idle=$(SLURM_CONF=$CONF ip netns exec "$HEAD" sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
    ((idle == n)) && return 0
    sleep 1
  done
  SLURM_CONF=$CONF ip netns exec "$HEAD" sinfo -N -l >&2 || true
  tail -20 "$STATE/slurmctld.log" >&2 || true
  echo "btlft slurm: $idle of $n nodes idle after 60 s" >&2
  return 1
}

start() {
  local n=${1:-3} k
  ((EUID == 0)) || unavailable "must run as root (namespaces, daemons)"
  for tool in slurmctld slurmd salloc sinfo munged munge; do
    command -v $tool > /dev/null || unavailable "'$tool' is not installed (make deps)"
  done
  "$here/../netns/setup.sh" "$n" > /dev/null
  stop_daemons
  mkdir -p "$STATE"
  start_munge
  write_conf "$n"
  # -c: a clean start, no jobs or node states from a cluster killed before
  in_node "$HEAD" slurmctld -D -c -f "$CONF"
  for k in $(seq 0 $((n - 1))); do
    rm -rf "$STATE/spool-$(node_name "$k")"
    mkdir -p "$STATE/spool-$(node_name "$k")"
    in_node "$(node_name "$k")" slurmd -D -f "$CONF"
  done
  wait_idle "$n"
  echo "slurm: $n nodes idle; clients: SLURM_CONF=$CONF ip netns exec $HEAD salloc ..."
}

stop_daemons() {
  local pid f
  for f in "$STATE"/slurmctld.pid "$STATE"/slurmd-*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2> /dev/null || true
    rm -f "$f"
  done
  pkill -f "^slurm(ctld|d) .*-f $CONF" 2> /dev/null || true
  for _ in $(seq 50); do pgrep -f "^slurm(ctld|d) .*-f $CONF" > /dev/null || break; sleep 0.1; done
  pkill -9 -f "^slurm(ctld|d) .*-f $CONF" 2> /dev/null || true
  pkill -9 -f "^slurmstepd" 2> /dev/null || true
  if [ -f "$STATE/munged-ours" ]; then
    pkill -u munge -x munged 2> /dev/null || true
    rm -f "$STATE/munged-ours"
  fi
}

case ${1:-} in
  start) start "${2:-3}" ;;
  stop) stop_daemons; rm -rf "$STATE" ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *) echo "usage: $0 start [nodes] | stop | env" >&2; exit 1 ;;
esac
