package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"inferperf/load"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// base is a fixed clock: the golden file's timestamps are exact.
var base = time.Unix(1741134590, 0)

func at(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Record(int, *load.Result) { c.mu.Lock(); c.n++; c.mu.Unlock() }

// run exports a fixed small run: a concurrency level with two windows, then a request-rate
// level with one, requests before, between and after them, and a failed one.
func run(t *testing.T, e *Exporter) *counter {
	t.Helper()
	inner := &counter{}
	s := e.Wrap(inner)
	rec := func(seq uint64, sent, done int, kind load.Kind) {
		r := &load.Result{Seq: seq, Intended: at(sent), Sent: at(sent), Done: at(done), Kind: kind}
		s.Record(0, r)
	}
	e.SetInputs([][]byte{[]byte(`{"INPUT0":[1,2]}`), []byte(`{"INPUT0":[3,4]}`)})
	rec(0, 0, 5, load.OK) // before any experiment (warm-up): dropped
	e.StartExperiment("concurrency", 4)
	rec(1, 5, 9, load.OK) // before the first edge: dropped
	e.WindowEdge(at(10))
	rec(2, 10, 20, load.OK)
	rec(3, 12, 25, load.Timeout) // failed: dropped
	e.WindowEdge(at(1010))
	rec(4, 1000, 1020, load.OK)
	e.WindowEdge(at(2010))
	e.EndExperiment()
	rec(5, 2000, 2030, load.OK) // after the level: dropped
	e.StartExperiment("request_rate", 100)
	e.WindowEdge(at(3000))
	rec(6, 3000, 3001, load.OK)
	e.WindowEdge(at(4000))
	e.EndExperiment()
	return inner
}

func TestGolden(t *testing.T) {
	var b bytes.Buffer
	e := New(&b, "0.1.0")
	inner := run(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if inner.n != 7 {
		t.Errorf("the wrapped sink got %d records, want all 7", inner.n)
	}
	var doc struct {
		Experiments []struct {
			Experiment struct {
				Mode  string
				Value float64
			}
			Requests []struct {
				Timestamp          int64
				RequestInputs      map[string]any   `json:"request_inputs"`
				ResponseTimestamps []int64          `json:"response_timestamps"`
				ResponseOutputs    []map[string]any `json:"response_outputs"`
			}
			WindowBoundaries []int64 `json:"window_boundaries"`
		}
		Version     string
		ServiceKind string `json:"service_kind"`
		Endpoint    *string
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	if len(doc.Experiments) != 2 || len(doc.Experiments[0].Requests) != 2 || len(doc.Experiments[1].Requests) != 1 ||
		len(doc.Experiments[0].WindowBoundaries) != 3 || doc.ServiceKind != "triton" || doc.Endpoint == nil || *doc.Endpoint != "" {
		t.Errorf("unexpected document: %+v", doc)
	}
	golden(t, "profile_export.json", b.Bytes())
}

func TestEmptyRunIsValid(t *testing.T) {
	var b bytes.Buffer
	e := New(&b, "v")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), `{"experiments":[],"version":"v","service_kind":"triton","endpoint":""}`+"\n"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestCreateRefusesToOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.json")
	if err := os.WriteFile(path, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Create(path, "v")
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("got %v, want an error naming %s", err, path)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Errorf("the existing file was changed: %q", b)
	}
}

func TestCreateWritesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.json")
	e, err := Create(path, "0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	run(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "profile_export.json", b)
}

// TestCreateIsAtomic: until Close the path holds nothing (an interrupted process leaves no half
// document, only the temporary file it removes); Close puts the whole document there, and a file
// that appeared at the path meanwhile is neither replaced nor lost.
func TestCreateIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "export.json")
	e, err := Create(path, "v")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(e.TempPath()) != dir {
		t.Errorf("TempPath %s is not beside %s (a rename across filesystems is not atomic)", e.TempPath(), path)
	}
	run(t, e)
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists before Close (%v)", path, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !json.Valid(b) {
		t.Errorf("after Close: %v, valid JSON %v", err, json.Valid(b))
	}
	if _, err := os.Lstat(e.TempPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file is left after Close (%v)", err)
	}

	other := filepath.Join(dir, "raced.json")
	e, err = Create(other, "v")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("Close over a file that appeared meanwhile: %v; want an error", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "theirs" {
		t.Errorf("the file that appeared meanwhile was replaced: %q", b)
	}
	if _, err := os.Lstat(e.TempPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file is left after a failed Close (%v)", err)
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorReported(t *testing.T) {
	e := New(failing{}, "v")
	run(t, e)
	if err := e.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("got %v, want the write error", err)
	}
}

// TestConcurrentRecords: many workers, a queue that fills, every request written once.
func TestConcurrentRecords(t *testing.T) {
	var b bytes.Buffer
	e := New(&b, "v")
	s := e.Wrap(load.SinkFunc(func(int, *load.Result) {}))
	e.StartExperiment("concurrency", 8)
	e.WindowEdge(base)
	const workers, each = 8, 5000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &load.Result{Worker: w}
			for i := range each {
				r.Seq, r.Sent, r.Done = uint64(w*each+i), at(1), at(2)
				s.Record(w, r)
			}
		}()
	}
	wg.Wait()
	e.WindowEdge(at(3))
	e.EndExperiment()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Experiments []struct{ Requests []json.RawMessage }
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if n := len(doc.Experiments[0].Requests); n != workers*each {
		t.Errorf("%d requests written, want %d", n, workers*each)
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		mode string
		v    float64
		want string
	}{{"concurrency", 4, "4"}, {"request_rate", 10, "10.0"}, {"request_rate", 2.5, "2.5"}, {"request_rate", 0, "0.0"}} {
		if got := formatValue(c.mode, c.v); got != c.want {
			t.Errorf("formatValue(%s, %g) = %s, want %s", c.mode, c.v, got, c.want)
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}
