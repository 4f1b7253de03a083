// Package fault injects server-side faults into the reference server's inference requests, so
// that a load generator's handling of a misbehaving server can be tested against a real one:
// errors, extra latency (jitter and rare spikes), requests that never answer, connections reset
// in the middle of a response, and slow reads. Faults are drawn per request from a seeded random
// source, so the number of each fault among N requests is the same on every run; which request
// gets which depends on the order in which concurrent requests draw.
//
// Faults are configured for the whole server (inferperf serve --fault-* flags) and per model
// through config.pbtxt parameters (fault_error_rate, ...), which override the server's values
// for that model.
package fault

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"inferperf/kserve"
)

// Config is the set of faults of a server or of one model. Its zero value injects nothing.
type Config struct {
	// ErrorRate is the fraction of requests that fail with an internal error (HTTP 500, gRPC
	// INTERNAL) whose message says it was injected.
	ErrorRate float64
	// Jitter adds a uniformly drawn extra latency in [0, Jitter) to every request.
	Jitter time.Duration
	// SpikeRate is the fraction of requests delayed by Spike on top of the jitter.
	SpikeRate float64
	// Spike is the extra latency of a spike.
	Spike time.Duration
	// HangRate is the fraction of requests that never answer: they are held until the client
	// gives up (closes the connection, cancels the call) or the server shuts down.
	HangRate float64
	// ResetRate is the fraction of requests whose connection is reset (TCP RST) in the middle
	// of the response.
	ResetRate float64
	// SlowRead, when positive, makes the HTTP front end read each request body and write each
	// reply in chunks of SlowChunk bytes with a pause of SlowRead before each chunk: a slow
	// network or an overloaded server. gRPC messages are read whole by the gRPC library before
	// the model sees them, so this fault applies to HTTP only.
	SlowRead time.Duration
	// Seed seeds the random source the faults are drawn from.
	Seed uint64
}

// SlowChunk is the chunk size of the slow-read fault.
const SlowChunk = 1024

// Enabled reports whether the configuration injects any fault.
func (c Config) Enabled() bool {
	return c.ErrorRate > 0 || c.Jitter > 0 || (c.SpikeRate > 0 && c.Spike > 0) || c.HangRate > 0 || c.ResetRate > 0 || c.SlowRead > 0
}

// Validate checks the rates and durations, naming the serve flag of a bad value.
func (c Config) Validate() error {
	return c.validate(FlagName)
}

func (c Config) validate(name func(key string) string) error {
	for _, r := range []struct {
		key  string
		rate float64
	}{{KeyErrorRate, c.ErrorRate}, {KeySpikeRate, c.SpikeRate}, {KeyHangRate, c.HangRate}, {KeyResetRate, c.ResetRate}} {
		// The negated test also refuses NaN.
		if !(r.rate >= 0 && r.rate <= 1) {
			return fmt.Errorf("%s: %v is not a fraction between 0 and 1", name(r.key), r.rate)
		}
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{KeyJitter, c.Jitter}, {KeySpike, c.Spike}, {KeySlowRead, c.SlowRead}} {
		if d.d < 0 {
			return fmt.Errorf("%s: %v is negative", name(d.key), d.d)
		}
	}
	if c.SpikeRate > 0 && c.Spike == 0 {
		return fmt.Errorf("%s %v needs a %s duration", name(KeySpikeRate), c.SpikeRate, name(KeySpike))
	}
	return nil
}

// The config.pbtxt parameter keys of a model's faults. The serve flags are the same names with
// dashes ("fault_error_rate" is --fault-error-rate).
const (
	KeyErrorRate = "fault_error_rate"
	KeyJitter    = "fault_jitter"
	KeySpikeRate = "fault_spike_rate"
	KeySpike     = "fault_spike"
	KeyHangRate  = "fault_hang_rate"
	KeyResetRate = "fault_reset_rate"
	KeySlowRead  = "fault_slow_read"
)

// keyPrefix marks the model parameters this package reads; any other parameter is the model's.
const keyPrefix = "fault_"

// FlagName is the serve flag of a parameter key: "fault_error_rate" → "--fault-error-rate".
func FlagName(key string) string { return "--" + strings.ReplaceAll(key, "_", "-") }

