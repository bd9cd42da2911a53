package dockerfile

import (
	"bufio"
	"context"
	"go/version"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
)

// repoRoot is the repository root seen from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

func parseRepoDockerfile(t *testing.T) *File {
	t.Helper()
	f, err := ParseFile(filepath.Join(repoRoot, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func commands[T instructions.Command](st *instructions.Stage) []T {
	var out []T
	for _, c := range st.Commands {
		if v, ok := c.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

var services = []string{"scoring", "forecast"}

// TestBuildStageMeetsTheIssue holds the image's go build line to issue 5: a GOWORK=off module
// build, static, trimmed, with the version set at link time, for each service.
func TestBuildStageMeetsTheIssue(t *testing.T) {
	t.Parallel()
	f := parseRepoDockerfile(t)
	for _, svc := range services {
		t.Run(svc, func(t *testing.T) {
			t.Parallel()
			steps, err := f.Steps("build", map[string]string{"SERVICE": svc, "VERSION": "v9.9.9"})
			if err != nil {
				t.Fatal(err)
			}
			var build *Step
			for i := range steps {
				if strings.Contains(steps[i].Shell, "go build") {
					build = &steps[i]
				}
			}
			if build == nil {
				t.Fatalf("no RUN line runs go build; got %+v", steps)
			}
			for _, want := range []string{
				"cd services/${SERVICE}", "GOWORK=off", "CGO_ENABLED=0", "-trimpath",
				"-X github.com/yardstick-dev/yardstick/pkg/serve.Version=${VERSION}",
				`-o "${OUT_DIR}/${SERVICE}"`, "./cmd/${SERVICE}",
			} {
				if !strings.Contains(build.Shell, want) {
					t.Errorf("build line %q lacks %q", build.Shell, want)
				}
			}
			if got := build.Env["SERVICE"]; got != svc {
				t.Errorf("SERVICE is %q; want %q", got, svc)
			}
			if got := build.Env["VERSION"]; got != "v9.9.9" {
				t.Errorf("VERSION is %q; want the build argument v9.9.9", got)
			}
			if got := build.Env["OUT_DIR"]; got != "/out" {
				t.Errorf("OUT_DIR defaults to %q; want /out, where the final stage copies from", got)
			}
		})
	}
}

// TestFinalStageIsDistrolessNonRoot checks the runtime image: distroless static, a numeric
// non-root user, the binary copied from the build stage's output, both ports exposed.
func TestFinalStageIsDistrolessNonRoot(t *testing.T) {
	t.Parallel()
	f := parseRepoDockerfile(t)
	final := &f.Stages[len(f.Stages)-1]
	if final.BaseName != "gcr.io/distroless/static-debian12:nonroot" {
		t.Errorf("final base is %q; want gcr.io/distroless/static-debian12:nonroot", final.BaseName)
	}
	users := commands[*instructions.UserCommand](final)
	if len(users) != 1 || users[0].User != "65532:65532" {
		t.Errorf("USER lines %v; want exactly USER 65532:65532", users)
	}
	eps := commands[*instructions.EntrypointCommand](final)
	if len(eps) != 1 || eps[0].PrependShell || !slices.Equal(eps[0].CmdLine, []string{"/yardstick"}) {
		t.Fatalf("ENTRYPOINT %v; want exec form [\"/yardstick\"]", eps)
	}
	for _, svc := range services {
		args, err := f.Args(final, map[string]string{"SERVICE": svc})
		if err != nil {
			t.Fatal(err)
		}
		copied := false
		for _, c := range commands[*instructions.CopyCommand](final) {
			if c.From != "build" || len(c.SourcePaths) != 1 {
				continue
			}
			src, err := f.Expand(c.SourcePaths[0], args)
			if err != nil {
				t.Fatal(err)
			}
			if src == "/out/"+svc && c.DestPath == eps[0].CmdLine[0] {
				copied = true
			}
		}
		if !copied {
			t.Errorf("%s: no COPY --from=build /out/%s to the entrypoint %s", svc, svc, eps[0].CmdLine[0])
		}
	}
	exposes := commands[*instructions.ExposeCommand](final)
	if len(exposes) != 1 || !slices.Equal(slices.Sorted(slices.Values(exposes[0].Ports)), []string{"${GRPC_PORT}", "${HTTP_PORT}"}) {
		t.Errorf("EXPOSE %v; want EXPOSE ${HTTP_PORT} ${GRPC_PORT}", exposes)
	}
}

var goDirective = regexp.MustCompile(`(?m)^(?:go|toolchain)\s+(?:go)?(\S+)\s*$`)

// TestBuilderGoIsNewEnough wants the pinned golang image to satisfy every service module's go and
// toolchain lines, so that the image build never has to download another toolchain.
func TestBuilderGoIsNewEnough(t *testing.T) {
	t.Parallel()
	f := parseRepoDockerfile(t)
	build, err := f.Stage("build")
	if err != nil {
		t.Fatal(err)
	}
	global := map[string]string{}
	for _, a := range f.MetaArgs {
		for _, kv := range a.Args {
			if kv.Value != nil {
				global[kv.Key] = *kv.Value
			}
		}
	}
	base, err := f.Expand(build.BaseName, global)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^golang:(\d+\.\d+\.\d+)-`).FindStringSubmatch(base)
	if m == nil {
		t.Fatalf("builder base %q is not golang:<major.minor.patch>-...; pin the Go version", base)
	}
	builder := "go" + m[1]
	for _, svc := range services {
		gomod, err := os.ReadFile(filepath.Join(repoRoot, "services", svc, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range goDirective.FindAllStringSubmatch(string(gomod), -1) {
			if need := "go" + d[1]; version.Compare(builder, need) < 0 {
				t.Errorf("services/%s/go.mod needs %s; the builder image has %s", svc, need, builder)
			}
		}
	}
}

// TestDockerignoreAdmitsWhatTheBuildCopies wants each COPY source of the build stage re-included
// by deploy/Dockerfile.dockerignore, which excludes everything else.
func TestDockerignoreAdmitsWhatTheBuildCopies(t *testing.T) {
	t.Parallel()
	f := parseRepoDockerfile(t)
	build, err := f.Stage("build")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(filepath.Join(repoRoot, "deploy", "Dockerfile.dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	admitted := map[string]bool{}
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "!"); ok {
			admitted[filepath.Clean(p)] = true
		}
	}
	for _, c := range commands[*instructions.CopyCommand](build) {
		for _, src := range c.SourcePaths {
			if !admitted[filepath.Clean(src)] {
				t.Errorf("the build copies %s; Dockerfile.dockerignore does not admit it (!%s)", src, src)
			}
		}
	}
}

func TestStepsRefuseWhatCannotBeReplayed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, dockerfile, want string
	}{
		{"ADD", "FROM x AS build\nWORKDIR /src\nADD a a\nRUN true\n", "ADD cannot be replayed"},
		{"renaming COPY", "FROM x AS build\nWORKDIR /src\nCOPY pkg/ lib/\nRUN true\n", "the destination must repeat the source path"},
		{"COPY before WORKDIR", "FROM x AS build\nCOPY pkg/ pkg/\nWORKDIR /src\nRUN true\n", "after the first WORKDIR"},
		{"COPY from a stage", "FROM x AS a\nFROM x AS build\nWORKDIR /src\nCOPY --from=a /o o\nRUN true\n", "only plain copies"},
		{"exec form RUN", "FROM x AS build\nWORKDIR /src\nRUN [\"go\", \"build\"]\n", "only shell-form RUN"},
		{"RUN outside the context", "FROM x AS build\nWORKDIR /src\nWORKDIR /tmp\nRUN true\n", "outside the mirrored context"},
		{"no RUN", "FROM x AS build\nWORKDIR /src\n", "has no RUN line"},
		{"no such stage", "FROM x AS other\nRUN true\n", `no stage "build"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := Parse([]byte(tc.dockerfile))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.Steps("build", nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseRejectsWhatDockerBuildRejects(t *testing.T) {
	t.Parallel()
	for _, df := range []string{
		"FROM x\nRUNN true\n",    // unknown instruction
		"FROM x\nCOPY onlyone\n", // COPY needs a source and a destination
		"RUN true\n",             // no FROM
	} {
		if _, err := Parse([]byte(df)); err == nil {
			t.Errorf("Parse(%q): got no error; want one", df)
		}
	}
}

func TestArgsFollowDockerBuildRules(t *testing.T) {
	t.Parallel()
	f, err := Parse([]byte("ARG G=global\nARG H=h\nFROM x AS build\nARG G\nARG A=a-${G}\nARG B=b\nARG C\nWORKDIR /src/${A}\nENV E=${B}-env\nRUN echo\n"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := f.Steps("build", map[string]string{"B": "given", "H": "unseen"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"G": "global", "A": "a-global", "B": "given", "E": "given-env"}
	got := steps[0].Env
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q; want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"C", "H"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s is set (%q); want it unset (no value / not declared in the stage)", k, got[k])
		}
	}
	if steps[0].Dir != "" {
		t.Errorf("Dir = %q; want the context root", steps[0].Dir)
	}
}

// TestReplayRunsTheLinesInTheMirroredContext replays a small Dockerfile into a temporary context
// and checks that the lines ran in the mapped WORKDIR with the build arguments exported.
func TestReplayRunsTheLinesInTheMirroredContext(t *testing.T) {
	t.Parallel()
	ctxDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ctxDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := Parse([]byte("FROM x AS build\nARG NAME=default\nWORKDIR /src\nCOPY sub/ sub/\n" +
		"RUN cd sub && \\\n    echo \"${NAME}\" > out.txt\nWORKDIR /src/sub\nRUN pwd > where.txt\n"))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := f.Replay(context.Background(), "build", ctxDir, map[string]string{"NAME": "given"}, &log); err != nil {
		t.Fatalf("Replay: %v (output %q)", err, log.String())
	}
	got, err := os.ReadFile(filepath.Join(ctxDir, "sub", "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "given\n" {
		t.Errorf("out.txt = %q; want %q", got, "given\n")
	}
	where, err := os.ReadFile(filepath.Join(ctxDir, "sub", "where.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantDir, err := filepath.EvalSymlinks(filepath.Join(ctxDir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(where)) != wantDir {
		t.Errorf("second RUN ran in %q; want %q", strings.TrimSpace(string(where)), wantDir)
	}
	failing, err := Parse([]byte("FROM x AS build\nWORKDIR /src\nRUN exit 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := failing.Replay(context.Background(), "build", ctxDir, nil, &log); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Replay of a failing line: got %v; want exit status 3", err)
	}
}
