package trace

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// take samples one trace and stamps it with fixed instants, as the front ends and the core would.
func take(t *testing.T, m *Manager, model string, version int64, id string, stamps ...Timestamp) *Active {
	t.Helper()
	a := m.Sample(model)
	if a == nil {
		t.Fatalf("Sample(%q) = nil; want a trace", model)
	}
	a.Identify(model, version, id)
	for _, s := range stamps {
		a.Record(s.Name, s.Ns)
	}
	return a
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFileFormat compares the trace file with Triton's format byte for byte: a JSON array; per
// trace an object naming it (written where REQUEST_START is, as Triton's tracer.cc does; the
// request id escaped, which Triton does not do) and one object per timestamp. Every Flush leaves a
// complete array behind.
func TestFileFormat(t *testing.T) {
	file := filepath.Join(t.TempDir(), "trace.json")
	m := newTestManager(t, Setting{Level: Timestamps, Rate: 1, Count: -1, File: file})
	take(t, m, "simple", 1, `r"1`, Timestamp{HTTPRecvStart, 100}, Timestamp{HTTPRecvEnd, 150},
		Timestamp{RequestStart, 200}, Timestamp{QueueStart, 210}, Timestamp{RequestEnd, 300}).Finish()
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := `{"id":1,"timestamps":[{"name":"HTTP_RECV_START","ns":100}]},` +
		`{"id":1,"timestamps":[{"name":"HTTP_RECV_END","ns":150}]},` +
		`{"id":1,"model_name":"simple","model_version":1,"request_id":"r\"1"},` +
		`{"id":1,"timestamps":[{"name":"REQUEST_START","ns":200}]},` +
		`{"id":1,"timestamps":[{"name":"QUEUE_START","ns":210}]},` +
		`{"id":1,"timestamps":[{"name":"REQUEST_END","ns":300}]}`
	if got, want := readString(t, file), "["+first+"]"; got != want {
		t.Fatalf("trace file after one trace =\n%s\nwant\n%s", got, want)
	}

	// No REQUEST_START (refused by the front end): the naming object comes first. No request id:
	// none written. A trace with no timestamp is its naming object alone.
	take(t, m, "delay", 3, "", Timestamp{GRPCWaitReadStart, 5}, Timestamp{GRPCWaitReadEnd, 6}).Finish()
	take(t, m, "delay", 3, "").Finish()
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	second := `{"id":2,"model_name":"delay","model_version":3},` +
		`{"id":2,"timestamps":[{"name":"GRPC_WAITREAD_START","ns":5}]},` +
		`{"id":2,"timestamps":[{"name":"GRPC_WAITREAD_END","ns":6}]},` +
		`{"id":3,"model_name":"delay","model_version":3}`
	if got, want := readString(t, file), "["+first+","+second+"]"; got != want {
		t.Fatalf("trace file after three traces =\n%s\nwant\n%s", got, want)
	}

	// Close writes nothing more when nothing is held, and leaves the file whole; a trace
	// finishing after Close (its request was in flight) is appended.
	late := take(t, m, "simple", 1, "", Timestamp{RequestStart, 7})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if m.Sample("simple") != nil {
		t.Error("Sample after Close returned a trace")
	}
	late.Finish()
	want := "[" + first + "," + second + `,{"id":4,"model_name":"simple","model_version":1},{"id":4,"timestamps":[{"name":"REQUEST_START","ns":7}]}]`
	if got := readString(t, file); got != want {
		t.Fatalf("trace file after a trace finished late =\n%s\nwant\n%s", got, want)
	}
}

// TestWhenWritten checks when the traces reach the disk: with log_frequency N, every N traces
// into <file>.0, <file>.1, ...; with 0, into <file> when the setting is replaced, the manager
// closed or flushed; once a trace_count is spent and its traces finished, into the next indexed
// file (Triton's tracer.cc).
func TestWhenWritten(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.json")
	exists := func(name string) bool {
		_, err := os.Stat(name)
		return err == nil
	}

	m := newTestManager(t, Setting{Level: Timestamps, Rate: 1, Count: -1, LogFrequency: 2, File: file})
	for range 5 {
		take(t, m, "m", 1, "").Finish()
	}
	if !exists(file+".0") || !exists(file+".1") || exists(file+".2") || exists(file) {
		t.Fatalf("log frequency 2, 5 traces: want %s.0 and .1 only", file)
	}
	// The fifth is held until the setting goes: replaced, it goes to the next indexed file.
	update(t, m, "", `{"log_frequency":"0"}`)
	if !exists(file + ".2") {
		t.Fatalf("log frequency 2 replaced: the held trace should be in %s.2", file)
	}
	traces, err := ReadFiles(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 5 || traces[0].ID != 1 || traces[4].ID != 5 {
		t.Fatalf("ReadFiles: %d traces %v; want ids 1 to 5", len(traces), traces)
	}
	// With log frequency 0, nothing is written until a flush.
	take(t, m, "m", 1, "").Finish()
	if exists(file) {
		t.Fatal("log frequency 0: the file was written before a flush")
	}
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if traces, err := ReadFile(file); err != nil || len(traces) != 1 || traces[0].ID != 6 {
		t.Fatalf("after Flush: %v, %v; want trace 6", traces, err)
	}

	// A spent count writes its traces once they have all finished, without a flush.
	file2 := filepath.Join(dir, "c.json")
	m2 := newTestManager(t, Setting{Level: Timestamps, Rate: 1, Count: 2, File: file2})
	a, b := take(t, m2, "m", 1, ""), take(t, m2, "m", 1, "")
	a.Finish()
	if exists(file2 + ".0") {
		t.Fatal("count spent: written before every trace finished")
	}
	b.Finish()
	if traces, err := ReadFile(file2 + ".0"); err != nil || len(traces) != 2 {
		t.Fatalf("count spent: %s.0 holds %v, %v; want both traces", file2, traces, err)
	}

	// An unwritable file is reported by Flush, not by the request.
	bad := filepath.Join(dir, "no-such-dir", "t.json")
	m3 := newTestManager(t, Setting{Level: Timestamps, Rate: 1, Count: -1, File: bad})
	take(t, m3, "m", 1, "").Finish()
	if err := m3.Flush(context.Background()); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), bad) {
		t.Errorf("Flush to %s = %v; want an error naming the file", bad, err)
	}
}

