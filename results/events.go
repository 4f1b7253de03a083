package results

import "time"

// Events is what a run reports while it goes, in order: the measurement settings, each level's
// start, each window's end, notes (warnings and perf_analyzer's messages), and each level's
// figures. profile feeds it; report.Console prints it as perf_analyzer does, so the console has
// one owner. A nil Events in profile reports nothing.
type Events interface {
	Settings(Banner)
	LevelStart(LevelStart)
	Window(WindowDone)
	Pass(Pass)
	Note(Note)
	LevelEnd(*Sweep, *Level)
}

// NoEvents ignores every event; embed it to handle only some.
type NoEvents struct{}

func (NoEvents) Settings(Banner)         {}
func (NoEvents) LevelStart(LevelStart)   {}
func (NoEvents) Window(WindowDone)       {}
func (NoEvents) Pass(Pass)               {}
func (NoEvents) Note(Note)               {}
func (NoEvents) LevelEnd(*Sweep, *Level) {}

// Banner is what perf_analyzer's "*** Measurement Settings ***" block says.
type Banner struct {
	BatchSize       int
	MeasurementMode string // "time_windows" or "count_windows"
	// Async is -a (the stability rule's throughput-only fallback); Streaming --streaming. Either
	// makes the calls asynchronous.
	Async, Streaming bool
	// Percentile stabilises and summarises (0: the average).
	Percentile float64
	// Window is a time window's length; MinRequests a count window's requests.
	Window      time.Duration
	MinRequests uint64
	// WarmupRequests and Requests are --warmup-request-count and --request-count (0: none).
	WarmupRequests, Requests uint64
	// LatencyLimit is -l; shown for a sweep of more than one level.
	LatencyLimit     time.Duration
	ShowLatencyLimit bool
	// Schedule is "intervals", "poisson" or "constant" in request-rate mode; "" in concurrency
	// mode, where ConcurrencyLimit is the largest concurrency.
	Schedule         string
	ConcurrencyLimit uint64
	BinarySearch     bool
}

// LevelStart announces a level: a concurrency or a request rate, and the stage it is of a load
// shape (Stage 0: none).
type LevelStart struct {
	Concurrency int
	Rate        float64
	// Stage counts from 1 of Stages, with the stage's line.
	Stage, Stages int
	StageLine     string
}

// WindowDone is a measurement window that ended.
type WindowDone struct {
	// Level names the level ("concurrency 4", "request rate 100/s"); K counts the level's windows
	// from 1, of at most Max; Spread is how far the last three are from stable, in percent (NaN
	// before three, +Inf with an empty one), to compare with -s.
	Level  string
	K, Max int
	Spread float64
}

// Pass is one window's figures, as perf_analyzer's -v prints them: the N-th window of its level
// (an open-loop window once its requests came back).
type Pass struct {
	N          int
	Throughput float64 // infer/sec
	AvgUs      int64
	StdUs      int64
	// Percentile is the --percentile (0: none) and PercentileUs its value.
	Percentile   float64
	PercentileUs int64
	// Open loop: the rate offered and sent, and the requests that never came back.
	Open          bool
	Offered, Sent float64
	NeverCameBack uint64
}

// NoteKind names what a Note says.
type NoteKind int

// The notes a run makes.
const (
	// NoteData describes the input data (Text).
	NoteData NoteKind = iota
	// NoteValidation: the first response already differs from the validation data (Text).
	NoteValidation
	// NoteBreakdown: the server's statistics could not be broken down (Text).
	NoteBreakdown
	// NoteThroughputOnly: async mode settled for throughput-only stability.
	NoteThroughputOnly
	// NoteOverThreshold: a level's latency reached -l (Limit).
	NoteOverThreshold
	// NoteUnstable: a level did not stabilise (Concurrency or Rate, MaxTrials, CountWindows).
	NoteUnstable
	// NoteScrape: the metrics scraper's warning (Text).
	NoteScrape
)

// Note is a warning or one of perf_analyzer's messages, as data; report.Console words it.
type Note struct {
	Kind         NoteKind
	Text         string
	Limit        time.Duration
	Concurrency  int
	Rate         float64
	MaxTrials    int
	CountWindows bool
}
