package dockerfile

import (
	"bytes"
	"fmt"
	"os"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"github.com/moby/buildkit/frontend/dockerfile/shell"
)

// File is a parsed Dockerfile.
type File struct {
	// Stages in file order, each with its typed instructions.
	Stages []instructions.Stage
	// MetaArgs are the ARGs declared before the first FROM.
	MetaArgs []instructions.ArgCommand
	escape   rune
}

// ParseFile reads and parses the Dockerfile at path.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read Dockerfile: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse parses a Dockerfile into stages of typed instructions.
func Parse(data []byte) (*File, error) {
	res, err := parser.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("parse Dockerfile: %w", err)
	}
	stages, metaArgs, err := instructions.Parse(res.AST, nil)
	if err != nil {
		return nil, fmt.Errorf("parse Dockerfile instructions: %w", err)
	}
	return &File{Stages: stages, MetaArgs: metaArgs, escape: res.EscapeToken}, nil
}

// Stage is the stage called name.
func (f *File) Stage(name string) (*instructions.Stage, error) {
	for i := range f.Stages {
		if f.Stages[i].Name == name {
			return &f.Stages[i], nil
		}
	}
	return nil, fmt.Errorf("the Dockerfile has no stage %q", name)
}

// Expand substitutes ${VAR} references in word as the Dockerfile's shell lexer does.
func (f *File) Expand(word string, vars map[string]string) (string, error) {
	out, _, err := shell.NewLex(f.escape).ProcessWord(word, envMap(vars))
	if err != nil {
		return "", fmt.Errorf("expand %q: %w", word, err)
	}
	return out, nil
}

// Args resolves the ARG values visible in a stage, as docker build would: each ARG the stage
// declares takes the build argument if one is given, else its own default, else the default of
// the global ARG of the same name. Build arguments the stage does not declare are not visible.
func (f *File) Args(stage *instructions.Stage, buildArgs map[string]string) (map[string]string, error) {
	global := map[string]string{}
	for _, a := range f.MetaArgs {
		for _, kv := range a.Args {
			if v, ok := buildArgs[kv.Key]; ok {
				global[kv.Key] = v
			} else if kv.Value != nil {
				v, err := f.Expand(*kv.Value, global)
				if err != nil {
					return nil, err
				}
				global[kv.Key] = v
			}
		}
	}
	vars := map[string]string{}
	for _, cmd := range stage.Commands {
		a, ok := cmd.(*instructions.ArgCommand)
		if !ok {
			continue
		}
		for _, kv := range a.Args {
			switch v, given := buildArgs[kv.Key]; {
			case given:
				vars[kv.Key] = v
			case kv.Value != nil:
				exp, err := f.Expand(*kv.Value, vars)
				if err != nil {
					return nil, err
				}
				vars[kv.Key] = exp
			default:
				if g, ok := global[kv.Key]; ok {
					vars[kv.Key] = g
				}
			}
		}
	}
	return vars, nil
}

// envMap adapts a map to the shell lexer's variable lookup.
type envMap map[string]string

func (m envMap) Get(k string) (string, bool) { v, ok := m[k]; return v, ok }

func (m envMap) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
