package serve

import (
	"net"
	"syscall"
)

// narrowBacklog shortens the listening socket's accept queue to the one place plugQueue fills
// (listen(2) again with a backlog of 0: Linux queues one, and while one waits it drops every new
// SYN). A client whose SYN is dropped sends it again a second later and finds the port closed:
// refused, its request never sent, which every client may retry. It reports whether it could.
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
