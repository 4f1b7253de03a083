package httpclient

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"inferperf/client"
	"inferperf/kserve"
)

// TestWire checks what Prepare and Infer put on the wire (§3.8, §3.9) against a server that
// records the request and answers a canned simple response, compressed as asked.
func TestWire(t *testing.T) {
	req := simpleRequest()
	want := func(t *testing.T, binaryOut bool) ([]byte, []byte) {
		enc := *req
		enc.Outputs = []kserve.RequestedOutput{{Name: "OUTPUT0", Binary: binaryOut}, {Name: "OUTPUT1", Binary: binaryOut}}
		h, blobs, err := kserve.EncodeInferRequestHTTP(&enc, true)
		if err != nil {
			t.Fatal(err)
		}
		return h, bytes.Join(append([][]byte{h}, blobs...), nil)
	}
	// The canned reply: simple's outputs, binary.
	out0, out1 := make([]byte, 64), make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(out0[4*i:], uint32(i+1))
		binary.LittleEndian.PutUint32(out1[4*i:], uint32(int32(i-1)))
	}
	respHeader, respBlobs, err := kserve.EncodeInferResponseHTTP(&kserve.InferResponse{
		ModelName: "simple", ModelVersion: "1",
		Outputs: []kserve.Tensor{
			{Name: "OUTPUT0", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: out0},
			{Name: "OUTPUT1", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: out1},
		},
	}, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	respBody := bytes.Join(append([][]byte{respHeader}, respBlobs...), nil)

	for _, enc := range []string{"", "gzip", "deflate"} {
		t.Run("compression="+enc, func(t *testing.T) {
			var got *http.Request
			var gotBody []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r
				body, _ := io.ReadAll(r.Body)
				gotBody = decompress(t, r.Header.Get("Content-Encoding"), body)
				w.Header().Set("Inference-Header-Content-Length", strconv.Itoa(len(respHeader)))
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Header().Set("Content-Encoding", enc)
				w.Write(compressBody(t, enc, respBody))
			}))
			defer srv.Close()
			c := newClient(t, client.Options{URL: srv.URL, BinaryInputs: true, BinaryOutputs: true, Compression: enc,
				Headers: http.Header{"X-Test": {"a", "b"}, "Host": {"example.com"}}})
			p, err := c.Prepare(req)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.InferResponse(context.Background(), p, nil)
			if err != nil {
				t.Fatalf("InferResponse: %v", err)
			}
			checkSimple(t, resp)
			var st client.Stamps
			if err := c.Infer(context.Background(), p, &st); err != nil {
				t.Fatalf("Infer: %v", err)
			}

			header, body := want(t, true)
			checks := []struct{ what, got, want string }{
				{"method", got.Method, "POST"},
				{"path", got.URL.Path, "/v2/models/simple/infer"},
				{"Content-Type", got.Header.Get("Content-Type"), "application/octet-stream"},
				{"Inference-Header-Content-Length", got.Header.Get("Inference-Header-Content-Length"), strconv.Itoa(len(header))},
				{"Content-Encoding", got.Header.Get("Content-Encoding"), enc},
				{"Accept-Encoding", got.Header.Get("Accept-Encoding"), enc},
				{"Expect", got.Header.Get("Expect"), ""},
				{"X-Test", got.Header.Get("X-Test"), "a"},
				{"Host", got.Host, "example.com"},
				{"body", string(gotBody), string(body)},
			}
			for _, ck := range checks {
				if ck.got != ck.want {
					t.Errorf("request %s = %q; want %q", ck.what, ck.got, ck.want)
				}
			}
			if len(got.Header["X-Test"]) != 2 {
				t.Errorf("request X-Test = %q; want both values", got.Header["X-Test"])
			}
		})
	}
}

func decompress(t *testing.T, enc string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch enc {
	case "":
		return body
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(body))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(body))
	}
	if err != nil {
		t.Fatalf("%s body: %v", enc, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s body: %v", enc, err)
	}
	return out
}

func compressBody(t *testing.T, enc string, body []byte) []byte {
	t.Helper()
	out, err := compress(enc, body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMalformedResponses checks that a reply Infer cannot trust is a KindServer error.
func TestMalformedResponses(t *testing.T) {
	cases := []struct {
		name   string
		header map[string]string
		body   string
	}{
		{"header length beyond the body", map[string]string{"Inference-Header-Content-Length": "999"}, `{"outputs":[]}`},
		{"header length not a number", map[string]string{"Inference-Header-Content-Length": "x"}, `{}`},
		{"empty body", nil, ``},
		{"unknown encoding", map[string]string{"Content-Encoding": "br"}, `{}`},
		{"corrupt gzip", map[string]string{"Content-Encoding": "gzip"}, `not gzip at all`},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for k, v := range tc.header {
				w.Header().Set(k, v)
			}
			io.WriteString(w, tc.body)
		}))
		c := newClient(t, client.Options{URL: srv.URL})
		p, err := c.Prepare(simpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Infer(context.Background(), p, nil); client.KindOf(err) != client.KindServer {
			t.Errorf("%s: Infer = %v; want a KindServer error", tc.name, err)
		}
		srv.Close()
	}
}

// TestTLS checks that Options.TLS turns the client to https with that configuration.
func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"name":"tls","version":"1","extensions":[]}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	plain := "http://" + srv.Listener.Addr().String()
	c := newClient(t, client.Options{URL: plain, TLS: &tls.Config{RootCAs: pool}})
	if md, err := c.ServerMetadata(context.Background()); err != nil || md.Name != "tls" {
		t.Errorf("ServerMetadata over TLS = %+v, %v", md, err)
	}
	// Without the CA the handshake fails, as a transport error.
	c = newClient(t, client.Options{URL: plain, TLS: &tls.Config{}})
	if _, err := c.ServerMetadata(context.Background()); client.KindOf(err) != client.KindTransport {
		t.Errorf("ServerMetadata with an unknown CA = %v; want KindTransport", err)
	}
}
