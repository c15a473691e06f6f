# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034,SC2154 # sourced by bench.sh, which sets the globals
#
# scripts/guest/bench-perf.sh: one perftest run for scripts/guest/bench.sh, which sources it.
#
# The run's context is set by the family (scripts/guest/bench.sh): DRV and FAM name the driver
# and the family; SRV_NS and CLI_NS are the commands that put the server and the client in
# their network namespaces (empty arrays for loopback); SRV_DEV/SRV_GID and CLI_DEV/CLI_GID
# their devices and GID indexes; SRV_ADDR the address the client connects to. For the wire
# family SRV_NS is (remote): the server runs on guest a through its agent (bench-wire.sh).
# Results go into the associative arrays V (values) and C (kernel CPU cost), each entry a
# space-separated list with one element per successful run, keyed "DRIVER|FAMILY|WORKLOAD|SIZE";
# for the wire, CS and CC hold the server guest's and the client guest's share of C.

# perf_value FILE SIZE COLUMN...: the first COLUMN found in the header of perftest's summary,
# read from the result line of SIZE. Column names are the header tokens that start with '#' or
# end in ']' ("BW average[Gb/sec]" is the token "average[Gb/sec]"); the latency summary's two
# "percentile[usec]" columns are named after the token before them: "99% percentile[usec]" is
# "p99[usec]", "99.9% percentile[usec]" is "p99.9[usec]".
perf_value() {
	local f=$1 size=$2
	shift 2
	awk -v size="$size" -v want="$*" '
		BEGIN { nw = split(want, w, " ") }
		/#bytes/ {
			n = 0; idx = 0; pri = nw + 1; prev = ""
			for (i = 1; i <= NF; i++) {
				t = $i
				if (t !~ /^#/ && t !~ /\]$/) { prev = t; continue }
				if (t ~ /^percentile\[/ && prev ~ /%$/)
					t = "p" substr(prev, 1, length(prev) - 1) substr(t, 11)
				prev = ""
				n++
				for (j = 1; j < pri; j++) if (t == w[j]) { idx = n; pri = j }
			}
			next
		}
		idx && $1 == size && NF >= idx && $idx ~ /^[0-9.]+$/ { v = $idx }
		END { if (v != "") print v }' "$f"
}

# kcpu: KNOW = the kernel's CPU time so far, all CPUs, in USER_HZ ticks: system + irq + softirq
# of /proc/stat (user time is left out: perftest busy-polls its CQ in user space). Builtins only:
# no process of its own to count.
kcpu() {
	local c u n s i w q sq r
	read -r c u n s i w q sq r </proc/stat
	KNOW=$((s + q + sq))
}
HZ=$(getconf CLK_TCK)
# A descriptor that never becomes readable: "read -t T -u $NAP" sleeps T seconds without a fork.
exec {NAP}<> <(:)

# add_result KEY VALUE: append VALUE to the run list of KEY in V.
add_result() { V[$1]="${V[$1]:-}${V[$1]:+ }$2"; }
add_cpu() { C[$1]="${C[$1]:-}${C[$1]:+ }$2"; }
add_cpu_srv() { CS[$1]="${CS[$1]:-}${CS[$1]:+ }$2"; }
add_cpu_cli() { CC[$1]="${CC[$1]:-}${CC[$1]:+ }$2"; }

srv_listening() {
	"${SRV_NS[@]}" timeout 10 ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# watch_client PID LOG SIZE: while the client PID runs (at most the timeout and 10 s), follow
# its (line-buffered) output and sample the kernel CPU time when perftest prints its summary
# header (right before it starts the measured iterations) and when it prints the result line of
# SIZE (right after them): KT is the difference in ticks, empty if either line was not seen;
# KTP the same on guest a for the wire (its agent samples it the moment our request arrives).
# Polls every 10 ms.
watch_client() {
	local pid=$1 size=$3 fd part line='' buf='' k0='' k1='' p0='' end=$((SECONDS + tmo + 10))
	KT='' KTP=''
	exec {fd}<"$2"
	while [ -z "$k1" ] && [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
		while [ -z "$k1" ]; do
			if IFS= read -r -u "$fd" part; then
				line=$buf$part buf=''
			else
				buf=$buf$part
				break
			fi
			if [ -z "$k0" ]; then
				if [[ $line == *"#bytes"* ]]; then
					profile_on
					peer_kcpu_ask
					kcpu && k0=$KNOW
					peer_kcpu_read
					p0=$KPEER
				fi
			elif [[ $line =~ ^[[:space:]]*([0-9]+)[[:space:]] ]] && [ "${BASH_REMATCH[1]}" = "$size" ]; then
				peer_kcpu_ask
				kcpu && k1=$KNOW
				peer_kcpu_read
				if [ -n "$p0" ] && [ -n "$KPEER" ]; then KTP=$((KPEER - p0)); fi
			fi
		done
		[ -n "$k1" ] || read -r -t 0.01 -u "$NAP" _ || true
	done
	exec {fd}<&-
	[ -n "$k0" ] && [ -n "$k1" ] && KT=$((k1 - k0))
	return 0
}

# Profiles (--profile, scripts/bench's RRXE_BENCH_PROFILE=1): "perf record -a -g" of each run's
# measured part (bandwidth and rate: from perftest's summary header to the run's end; latency
# and fio: the whole run), on this guest and, for the wire, on guest a at the same time. The
# recorders start before the run with their events off (perf is slow to start under TCG) and
# are switched on through their control FIFOs. The flat profiles by symbol and by command, each
# symbol's inclusive time (what it calls included) and the callers of the symbols above 2 % go
# into LOG.perf and LOG.peer.perf beside the run's outputs. Profiling costs time: the figures
# of a profiled bench are not the bench's.
PROF_PID='' PROF_PEER='' PROF_ON=0 PROF_EARLY=0
PROF_OPTS="-a -g -F 499"
PROF_PEER_BASE=/tmp/rrxe-bench-peer
# The drivers' entry points: a sample below one of them is the driver's work (perf report -p).
PROF_ENTRIES='ib_uverbs_post_send|ib_uverbs_post_recv|UdpReceiver7receive|pipeline3run'
PROF_ENTRIES+='|rxe_udp_encap_recv|do_work|process_one_work'
# perf_report DATA: the reports of a perf.data file.
perf_report() {
	echo "== by symbol"
	perf report -i "$1" --stdio --no-children --sort sym -g none --percent-limit 0.3 2>&1 |
		grep -v -e '^$' -e '^#$' | head -n 80
	echo "== by symbol, with what it calls (inclusive)"
	perf report -i "$1" --stdio --children --sort sym -g none --percent-limit 1 2>&1 |
		grep -v -e '^$' -e '^#' | head -n 100
	echo "== by symbol, inside the drivers' entry points (post_send, receive, runs and works)"
	perf report -i "$1" --stdio --no-children --sort sym -g none --percent-limit 0.3 -x \
		-p "$PROF_ENTRIES" \
		2>&1 | grep -v -e '^$' -e '^#$' | head -n 80
	echo "== inclusive, inside the drivers' entry points"
	perf report -i "$1" --stdio --children --sort sym -g none --percent-limit 0.3 -x \
		-p "$PROF_ENTRIES" \
		2>&1 | grep -v -e '^$' -e '^#' | head -n 80
	echo "== by command"
	perf report -i "$1" --stdio --no-children --sort comm -g none --percent-limit 0.5 2>&1 |
		grep -v -e '^$' -e '^#' | head -n 20
	echo "== callers of the symbols above 2 %"
	perf report -i "$1" --stdio --no-children --sort sym -g caller,2,callee,function,percent \
		--percent-limit 2 2>&1 | grep -v -e '^$' -e '^#' | head -n 400
}
# perf_fifos BASE: the control FIFOs BASE.ctl and BASE.ack of a recorder, made afresh.
perf_fifos() { rm -f "$1.ctl" "$1.ack" "$1.data" && mkfifo "$1.ctl" "$1.ack"; }
# perf_start BASE: a recorder of the whole guest into BASE.data, events off, controlled through
# the FIFOs of perf_fifos; runs until SIGINT.
perf_start() {
	# shellcheck disable=SC2086 # PROF_OPTS are words
	exec perf record -D -1 --control "fifo:$1.ctl,$1.ack" $PROF_OPTS -o "$1.data" -- sleep 3600
}
# perf_ctl BASE COMMAND: enable or disable the recorder of BASE; waits until it is listening.
perf_ctl() {
	[ -p "$1.ctl" ] && timeout 30 bash -c 'echo "$2" >"$1.ctl" && read -r _ <"$1.ack"' _ "$1" "$2"
}
# profile_start: the recorders (this guest's, guest a's for the wire), before a run.
profile_start() {
	[ "$profile" = 1 ] && [ -z "$PROF_PID" ] || return 0
	perf_fifos "$WORK/perf" || { say "$DRV $FAM: no FIFOs for perf"; return 0; }
	perf_start "$WORK/perf" >"$WORK/perf.rec" 2>&1 &
	PROF_PID=$!
	if [ "$FAM" = wire ]; then
		if remote bash -c "$(declare -f perf_fifos); perf_fifos $PROF_PEER_BASE"; then
			remote bash -c "$(declare -f perf_start); PROF_OPTS='$PROF_OPTS' perf_start \
				$PROF_PEER_BASE" >"$WORK/perf.peer.rec" 2>&1 &
			PROF_PEER=$!
		else
			say "$DRV $FAM: no FIFOs for perf on guest a"
		fi
	fi
}
# profile_on: switch the recorders on (the measured part begins), once per run.
profile_on() {
	[ -n "$PROF_PID" ] && [ "$PROF_ON" = 0 ] || return 0
	PROF_ON=1
	perf_ctl "$WORK/perf" enable || say "$DRV $FAM: perf does not answer"
	[ -z "$PROF_PEER" ] || remote bash -c "$(declare -f perf_ctl); perf_ctl $PROF_PEER_BASE enable" ||
		say "$DRV $FAM: perf on guest a does not answer"
}
# profile_end LOG: stop the recorders, write LOG.perf (and LOG.peer.perf).
profile_end() {
	[ -n "$PROF_PID" ] || return 0
	perf_ctl "$WORK/perf" disable || true
	pkill -INT -f "perf record -D -1 --control fifo:$WORK/perf.ctl" || true
	wait "$PROF_PID" || true
	perf_report "$WORK/perf.data" >"$1.perf" 2>&1 || true
	if [ -n "$PROF_PEER" ]; then
		remote bash -c "$(declare -f perf_ctl); perf_ctl $PROF_PEER_BASE disable;
			pkill -INT -f 'perf record -D -1 --control fifo:$PROF_PEER_BASE.ctl'" >/dev/null 2>&1 ||
			true
		wait "$PROF_PEER" || true
		remote bash -c "$(declare -f perf_report); perf_report $PROF_PEER_BASE.data" \
			>"$1.peer.perf" 2>&1 || true
	fi
	[ -s "$1.perf" ] && grep -q '%' "$1.perf" ||
		say "$DRV $FAM: no profile: $(tail -n 2 "$WORK/perf.rec" | tr '\n' ' ')"
	rm -f "$WORK/perf.data"
	PROF_PID='' PROF_PEER='' PROF_ON=0
	say "$DRV $FAM: profile in $1.perf"
}

gone() { ! kill -0 "$1" 2>/dev/null; }
# reap PID NAME: PID's exit status in REAPED; PID is stopped (SIGTERM: timeout passes it on to
# perftest) if it has not ended 10 s after the client's end. One that does not end even then
# (stuck in the kernel) is reported and left behind rather than waited for: REAPED=stuck.
reap() {
	REAPED=0
	if ! wait_for 10 gone "$1"; then
		kill "$1" 2>/dev/null || true
		if ! wait_for 5 gone "$1"; then
			say "$DRV $FAM: the $2 (pid $1) does not end: left behind"
			REAPED=stuck
			return 0
		fi
	fi
	wait "$1" || REAPED=$?
}

port=18700
# perf_once OUT SIZE BIN ARGS...: server and client of one perftest run, both bounded by the
# timeout, their outputs in OUT.server and OUT.client (on the guest's tmpfs: the log directory
# is shared with the host, and reading a file there while it grows is not reliable); the
# kernel CPU ticks of the measured iterations in KT (watch_client). Returns 0 when both exited
# 0.
perf_once() {
	local out=$1 size=$2 bin=$3 srv cli rc src
	shift 3
	port=$((port + 1))
	profile_start
	# latency runs print their header at the end: record them whole
	[ "$PROF_EARLY" = 0 ] || profile_on
	"${SRV_NS[@]}" timeout -k 5 "$tmo" "$bin" -d "$SRV_DEV" -x "$SRV_GID" -p "$port" "$@" \
		>"$out.server" 2>&1 &
	srv=$!
	wait_for 20 srv_listening "$port" || true
	: >"$out.client"
	"${CLI_NS[@]}" timeout -k 5 "$tmo" stdbuf -oL "$bin" -d "$CLI_DEV" -x "$CLI_GID" -p "$port" \
		"$@" "$SRV_ADDR" >>"$out.client" 2>&1 &
	cli=$!
	watch_client "$cli" "$out.client" "$size"
	reap "$cli" client
	rc=$REAPED
	reap "$srv" server
	src=$REAPED
	PERF_RC="client exit $rc, server exit $src"
	[ "$rc" = 0 ] && [ "$src" = 0 ]
}

# cpu_cost TICKS UNITS SCALE: CPU-seconds per SCALE units (bytes or messages) moved.
cpu_cost() {
	awk -v t="$1" -v hz="$HZ" -v p="$2" -v k="$3" 'BEGIN { printf "%.3f", t / hz / (p / k) }'
}

# run_perf KIND WORKLOAD BIN SIZE ITERS MSGS [OPTIONS...]: one run of a row. KIND is bw (Gb/s
# and kernel CPU-seconds per GB), rate (Mpps and CPU-seconds per million messages) or lat
# (p50 = t_typical, p99, p99.9 and max, in usec, recorded as WORKLOAD.p50 and so on). MSGS is
# the number of messages the run moves (ITERS x QPs, x2 when bidirectional), for the CPU cost.
# Bandwidth is computed from MsgRate[Mpps] (six decimals; perftest rounds "BW average" to two).
# perftest calibrates its cycle counter against gettimeofday at start; on a busy TCG host that
# fails now and then ("Correlation coefficient r^2: ... < 0.9") and the run reports 0 or inf:
# such a run is repeated, up to 3 attempts. A failed run adds nothing (the row's count of
# successful runs shows it); its outputs stay in the logs.
run_perf() {
	local kind=$1 w=$2 bin=$3 size=$4 iters=$5 msgs=$6 log v c cpu='' attempt ok ran t0=$SECONDS
	local -a args lat=()
	shift 6
	log=$logs/$DRV-$FAM-$w-$size-r$RUN
	args=(-F -s "$size" -n "$iters" "$@")
	PROF_EARLY=0
	[ "$kind" != lat ] || PROF_EARLY=1
	[ "$kind" = lat ] || args+=(--report_gbits)
	for attempt in 1 2 3; do
		ok=0 v=''
		ran=0
		perf_once "$WORK/run" "$size" "$bin" "${args[@]}" && ran=1
		profile_end "$log"
		cat "$WORK/run.client" >"$log.client" || true
		cat "$WORK/run.server" >"$log.server" || true
		if [ $ran = 1 ]; then
			case $kind in
			bw)
				v=$(perf_value "$WORK/run.client" "$size" "MsgRate[Mpps]")
				[ -n "$v" ] && v=$(awk -v r="$v" -v s="$size" 'BEGIN { printf "%.4f", r * s * 8 / 1000 }')
				;;
			rate) v=$(perf_value "$WORK/run.client" "$size" "MsgRate[Mpps]") ;;
			lat)
				lat=()
				for c in "t_typical[usec]" "p99[usec]" "p99.9[usec]" "t_max[usec]"; do
					lat+=("$(perf_value "$WORK/run.client" "$size" "$c")")
				done
				v=${lat[0]}
				[ -n "${lat[1]}" ] && [ -n "${lat[2]}" ] && [ -n "${lat[3]}" ] || v=''
				;;
			esac
			awk -v v="$v" 'BEGIN { exit !(v + 0 > 0 && v + 0 < 1e12) }' && ok=1
		fi
		[ $ok = 1 ] && break
		grep -q 'Correlation coefficient' "$WORK/run.client" "$WORK/run.server" || break
		[ "$attempt" -lt 3 ] && say "$DRV $FAM $w $size: perftest clock calibration failed, again"
	done
	if [ $ok = 0 ]; then
		say "$DRV $FAM run $RUN $w $size: fail ($PERF_RC; $log.*)"
		sed 's/^/bench:   client| /' "$WORK/run.client" | grep -v -e '^bench:   client| *$' |
			tail -3 || true
		return 0
	fi
	case $kind in
	bw | rate)
		# kernel CPU-seconds per GB moved, or per million messages
		local per=$((msgs * size)) scale=1e9 unit=Gb/s cu=CPU-s/GB csrv='' ccli='' split=''
		[ "$kind" = rate ] && per=$msgs scale=1e6 unit=Mpps cu=CPU-s/Mmsg
		if [ "$FAM" = wire ]; then
			# both guests: the server's (a) and the client's (b) share, and their sum
			if [ -n "$KT" ] && [ -n "$KTP" ]; then
				cpu=$(cpu_cost $((KT + KTP)) "$per" "$scale")
				csrv=$(cpu_cost "$KTP" "$per" "$scale") ccli=$(cpu_cost "$KT" "$per" "$scale")
			fi
			split=" (server ${csrv:-?} + client ${ccli:-?})"
		else
			[ -n "$KT" ] && cpu=$(cpu_cost "$KT" "$per" "$scale")
		fi
		add_result "$DRV|$FAM|$w|$size" "$v"
		[ -n "$cpu" ] && add_cpu "$DRV|$FAM|$w|$size" "$cpu"
		if [ -n "$csrv" ]; then
			add_cpu_srv "$DRV|$FAM|$w|$size" "$csrv"
			add_cpu_cli "$DRV|$FAM|$w|$size" "$ccli"
		fi
		say "$DRV $FAM run $RUN $w $size: $v $unit, kernel ${cpu:-?} $cu$split ($((SECONDS - t0)) s)"
		;;
	lat)
		add_result "$DRV|$FAM|$w.p50|$size" "${lat[0]}"
		add_result "$DRV|$FAM|$w.p99|$size" "${lat[1]}"
		add_result "$DRV|$FAM|$w.p99.9|$size" "${lat[2]}"
		add_result "$DRV|$FAM|$w.max|$size" "${lat[3]}"
		say "$DRV $FAM run $RUN $w $size: p50 ${lat[0]}, p99 ${lat[1]}, p99.9 ${lat[2]}," \
			"max ${lat[3]} usec ($((SECONDS - t0)) s)"
		;;
	esac
	return 0
}

