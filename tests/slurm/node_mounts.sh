# Sourced by cluster.sh inside a node's mount namespace (made by `ip netns
# exec`), before slurmd starts; changes only that namespace's mounts:
# - the cgroup hierarchies the host has: `ip netns exec` mounts a fresh /sys
#   without them, and slurmd's cgroup plugin does not start without them;
# - a temporary directory of the node's own at $BTLFT_NODE_TMP, slurm.conf's
#   TmpFS: Slurm's PMIx plugin makes spmix_appdir_UID_JOB.STEP there on every
#   node of a step, and nodes sharing one /tmp collided on it. /tmp itself
#   stays shared: the build a job runs may live there.
if [ "$(stat -f -c %T /proc/1/root/sys/fs/cgroup)" = cgroup2fs ]; then
  mount -t cgroup2 none /sys/fs/cgroup
else
  mount -t tmpfs cgroup /sys/fs/cgroup
  for c in $(awk -F: '$2 != "" && $2 !~ /^name=/ {print $2}' /proc/1/cgroup); do
    mkdir -p "/sys/fs/cgroup/$c"
    mount -t cgroup -o "$c" cgroup "/sys/fs/cgroup/$c"
  done
fi
mount -t tmpfs -o mode=1777,size=1g "tmp-$(hostname)" "$BTLFT_NODE_TMP"
