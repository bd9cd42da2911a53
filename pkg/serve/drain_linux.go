package serve

import (
	"net"
	"syscall"
)

// narrowBacklog shortens the listening socket's accept queue to one connection (listen(2)
// again with a backlog of 0: Linux queues one, and while one waits it drops every new SYN).
// The drain then plugs that one place with a connection of its own (plugQueue), so that nothing
// of a client's can be queued when the socket closes, and be reset with its request sent. A
// client whose SYN is dropped sends it again a second later and finds the port closed: refused,
// its request never sent, which every client may retry. It reports whether it could.
func narrowBacklog(l net.Listener) bool {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var lerr error
	if err := raw.Control(func(fd uintptr) { lerr = syscall.Listen(int(fd), 0) }); err != nil {
		return false
	}
	return lerr == nil
}
