package proc

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowestPort is where FreePorts starts looking: above the ports system services take.
const lowestPort = 10000

// FreePorts returns n distinct loopback addresses ("127.0.0.1:port") no process listened on a
// moment ago. They are chosen below the kernel's ephemeral range: a port the kernel hands out
// for port 0 may be taken, between this check and the server's listen, by any outgoing
// connection (a service once failed "address already in use" that way), while ports below the
// range are only ever taken on purpose. Every port is held until all are chosen, so no two
// coincide; should another process take one before the server listens, the server fails to
// listen, loudly.
func FreePorts(n int) ([]string, error) {
	low := ephemeralLow()
	if low <= lowestPort+1000 {
		return nil, fmt.Errorf("ephemeral ports start at %d: no room below for a server's ports", low)
	}
	var addrs []string
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	var r [2]byte
	for tries := 0; len(addrs) < n; tries++ {
		if tries == 1000 {
			return nil, fmt.Errorf("no %d free ports between %d and %d", n, lowestPort, low)
		}
		_, _ = rand.Read(r[:])
		port := lowestPort + (int(r[0])<<8|int(r[1]))%(low-lowestPort)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // in use
		}
		held = append(held, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// FreePort is FreePorts(1)'s one address.
func FreePort() (string, error) {
	addrs, err := FreePorts(1)
	if err != nil {
		return "", err
	}
	return addrs[0], nil
}

// ephemeralLow is the first port of Linux's ip_local_port_range (32768 unless set otherwise).
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				return v
			}
		}
	}
	return 32768
}