# The rows: "WORKLOAD KIND FAMILIES BIN SIZE [OPTIONS...]", in table order. FAMILIES is all
# (loop, veth1500, veth9000 and wire) or a comma-separated list of families. bw rows run
# --bw-iters messages of 64 KiB per run, four times as many smaller ones and a sixteenth as
# many of 1 MiB (about as many bytes as at 64 KiB), split over the QPs with -q; rate rows
# --rate-iters messages; lat rows --lat-iters round trips. The wire's bw rows move a quarter
# of those bytes (its guests have one vCPU each and move a fifth to a half of a veth's rate),
# its lat rows make a tenth of the round trips (p99.9 is then the maximum). The workload
# names: _q4 and _q16 four and sixteen QPs, _bidir both directions (-b), _l16 16 work
# requests per doorbell (--post_list 16, a message rate row), _I0 inline data off (-I 0).
# Trimmed to keep the default bench (5 runs, every family) within about 45 minutes on the
# 2-core TCG machine: more QPs for WRITE only, sixteen at MTU 1500 only; 1 MiB messages not at
# MTU 9000; on the veth, 64-byte messages, latency and the bidirectional WRITE at MTU 1500
# only; no inline data on loopback only; on the wire (two guests, one vCPU each) the bandwidth
# of the three operations, four QPs and the latencies of SEND, WRITE and READ.
ROWS=(
	"ib_write_bw bw veth1500 ib_write_bw 64"
	"ib_write_bw bw all ib_write_bw 4096"
	"ib_write_bw bw all ib_write_bw 65536"
	"ib_write_bw bw loop,veth1500,wire ib_write_bw 1048576"
	"ib_read_bw bw veth1500 ib_read_bw 64"
	"ib_read_bw bw all ib_read_bw 4096"
	"ib_read_bw bw all ib_read_bw 65536"
	"ib_read_bw bw loop,veth1500,wire ib_read_bw 1048576"
	"ib_send_bw bw veth1500 ib_send_bw 64"
	"ib_send_bw bw all ib_send_bw 4096"
	"ib_send_bw bw all ib_send_bw 65536"
	"ib_send_bw bw loop,veth1500,wire ib_send_bw 1048576"
	"ib_write_bw_q4 bw all ib_write_bw 65536 -q 4"
	"ib_write_bw_q16 bw veth1500 ib_write_bw 65536 -q 16"
	"ib_write_bw_q64 bw veth1500 ib_write_bw 65536 -q 64"
	"ib_send_bw_q8 bw veth1500 ib_send_bw 4096 -q 8"
	"ib_write_bw_short bw veth1500 ib_write_bw 65536 @short"
	"ib_write_bw_short bw veth1500 ib_write_bw 4096 @short"
	"ib_write_bw_bidir bw loop,veth1500 ib_write_bw 65536 -b"
	"ib_write_rate_l16 rate loop,veth1500 ib_write_bw 64 -l 16"
	"ib_write_rate_l16 rate loop,veth1500,veth9000 ib_write_bw 4096 -l 16"
	"ib_send_rate_l16 rate loop,veth1500 ib_send_bw 64 -l 16"
	"ib_send_rate_l16 rate loop,veth1500,veth9000 ib_send_bw 4096 -l 16"
	"ib_send_lat lat loop,veth1500,wire ib_send_lat 2"
	"ib_write_lat lat loop,veth1500,wire ib_write_lat 2"
	"ib_read_lat lat loop,veth1500,wire ib_read_lat 2"
	"ib_atomic_lat lat loop,veth1500 ib_atomic_lat 8"
	"ib_send_lat_I0 lat loop ib_send_lat 2 -I 0"
	"ib_write_lat_I0 lat loop ib_write_lat 2 -I 0"
	"ib_write_bw_loss0 bw congestion ib_write_bw 65536 @loss=0"
	"ib_write_bw_loss0.1 bw congestion ib_write_bw 65536 @loss=0.1"
	"ib_write_bw_loss1 bw congestion ib_write_bw 65536 @loss=1"
	"ib_write_bw_loss2 bw congestion ib_write_bw 65536 @loss=2"
	"ib_write_bw_loss5 bw congestion ib_write_bw 65536 @loss=5"
	"ib_write_bw_lossburst bw congestion ib_write_bw 65536 @loss=burst"
	"ib_send_bw_loss1 bw congestion ib_send_bw 65536 @loss=1"
	"ib_send_bw_loss5 bw congestion ib_send_bw 65536 @loss=5"
	"ib_read_bw_loss1 bw congestion ib_read_bw 65536 @loss=1"
	"ib_read_bw_loss5 bw congestion ib_read_bw 65536 @loss=5"
)

