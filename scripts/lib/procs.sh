# Sourced by scripts/run-dev.sh and scripts/examples.sh: who holds a port, and children that never
# outlive the script that started them. Linux only (reads /proc); needs nothing but bash.

# alive PID: the process exists and is not a zombie (a killed parent stays a zombie until reaped,
# and `kill -0` would still succeed on it).
alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != Z ]]
}

# listen_inodes PORT: the socket inodes listening on TCP PORT, on any address, IPv4 or IPv6.
listen_inodes() {
	local hex
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v hex="$hex" '$4 == "0A" && substr($2, length($2) - 3) == hex { print $10 }'
}

# port_holder PORT: "pid N (name)" of each process holding a listener on PORT; empty when free.
port_holder() {
	local inode fd pid found=()
	for inode in $(listen_inodes "$1"); do
		for fd in /proc/[0-9]*/fd/*; do
			[[ $(readlink "$fd" 2>/dev/null) == "socket:[$inode]" ]] || continue
			pid=${fd#/proc/}
			pid=${pid%%/*}
			found+=("pid $pid ($(cat "/proc/$pid/comm" 2>/dev/null || echo '?'))")
			break
		done
		((${#found[@]})) || found+=("a process this user cannot see (socket inode $inode)")
	done
	local IFS=,
	echo "${found[*]}"
}

# owns_port PID PORT: PID holds a listening socket on PORT.
owns_port() {
	local inode
	for inode in $(listen_inodes "$2"); do
		for fd in /proc/"$1"/fd/*; do
			[[ $(readlink "$fd" 2>/dev/null) == "socket:[$inode]" ]] && return 0
		done
	done
	return 1
}

# stop PID...: SIGTERM, then up to 5 s for a graceful exit, then SIGKILL.
stop() {
	(($#)) || return 0
	kill -TERM "$@" 2>/dev/null || true
	local p left
	for _ in $(seq 1 50); do
		left=0
		for p in "$@"; do alive "$p" && left=1; done
		((left)) || return 0
		sleep 0.1
	done
	kill -KILL "$@" 2>/dev/null || true
}

# caught PID: the signals PID has a handler for (SigCgt of /proc/PID/status) as a number; 0 when
# unreadable.
caught() {
	local key val
	while read -r key val; do
		[[ $key == SigCgt: ]] && { echo $((16#$val)); return; }
	done 2>/dev/null <"/proc/$1/status" || true
	echo 0
}

# Hangup, Ctrl-C, quit and terminate (signals 1, 2, 3 and 15), as bits of a SigCgt mask.
fatal_signals=$(((1 << 0) | (1 << 1) | (1 << 2) | (1 << 14)))

# watchdog PARENT PID...: in the background, stop PIDs as soon as PARENT (the caller's parent, e.g.
# make) or this script itself is gone, even by SIGKILL, which no trap sees, or as soon as PARENT
# stops catching one of the stopping signals it caught at the start. It ends the script first
# (SIGTERM), so that the script's trap can say why.
# Why a watchdog and not setsid with a process-group kill: a SIGKILLed make signals nobody, so its
# children must notice by themselves; and the services stay in the terminal's process group, so
# Ctrl-C still reaches them directly.
# Why the handler test: GNU make, sent SIGINT (or SIGHUP, SIGQUIT) alone, passes it to no child —
# on a terminal the whole process group gets it — and waits for its children to end, forever if
# nobody else signals them. Its handler first resets the signal to the default, which is what
# /proc shows; a shell or a Go program that catches these signals keeps catching them.
# Sets watchdog_pid.
watchdog() {
	local parent=$1 self=$$
	shift
	(
		trap '' INT # Ctrl-C is the script's to handle
		local start
		start=$(caught "$parent")
		while alive "$parent" && alive "$self" &&
			((!(start & fatal_signals & ~$(caught "$parent")))); do
			sleep 0.1
		done
		if alive "$self"; then
			# The script's own stop (its SIGTERM trap) says why, stops PIDs and ends this watchdog;
			# should it not end within 10 s, PIDs are stopped here all the same.
			kill -TERM "$self" 2>/dev/null || true
			for _ in $(seq 1 100); do
				alive "$self" || break
				sleep 0.1
			done
		fi
		stop "$@"
	) </dev/null &
	watchdog_pid=$!
}
