#!/usr/bin/env bash
# Creates N emulated nodes (default 2, at most 5): network namespaces
# btlft-n0..n{N-1} plus btlft-head (where mpirun runs), each joined by a veth
# pair to a bridge inside btlft-switch, on 10.77.0.0/24; writes the hostfile
# /run/btlft-netns/hostfile-N. Idempotent: what exists is kept, what is
# missing is made. Exits 77 when this machine cannot create namespaces,
# veths or bridges (tests then report SKIPPED), 1 on any other error.
#
# Every namespace holds permanent neighbour entries for all the others. With
# ARP, a cut link becomes visible 45-60 s later (measured) as a local "host
# unreachable" error on survivors; with the entries, a cut node is silent for
# ever, like a powered-off host behind a router, which is what the detector
# has to catch.
set -euo pipefail
source "$(dirname "$0")/common.sh"

N=${1:-2}
if ! [[ $N =~ ^[1-9][0-9]*$ ]] || ((N > MAX_NODES)); then
    echo "usage: $0 [nodes 1..$MAX_NODES]" >&2
    exit 1
fi
((EUID == 0)) || die_unavailable "must run as root to create network namespaces"
for tool in ip unshare flock; do
    command -v $tool > /dev/null || die_unavailable "'$tool' not found"
done
lock_cluster

ensure_ns() {
    [[ -e /run/netns/$1 ]] && return 0
    local err
    err=$(ip netns add "$1" 2>&1) || {
        remove_cluster > /dev/null 2>&1 || true
        die_unavailable "cannot create network namespace $1: $err"
    }
    ip -n "$1" link set lo up
}

# $1 namespace, $2 host octet, $3 switch port name
attach() {
    local ns=$1 octet=$2 port=$3 err
    if ! ip -n "$SWITCH" link show "$port" > /dev/null 2>&1; then
        err=$(ip -n "$SWITCH" link add name "$port" type veth peer name eth0 netns "$ns" 2>&1) || {
            remove_cluster > /dev/null 2>&1 || true
            die_unavailable "cannot create veth pair for $ns: $err"
        }
    fi
    ip -n "$ns" link set eth0 address "$(mac_of_octet "$octet")"
    ip -n "$ns" addr replace "$NET.$octet/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$SWITCH" link set "$port" master br0 up
}

static_neighbours() {
    local ns=$1 own=$2 octet
    for octet in $HEAD_OCTET $(for k in $(seq 0 $((MAX_NODES - 1))); do node_octet "$k"; done); do
        ((octet == own)) && continue
        ip -n "$ns" neigh replace "$NET.$octet" lladdr "$(mac_of_octet "$octet")" \
            dev eth0 nud permanent
    done
}

hosts_file() {
    mkdir -p "/etc/netns/$1"
    {
        echo "127.0.0.1 localhost"
        echo "$NET.$HEAD_OCTET $HEAD"
        for k in $(seq 0 $((MAX_NODES - 1))); do echo "$NET.$(node_octet "$k") $(node_name "$k")"; done
    } > "/etc/netns/$1/hosts"
}

ensure_ns "$SWITCH"
if ! ip -n "$SWITCH" link show br0 > /dev/null 2>&1; then
    err=$(ip -n "$SWITCH" link add name br0 type bridge 2>&1) || {
        remove_cluster > /dev/null 2>&1 || true
        die_unavailable "cannot create a bridge: $err"
    }
fi
ip -n "$SWITCH" link set br0 up

members=("$HEAD:$HEAD_OCTET:p-head")
for k in $(seq 0 $((N - 1))); do members+=("$(node_name "$k"):$(node_octet "$k"):p-n$k"); done
for m in "${members[@]}"; do
    IFS=: read -r ns octet port <<< "$m"
    ensure_ns "$ns"
    attach "$ns" "$octet" "$port"
    static_neighbours "$ns" "$octet"
    hosts_file "$ns"
done

mkdir -p "$STATE_DIR"
for k in $(seq 0 $((N - 1))); do node_name "$k"; done > "$STATE_DIR/hostfile-$N"
echo "$STATE_DIR/hostfile-$N"
