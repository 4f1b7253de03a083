// Package export writes perf_analyzer's profile export (--profile-export-file): every request of
// every measured level, with its send and response timestamps, in perf_analyzer's JSON schema.
//
// The file is streamed: an Exporter wraps the run's load.Sink, and each finished request goes
// through a bounded channel to one writer goroutine, which appends it to the file through a
// buffered writer. Nothing per request is kept in memory; only the current experiment's window
// edges are.
//
// When the channel is full, Record blocks until the writer catches up: perf_analyzer never drops a
// request from its export, and neither does this one. The channel holds QueueLen requests, so a
// brief disk stall does not reach the workers; a disk slower than the request rate eventually
// slows the load, which the run's figures then show.
//
// Differences from perf_analyzer, which keeps every request's tensors: request_inputs are the
// input values of the step the request sent (request i sends step i mod the number of steps, as
// the profiler does), encoded once per step; response_outputs hold one empty object per response,
// since responses are not decoded on the hot path. sequence_id is never written (no sequence
// models). Only successful requests are written.
package export

import (
	"bufio"
	"errors"
	"fmt"
	"inferperf/internal/tempfile"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"inferperf/load"
)

// QueueLen is how many finished requests may wait for the writer before Record blocks.
const QueueLen = 1 << 14

type evKind uint8

const (
	evRecord evKind = iota
	evStart
	evEdge
	evEnd
)

// event is one message to the writer: a finished request or a profiler hook.
type event struct {
	kind       evKind
	seq        uint64
	sent, done int64 // ns since the Unix epoch
	mode       string
	value      float64
	ack        chan struct{} // evEnd only, when the caller waits
}

// Exporter streams a profile export. Record, via the Sink returned by Wrap, may be called from
// any number of workers; the hooks (StartExperiment, WindowEdge, EndExperiment) and Close from one
// controlling goroutine.
type Exporter struct {
	ch      chan event
	done    chan struct{}
	version string

	mu     sync.Mutex
	inputs [][]byte // JSON object per input step; nil: {}
	err    error    // the first write error
	closed bool

	// tmpPath and path are set by Create: the export is written to tmpPath and put in place at
	// path by Close, so that the path never holds half a document.
	tmpPath, path string

	// Writer state, owned by the writer goroutine.
	w          *bufio.Writer
	f          io.Closer
	nExp       int
	active     bool
	nReq       int
	first      int64 // the experiment's first window edge, 0 until known
	edges      []int64
	inputsSnap [][]byte
}

// Create starts an export to the file path, refusing to overwrite one that exists (as
// perf_analyzer does), and starts the writer. version is written as the export's "version".
// The document streams to a temporary file beside path (TempPath) that Close links into place
// whole, so that an interrupted process leaves either no file or a complete one.
func Create(path, version string) (*Exporter, error) {
	if _, err := os.Lstat(path); err == nil {
		return nil, existsError(path)
	}
	f, err := tempfile.Create(filepath.Dir(path), ".inferperf-export-")
	if err != nil {
		return nil, fmt.Errorf("creating the profile export file %s: %w", path, err)
	}
	e := New(f, version)
	e.tmpPath, e.path = f.Name(), path
	return e, nil
}

func existsError(path string) error {
	return fmt.Errorf("the profile export file %s already exists: choose another name or remove it", path)
}

// TempPath is the temporary file Create streams to until Close ("" for New): a process that
// exits without Close should remove it.
func (e *Exporter) TempPath() string { return e.tmpPath }

// place puts the finished temporary file at path without replacing a file that appeared there
// meanwhile: a hard link fails if path exists; where links are not supported, a rename after a
// last check.
func (e *Exporter) place() error {
	defer os.Remove(e.tmpPath)
	err := os.Link(e.tmpPath, e.path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return existsError(e.path)
	}
	if _, serr := os.Lstat(e.path); serr == nil {
		return existsError(e.path)
	}
	if err := os.Rename(e.tmpPath, e.path); err != nil {
		return fmt.Errorf("writing the profile export file %s: %w", e.path, err)
	}
	return nil
}

// New streams an export to w (closed by Close if it is an io.Closer).
func New(w io.Writer, version string) *Exporter {
	e := &Exporter{ch: make(chan event, QueueLen), done: make(chan struct{}), version: version, w: bufio.NewWriterSize(w, 1<<16)}
	if c, ok := w.(io.Closer); ok {
		e.f = c
	}
	e.w.WriteString(`{"experiments":[`)
	go e.run()
	return e
}

// SetInputs gives the request_inputs of each input step, each a JSON object (see InputsJSON).
// Requests record step Seq mod len(steps).
func (e *Exporter) SetInputs(steps [][]byte) {
	e.mu.Lock()
	e.inputs = steps
	e.mu.Unlock()
}

