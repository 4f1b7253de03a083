package fault

import (
	"net"
	"sync"
)

// Conns is a listener that keeps track of its open connections by remote address, so that a
// request handler that knows only its peer's address (a gRPC handler, through peer.FromContext)
// can reset the connection under it. gRPC multiplexes every call of a client channel on one
// HTTP/2 connection, and grpc-go gives a handler no access to it; resetting the TCP connection
// is what a crashed proxy or a dying server does, and every call on it fails as a transport
// error that the client must recover from by reconnecting.
type Conns struct {
	net.Listener
	mu    sync.Mutex
	conns map[string]*tracked
}

// Track wraps ln.
func Track(ln net.Listener) *Conns {
	return &Conns{Listener: ln, conns: map[string]*tracked{}}
}

// Accept accepts and records a connection.
func (l *Conns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	t := &tracked{Conn: c, l: l, key: c.RemoteAddr().String()}
	l.mu.Lock()
	l.conns[t.key] = t
	l.mu.Unlock()
	return t, nil
}

// Reset closes the connection from remote with a TCP RST instead of an orderly FIN, as a
// crashed peer does. It reports false if no open connection comes from remote.
func (l *Conns) Reset(remote net.Addr) bool {
	if remote == nil {
		return false
	}
	l.mu.Lock()
	t := l.conns[remote.String()]
	l.mu.Unlock()
	if t == nil {
		return false
	}
	Abort(t)
	return true
}

// Open is the number of open connections.
func (l *Conns) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Abort closes c with a TCP RST: with SO_LINGER set to 0, close discards unsent data and
// resets the connection. A connection that is not TCP (or wraps one it does not expose) is
// simply closed.
func Abort(c net.Conn) {
	type netConner interface{ NetConn() net.Conn } // *tls.Conn, tracked
	inner := c
	for {
		nc, ok := inner.(netConner)
		if !ok {
			break
		}
		inner = nc.NetConn()
	}
	if tc, ok := inner.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close() // the outermost, so that every wrapper knows it is closed
}

// tracked is an accepted connection that leaves the table when it closes.
type tracked struct {
	net.Conn
	l    *Conns
	key  string
	once sync.Once
}

func (t *tracked) Close() error {
	t.once.Do(func() {
		t.l.mu.Lock()
		if t.l.conns[t.key] == t {
			delete(t.l.conns, t.key)
		}
		t.l.mu.Unlock()
	})
	return t.Conn.Close()
}

// NetConn returns the accepted connection, so that Abort can reach the TCP connection.
func (t *tracked) NetConn() net.Conn { return t.Conn }
