// Package tie ties the Kubernetes manifests to the binaries they run: it starts a service binary
// on loopback exactly as a rendered Deployment declares it — its env and args, its ConfigMap and
// Secret volumes laid out as the kubelet lays them out, its container ports remapped to free
// loopback ports — waits until the declared readiness probe passes, runs every declared probe the
// way the kubelet would (httpGet, native gRPC health, tcpSocket), then sends SIGTERM and wants a
// clean exit within the pod's termination grace period.
//
// Everything else is kept as declared, so a misspelt env name or value, a wrong mount path, a
// probe on the wrong path or port, or a missing file in a Secret makes the check fail the way the
// pod would fail in a cluster. What the check cannot reproduce faithfully (valueFrom fieldRef,
// $(VAR) references, envFrom, command overrides) it refuses instead of guessing.
package tie