# netem_loss LOSS: netem on both ends of the veth (both directions): LOSS % of the packets
# dropped at random, "burst" for Gilbert-Elliott bursts (into a bad state with 0.5 % a packet,
# out of it with 20 %: bursts of five packets on average, 70 % lost in them and 0.1 % outside;
# 1.8 % in all), 0 for none (the qdisc is removed).
netem_loss() {
	local how
	case $1 in
	0) how='' ;;
	burst) how='loss gemodel 0.5% 20% 70% 0.1%' ;;
	*) how="loss $1%" ;;
	esac
	if [ -z "$how" ]; then
		ip netns exec $WA tc qdisc del dev va root 2>/dev/null || true
		ip netns exec $WB tc qdisc del dev vb root 2>/dev/null || true
		return 0
	fi
	modprobe sch_netem 2>/dev/null || true
	# shellcheck disable=SC2086 # the netem words
	ip netns exec $WA tc qdisc replace dev va root netem $how &&
		ip netns exec $WB tc qdisc replace dev vb root netem $how
}

# row_applies ROW FAMILY: the row runs in FAMILY and matches the --rows filter.
row_applies() {
	local w kind fams
	read -r w kind fams _ <<<"$1"
	# all: every family but congestion (which has its own rows)
	{ [ "$fams" = all ] && [ "$2" != congestion ]; } || [[ ,$fams, == *",$2,"* ]] || return 1
	[[ $w =~ $rows_re ]]
}