// TestFlushWaitsForTraces: Flush waits for the traces sampled and not finished, and gives up with
// ctx, writing what finished.
func TestFlushWaitsForTraces(t *testing.T) {
	file := filepath.Join(t.TempDir(), "t.json")
	m := newTestManager(t, Setting{Level: Timestamps, Rate: 1, Count: -1, File: file})
	done := take(t, m, "m", 1, "")
	done.Finish()
	pending := take(t, m, "m", 1, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Flush(ctx); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "1 traces still in flight") {
		t.Errorf("Flush with a trace in flight and ctx done = %v", err)
	}
	if traces, err := ReadFile(file); err != nil || len(traces) != 1 {
		t.Errorf("after the cut-short Flush: %v, %v; want the finished trace", traces, err)
	}
	flushed := make(chan error)
	go func() { flushed <- m.Flush(context.Background()) }()
	pending.Finish()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if traces, err := ReadFile(file); err != nil || len(traces) != 2 {
		t.Errorf("after Flush: %v, %v; want both traces", traces, err)
	}
}

// tritonExample is the example of Triton's docs/user_guide/trace.md, with its naming object.
const tritonExample = `[
  {"id": 1, "model_name": "simple", "model_version": 1},
  {"id": 1, "timestamps": [{ "name": "HTTP_RECV_START", "ns": 2356425054587444 }] },
  {"id": 1, "timestamps": [{ "name": "HTTP_RECV_END", "ns": 2356425054632308 }] },
  {"id": 1, "timestamps": [{ "name": "REQUEST_START", "ns": 2356425054785863 }] },
  {"id": 1, "timestamps": [{ "name": "QUEUE_START", "ns": 2356425054791517 }] },
  {"id": 1, "timestamps": [{ "name": "INFER_RESPONSE_COMPLETE", "ns": 2356425057587919 }] },
  {"id": 1, "timestamps": [{ "name": "COMPUTE_START", "ns": 2356425054887198 }] },
  {"id": 1, "timestamps": [{ "name": "COMPUTE_INPUT_END", "ns": 2356425057152908 }] },
  {"id": 1, "timestamps": [{ "name": "COMPUTE_OUTPUT_START", "ns": 2356425057497763 }] },
  {"id": 1, "timestamps": [{ "name": "COMPUTE_END", "ns": 2356425057540989 }] },
  {"id": 1, "timestamps": [{ "name": "REQUEST_END", "ns": 2356425057643164 }] },
  {"id": 1, "timestamps": [{ "name": "HTTP_SEND_START", "ns": 2356425057681578 }] },
  {"id": 1, "timestamps": [{ "name": "HTTP_SEND_END", "ns": 2356425057712991 }] },
  {"id": 2, "activity": "TENSOR_QUEUE_INPUT", "tensor": {"name": "input", "data": "0.1,0.1", "shape": "1,2", "dtype": "FP32"}},
  {"id": 3, "model_name": "ensemble_part", "model_version": "2", "request_id": "x", "parent_id": 2,
   "timestamps": [{"name": "REQUEST_START", "ns": 1}, {"name": "REQUEST_END", "ns": 2}]}
]`

