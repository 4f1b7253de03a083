package trace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
)

// Manager holds a server's trace settings, samples its requests and writes their traces. Its
// methods are safe for concurrent use.
//
// It follows Triton's TraceManager (tracer.cc). The global setting starts from the server's
// start-up values; a model may have a setting of its own, whose values are each either its own
// ("specified") or mirror the global setting's, and follow it as it changes. Every setting samples
// on its own: its own request counter for the rate, its own remaining count. Replacing a setting
// (an update) writes the traces it still holds, as Triton's does when its old setting goes; traces
// it sampled that finish later are written at once.
type Manager struct {
	log *slog.Logger

	// on is set while some setting may sample a request: the one atomic load a request pays while
	// tracing is off.
	on atomic.Bool

	// mu guards the settings and the files. Update holds it for writing, Sample for reading.
	mu sync.RWMutex
	// def is the start-up setting, which a cleared global value goes back to.
	def Setting
	// global is the global setting; models the settings of models that have their own.
	global *live
	models map[string]*live
	// files are the trace files by name, shared by the settings that write to the same file, so
	// that their traces go into one JSON array and the indexed files into one sequence.
	files  map[string]*traceFile
	closed bool

	nextID atomic.Uint64

	// flight counts the traces sampled and not finished; drained is closed whenever it is 0.
	flightMu sync.Mutex
	flight   int
	drained  chan struct{}
}

