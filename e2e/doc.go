// Package e2e holds the tests that run the services as built binaries, from the outside: the
// Go clients generated from the OpenAPI documents (client/), the browser test of /docs
// (browser/, `make browser-test`) and the check that the documents' limits are the services'.
// It is a module of its own so that the generated clients' runtime and the browser driver are
// dependencies of nothing that ships.
package e2e
