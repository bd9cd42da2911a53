package serve

import (
	"net"
	"sync"
	"testing"
	"time"
)

// TestStopAcceptingTakesTheQueue: the connections the kernel has accepted when the listener stops
// (here every one, as nothing calls Accept before the stop begins) come out of Accept: none is
// reset by the close. Each client reads the byte its connection's server side writes.
func TestStopAcceptingTakesTheQueue(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := newDrainListener(l)
	const queued = 5
	clients := make([]net.Conn, queued)
	for i := range clients {
		if clients[i], err = net.Dial("tcp", l.Addr().String()); err != nil {
			t.Fatal(err)
		}
		defer clients[i].Close()
	}
	stopped := make(chan struct{})
	go func() { d.stopAccepting(acceptDrainWait); close(stopped) }()
	var mu sync.Mutex
	var served []net.Conn
	acceptDone := make(chan struct{})
	go func() { // as http.Server does: Accept until it fails
		defer close(acceptDone)
		for {
			c, err := d.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("!"))
			mu.Lock()
			served = append(served, c)
			mu.Unlock()
		}
	}()
	<-stopped
	d.Close()
	<-acceptDone
	defer func() {
		for _, c := range served {
			c.Close()
		}
	}()
	for i, c := range clients {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b := make([]byte, 1)
		if n, err := c.Read(b); n != 1 || b[0] != '!' {
			t.Errorf("client %d: got %q, %v; want the server's \"!\" (the connection was accepted, not reset)", i, b[:n], err)
		}
	}
	// One more may come out: plugQueue's own connection, when its dial timed out on a loaded
	// machine after the kernel had queued it (closed by its dialer: the server reads EOF).
	if len(served) < queued || len(served) > queued+1 {
		t.Errorf("got %d connections out of Accept; want the %d clients' (and perhaps the plug's)", len(served), queued)
	}
}
