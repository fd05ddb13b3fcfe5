# shellcheck shell=bash disable=SC2034  # sourced: the variables are used by its callers
# Shared by setup.sh and teardown.sh: the names and addresses of the emulated
# cluster, and one lock so two scripts never edit it at once.
#
# Everything lives in namespaces of our own: the bridge ("switch") too, so the
# host's network gains nothing and no packet can leave the machine. mpirun
# runs in a "head" namespace because PRRTE's daemons must reach it over the
# 10.77.0.0/24 network that oob_tcp_if_include names, and that network exists
# only inside our namespaces.
#
# Names resolve through /etc/netns/NS/hosts, which `ip netns exec` mounts
# over /etc/hosts for the commands it runs: the host's /etc/hosts, shared
# with everyone else on the machine, is never edited.

NETNS_PREFIX=btlft
SWITCH=$NETNS_PREFIX-switch
HEAD=$NETNS_PREFIX-head
MAX_NODES=5
NET=10.77.0                         # the /24 every namespace is on
STATE_DIR=/run/btlft-netns          # hostfile; removed by teardown

node_name() { echo "$NETNS_PREFIX-n$1"; }
# host octet: head .1, node k .10+k (nodes.py derives addresses the same way)
node_octet() { echo $((10 + $1)); }
HEAD_OCTET=1
# fixed locally administered MACs, so every namespace can hold permanent
# neighbour entries (see setup.sh: why ARP must never fail)
mac_of_octet() { printf '02:77:00:00:00:%02x' "$1"; }

die_unavailable() {
    echo "btlft netns: $*" >&2
    exit 77     # ctest SKIP_RETURN_CODE: the machine cannot do it
}

# Kills what runs inside our namespaces, deletes them (their veths and the
# bridge go with them), the hosts files and the hostfiles. Also what a failed
# setup calls, under the lock it already holds.
remove_cluster() {
    local ns pids left
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^$NETNS_PREFIX-"); do
        # a namespace whose name is deleted lives on while a process is inside
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            pids=$(ip netns pids "$ns" 2>/dev/null)
            [[ -z $pids ]] && break
            # shellcheck disable=SC2086  # one argument per pid
            kill -KILL $pids 2>/dev/null
            sleep 0.1
        done
        ip netns del "$ns" || echo "btlft netns: could not delete $ns" >&2
    done
    # with every process gone, PRRTE session directories of our nodes are stale
    rm -rf /etc/netns/$NETNS_PREFIX-* "$STATE_DIR" "${TMPDIR:-/tmp}"/prte*."$NETNS_PREFIX"-*
    rmdir /etc/netns 2>/dev/null
    # `ip netns add` made /run/netns a mount point; undo it unless others use it
    if [[ -d /run/netns && -z $(ls -A /run/netns) ]]; then
        umount /run/netns 2>/dev/null
        rmdir /run/netns 2>/dev/null
    fi
    left=$(ip netns list 2>/dev/null | grep "^$NETNS_PREFIX-")
    [[ -z $left ]] || { echo "btlft netns: still present: $left" >&2; return 1; }
}

lock_cluster() {
    exec 9<"$(dirname "${BASH_SOURCE[0]}")"
    flock -w 60 9 || { echo "btlft netns: lock held for 60 s" >&2; exit 1; }
}
