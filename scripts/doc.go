// Package scripts holds the tests of the repository's shell scripts (scripts/*.sh and the make
// targets behind them): `make run` starts, refuses busy ports and leaves nothing behind however it
// is stopped; `make docs`/`make check-docs` leave no process behind. Its command checklinks is
// `make check-links`. Standard library only.
package scripts
