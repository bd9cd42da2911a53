package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExamplesLeaveNothing: `make check-docs` (which runs scripts/examples.sh, as `make docs`
// does) leaves no process behind, whether it ends by itself or is killed with -9 while its
// services run. (It once left both dev-mode services running after every `make ci`.)
func TestExamplesLeaveNothing(t *testing.T) {
	t.Parallel()
	t.Run("make check-docs ends", func(t *testing.T) {
		t.Parallel()
		mark := marker(t)
		cmd := exec.Command("make", "-s", "check-docs")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), mark)
		out, err := cmd.CombinedOutput()
		// Stale docs are check-docs' own failure, not this test's: it ran to its end either way.
		if err != nil && !strings.Contains(string(out), "docs/examples.md is stale") {
			t.Fatalf("make check-docs: %v\n%s", err, out)
		}
		if left := marked(mark); len(left) > 0 {
			t.Errorf("processes left after make check-docs: %v; want none", left)
		}
	})
	t.Run("examples.sh killed -9", func(t *testing.T) {
		t.Parallel()
		mark := marker(t)
		dir := t.TempDir()
		log, err := os.Create(filepath.Join(dir, "log"))
		if err != nil {
			t.Fatal(err)
		}
		defer log.Close()
		cmd := exec.Command("scripts/examples.sh", filepath.Join(dir, "examples.md"))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), mark)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { // on failure, leave nothing behind either
			for _, p := range marked(mark) {
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}()
		// Wait until both services run, then kill the script where no trap can act.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			n := 0
			for _, p := range marked(mark) {
				if p.comm == "scoring" || p.comm == "forecast" {
					n++
				}
			}
			if n == 2 {
				break
			}
			if time.Now().After(deadline) {
				b, _ := os.ReadFile(log.Name())
				t.Fatalf("services did not start within 2 minutes; output:\n%s", b)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		took := gone(t, mark, nil, 2*time.Second)
		t.Logf("nothing left after %s", took.Round(time.Millisecond))
		_ = cmd.Wait()
	})
}
