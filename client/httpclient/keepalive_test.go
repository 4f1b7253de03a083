package httpclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"inferperf/client"
)

// TestKeepAlive: by default every request reuses the one kept-alive connection; with
// DisableKeepAlive each opens its own (what --http-keep-alive 0 measures).
func TestKeepAlive(t *testing.T) {
	for _, c := range []struct {
		disable bool
		want    int64
	}{{false, 1}, {true, 5}} {
		var conns atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		cl, err := New(client.Options{URL: strings.TrimPrefix(srv.URL, "http://"), Connections: 1, DisableKeepAlive: c.disable})
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if _, err := cl.Live(context.Background()); err != nil {
				t.Fatalf("Live: %v", err)
			}
		}
		cl.Close()
		srv.Close()
		if got := conns.Load(); got != c.want {
			t.Errorf("DisableKeepAlive %v: 5 requests opened %d connections; want %d", c.disable, got, c.want)
		}
	}
}
