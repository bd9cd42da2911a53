// Command prettyjson indents the JSON on its stdin by two spaces, keeping every value as written
// (numbers are not reformatted, keys not reordered). scripts/examples.sh uses it for the responses
// it writes into docs/examples.md, so that script needs Go, curl and sed, not python3 or jq.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "prettyjson:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	raw, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	var b bytes.Buffer
	if err := indent(&b, raw); err != nil {
		return err
	}
	_, err = out.Write(b.Bytes())
	return err
}