// Wrap returns a Sink that records into inner and then exports the request.
func (e *Exporter) Wrap(inner load.Sink) load.Sink { return &sink{e: e, inner: inner} }

type sink struct {
	e     *Exporter
	inner load.Sink
}

func (s *sink) Record(worker int, r *load.Result) {
	s.inner.Record(worker, r)
	if r.Kind != load.OK || r.Err != nil {
		return
	}
	s.e.ch <- event{kind: evRecord, seq: r.Seq, sent: r.Sent.UnixNano(), done: r.Done.UnixNano()}
}

// StartExperiment begins a level: "concurrency" (value a whole number) or "request_rate".
// Requests are written from its first WindowEdge on.
func (e *Exporter) StartExperiment(mode string, value float64) {
	e.ch <- event{kind: evStart, mode: mode, value: value}
}

// WindowEdge records a window boundary: the start of the first window, then each window's end.
func (e *Exporter) WindowEdge(t time.Time) { e.ch <- event{kind: evEdge, sent: t.UnixNano()} }

// EndExperiment closes the level: requests recorded until the next StartExperiment are dropped,
// as perf_analyzer drops those completing after the last window.
func (e *Exporter) EndExperiment() { e.ch <- event{kind: evEnd} }

// Close finishes the document, flushes and closes the file, and returns the first write error.
// Records must have stopped.
func (e *Exporter) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return e.err
	}
	e.closed = true
	e.mu.Unlock()
	close(e.ch)
	<-e.done
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tmpPath != "" {
		if e.err != nil {
			os.Remove(e.tmpPath)
			return fmt.Errorf("writing the profile export file %s: %w", e.path, e.err)
		}
		e.err = e.place()
	}
	return e.err
}

func (e *Exporter) run() {
	defer close(e.done)
	for ev := range e.ch {
		switch ev.kind {
		case evRecord:
			if e.active && e.first != 0 && ev.done >= e.first {
				e.writeRequest(ev)
			}
		case evStart:
			e.endExperiment()
			e.mu.Lock()
			e.inputsSnap = e.inputs
			e.mu.Unlock()
			if e.nExp > 0 {
				e.w.WriteByte(',')
			}
			e.nExp++
			e.active, e.nReq, e.first, e.edges = true, 0, 0, e.edges[:0]
			e.w.WriteString(`{"experiment":{"mode":`)
			e.w.WriteString(strconv.Quote(ev.mode))
			e.w.WriteString(`,"value":`)
			e.w.WriteString(formatValue(ev.mode, ev.value))
			e.w.WriteString(`},"requests":[`)
		case evEdge:
			if e.active {
				if e.first == 0 {
					e.first = ev.sent
				}
				e.edges = append(e.edges, ev.sent)
			}
		case evEnd:
			e.endExperiment()
		}
	}
	e.endExperiment()
	e.w.WriteString(`],"version":`)
	e.w.WriteString(strconv.Quote(e.version))
	e.w.WriteString(`,"service_kind":"triton","endpoint":""}` + "\n")
	err := e.w.Flush()
	if e.f != nil {
		err = errors.Join(err, e.f.Close())
	}
	e.mu.Lock()
	if e.err == nil && err != nil {
		e.err = fmt.Errorf("writing the profile export: %w", err)
	}
	e.mu.Unlock()
}

func (e *Exporter) endExperiment() {
	if !e.active {
		return
	}
	e.active = false
	e.w.WriteString(`],"window_boundaries":[`)
	for i, t := range e.edges {
		if i > 0 {
			e.w.WriteByte(',')
		}
		e.w.WriteString(strconv.FormatInt(t, 10))
	}
	e.w.WriteString(`]}`)
}

func (e *Exporter) writeRequest(ev event) {
	if e.nReq > 0 {
		e.w.WriteByte(',')
	}
	e.nReq++
	var buf [24]byte
	e.w.WriteString(`{"timestamp":`)
	e.w.Write(strconv.AppendInt(buf[:0], ev.sent, 10))
	e.w.WriteString(`,"request_inputs":`)
	if n := len(e.inputsSnap); n > 0 {
		e.w.Write(e.inputsSnap[ev.seq%uint64(n)])
	} else {
		e.w.WriteString(`{}`)
	}
	e.w.WriteString(`,"response_timestamps":[`)
	e.w.Write(strconv.AppendInt(buf[:0], ev.done, 10))
	e.w.WriteString(`],"response_outputs":[{}]}`)
}

// formatValue writes a concurrency as an unsigned integer and a request rate as a double, as
// perf_analyzer's rapidjson writer does (10 → 10.0).
func formatValue(mode string, v float64) string {
	if mode == "concurrency" {
		return strconv.FormatUint(uint64(v), 10)
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'n' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}
