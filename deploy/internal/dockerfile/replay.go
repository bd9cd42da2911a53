package dockerfile

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
)

// Step is one RUN line of a stage as the replay runs it.
type Step struct {
	// Dir is the stage's WORKDIR when the line runs, relative to the mirrored build context.
	Dir string
	// Shell is the command line, verbatim, for /bin/sh -c.
	Shell string
	// Env holds the stage's ARG and ENV values, which docker build exports to RUN lines.
	Env map[string]string
}

// Steps lists the RUN lines of a stage with the directory and variables each runs with. It fails
// on any instruction the replay cannot reproduce faithfully on the host.
func (f *File) Steps(stageName string, buildArgs map[string]string) ([]Step, error) {
	st, err := f.Stage(stageName)
	if err != nil {
		return nil, err
	}
	args, err := f.Args(st, buildArgs)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range args {
		env[k] = v
	}
	var steps []Step
	root := "" // the first WORKDIR: where the build context is mirrored
	dir := "/"
	for _, cmd := range st.Commands {
		switch c := cmd.(type) {
		case *instructions.ArgCommand:
			// resolved above
		case *instructions.EnvCommand:
			for _, kv := range c.Env {
				v, err := f.Expand(kv.Value, env)
				if err != nil {
					return nil, err
				}
				env[kv.Key] = v
			}
		case *instructions.WorkdirCommand:
			p, err := f.Expand(c.Path, env)
			if err != nil {
				return nil, err
			}
			if !path.IsAbs(p) {
				p = path.Join(dir, p)
			}
			dir = path.Clean(p)
			if root == "" {
				root = dir
			}
		case *instructions.CopyCommand:
			if err := mirrors(c, root, dir); err != nil {
				return nil, fmt.Errorf("stage %s: %w", stageName, err)
			}
		case *instructions.RunCommand:
			if !c.PrependShell || len(c.Files) > 0 {
				return nil, fmt.Errorf("stage %s: RUN %v: only shell-form RUN lines without heredocs can be replayed", stageName, c.CmdLine)
			}
			rel, ok := strings.CutPrefix(dir, root)
			if root == "" || !ok || rel != "" && !strings.HasPrefix(rel, "/") {
				return nil, fmt.Errorf("stage %s: RUN in %s, outside the mirrored context %q", stageName, dir, root)
			}
			e := make(map[string]string, len(env))
			for k, v := range env {
				e[k] = v
			}
			steps = append(steps, Step{Dir: strings.TrimPrefix(rel, "/"), Shell: strings.Join(c.CmdLine, " "), Env: e})
		default:
			return nil, fmt.Errorf("stage %s: %s cannot be replayed on the host", stageName, cmd.Name())
		}
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("stage %s has no RUN line", stageName)
	}
	return steps, nil
}

// mirrors wants a COPY from the build context that keeps every path: source dir/ to dest dir/
// under the mirrored root, so that the replay may run in the repository itself.
func mirrors(c *instructions.CopyCommand, root, dir string) error {
	if c.From != "" || c.Parents || len(c.SourceContents) > 0 || len(c.ExcludePatterns) > 0 {
		return fmt.Errorf("COPY %v: only plain copies from the build context can be replayed", c.SourcePaths)
	}
	if root == "" || dir != root {
		return fmt.Errorf("COPY %v: copies must come after the first WORKDIR and into it", c.SourcePaths)
	}
	for _, src := range c.SourcePaths {
		if path.Clean(src) != path.Clean(c.DestPath) || path.IsAbs(src) || strings.HasPrefix(path.Clean(src), "..") {
			return fmt.Errorf("COPY %s %s: the destination must repeat the source path", src, c.DestPath)
		}
	}
	return nil
}

// Replay runs the RUN lines of a stage on the host with /bin/sh -c, each in its WORKDIR mapped
// onto contextDir (the repository root), with the host environment plus the stage's ARG and ENV
// values. Output goes to out.
func (f *File) Replay(ctx context.Context, stage, contextDir string, buildArgs map[string]string, out io.Writer) error {
	steps, err := f.Steps(stage, buildArgs)
	if err != nil {
		return err
	}
	for _, s := range steps {
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", s.Shell)
		cmd.Dir = filepath.Join(contextDir, filepath.FromSlash(s.Dir))
		cmd.Env = os.Environ()
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("replay stage %s: RUN %s (in %s): %w", stage, s.Shell, cmd.Dir, err)
		}
	}
	return nil
}
