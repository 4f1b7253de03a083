package httpapi_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"inferperf/server/daemon"
	"inferperf/server/fault"
	"inferperf/server/servertest"
)

const simpleJSON = `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}`

// post sends one inference request on client and returns the status and body, or the error.
func post(client *http.Client, url, body string) (int, string, error) {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestFaultHTTPInjectedErrors: an injected error is an HTTP 500 saying it was injected; a
// model's config.pbtxt parameters fault one model alone; other calls are never faulted.
func TestFaultHTTPInjectedErrors(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{
		"steady": servertest.SimpleModel("steady", nil),
		"flaky":  servertest.SimpleModel("flaky", map[string]string{fault.KeyErrorRate: "1"}),
	}})
	client := &http.Client{Timeout: 30 * time.Second}
	for range 3 {
		if code, body, err := post(client, s.HTTPURL+"/v2/models/flaky/infer", simpleJSON); err != nil || code != 500 || !strings.Contains(body, "injected fault") {
			t.Errorf("flaky: %d %s %v; want 500 saying the fault was injected", code, body, err)
		}
		if code, body, err := post(client, s.HTTPURL+"/v2/models/steady/infer", simpleJSON); err != nil || code != 200 {
			t.Errorf("steady: %d %s %v; want 200", code, body, err)
		}
	}
	if r := do(t, "GET", s.HTTPURL+"/v2/models/flaky", nil); r.status != 200 {
		t.Errorf("metadata of the faulty model = %d %s; want 200: only inference is faulted", r.status, r.body)
	}
	// The server-wide flag faults every model; a model's parameter overrides it.
	s = servertest.Start(t, servertest.Options{
		Models: map[string]string{
			"steady": servertest.SimpleModel("steady", map[string]string{fault.KeyErrorRate: "0"}),
			"flaky":  servertest.SimpleModel("flaky", nil),
		},
		Configure: func(c *daemon.Config) { c.Faults.ErrorRate = 1 },
	})
	if code, _, _ := post(client, s.HTTPURL+"/v2/models/flaky/infer", simpleJSON); code != 500 {
		t.Errorf("server-wide error rate 1: flaky answered %d; want 500", code)
	}
	if code, _, _ := post(client, s.HTTPURL+"/v2/models/steady/infer", simpleJSON); code != 200 {
		t.Errorf("model override to 0: steady answered %d; want 200", code)
	}
}

// TestFaultHTTPResetMidResponse: a reset breaks the connection in the middle of the reply; the
// client's next request opens a new connection and succeeds.
func TestFaultHTTPResetMidResponse(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{
		"steady": servertest.SimpleModel("steady", nil),
		"flaky":  servertest.SimpleModel("flaky", map[string]string{fault.KeyResetRate: "1"}),
	}})
	// The raw view: the status line and part of the body arrive, then the connection is reset.
	c, err := net.Dial("tcp", strings.TrimPrefix(s.HTTPURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a hang guard only
	fmt.Fprintf(c, "POST /v2/models/flaky/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(simpleJSON), simpleJSON)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the reply's head: %v; want the head, then a reset", err)
	}
	got, err := io.ReadAll(resp.Body)
	if err == nil || int64(len(got)) >= resp.ContentLength {
		t.Errorf("read %d of %d body bytes, error %v; want the body cut short by an error", len(got), resp.ContentLength, err)
	}
	// Through a client: an error, then a working request on a fresh connection.
	client := &http.Client{Timeout: 30 * time.Second}
	for range 3 {
		if code, _, err := post(client, s.HTTPURL+"/v2/models/flaky/infer", simpleJSON); err == nil {
			t.Errorf("flaky answered %d without a transport error", code)
		}
		if code, body, err := post(client, s.HTTPURL+"/v2/models/steady/infer", simpleJSON); err != nil || code != 200 {
			t.Errorf("steady after a reset: %d %s %v; want 200", code, body, err)
		}
	}
}

// TestFaultHTTPHangReleasedWhenClientGivesUp: a hung request holds until the client gives up;
// the server then lets it go (no request stays held).
func TestFaultHTTPHangReleasedWhenClientGivesUp(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) { c.Faults.HangRate = 1 }})
	gate := s.Daemon.Core.FaultGate()
	client := &http.Client{Timeout: 300 * time.Millisecond}
	_, _, err := post(client, s.HTTPURL+"/v2/models/simple/infer", simpleJSON)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("hung request: %v; want the client's timeout", err)
	}
	servertest.WaitFor(t, "the hung request to be released", func() bool { return gate.Held() == 0 })
}