// TestRead reads Triton's example (tensor objects skipped, several timestamps per object taken
// too), and refuses what is not a trace file.
func TestRead(t *testing.T) {
	traces, err := Read(strings.NewReader(tritonExample))
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 3 {
		t.Fatalf("Read: %d traces; want 3", len(traces))
	}
	t1 := traces[0]
	if t1.ID != 1 || t1.Model != "simple" || t1.Version != 1 || t1.RequestID != "" || len(t1.Timestamps) != 12 {
		t.Errorf("trace 1 = %+v", t1)
	}
	if ns, ok := t1.Ns(ComputeEnd); !ok || ns != 2356425057540989 {
		t.Errorf("trace 1 COMPUTE_END = %d, %v", ns, ok)
	}
	if st := t1.Stamps(); st[HTTPSendEnd]-st[HTTPRecvStart] != 2356425057712991-2356425054587444 {
		t.Errorf("trace 1 stamps = %v", st)
	}
	if _, ok := t1.Ns(GRPCSendEnd); ok {
		t.Error("trace 1 has a GRPC_SEND_END")
	}
	if t2 := traces[1]; t2.ID != 2 || t2.Version != -1 || len(t2.Timestamps) != 0 {
		t.Errorf("trace 2 (tensor only) = %+v", t2)
	}
	want3 := Trace{ID: 3, Model: "ensemble_part", Version: 2, RequestID: "x", ParentID: 2,
		Timestamps: []Timestamp{{RequestStart, 1}, {RequestEnd, 2}}}
	if !reflect.DeepEqual(traces[2], want3) {
		t.Errorf("trace 3 = %+v; want %+v", traces[2], want3)
	}

	for _, bad := range []string{``, `{}`, `[{"model_name":"x"}]`, `[{"id":-1}]`, `[{"id":1,"timestamps":[{"name":"A"}]}]`,
		`[{"id":1,"timestamps":[{"name":"A","ns":1.5}]}]`, `[{"id":1,"model_version":"v1"}]`, `[] []`, `[{"id":1}`} {
		if _, err := Read(strings.NewReader(bad)); err == nil {
			t.Errorf("Read(%q) = nil error", bad)
		}
	}
}

// TestWriteRead: what Write writes, Read reads back the same.
func TestWriteRead(t *testing.T) {
	in := []Trace{
		{ID: 1, Model: "m", Version: 1, RequestID: "a\nb", Timestamps: []Timestamp{{HTTPRecvStart, 1}, {RequestStart, 2}, {RequestEnd, 3}}},
		{ID: 7, Model: "é", Version: -1, ParentID: 1},
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("Read(Write(%+v)) = %+v", in, out)
	}
}

// FuzzRead feeds Read arbitrary bytes: it must not panic, and what it reads must survive a round
// trip through Write unchanged.
func FuzzRead(f *testing.F) {
	f.Add([]byte(tritonExample))
	f.Add([]byte(`[{"id":1,"model_name":"m","model_version":1,"request_id":"r"},{"id":1,"timestamps":[{"name":"REQUEST_START","ns":5}]}]`))
	f.Add([]byte(`[{"id":18446744073709551615,"parent_id":0,"model_version":null}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		traces, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, traces); err != nil {
			t.Fatal(err)
		}
		again, err := Read(&buf)
		if err != nil {
			t.Fatalf("Read(Write(Read(%q))) = %v\nwritten: %s", data, err, buf.Bytes())
		}
		if !reflect.DeepEqual(again, traces) && !(len(again) == 0 && len(traces) == 0) {
			t.Fatalf("round trip of %q:\n%+v\nbecame\n%+v", data, traces, again)
		}
	})
}

// TestCheckOrder: the orders of the front ends, and what CheckOrder says of a trace out of order
// or short of a timestamp.
func TestCheckOrder(t *testing.T) {
	var stamps []Timestamp
	for i, name := range HTTPOrder() {
		stamps = append(stamps, Timestamp{name, int64(100 + i/2)}) // equal pairs are in order
	}
	tr := Trace{ID: 9, Timestamps: stamps}
	if err := tr.CheckOrder(HTTPOrder()...); err != nil {
		t.Errorf("CheckOrder(HTTPOrder) = %v", err)
	}
	if err := tr.CheckOrder(GRPCOrder()...); err == nil || err.Error() != "trace 9 has no GRPC_WAITREAD_START" {
		t.Errorf("CheckOrder(GRPCOrder) of an HTTP trace = %v", err)
	}
	if err := tr.CheckOrder(ComputeEnd, ComputeStart); err == nil || err.Error() != "trace 9: COMPUTE_START at 102 is 1 ns before COMPUTE_END" {
		t.Errorf("CheckOrder(COMPUTE_END, COMPUTE_START) = %v", err)
	}
	if n := len(GRPCOrder()); n != 12 || len(HTTPOrder()) != n {
		t.Errorf("orders of %d and %d timestamps; want 12", len(HTTPOrder()), n)
	}
}