# run_row ROW: one run of ROW in the current family.
run_row() {
	local w kind fams bin size rest q=1 dir=1 iters
	local -a opts
	read -r w kind fams bin size rest <<<"$1"
	read -r -a opts <<<"$rest"
	# @short: a new user's first run, a quarter of the messages (250 of 64 KiB, 1000 of 4 KiB)
	local short=0 loss=''
	if [[ " ${opts[*]} " == *" @short "* ]]; then
		short=1
		read -r -a opts <<<"${rest//@short/}"
	fi
	# @loss=L: under netem loss (netem_loss), an eighth of the messages (a sixteenth at 2 %
	# and more: go-back-N keeps a few percent of the rate there)
	if [[ " ${opts[*]} " =~ \ @loss=([^ ]+)\  ]]; then
		loss=${BASH_REMATCH[1]}
		read -r -a opts <<<"${rest//@loss=$loss/}"
	fi
	[[ " ${opts[*]} " =~ \ -q\ ([0-9]+)\  ]] && q=${BASH_REMATCH[1]}
	[[ " ${opts[*]} " == *" -b "* ]] && dir=2
	case $kind in
	bw)
		iters=$bw_iters
		if [ "$size" -ge 1048576 ]; then
			iters=$((bw_iters / 16))
		elif [ "$size" -lt 65536 ]; then
			iters=$((bw_iters * 4))
		fi
		# the wire between two guests is slower: a quarter of the bytes
		[ "$FAM" != wire ] || iters=$((iters / 4))
		;;
	rate) iters=$rate_iters ;;
	lat)
		iters=$lat_iters
		# on the wire a SEND or WRITE round trip takes some 25 ms (see bench-wire.sh)
		[ "$FAM" != wire ] || iters=$((iters / 10))
		;;
	esac
	[ "$short" = 0 ] || iters=$((iters / 4))
	case $loss in
	'' | 0 | 0.1 | 1) [ -z "$loss" ] || iters=$((iters / 8)) ;;
	*) iters=$((iters / 16)) ;;
	esac
	# perftest's -n counts per QP; with post lists it must be a multiple of the list length
	iters=$((iters / q))
	[ "$iters" -ge 8 ] || iters=8
	[ "$kind" = rate ] && iters=$(((iters + 15) / 16 * 16))
	if [ -n "$loss" ]; then
		# at most three runs
		[ "$RUN" -le 3 ] || return 0
		netem_loss "$loss" || { say "$DRV $FAM $w: netem refused"; return 0; }
	fi
	run_perf "$kind" "$w" "$bin" "$size" "$iters" $((iters * q * dir)) "${opts[@]}"
	[ -z "$loss" ] || netem_loss 0
}