// NewManager returns a manager whose global setting starts as start. log receives the errors of
// writing trace files (Triton logs them too); nil discards them.
func NewManager(start Setting, log *slog.Logger) (*Manager, error) {
	if err := start.Check(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{log: log, def: start, models: map[string]*live{}, files: map[string]*traceFile{}, drained: make(chan struct{})}
	close(m.drained)
	m.global = m.newLive(start, 0)
	m.refresh()
	return m, nil
}

// On reports whether some setting may trace a request. It costs one atomic load.
func (m *Manager) On() bool { return m.on.Load() }

// Sample decides whether to trace a request for the named model, and returns its trace, or nil.
// While no setting traces anything it costs one atomic load and allocates nothing.
func (m *Manager) Sample(model string) *Active {
	if !m.on.Load() {
		return nil
	}
	m.mu.RLock()
	l := m.models[model]
	if l == nil {
		l = m.global
	}
	m.mu.RUnlock()
	take, spent := l.sample()
	if spent {
		m.refresh()
	}
	if !take {
		return nil
	}
	m.flightMu.Lock()
	if m.flight == 0 {
		m.drained = make(chan struct{})
	}
	m.flight++
	m.flightMu.Unlock()
	a := &Active{to: l, m: m}
	a.t = Trace{ID: m.nextID.Add(1), Model: model, Version: -1, Timestamps: a.buf[:0]}
	return a
}

// done counts a trace finished.
func (m *Manager) done() {
	m.flightMu.Lock()
	m.flight--
	if m.flight == 0 {
		close(m.drained)
	}
	m.flightMu.Unlock()
}

// Setting returns the setting a model's requests are traced with (the global one for "").
func (m *Manager) Setting(model string) Setting {
	m.mu.RLock()
	defer m.mu.RUnlock()
	l := m.models[model]
	if l == nil {
		l = m.global
	}
	return l.current()
}

// Update changes the global setting (model "") or a model's, and returns the setting as it is
// then. A model's first update starts from the global setting; an update that leaves none of a
// model's values its own removes the model's setting, and the model follows the global one again.
// A setting that asks for tracing it cannot do (a zero rate, no file) is refused with Triton's
// message, unless it is OFF.
func (m *Manager) Update(model string, u Update) (Setting, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u.set&fLevel != 0 && u.val.Level&Tensors != 0 {
		return Setting{}, errTensors
	}
	if u.set&fCount != 0 && u.val.Count < -1 {
		return Setting{}, fmt.Errorf("Unable to parse '%s'. Expecting value >= -1, got: %d", KeyCount, u.val.Count)
	}
	if err := m.updateLocked(model, u); err != nil {
		return Setting{}, err
	}
	if model == "" {
		// The models that mirror some global values follow the new ones. Triton does the same
		// and, as there, a model whose own values do not fit the new global ones fails the update.
		names := make([]string, 0, len(m.models))
		for name, l := range m.models {
			if l.specified != allFields {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			if err := m.updateLocked(name, Update{}); err != nil {
				m.refreshLocked()
				return Setting{}, err
			}
		}
	}
	m.refreshLocked()
	if l := m.models[model]; l != nil {
		return l.current(), nil
	}
	return m.global.current(), nil
}

// updateLocked applies u to one setting: Triton's UpdateTraceSettingInternal.
func (m *Manager) updateLocked(model string, u Update) error {
	var cur, fallback *live
	if model != "" {
		cur, fallback = m.models[model], m.global
	} else {
		cur, fallback = m.global, &live{Setting: m.def}
	}
	s := fallback.current()
	var spec field
	for _, f := range []field{fLevel, fRate, fCount, fLogFrequency, fFile} {
		if u.clear&f != 0 || (u.set&f == 0 && (cur == nil || cur.specified&f == 0)) {
			continue
		}
		spec |= f
		src := u.val
		if u.set&f == 0 {
			src = cur.current()
		}
		switch f {
		case fLevel:
			s.Level = src.Level
		case fRate:
			s.Rate = src.Rate
		case fCount:
			s.Count = src.Count
		case fLogFrequency:
			s.LogFrequency = src.LogFrequency
		case fFile:
			s.File = src.File
		}
	}
	if model != "" && spec == 0 {
		if cur != nil {
			delete(m.models, model)
			m.retire(cur)
		}
		return nil
	}
	if r := s.reason(); r != "" && s.Level != Off {
		// Triton's message, space and all.
		return fmt.Errorf("Attempting to set invalid trace setting :%s", r)
	}
	l := m.newLive(s, spec)
	if model == "" {
		m.global = l
	} else {
		m.models[model] = l
	}
	if cur != nil {
		m.retire(cur)
	}
	return nil
}

// newLive makes a setting that samples afresh, writing to the shared file of its name.
func (m *Manager) newLive(s Setting, spec field) *live {
	l := &live{Setting: s, specified: spec}
	if s.File != "" {
		f := m.files[s.File]
		if f == nil {
			f = &traceFile{name: s.File}
			m.files[s.File] = f
		}
		l.file = f
	}
	l.log = m.log
	l.active.Store(l.reason() == "" && l.Count != 0)
	return l
}

// retire ends a replaced setting: what it holds is written now, and what it sampled that is
// still running is written as it finishes.
func (m *Manager) retire(l *live) {
	l.mu.Lock()
	l.retired = true
	l.active.Store(false)
	l.mu.Unlock()
	l.flush()
}

// refresh recomputes on after a setting ran out of traces.
func (m *Manager) refresh() {
	m.mu.RLock()
	defer m.mu.RUnlock()
	m.refreshLocked()
}

func (m *Manager) refreshLocked() {
	on := !m.closed && m.global.active.Load()
	for _, l := range m.models {
		on = on || l.active.Load()
	}
	m.on.Store(on)
}

// Flush writes every finished trace the settings hold, as if they were being replaced: to the
// trace file, or with a log frequency to the next indexed file. It first waits for the traces
// already sampled to finish (a trace finishes once its response is sent, a moment after the
// client has it), until ctx is done; it then writes what has finished and returns an error saying
// how many were left. It also returns the errors of writing trace files since the last Flush.
func (m *Manager) Flush(ctx context.Context) error {
	m.flightMu.Lock()
	drained, left := m.drained, m.flight
	m.flightMu.Unlock()
	var errs []error
	if left > 0 {
		select {
		case <-drained:
		case <-ctx.Done():
			m.flightMu.Lock()
			left = m.flight
			m.flightMu.Unlock()
			errs = append(errs, fmt.Errorf("trace flush: %d traces still in flight: %w", left, ctx.Err()))
		}
	}
	m.mu.RLock()
	ls := append([]*live{m.global}, mapValues(m.models)...)
	files := mapValues(m.files)
	m.mu.RUnlock()
	for _, l := range ls {
		l.flush()
	}
	for _, f := range files {
		errs = append(errs, f.takeErr())
	}
	return errors.Join(errs...)
}

// Close stops tracing, writes what the settings hold and closes the trace files. Traces still
// running are written as they finish.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	m.refreshLocked()
	ls := append([]*live{m.global}, mapValues(m.models)...)
	files := mapValues(m.files)
	m.mu.Unlock()
	for _, l := range ls {
		m.retire(l)
	}
	var errs []error
	for _, f := range files {
		errs = append(errs, f.close(), f.takeErr())
	}
	return errors.Join(errs...)
}

func mapValues[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// live is one setting in use, Triton's TraceSetting: its values, what it samples and the traces
// it holds until they are written.
type live struct {
	// Setting holds the values; Count counts down under mu.
	Setting
	// specified are the values that are the setting's own (for a model: not the global ones).
	specified field
	file      *traceFile
	log       *slog.Logger
	// active is set while the setting can sample: valid and its count not spent.
	active atomic.Bool

	mu sync.Mutex
	// seen counts the requests sampled from; created and collected the traces taken and
	// finished.
	seen, created, collected uint64
	// pending holds the finished traces not yet written, as JSON objects joined by commas, and
	// inPending how many traces they are.
	pending   []byte
	inPending uint32
	retired   bool
}

// current returns the setting's values, the count as it stands.
func (l *live) current() Setting {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.Setting
}

// sample counts a request and says whether to trace it (Triton's TraceSetting::SampleTrace: the
// Rate-th, 2·Rate-th, ... request), and whether that spent the setting's count.
func (l *live) sample() (take, spent bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.retired || l.reason() != "" || l.Count == 0 {
		return false, false
	}
	l.seen++
	if l.seen%uint64(l.Rate) != 0 {
		return false, false
	}
	l.created++
	if l.Count > 0 {
		l.Count--
		if l.Count == 0 {
			l.active.Store(false)
			spent = true
		}
	}
	return true, spent
}

// collect takes a finished trace. It writes the traces held to the next indexed file when
// log_frequency of them have gathered, or when the count is spent and every trace taken has
// finished (Triton's TraceSetting::WriteTrace); to the trace file at once if the setting was
// replaced meanwhile.
func (l *live) collect(t *Trace) {
	obj := appendTrace(nil, t)
	l.mu.Lock()
	if l.inPending > 0 {
		l.pending = append(l.pending, ',')
	}
	l.pending = append(l.pending, obj...)
	l.inPending++
	l.collected++
	indexed := (l.Count == 0 && l.collected == l.created) || (l.LogFrequency != 0 && l.inPending >= l.LogFrequency)
	retired := l.retired
	var data []byte
	if indexed || retired {
		data, l.pending, l.inPending = l.pending, nil, 0
	}
	l.mu.Unlock()
	switch {
	case indexed:
		l.save(data, true)
	case retired:
		l.save(data, l.LogFrequency != 0)
	}
}

// flush writes the traces held: to the next indexed file with a log frequency, else to the trace
// file (what Triton's TraceSetting does when it goes).
func (l *live) flush() {
	l.mu.Lock()
	data := l.pending
	l.pending, l.inPending = nil, 0
	l.mu.Unlock()
	if len(data) > 0 {
		l.save(data, l.LogFrequency != 0)
	}
}

func (l *live) save(data []byte, indexed bool) {
	if l.file == nil {
		return // OFF without a file: it never sampled
	}
	if err := l.file.save(data, indexed); err != nil {
		l.log.Error("writing traces", "file", l.file.name, "err", err)
	}
}
