#!/bin/sh
# A real single-node Slurm on this machine, configured in a folder of its own (docs/cluster.md):
# munged, slurmctld and slurmd from Debian's slurm-wlm packages (munge, slurmctld, slurmd,
# slurm-client), run as root, no systemd needed. Used by the `slurm` tests.
#
#   scripts/slurm-local.sh start DIR   configure and start; prints the SLURM_CONF line to export
#   scripts/slurm-local.sh stop DIR    cancel its jobs and stop the daemons it started
#
# Everything lives in DIR: slurm.conf, the munge key and socket, state, spool, logs and pid
# files. Clients (sbatch, squeue, ...) find this cluster through SLURM_CONF=DIR/slurm.conf.
set -eu

usage() {
    echo "usage: $0 start|stop DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
action=$1
dir=$2

stop_pid_file() {
    # Ends the daemon whose pid its own pid file holds, and only that one.
    f=$1
    [ -s "$f" ] || return 0
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        i=0
        while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
}

case "$action" in
stop)
    [ -d "$dir" ] || exit 0
    dir=$(cd "$dir" && pwd)
    if [ -f "$dir/slurm.conf" ] && command -v scancel >/dev/null 2>&1; then
        SLURM_CONF="$dir/slurm.conf" timeout 10 scancel --quiet --user="$(id -un)" 2>/dev/null || true
    fi
    stop_pid_file "$dir/slurmd.pid"
    stop_pid_file "$dir/slurmctld.pid"
    stop_pid_file "$dir/munged.pid"
    echo "stopped the Slurm of $dir"
    exit 0
    ;;
start) ;;
*) usage ;;
esac

for tool in munged slurmctld slurmd sbatch squeue scancel sinfo scontrol; do
    if ! command -v "$tool" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$tool" ]; then
        echo "$0: $tool not found: install munge slurmctld slurmd slurm-client" >&2
        exit 3
    fi
done
if [ "$(id -u)" -ne 0 ]; then
    echo "$0: must run as root (slurmd starts jobs as their users)" >&2
    exit 3
fi
PATH=$PATH:/usr/sbin:/sbin

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
chmod 0755 "$dir"
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 0700 "$dir/munge"

# Free TCP ports for the controller and the node daemon.
ports=$(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
ctld_port=${ports% *}
slurmd_port=${ports#* }

node=$(hostname -s)
cpus=$(nproc)
user=$(id -un)

if [ ! -s "$dir/munge/munge.key" ]; then
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
    chmod 0400 "$dir/munge/munge.key"
fi

cat > "$dir/slurm.conf" <<EOF
# A single-node Slurm for tests (scripts/slurm-local.sh).
ClusterName=kflocal
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

export SLURM_CONF="$dir/slurm.conf"

munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed"
slurmctld -c -f "$dir/slurm.conf"
slurmd -f "$dir/slurm.conf" -N "$node"

# Wait until the node takes jobs.
i=0
while :; do
    state=$(sinfo --noheader --nodes="$node" --format=%T 2>/dev/null | head -n 1 || true)
    case "$state" in
    idle* | mixed* | allocated*) break ;;
    down* | drain* | unknown*)
        scontrol update nodename="$node" state=resume >/dev/null 2>&1 || true
        ;;
    esac
    i=$((i + 1))
    if [ $i -gt 60 ]; then
        echo "$0: the node did not come up (state: '${state:-none}'); logs in $dir" >&2
        tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
        exit 1
    fi
    sleep 0.5
done
echo "Slurm is up on $node ($cpus CPUs) in $dir"
echo "export SLURM_CONF=$dir/slurm.conf"