// TestFaultHTTPSlowRead: the slow-read fault reads the body and writes the reply in small
// chunks, and the reply is still whole and right.
func TestFaultHTTPSlowRead(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) { c.Faults.SlowRead = time.Millisecond }})
	// Padded past several chunks: the reader must put the chunks back together.
	body := strings.Replace(simpleJSON, `{"inputs"`, `{"id":"`+strings.Repeat("p", 3*fault.SlowChunk)+`","inputs"`, 1)
	code, reply, err := post(&http.Client{Timeout: 30 * time.Second}, s.HTTPURL+"/v2/models/simple/infer", body)
	if err != nil || code != 200 {
		t.Fatalf("slow read: %d %s %v; want 200", code, reply, err)
	}
	var out struct {
		ID      string `json:"id"`
		Outputs []struct {
			Name string  `json:"name"`
			Data []int32 `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(reply), &out); err != nil || len(out.ID) != 3*fault.SlowChunk || len(out.Outputs) != 2 || out.Outputs[0].Data[15] != 16 {
		t.Errorf("slow reply (%d bytes) does not decode to simple's outputs: %v", len(reply), err)
	}
}

// TestFaultHTTPMalformedRequests sends malformed, truncated and oversized requests on raw
// connections: each gets an error reply (or, for a body that never comes, a closed
// connection), the server never crashes, and it serves a good request afterwards.
func TestFaultHTTPMalformedRequests(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) {
		c.MaxInputSize = 4096
		c.HTTPReadTimeout = 500 * time.Millisecond // a body that never comes ends the wait
	}})
	addr := strings.TrimPrefix(s.HTTPURL, "http://")
	header, body := simpleBinaryRequest()
	binReq := func(bodyLen int, hdrLen string, data []byte) string {
		return fmt.Sprintf("POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nInference-Header-Content-Length: %s\r\n\r\n%s", bodyLen, hdrLen, data)
	}
	jsonReq := func(b string) string {
		return fmt.Sprintf("POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(b), b)
	}
	cases := []struct {
		name   string
		raw    string
		status int // the reply's status class: 4 for 4xx
	}{
		{"bad JSON", jsonReq(`{"inputs":[{"name":`), 4},
		{"JSON not an object", jsonReq(`[1,2,3]`), 4},
		{"wrong datatype", jsonReq(strings.Replace(simpleJSON, `"INT32"`, `"FP64"`, 1)), 4},
		{"unknown datatype", jsonReq(strings.Replace(simpleJSON, `"INT32"`, `"INT33"`, 1)), 4},
		{"truncated binary body", binReq(len(body)-10, strconv.Itoa(len(header)), body[:len(body)-10]), 4},
		{"header length beyond the body", binReq(len(body), strconv.Itoa(len(body)+1), body), 4},
		{"negative header length", binReq(len(body), "-1", body), 4},
		{"header length not a number", binReq(len(body), "0x10", body), 4},
		// The body never completes: the read timeout ends the wait with an error reply.
		{"Content-Length larger than the body", binReq(len(body)+100, strconv.Itoa(len(header)), body), 4},
		{"body over --http-max-input-size", jsonReq(`{"inputs":[],"pad":"` + strings.Repeat("x", 5000) + `"}`), 4},
		{"Content-Length over the limit, body not sent", "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n{", 4},
		{"chunked garbage", "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 4},
		{"not HTTP at all", "\x16\x03\x01\x00\xa5garbage\r\n\r\n", 4},
		{"bad Content-Length", "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 4},
	}
	for _, c := range cases {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second)) // a hang guard only
		if _, err := io.WriteString(conn, c.raw); err != nil {
			t.Errorf("%s: write: %v", c.name, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		switch {
		case err != nil:
			t.Errorf("%s: %v; want a %dxx reply", c.name, err, c.status)
		case resp.StatusCode/100 != c.status:
			t.Errorf("%s: status %s; want %dxx", c.name, resp.Status, c.status)
		}
		conn.Close()
	}
	if code, body, err := post(&http.Client{Timeout: 30 * time.Second}, s.HTTPURL+"/v2/models/simple/infer", simpleJSON); err != nil || code != 200 {
		t.Errorf("a good request after the bad ones: %d %s %v; want 200", code, body, err)
	}
}
