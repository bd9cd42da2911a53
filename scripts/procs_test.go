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

	harness "github.com/yardstick-dev/yardstick/internal/proc"
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

// freePorts returns n loopback ports that were free a moment ago (internal/proc.FreePorts:
// below the kernel's ephemeral range, where an outgoing connection cannot take one first).
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	addrs, err := harness.FreePorts(n)
	if err != nil {
		t.Fatal(err)
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
