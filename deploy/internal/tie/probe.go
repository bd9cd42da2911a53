package tie

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/yardstick-dev/yardstick/deploy/internal/manifest"
)

// errPermanent marks a probe failure that waiting cannot cure: an unknown HTTP path or method, an
// unknown gRPC health service, a port the container does not declare. Readiness stops waiting on
// it instead of spending the whole start-up budget.
var errPermanent = errors.New("will not pass by waiting")

// probeTimeout is the probe's timeoutSeconds, defaulted as the kubelet defaults it.
func probeTimeout(p *corev1.Probe) time.Duration {
	if p.TimeoutSeconds > 0 {
		return time.Duration(p.TimeoutSeconds) * time.Second
	}
	return time.Second
}

// localPort resolves a probe's port (a name or a number) to its loopback stand-in.
func localPort(c *corev1.Container, pm portMap, port intstr.IntOrString) (int, error) {
	cp, err := manifest.ContainerPort(c, port)
	if err != nil {
		return 0, fmt.Errorf("%w (%w)", err, errPermanent)
	}
	local, ok := pm[cp.ContainerPort]
	if !ok {
		return 0, fmt.Errorf("port %s has no loopback stand-in", port.String())
	}
	return local, nil
}

// runProbe runs one probe as the kubelet does and returns nil on success.
func runProbe(ctx context.Context, c *corev1.Container, pm portMap, p *corev1.Probe) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout(p))
	defer cancel()
	h := p.ProbeHandler
	switch {
	case h.HTTPGet != nil:
		return httpProbe(ctx, c, pm, h.HTTPGet)
	case h.GRPC != nil:
		return grpcProbe(ctx, c, pm, h.GRPC)
	case h.TCPSocket != nil:
		port, err := localPort(c, pm, h.TCPSocket.Port)
		if err != nil {
			return fmt.Errorf("tcpSocket: %w", err)
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return fmt.Errorf("tcpSocket %s: %w", h.TCPSocket.Port.String(), err)
		}
		return conn.Close()
	}
	return fmt.Errorf("only httpGet, grpc and tcpSocket probes are reproduced")
}

// httpProbe succeeds on a status from 200 to 399, as the kubelet's does.
func httpProbe(ctx context.Context, c *corev1.Container, pm portMap, g *corev1.HTTPGetAction) error {
	what := fmt.Sprintf("httpGet %s port %s", g.Path, g.Port.String())
	if g.Scheme != "" && g.Scheme != corev1.URISchemeHTTP {
		return fmt.Errorf("%s: scheme %s is not reproduced", what, g.Scheme)
	}
	port, err := localPort(c, pm, g.Port)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) + g.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	for _, hd := range g.HTTPHeaders {
		req.Header.Add(hd.Name, hd.Value)
	}
	req.Header.Set("User-Agent", "kube-probe/tie-check")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return fmt.Errorf("%s: got HTTP %d; want 200-399 (%w)", what, resp.StatusCode, errPermanent)
	case resp.StatusCode < 200 || resp.StatusCode >= 400:
		return fmt.Errorf("%s: got HTTP %d; want 200-399", what, resp.StatusCode)
	}
	return nil
}

// grpcProbe asks grpc.health.v1.Health/Check for the probe's service and wants SERVING, as the
// kubelet's native gRPC probe does.
func grpcProbe(ctx context.Context, c *corev1.Container, pm portMap, g *corev1.GRPCAction) error {
	service := ""
	if g.Service != nil {
		service = *g.Service
	}
	what := fmt.Sprintf("grpc port %d service %q", g.Port, service)
	port, err := localPort(c, pm, intstr.FromInt32(g.Port))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	conn, err := grpc.NewClient(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if c := status.Code(err); c == codes.NotFound || c == codes.Unimplemented {
		return fmt.Errorf("%s: %w (%w)", what, err, errPermanent)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("%s: status %s; want SERVING", what, resp.GetStatus())
	}
	return nil
}
