package inputs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"inferperf/kserve"
)

// readDir reads a directory of raw files, one per input and optionally one per output (the
// expected output), each named after its tensor, into one step.
func (l *loader) readDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--input-data %s: %w", dir, unwrapPath(err))
	}
	isTensor := func(ts []Tensor, name string) bool {
		return slices.ContainsFunc(ts, func(t Tensor) bool { return t.Name == name })
	}
	for _, e := range entries {
		if !isTensor(l.m.Inputs, e.Name()) && !isTensor(l.m.Outputs, e.Name()) {
			return fmt.Errorf("%s: the file names no input or output of model '%s' (inputs: %s; outputs: %s)",
				filepath.Join(dir, e.Name()), l.m.Name, names(l.m.Inputs), names(l.m.Outputs))
		}
	}
	s := l.newStep()
	s.where = dir
	for i := range l.ins {
		sp := &l.ins[i]
		if l.perInput[i] != nil {
			continue
		}
		path := filepath.Join(dir, sp.Name)
		content, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no file %s for input '%s' (the directory holds one raw file per input, named after it)",
				dir, strconv.Quote(sp.Name), sp.Name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, unwrapPath(err))
		}
		if s.in[i], err = decodeRaw(sp, content, path); err != nil {
			return fmt.Errorf("%s: input '%s': %w", path, sp.Name, err)
		}
	}
	for i := range l.outs {
		sp := &l.outs[i]
		path := filepath.Join(dir, sp.Name)
		content, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, unwrapPath(err))
		}
		if s.out[i], err = decodeRaw(sp, content, path); err != nil {
			return fmt.Errorf("%s: output '%s': %w", path, sp.Name, err)
		}
	}
	l.kind = kindDir
	l.streams = [][]*fileStep{{s}}
	return nil
}

// decodeRaw reads the raw file of one batch-1 tensor: packed little-endian elements, or for
// BYTES a text file of one element per line, read as perf_analyzer reads it with getline: '\n'
// ends each line, a last line needs none, and '\r' stays part of the element.
func decodeRaw(sp *spec, content []byte, where string) (*value, error) {
	shape, from, _ := sp.knownShape(nil, false)
	hint := "--shape " + sp.Name + ":<dims>"
	if sp.kind == "output" {
		hint = `"shape" in a JSON file`
	}
	if sp.Datatype != kserve.Bytes {
		return fromBytes(sp, content, shape, from, hint, "the file holds", where)
	}
	lines := splitLines(content)
	var data []byte
	for _, line := range lines {
		data = kserve.AppendBytesElement(data, line)
	}
	if data == nil {
		data = []byte{}
	}
	count := int64(len(lines))
	shape, err := sp.settle(shape, count, hint)
	if err != nil {
		return nil, err
	}
	if want := kserve.ElementCount(shape); count != want {
		return nil, fmt.Errorf("the file holds %s, expected %d (one BYTES element per line, shape %s%s)", plural(count, "line"), want, fmtShape(shape), from)
	}
	return &value{shape: shape, data: data, where: where}, nil
}

// splitLines splits text into lines as std::getline does.
func splitLines(b []byte) [][]byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}
