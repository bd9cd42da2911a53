package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
)

// h2conn is a raw HTTP/2 connection to a gRPC port, written frame by frame as an attacker would:
// streams opened with HEADERS and never given their message, reset the moment they are opened, or
// carrying header lists no gRPC library sends. A reader answers the server's SETTINGS and PINGs
// (a peer that does not is cut for that alone) and records how each stream ended.
type h2conn struct {
	conn net.Conn
	fr   *http2.Framer
	bw   *bufio.Writer
	mu   sync.Mutex // writes: the attack's and the reader's acknowledgements
	enc  *hpack.Encoder
	hbuf bytes.Buffer
	next uint32 // the next stream id (odd: client-initiated)
	st   *h2stats
	done chan struct{} // closed when the server ended the connection or the deadline passed
}

// h2stats is what the server did to the streams of every connection of one attack.
type h2stats struct {
	mu      sync.Mutex
	opened  int
	ends    tally // "RST_STREAM/REFUSED_STREAM", "trailers/Unauthenticated", ...
	goaways tally // "NO_ERROR: debug data", ...
	dials   int
	// track records when each stream opened, so the time the server took to end it is known.
	track   bool
	open    map[streamKey]time.Time
	endedIn []time.Duration // open to the server's RST_STREAM or trailers, of tracked streams
	refused int             // of tracked streams: ended with REFUSED_STREAM (never accepted)
}

type streamKey struct {
	c  *h2conn
	id uint32
}

func newH2Stats(track bool) *h2stats {
	return &h2stats{ends: tally{}, goaways: tally{}, track: track, open: map[streamKey]time.Time{}}
}

// dialH2 opens a connection from the loopback address from ("" = any) to addr and sends the
// client preface. Every read and write on it ends at deadline, so no attack outlives its time.
func dialH2(ctx context.Context, from, addr string, deadline time.Time, st *h2stats) (*h2conn, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	st.mu.Lock()
	st.dials++
	st.mu.Unlock()
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	_ = conn.SetDeadline(deadline)
	c := &h2conn{conn: conn, bw: bufio.NewWriterSize(conn, 64<<10), next: 1, st: st, done: make(chan struct{})}
	c.fr = http2.NewFramer(c.bw, conn)
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = 1 << 20
	c.enc = hpack.NewEncoder(&c.hbuf)
	c.mu.Lock()
	_, err = c.bw.WriteString(http2.ClientPreface)
	if err == nil {
		err = c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0})
	}
	if err == nil {
		err = c.bw.Flush()
	}
	c.mu.Unlock()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("preface to %s: %w", addr, err)
	}
	go c.read()
	return c, nil
}

// grpcHeaders are a gRPC call's request headers for method; token "" sends none.
func grpcHeaders(authority, method, token string) []hpack.HeaderField {
	h := []hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: method}, {Name: ":authority", Value: authority},
		{Name: "content-type", Value: "application/grpc"}, {Name: "te", Value: "trailers"},
	}
	if token != "" {
		h = append(h, hpack.HeaderField{Name: "authorization", Value: "Bearer " + token})
	}
	return h
}

// open starts a stream with headers and no END_STREAM: the call waits for a message that never
// comes. reset follows it with RST_STREAM(CANCEL) at once (the rapid reset). Frames are buffered:
// flush sends them.
func (c *h2conn) open(headers []hpack.HeaderField, reset bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hbuf.Reset()
	for _, f := range headers {
		if err := c.enc.WriteField(f); err != nil {
			return err
		}
	}
	id := c.next
	c.next += 2
	if c.st.track {
		c.st.mu.Lock()
		c.st.open[streamKey{c, id}] = time.Now()
		c.st.mu.Unlock()
	}
	c.st.mu.Lock()
	c.st.opened++
	c.st.mu.Unlock()
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hbuf.Bytes(), EndHeaders: true}); err != nil {
		return err
	}
	if reset {
		return c.fr.WriteRSTStream(id, http2.ErrCodeCancel)
	}
	return nil
}

