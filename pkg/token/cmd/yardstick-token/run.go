package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/yardstick-dev/yardstick/pkg/token"
)

const usage = `usage:
  yardstick-token hash [-secret-file FILE]   print the argon2id hash of a secret read from FILE or stdin
  yardstick-token keygen -dir DIR            write a new signing key DIR/<kid>.pem (mode 0600), print the kid
  yardstick-token client -id ID -services S[,S] -permissions P[,P]
                                             print a clients file entry; its new secret goes to stderr, once
                                             (256 random bits, so its hash is the fast $sha256$ one)
The secret is never taken from the command line, where shell history and ps would keep it.
`

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// maxSecretInput bounds what hash reads: a secret is one short line.
const maxSecretInput = 4 << 10

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmds := map[string]func([]string, io.Reader, io.Writer, io.Writer) error{
		"hash": hashCmd, "keygen": keygenCmd, "client": clientCmd,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		if args[0] == "-h" || args[0] == "-help" || args[0] == "help" {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "yardstick-token: unknown command %q\n%s", args[0], usage)
		return exitUsage
	}
	err := cmd(args[1:], stdin, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "yardstick-token %s: %v\n%s", args[0], err, usage)
		return exitUsage
	}
	fmt.Fprintf(stderr, "yardstick-token %s: %v\n", args[0], err)
	return exitError
}

var errUsage = errors.New("usage")

// parse parses flags and refuses positional arguments (a secret typed there would leak).
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments (secrets are read from stdin or -secret-file, never from the command line)", errUsage)
	}
	return nil
}

func hashCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hash", flag.ContinueOnError)
	file := fs.String("secret-file", "", "read the secret from this file instead of stdin")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	in := stdin
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	secret, err := readSecret(in)
	if err != nil {
		return err
	}
	h, err := token.HashSecret(secret)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, h)
	return err
}

// readSecret reads one line; a final newline (LF or CRLF) is not part of the secret.
func readSecret(r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxSecretInput+1))
	if err != nil {
		return "", fmt.Errorf("read secret: %w", err)
	}
	if len(data) > maxSecretInput {
		return "", fmt.Errorf("read secret: longer than %d bytes", maxSecretInput)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	switch {
	case s == "":
		return "", errors.New("read secret: the secret is empty")
	case strings.ContainsAny(s, "\r\n"):
		return "", errors.New("read secret: the secret must be one line")
	}
	return s, nil
}

func keygenCmd(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	dir := fs.String("dir", "", "keys directory to write <kid>.pem into (created if missing)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("%w: -dir is required", errUsage)
	}
	kid, pemBytes, err := token.GenerateKey()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(*dir, kid+".pem")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(pemBytes); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, kid)
	return err
}

func clientCmd(args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	id := fs.String("id", "", "client id")
	services := fs.String("services", "", "comma-separated services: scoring, forecast")
	perms := fs.String("permissions", "", "comma-separated permissions, e.g. score:standard,forecast:reading or *")
	programs := fs.String("programs", "", "comma-separated content programs the client sees besides shared content, or *; empty: every program")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	// The tool made the secret (256 random bits), so it gets the fast hash: a login costs a
	// microsecond instead of an argon2 run.
	secret, h, err := token.GenerateSecret()
	if err != nil {
		return err
	}
	entry, err := token.ClientEntry(*id, h, list(*services), list(*perms), list(*programs))
	if err != nil {
		return err
	}
	if _, err := stdout.Write(entry); err != nil {
		return err
	}
	w := bufio.NewWriter(stderr)
	fmt.Fprintf(w, "secret of client %q (shown once; give it to the client over a safe channel):\n%s\n", *id, secret)
	return w.Flush()
}

// list splits a comma-separated flag value; empty input gives an empty list.
func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