// WithParameters returns base overridden by a model's config.pbtxt parameters: the fault_* keys
// (rates as decimal fractions, durations as Go durations such as "2ms"). Parameters without
// the fault_ prefix belong to the model, which checks them (models.New); an unknown fault_ key or a bad value is
// an error, so a misspelt fault is never silently off.
func WithParameters(base Config, params map[string]string) (Config, error) {
	c := base
	for k, v := range params {
		if !strings.HasPrefix(k, keyPrefix) {
			continue
		}
		v = strings.TrimSpace(v)
		var rate *float64
		var dur *time.Duration
		switch k {
		case KeyErrorRate:
			rate = &c.ErrorRate
		case KeySpikeRate:
			rate = &c.SpikeRate
		case KeyHangRate:
			rate = &c.HangRate
		case KeyResetRate:
			rate = &c.ResetRate
		case KeyJitter:
			dur = &c.Jitter
		case KeySpike:
			dur = &c.Spike
		case KeySlowRead:
			dur = &c.SlowRead
		default:
			return base, fmt.Errorf("parameter %q: unknown fault (known: %s)", k, strings.Join(Keys(), ", "))
		}
		var err error
		if rate != nil {
			*rate, err = strconv.ParseFloat(v, 64)
		} else {
			*dur, err = time.ParseDuration(v)
		}
		if err != nil {
			return base, fmt.Errorf("parameter %q: %q is not a %s", k, v, map[bool]string{true: "fraction such as 0.05", false: "duration such as 2ms"}[rate != nil])
		}
	}
	if err := c.validate(func(k string) string { return "parameter " + strconv.Quote(k) }); err != nil {
		return base, err
	}
	return c, nil
}

// Keys lists the fault parameter keys.
func Keys() []string {
	return []string{KeyErrorRate, KeyJitter, KeySpikeRate, KeySpike, KeyHangRate, KeyResetRate, KeySlowRead}
}

// Action is what one request suffers. The zero Action is no fault.
type Action struct {
	// Delay is extra latency before the request runs (jitter plus any spike).
	Delay time.Duration
	// Error fails the request with an injected internal error.
	Error bool
	// Hang holds the request until the client gives up or the server shuts down.
	Hang bool
	// Reset resets the connection in the middle of the response.
	Reset bool
	// SlowRead is the pause before each chunk read or written (HTTP only).
	SlowRead time.Duration
}

// Injector draws the faults of a model's requests. A nil *Injector injects nothing.
type Injector struct {
	cfg Config
	mu  sync.Mutex
	rng *rand.Rand
}

// New returns an injector of cfg, or nil when cfg injects nothing, so that a server without
// faults pays one nil test per request.
func New(cfg Config) *Injector {
	if !cfg.Enabled() {
		return nil
	}
	return &Injector{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
}

// Config returns the injector's configuration.
func (in *Injector) Config() Config {
	if in == nil {
		return Config{}
	}
	return in.cfg
}

// Next draws the faults of one request. Every request consumes the same five numbers of the
// random sequence, whatever is configured, so the count of each fault among the first N requests
// depends on the seed and the rates only. Hang wins over reset, and reset over error: a request
// suffers at most one of them.
func (in *Injector) Next() Action {
	if in == nil {
		return Action{}
	}
	in.mu.Lock()
	uHang, uReset, uErr, uSpike, uJitter := in.rng.Float64(), in.rng.Float64(), in.rng.Float64(), in.rng.Float64(), in.rng.Float64()
	in.mu.Unlock()
	c := &in.cfg
	a := Action{SlowRead: c.SlowRead, Delay: time.Duration(uJitter * float64(c.Jitter))}
	if uSpike < c.SpikeRate {
		a.Delay += c.Spike
	}
	switch {
	case uHang < c.HangRate:
		a.Hang = true
	case uReset < c.ResetRate:
		a.Reset = true
	case uErr < c.ErrorRate:
		a.Error = true
	}
	return a
}

// Gate holds the requests an injected hang holds, until it is released (the server stops).
type Gate struct {
	once sync.Once
	ch   chan struct{}
	held atomic.Int64
}

// NewGate returns a gate that holds hung requests until Release.
func NewGate() *Gate { return &Gate{ch: make(chan struct{})} }

// Release lets every request held at the gate, and every later one, go at once.
func (g *Gate) Release() { g.once.Do(func() { close(g.ch) }) }

// Held is the number of requests an injected hang holds at the gate now.
func (g *Gate) Held() int { return int(g.held.Load()) }

// Wait applies an action's delay, hang and error before the request runs: it sleeps the delay,
// holds a hung request until ctx is done or the gate is released, and returns the error the
// request must fail with (nil to run it). Reset and slow reads are the front end's to apply.
func (a Action) Wait(ctx context.Context, gate *Gate) error {
	if a.Delay > 0 {
		t := time.NewTimer(a.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return kserve.Errorf(kserve.Cancelled, "request cancelled during an injected delay")
		case <-gate.ch:
			t.Stop()
			return kserve.Errorf(kserve.Unavailable, "Server is stopping")
		}
	}
	switch {
	case a.Hang:
		gate.held.Add(1)
		defer gate.held.Add(-1)
		select {
		case <-ctx.Done():
			return kserve.Errorf(kserve.Cancelled, "request cancelled while held by an injected hang")
		case <-gate.ch:
			return kserve.Errorf(kserve.Unavailable, "Server is stopping (request held by an injected hang)")
		}
	case a.Error:
		return kserve.Errorf(kserve.Internal, "injected fault: internal error (%s)", FlagName(KeyErrorRate))
	}
	return nil
}
