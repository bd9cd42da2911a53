// Package dockerfile owns the check of deploy/Dockerfile without a Docker engine: it parses the
// Dockerfile with BuildKit's own parser (so a syntax error or an unknown instruction fails as
// docker build would) and replays a stage's RUN lines verbatim on the host, with the build
// arguments as environment variables and the stage's WORKDIR mapped onto the repository, so that
// the binaries the deploy tests start are built by exactly the image's build command.
//
// The replay is faithful only for stages that copy the build context path for path and then run
// shell commands; anything else (ADD, COPY --from, exec-form RUN, a COPY that renames) is refused
// rather than approximated.
package dockerfile
