#!/bin/sh
# A single-node Slurm on this machine, for trying clsplat-array.sbatch and for
# `make check-slurm`: Debian's slurmctld, slurmd, slurm-client and munge, no systemd.
#
#   tools/slurm/local-cluster.sh start DIR   installs what is missing (as root, with a policy-rc.d
#                                            that forbids service starts), writes DIR/slurm.conf
#                                            (state and logs under DIR), starts munged, slurmctld
#                                            and slurmd, and waits for the node to be idle
#   tools/slurm/local-cluster.sh stop DIR    stops the daemons it started
#
# Then: export SLURM_CONF=DIR/slurm.conf; sinfo; sbatch ...
set -eu
cmd=${1:?usage: local-cluster.sh start|stop DIR}
DIR=${2:?usage: local-cluster.sh start|stop DIR}
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
export SLURM_CONF="$DIR/slurm.conf"

install_packages() {
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null &&
        command -v munged >/dev/null && return 0
    [ "$(id -u)" = 0 ] || { echo "local-cluster: install slurmctld slurmd slurm-client munge (as root)" >&2; exit 1; }
    made=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d; made=1; fi
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null
    [ $made = 1 ] && rm -f /usr/sbin/policy-rc.d
    return 0
}

start_munge() {
    mkdir -p /run/munge /var/lib/munge /var/log/munge /etc/munge
    [ -s /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
        chmod 400 /etc/munge/munge.key; }
    chown -R munge:munge /run/munge /var/lib/munge /var/log/munge /etc/munge 2>/dev/null || true
    if ! munge -n >/dev/null 2>&1; then
        if id munge >/dev/null 2>&1 && command -v runuser >/dev/null; then runuser -u munge -- munged
        else munged --force; fi
    fi
    for _ in $(seq 1 50); do munge -n >/dev/null 2>&1 && return 0; sleep 0.1; done
    echo "local-cluster: munged did not start" >&2; exit 1
}

write_conf() {
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.8}' /proc/meminfo)
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
    cat > "$SLURM_CONF" <<CONF
ClusterName=clsplat-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# a requeued job waits out its credential's lifetime before it may start again (default 120 s)
AuthInfo=cred_expire=10
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
}

case $cmd in
start)
    install_packages
    start_munge
    write_conf
    slurmctld -i -f "$SLURM_CONF"
    slurmd -f "$SLURM_CONF"
    for _ in $(seq 1 100); do
        state=$(sinfo -h -o %t 2>/dev/null | head -1)
        case $state in idle*|mix*|alloc*) echo "local-cluster: node $(hostname -s) is $state (SLURM_CONF=$SLURM_CONF)"; exit 0;; esac
        sleep 0.2
    done
    echo "local-cluster: the node did not come up; see $DIR/log" >&2
    exit 1;;
stop)
    scontrol shutdown >/dev/null 2>&1 || true
    for f in slurmd slurmctld; do
        [ -f "$DIR/$f.pid" ] && kill "$(cat "$DIR/$f.pid")" 2>/dev/null || true
    done
    sleep 0.5
    echo "local-cluster: stopped";;
*)
    echo "usage: local-cluster.sh start|stop DIR" >&2; exit 2;;
esac
