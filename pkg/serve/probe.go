package serve

import (
	"net"

	"github.com/yardstick-dev/yardstick/pkg/serve/internal/grpcguard"
)

// ProbeOn has Serve also serve probes on lis (Run does it for YARDSTICK_PROBE_ADDR), a gRPC
// health server of their own with tiny limits (grpcguard.NewProbeServer); call it before Serve.
func (s *Server) ProbeOn(lis net.Listener) {
	s.probeLis = lis
	s.probe = grpcguard.NewProbeServer(s.health)
}
