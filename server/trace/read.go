package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
)

// entry is one object of a trace file. Triton writes three kinds, all keyed by the trace id: the
// trace's identity (model_name, model_version, request_id, parent_id), its timestamps (one per
// object in Triton's files, any number here) and, at the TENSORS level, a tensor (activity,
// tensor), which Read skips.
type entry struct {
	ID           *json.Number    `json:"id"`
	ModelName    *string         `json:"model_name"`
	ModelVersion json.RawMessage `json:"model_version"`
	RequestID    *string         `json:"request_id"`
	ParentID     *json.Number    `json:"parent_id"`
	Timestamps   []struct {
		Name *string      `json:"name"`
		Ns   *json.Number `json:"ns"`
	} `json:"timestamps"`
}

// Read reads a trace file of Triton's format (a JSON array of objects) and returns its traces,
// sorted by id, each with its identity and its timestamps in file order. A trace whose identity
// the file does not hold has Version -1.
func Read(r io.Reader) ([]Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var entries []entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("trace file: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trace file: data after the JSON array")
	}
	byID := map[uint64]*Trace{}
	var ids []uint64
	for i, e := range entries {
		if e.ID == nil {
			return nil, fmt.Errorf("trace file: object %d has no id", i)
		}
		id, err := strconv.ParseUint(e.ID.String(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("trace file: object %d: id %s is not an unsigned integer", i, e.ID)
		}
		t := byID[id]
		if t == nil {
			t = &Trace{ID: id, Version: -1}
			byID[id] = t
			ids = append(ids, id)
		}
		if e.ModelName != nil {
			t.Model = *e.ModelName
		}
		if len(e.ModelVersion) > 0 && string(e.ModelVersion) != "null" {
			// Triton writes a number; a string of digits is taken too.
			v := string(e.ModelVersion)
			if uq, err := strconv.Unquote(v); err == nil {
				v = uq
			}
			if t.Version, err = strconv.ParseInt(v, 10, 64); err != nil {
				return nil, fmt.Errorf("trace file: trace %d: model_version %s is not an integer", id, e.ModelVersion)
			}
		}
		if e.RequestID != nil {
			t.RequestID = *e.RequestID
		}
		if e.ParentID != nil {
			if t.ParentID, err = strconv.ParseUint(e.ParentID.String(), 10, 64); err != nil {
				return nil, fmt.Errorf("trace file: trace %d: parent_id %s is not an unsigned integer", id, e.ParentID)
			}
		}
		for _, ts := range e.Timestamps {
			if ts.Name == nil || ts.Ns == nil {
				return nil, fmt.Errorf("trace file: trace %d: a timestamp lacks its name or ns", id)
			}
			ns, err := strconv.ParseInt(ts.Ns.String(), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("trace file: trace %d: timestamp %s: ns %s is not an integer", id, *ts.Name, ts.Ns)
			}
			t.Timestamps = append(t.Timestamps, Timestamp{*ts.Name, ns})
		}
	}
	slices.Sort(ids)
	out := make([]Trace, len(ids))
	for i, id := range ids {
		out[i] = *byID[id]
	}
	return out, nil
}

// ReadFile reads one trace file (see Read).
func ReadFile(path string) ([]Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	traces, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return traces, nil
}

// ReadFiles reads every file a trace setting with this trace_file writes: the file itself and the
// indexed files path.0, path.1, ... of a log frequency (up to the first missing index), and
// returns their traces together, sorted by id. A missing file is no error, as long as one exists.
func ReadFiles(path string) ([]Trace, error) {
	var all []Trace
	found := false
	for i := -1; ; i++ {
		name := path
		if i >= 0 {
			name = path + "." + strconv.Itoa(i)
		}
		traces, err := ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			if i >= 0 {
				break
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		all = append(all, traces...)
	}
	if !found {
		return nil, fmt.Errorf("no trace file at %s or %s.0: %w", path, path, fs.ErrNotExist)
	}
	slices.SortStableFunc(all, func(a, b Trace) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return all, nil
}
