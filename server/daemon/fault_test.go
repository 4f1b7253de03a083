package daemon

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"inferperf/kserve/pb"
)

const simpleJSON = `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}`

func simpleGRPC() *pb.ModelInferRequest {
	raw := make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(i))
	}
	return &pb.ModelInferRequest{ModelName: "simple", Inputs: []*pb.ModelInferRequest_InferInputTensor{
		{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}}, {Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}}},
		RawInputContents: [][]byte{raw, raw}}
}

func start(t *testing.T, edit func(*Config)) *Daemon {
	t.Helper()
	d, err := Start(context.Background(), testConfig(edit))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Shutdown(context.Background()) })
	return d
}

// startErr is the error Start returns for the edited test configuration; a daemon that starts
// after all is shut down at once.
func startErr(edit func(*Config)) error {
	d, err := Start(context.Background(), testConfig(edit))
	if err == nil {
		d.Shutdown(context.Background())
	}
	return err
}

// testConfig is the configuration of these tests, edited: HTTP and gRPC on free ports, no
// metrics endpoint, no GPU metrics.
func testConfig(edit func(*Config)) Config {
	cfg := Defaults()
	cfg.HTTPPort, cfg.GRPCPort, cfg.MetricsPort = 0, 0, -1
	cfg.GPUMetrics = false
	edit(&cfg)
	return cfg
}

// waitFor polls cond, failing after a generous hang guard.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFaultHangReleasedOnShutdown: requests held by an injected hang, over HTTP and gRPC, with
// clients that never give up, do not hold the shutdown: it releases them, they fail, and no
// goroutine is left behind.
func TestFaultHangReleasedOnShutdown(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := Defaults()
	cfg.HTTPPort, cfg.GRPCPort, cfg.MetricsPort = 0, 0, -1
	cfg.GPUMetrics = false
	cfg.Faults.HangRate = 1
	d, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	httpClient := &http.Client{Transport: &http.Transport{}} // no timeout: it waits forever
	defer httpClient.CloseIdleConnections()
	cc, err := grpc.NewClient(d.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	gc := pb.NewGRPCInferenceServiceClient(cc)
	const n = 3
	// Each request reports how it ended: nil if it succeeded.
	errs := make(chan error, 2*n)
	for range n {
		go func() {
			resp, err := httpClient.Post("http://"+d.HTTPAddr+"/v2/models/simple/infer", "application/json", strings.NewReader(simpleJSON))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("HTTP %d", resp.StatusCode)
				}
			}
			errs <- err
		}()
		go func() {
			_, err := gc.ModelInfer(context.Background(), simpleGRPC())
			errs <- err
		}()
	}
	gate := d.Core.FaultGate()
	waitFor(t, "every request to hang", func() bool { return gate.Held() == 2*n })
	// A 60 s grace: were the hung requests waited for, the test would show it as a hang.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := d.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if ctx.Err() != nil {
		t.Error("Shutdown waited for the hung requests until its deadline")
	}
	for range 2 * n {
		if err := <-errs; err == nil {
			t.Error("a hung request succeeded")
		}
	}
}

// TestFaultSlowlorisTimedOut: a client that dribbles header bytes is cut off by the read-header
// timeout, while other clients are served meanwhile.
func TestFaultSlowlorisTimedOut(t *testing.T) {
	d := start(t, func(c *Config) { c.HTTPReadHeaderTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", d.HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	closed := make(chan error, 1)
	go func() {
		// One header byte every 20 ms, for at most 30 s (a hang guard): the server must
		// close the connection long before.
		head := "POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 1500)
		for i := range len(head) {
			if _, err := conn.Write([]byte{head[i]}); err != nil {
				closed <- err
				return
			}
			conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			var b [512]byte
			if _, err := conn.Read(b[:]); err != nil {
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					closed <- err // EOF, or a 408 then EOF on the next read
					return
				}
			}
		}
		closed <- nil
	}()
	// Served meanwhile.
	for range 3 {
		resp, err := http.Post("http://"+d.HTTPAddr+"/v2/models/simple/infer", "application/json", strings.NewReader(simpleJSON))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("a normal client during the slowloris: %d", resp.StatusCode)
		}
	}
	if err := <-closed; err == nil {
		t.Error("the server let the slowloris client dribble its whole header")
	}
}

// TestFaultConfigErrors: a bad fault setting stops the start with a message naming it.
func TestFaultConfigErrors(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, "m", "1"), 0o755)
	os.WriteFile(filepath.Join(repo, "m", "config.pbtxt"), []byte(`backend: "identity"
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] } ]
parameters { key: "fault_error_rate" value { string_value: "lots" } }`), 0o644)
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"bad model parameter", func(c *Config) { c.ModelRepository = repo }, `parameter "fault_error_rate": "lots" is not a fraction`},
		{"rate above 1", func(c *Config) { c.Faults.ResetRate = 2 }, "--fault-reset-rate: 2 is not a fraction"},
		{"slow read without HTTP", func(c *Config) { c.Faults.SlowRead = time.Millisecond; c.HTTPPort = -1 }, "--fault-slow-read slows HTTP requests only"},
		{"negative timeout", func(c *Config) { c.HTTPIdleTimeout = -time.Second }, "must not be negative"},
	}
	for _, tt := range tests {
		if err := startErr(tt.edit); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Start() error %v; want one containing %q", tt.name, err, tt.want)
		}
	}
}
