// Command yardstick-token is the operator tool of pkg/token: it hashes client secrets, makes
// signing keys and writes clients file entries. See pkg/token/README.md.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