// openBlock starts a stream whose header block is block, cut into frames of at most 16 KiB (the
// default SETTINGS_MAX_FRAME_SIZE): one HEADERS and as many CONTINUATIONs as it takes. block
// must be encoded by a fresh hpack encoder, as the first block of a connection. Nothing else may
// be sent on the connection until the block ends (a SETTINGS ack in between is a protocol
// error), so the reader's acknowledgements wait.
func (c *h2conn) openBlock(block []byte) error {
	const frame = 16 << 10
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.next
	c.next += 2
	c.st.mu.Lock()
	c.st.opened++
	c.st.mu.Unlock()
	for i := 0; i < len(block); i += frame {
		chunk := block[i:min(i+frame, len(block))]
		last := i+frame >= len(block)
		var err error
		if i == 0 {
			err = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: chunk, EndHeaders: last})
		} else {
			err = c.fr.WriteContinuation(id, last, chunk)
		}
		if err != nil {
			return err
		}
	}
	return c.bw.Flush()
}

func (c *h2conn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bw.Flush()
}

func (c *h2conn) close() { c.conn.Close() }

// read answers SETTINGS and PING, returns flow-control credit for what the server sends, and
// records how streams end, until the connection ends.
func (c *h2conn) read() {
	defer close(c.done)
	defer c.lost()
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				c.write(func() error { return c.fr.WriteSettingsAck() })
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				c.write(func() error { return c.fr.WritePing(true, f.Data) })
			}
		case *http2.DataFrame:
			if n := f.Length; n > 0 {
				c.write(func() error { return c.fr.WriteWindowUpdate(0, n) })
			}
			if f.StreamEnded() {
				c.ended(f.StreamID, "DATA with END_STREAM")
			}
		case *http2.RSTStreamFrame:
			// NO_ERROR follows a response the server ended (trailers) to a stream the client had
			// not half-closed: that stream is counted by its trailers already.
			if f.ErrCode != http2.ErrCodeNo {
				c.ended(f.StreamID, "RST_STREAM/"+f.ErrCode.String())
			}
		case *http2.MetaHeadersFrame:
			if f.StreamEnded() {
				outcome := "trailers/no grpc-status"
				if s := f.PseudoValue("status"); s != "" && s != "200" {
					outcome = "HTTP " + s
				}
				if v := f.Fields; v != nil {
					for _, h := range v {
						if h.Name == "grpc-status" {
							n, _ := strconv.Atoi(h.Value)
							outcome = "trailers/" + codes.Code(n).String()
						}
					}
				}
				c.ended(f.StreamID, outcome)
			}
		case *http2.GoAwayFrame:
			c.st.mu.Lock()
			c.st.goaways[f.ErrCode.String()+" "+strconv.Quote(string(f.DebugData()))]++
			c.st.mu.Unlock()
		}
	}
}

func (c *h2conn) write(f func() error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f() == nil {
		_ = c.bw.Flush()
	}
}

func (c *h2conn) ended(id uint32, outcome string) {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	c.st.ends[outcome]++
	k := streamKey{c, id}
	if t, ok := c.st.open[k]; ok {
		delete(c.st.open, k)
		if outcome == "RST_STREAM/"+http2.ErrCodeRefusedStream.String() {
			c.st.refused++
		} else {
			c.st.endedIn = append(c.st.endedIn, time.Since(t))
		}
	}
}

// lost ends the tracked streams of a connection that ended: the server (or the deadline) cut
// them all at once.
func (c *h2conn) lost() {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	for k, t := range c.st.open {
		if k.c == c {
			delete(c.st.open, k)
			c.st.ends["connection ended"]++
			c.st.endedIn = append(c.st.endedIn, time.Since(t))
		}
	}
}

// oldestOpen is how long the oldest tracked stream the server has not ended has been open, and
// how many such streams there are.
func (st *h2stats) oldestOpen() (time.Duration, int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	var oldest time.Duration
	for _, t := range st.open {
		oldest = max(oldest, time.Since(t))
	}
	return oldest, len(st.open)
}
