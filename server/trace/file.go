package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// appendTrace appends one trace as Triton's tracer.cc writes it: an object naming the trace (id,
// model_name, model_version, request_id if any, parent_id if any), then one object per timestamp,
// {"id":N,"timestamps":[{"name":...,"ns":...}]}, in the order they were taken. Triton writes the
// naming object when the core reports REQUEST_START, after the front end's receive timestamps;
// so does this, or first if the trace has no REQUEST_START.
func appendTrace(b []byte, t *Trace) []byte {
	id := strconv.AppendUint(nil, t.ID, 10)
	head := func(b []byte) []byte {
		b = append(b, `{"id":`...)
		b = append(b, id...)
		b = append(b, `,"model_name":`...)
		b = appendString(b, t.Model)
		b = append(b, `,"model_version":`...)
		b = strconv.AppendInt(b, t.Version, 10)
		if t.RequestID != "" {
			b = append(b, `,"request_id":`...)
			b = appendString(b, t.RequestID)
		}
		if t.ParentID != 0 {
			b = append(b, `,"parent_id":`...)
			b = strconv.AppendUint(b, t.ParentID, 10)
		}
		return append(b, '}')
	}
	headAt := 0
	for i, ts := range t.Timestamps {
		if ts.Name == RequestStart {
			headAt = i
			break
		}
	}
	for i, ts := range t.Timestamps {
		if i == headAt {
			b = append(head(b), ',')
		}
		b = append(b, `{"id":`...)
		b = append(b, id...)
		b = append(b, `,"timestamps":[{"name":`...)
		b = appendString(b, ts.Name)
		b = append(b, `,"ns":`...)
		b = strconv.AppendInt(b, ts.Ns, 10)
		b = append(b, `}]},`...)
	}
	if len(t.Timestamps) == 0 {
		return head(b)
	}
	return b[:len(b)-1]
}

// appendString appends s as a JSON string. Triton writes names and ids unescaped; a quote in a
// request id would break its file, so this escapes.
func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil {
		return append(b, `""`...)
	}
	return append(b, q...)
}

// Write writes traces to w as one trace file: a JSON array in Triton's format.
func Write(w io.Writer, traces []Trace) error {
	b := []byte{'['}
	for i := range traces {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTrace(b, &traces[i])
	}
	b = append(b, ']')
	_, err := w.Write(b)
	return err
}

// traceFile is one trace file, Triton's TraceFile: the file itself, created on its first write,
// and the indexed files <name>.0, <name>.1, ... that a log frequency writes.
//
// Triton writes "[" and the first traces when it opens the file, more traces after a comma, and
// the closing "]" when the server stops, so the file is valid JSON only then. This one rewrites
// the closing bracket after every write instead (each write goes where the last "]" was and ends
// with a new one), so that the file is always a complete array and may be read while the server
// runs, after a Flush; the file at the end is the same.
type traceFile struct {
	name string

	mu sync.Mutex
	f  *os.File
	// size is the file's length; written is set once it was created, so that a write after
	// close appends to what is there rather than starting the file again.
	size    int64
	written bool
	// index is the next indexed file's number.
	index int
	err   error
}

// save writes traces (JSON objects joined by commas): to the next indexed file, or to the file.
func (f *traceFile) save(data []byte, indexed bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if indexed {
		name := f.name + "." + strconv.Itoa(f.index)
		f.index++
		err = os.WriteFile(name, append(append([]byte{'['}, data...), ']'), 0o644)
	} else {
		err = f.appendLocked(data)
	}
	if err != nil && f.err == nil {
		f.err = err
	}
	return err
}

func (f *traceFile) appendLocked(data []byte) error {
	if f.f == nil {
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if f.written {
			flags = os.O_RDWR
		}
		fh, err := os.OpenFile(f.name, flags, 0o644)
		if err != nil {
			return err
		}
		f.f = fh
		if f.written {
			st, err := fh.Stat()
			if err != nil {
				return err
			}
			f.size = st.Size()
		} else {
			f.size = 0
		}
	}
	var b []byte
	at := f.size - 1
	if f.size < 2 {
		// Empty (new) or not an array we wrote: start one.
		b, at = append(b, '['), 0
	} else {
		b = append(b, ',')
	}
	b = append(append(b, data...), ']')
	if _, err := f.f.WriteAt(b, at); err != nil {
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	f.size = at + int64(len(b))
	f.written = true
	return nil
}

// close closes the file; a later write opens it again and appends.
func (f *traceFile) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

// takeErr returns the first write error since the last call, and forgets it.
func (f *traceFile) takeErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.err
	f.err = nil
	if err != nil {
		return fmt.Errorf("trace file %s: %w", f.name, err)
	}
	return nil
}
