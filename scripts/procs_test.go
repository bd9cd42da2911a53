package scripts

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// root is the repository root (this package is scripts/).
const root = ".."

// marker returns an environment entry unique to one test (not YARDSTICK_*: the services refuse
// unknown settings of that prefix): every process a script starts inherits it, so the processes still carrying it after the script ended are its leftovers,
// whoever their parent is by then.
func marker(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "SCRIPTS_TEST_MARK=" + hex.EncodeToString(b)
}

// proc is one live process found by marked.
type proc struct {
	pid, ppid int
	comm      string
}

func (p proc) String() string { return strconv.Itoa(p.pid) + " (" + p.comm + ")" }

// marked lists the live processes whose environment holds mark. Zombies (an environment no
// longer readable) do not count: they hold no port and run no code.
func marked(mark string) []proc {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []proc
	for _, d := range dirs {
		env, err := os.ReadFile(d + "/environ")
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), []byte("\x00"+mark+"\x00")) {
			continue
		}
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses: split at the last ")".
		s := string(stat)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		ppid, _ := strconv.Atoi(fields[1])
		out = append(out, proc{pid: pid, ppid: ppid, comm: s[open+1 : closing]})
	}
	return out
}

// freePorts returns n loopback ports that were free a moment ago, chosen below the kernel's
// ephemeral range: a port the kernel hands out for port 0 may be taken, between this check and
// the service's listen, by any test's outgoing connection (make run once failed "address already
// in use" that way), while ports below the range are only ever taken on purpose.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	low := 32768 // Linux's default ip_local_port_range starts here
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				low = v
			}
		}
	}
	const from = 10000
	if low <= from+1000 {
		t.Fatalf("ephemeral ports start at %d: no room below for the services' ports", low)
	}
	var addrs []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var r [2]byte
	for tries := 0; len(addrs) < n; tries++ {
		if tries == 1000 {
			t.Fatalf("no %d free ports between %d and %d", n, from, low)
		}
		_, _ = rand.Read(r[:])
		port := from + (int(r[0])<<8|int(r[1]))%(low-from)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // in use
		}
		ls = append(ls, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs
}

// portsFree reports whether every address can be listened on now.
func portsFree(addrs []string) (bool, string) {
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if err != nil {
			return false, a
		}
		l.Close()
	}
	return true, ""
}

// gone waits up to within for every marked process to end and every address to be free; it
// returns how long that took, or fails the test naming what remains.
func gone(t *testing.T, mark string, addrs []string, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		left := marked(mark)
		free, busy := portsFree(addrs)
		if len(left) == 0 && free {
			return time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("after %s: processes left %v, port %s free: %v; want none left and every port free", within, left, busy, free)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

// waitFor polls the file at path until it contains want, or fails after limit or once the
// process pid that should write it has ended.
func waitFor(t *testing.T, pid int, path, want string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && running(pid) {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(want)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(want)) {
		return
	}
	t.Fatalf("no %q (within %s, while process %d ran); output:\n%s", want, limit, pid, b)
}
