package manifest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// kubeScore is the kube-score binary the tests run, built once for the package from the version
// tools/go.mod pins: the same binary make tools puts in bin/tools for make deploy-score.
var kubeScore string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "manifest-kube-score-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	kubeScore = filepath.Join(dir, "kube-score")
	cmd := exec.Command("go", "build", "-o", kubeScore, "github.com/zegl/kube-score/cmd/kube-score")
	cmd.Dir = filepath.Join("..", "..", "..", "tools")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build kube-score from tools/go.mod: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}
