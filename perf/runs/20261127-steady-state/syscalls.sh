#!/bin/bash
# System calls and context switches per request of the servers (not the load tool) at a fixed rate,
# counted by the kernel (Linux perf, tracepoints) over 10 s of the measured run.
# usage: [OUT=dir] syscalls.sh NAME WL RATE [perf run options...]   (NAME=nginx for nginx; else a node)
NAME=$1; WL=$2; RATE=$3; shift 3
cd "$(dirname "$0")/../../.."; export WRK2=${WRK2:-/tmp/wrk2/wrk}; P="java -jar perf/target/kvorum-perf.jar"
D=${OUT:-/tmp}/sysc-$NAME-$WL; rm -rf $D
if [ $NAME = nginx ]; then
  ($P nginx --workload $WL --rate $RATE --duration 25s --warmup 5s --out $D > $D.log 2>&1 &)
else
  ($P run --profile none --scrape-interval 0s --workload $WL --rate $RATE --duration 25s --warmup 15s "$@" --out $D > $D.log 2>&1 &)
fi
for i in $(seq 1 120); do grep -q 'measuring' $D.log 2>/dev/null && break; sleep 1; done
sleep 3
if [ $NAME = nginx ]; then PIDS=$(pgrep -d, nginx); else PIDS=$(pgrep -f 'Xlog:gc' -d,); fi
EV=raw_syscalls:sys_enter,syscalls:sys_enter_futex,syscalls:sys_enter_sendto,syscalls:sys_enter_recvfrom,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_read,syscalls:sys_enter_epoll_pwait2,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,context-switches
perf stat -e $EV -p $PIDS -- sleep 10 2>&1 | grep -E 'syscalls|context' | awk -v r=$RATE '{gsub(",","",$1); printf "%-40s %10d  %6.3f /req\n", $2, $1, $1/(10*r)}'
while pgrep -f "out $D" >/dev/null; do sleep 1; done; tail -1 $D.log | head -1; grep -h 'achieved' $D.log
