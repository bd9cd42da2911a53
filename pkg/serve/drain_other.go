//go:build !linux

package serve

import "net"

// narrowBacklog is Linux's alone (drain_linux.go): elsewhere the listener takes what the kernel
// queued until it closes, and a connection queued in between is reset.
func narrowBacklog(net.Listener) bool { return false }
