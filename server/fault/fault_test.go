package fault

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"inferperf/kserve"
)

func TestWithParameters(t *testing.T) {
	base := Config{ErrorRate: 0.5, Seed: 7}
	tests := []struct {
		name    string
		params  map[string]string
		want    Config
		wantErr string // substring; "" = no error
	}{
		// A model without fault parameters keeps the server's faults.
		{"none", map[string]string{"fixed_delay_us": "10"}, base, ""},
		// Every key, rates and durations, overriding the base key by key.
		{"all", map[string]string{KeyErrorRate: "0", KeyJitter: "2ms", KeySpikeRate: "0.01", KeySpike: "200ms",
			KeyHangRate: " 0.1 ", KeyResetRate: "1", KeySlowRead: "1ms"},
			Config{Jitter: 2 * time.Millisecond, SpikeRate: 0.01, Spike: 200 * time.Millisecond, HangRate: 0.1, ResetRate: 1,
				SlowRead: time.Millisecond, Seed: 7}, ""},
		// A misspelt fault is an error, never silently off.
		{"unknown key", map[string]string{"fault_eror_rate": "0.1"}, base, `"fault_eror_rate": unknown fault`},
		{"not a number", map[string]string{KeyErrorRate: "5%"}, base, `"5%" is not a fraction`},
		{"not a duration", map[string]string{KeyJitter: "2"}, base, `"2" is not a duration`},
		{"rate above 1", map[string]string{KeyHangRate: "1.5"}, base, `parameter "fault_hang_rate": 1.5 is not a fraction`},
		{"NaN", map[string]string{KeyResetRate: "NaN"}, base, "is not a fraction"},
		{"negative duration", map[string]string{KeySpike: "-1s"}, base, "is negative"},
		{"spike rate without spike", map[string]string{KeySpikeRate: "0.1"}, base, "needs a parameter \"fault_spike\""},
	}
	for _, tt := range tests {
		got, err := WithParameters(base, tt.params)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: WithParameters(%v) error %v", tt.name, tt.params, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: WithParameters(%v) error %v; want one containing %q", tt.name, tt.params, err, tt.wantErr)
		case got != tt.want:
			t.Errorf("%s: WithParameters(%v) = %+v; want %+v", tt.name, tt.params, got, tt.want)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	err := Config{ErrorRate: -0.1}.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "--fault-error-rate: ") {
		t.Errorf("Validate() = %v; want an error naming --fault-error-rate", err)
	}
	if err := (Config{SpikeRate: math.Inf(1)}).Validate(); err == nil {
		t.Error("Validate() accepted an infinite rate")
	}
}

func TestNewIsNilWhenOff(t *testing.T) {
	if in := New(Config{Seed: 3}); in != nil {
		t.Errorf("New(no faults) = %v; want nil", in)
	}
	var in *Injector
	if a := in.Next(); a != (Action{}) {
		t.Errorf("nil.Next() = %+v; want no fault", a)
	}
	if allocs := testing.AllocsPerRun(100, func() { in.Next() }); allocs != 0 {
		t.Errorf("nil.Next() allocates %v times", allocs)
	}
}

// TestNextCountsAreSeeded: the count of each fault among N draws depends on the seed alone, and
// is near the rate.
func TestNextCountsAreSeeded(t *testing.T) {
	cfg := Config{ErrorRate: 0.05, HangRate: 0.01, ResetRate: 0.02, SpikeRate: 0.1, Spike: time.Second, Jitter: time.Millisecond, Seed: 42}
	count := func() (errs, hangs, resets, spikes int) {
		in := New(cfg)
		for range 20000 {
			a := in.Next()
			if a.Error {
				errs++
			}
			if a.Hang {
				hangs++
			}
			if a.Reset {
				resets++
			}
			if a.Delay >= time.Second {
				spikes++
			}
			if a.Delay < 0 || a.Delay >= time.Second+time.Millisecond || (a.Error && (a.Hang || a.Reset)) || (a.Hang && a.Reset) {
				t.Fatalf("Next() = %+v: delay out of range or two exclusive faults", a)
			}
		}
		return
	}
	e1, h1, r1, s1 := count()
	e2, h2, r2, s2 := count()
	if e1 != e2 || h1 != h2 || r1 != r2 || s1 != s2 {
		t.Errorf("two runs with seed 42 drew (%d, %d, %d, %d) and (%d, %d, %d, %d) errors, hangs, resets, spikes", e1, h1, r1, s1, e2, h2, r2, s2)
	}
	// Binomial bounds, six standard deviations wide: never hit by a working source.
	for _, c := range []struct {
		name string
		n    int
		p    float64
	}{{"errors", e1, 0.05 * (1 - 0.01) * (1 - 0.02)}, {"hangs", h1, 0.01}, {"resets", r1, 0.02 * (1 - 0.01)}, {"spikes", s1, 0.1}} {
		mean := 20000 * c.p
		if sd := math.Sqrt(mean * (1 - c.p)); math.Abs(float64(c.n)-mean) > 6*sd {
			t.Errorf("%d %s in 20000 draws; want about %.0f", c.n, c.name, mean)
		}
	}
}

func TestWait(t *testing.T) {
	ctx := context.Background()
	code := func(err error) kserve.Code {
		var ke *kserve.Error
		if !errors.As(err, &ke) {
			t.Fatalf("Wait() = %v; want a *kserve.Error", err)
		}
		return ke.Code
	}
	g := NewGate()
	if err := (Action{}).Wait(ctx, g); err != nil {
		t.Errorf("no fault: Wait() = %v", err)
	}
	if err := (Action{Error: true}).Wait(ctx, g); code(err) != kserve.Internal || !strings.Contains(err.Error(), "injected") {
		t.Errorf("error: Wait() = %v; want an internal error saying it was injected", err)
	}
	// A hang ends when the client gives up...
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- (Action{Hang: true}).Wait(cctx, g) }()
	for g.Held() != 1 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; code(err) != kserve.Cancelled {
		t.Errorf("hang, client gone: Wait() = %v; want CANCELLED", err)
	}
	// ... or when the server stops, for every held request.
	for range 3 {
		go func() { done <- (Action{Hang: true, Delay: time.Microsecond}).Wait(ctx, g) }()
	}
	for g.Held() != 3 {
		time.Sleep(time.Millisecond)
	}
	g.Release()
	for range 3 {
		if err := <-done; code(err) != kserve.Unavailable {
			t.Errorf("hang, server stopping: Wait() = %v; want UNAVAILABLE", err)
		}
	}
	if g.Held() != 0 {
		t.Errorf("Held() = %d after the release; want 0", g.Held())
	}
}

// TestConnsReset: Reset closes the connection of a remote address with an RST, which the peer
// reads as ECONNRESET, and the table forgets closed connections.
func TestConnsReset(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := Track(ln)
	defer conns.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := conns.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-accepted
	if conns.Open() != 1 {
		t.Fatalf("Open() = %d; want 1", conns.Open())
	}
	if conns.Reset(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}) {
		t.Error("Reset(unknown address) = true")
	}
	if !conns.Reset(c.LocalAddr()) {
		t.Fatal("Reset(client address) = false")
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a hang guard only
	_, err = c.Read(make([]byte, 1))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("client read after Reset: %v; want ECONNRESET", err)
	}
	if err == io.EOF {
		t.Error("the connection was closed with a FIN, not reset")
	}
	if conns.Open() != 0 {
		t.Errorf("Open() = %d after the reset; want 0", conns.Open())
	}
}
