#!/bin/sh
# The launcher agent PRRTE's ssh launcher calls instead of ssh
# (--prtemca plm_ssh_agent agent.sh): `agent.sh NODE COMMAND...`.
# Like sshd, it runs COMMAND through a shell, here inside the node's network
# namespace and a UTS namespace of its own whose hostname is the node's name,
# so prted reports the name the hostfile used. A real ssh to 10.77.0.x would
# need sshd in every namespace and keys: this needs nothing.
node=$1
shift
case $node in
    btlft-n[0-9]) ;;
    *) echo "btlft agent: '$node' is not an emulated node" >&2; exit 255 ;;
esac
# shellcheck disable=SC2016  # $0 and $* belong to the inner shell
exec ip netns exec "$node" unshare --uts sh -c 'hostname "$0" && exec sh -c "$*"' "$node" "$@"
