// Package serverstats turns two snapshots of a server's model statistics, taken at the edges of a
// measurement window, into perf_analyzer's server-side breakdown: per-request queue, compute
// input/infer/output and overhead averages, for a model and the composing models of an ensemble
// (protocol reference §5.3, perf_analyzer reference §3).
package serverstats

import (
	"context"
	"fmt"
	"strconv"

	"inferperf/client"
	"inferperf/results"
)

// Snapshot is the statistics of every model the breakdown needs, at one instant.
type Snapshot struct {
	stats []client.ModelStats
}

// Source takes snapshots for one model (and its composing models).
type Source struct {
	admin     client.Admin
	model     string
	version   string
	composing []client.EnsembleStep
	cache     bool
}

// NewSource prepares snapshots of model (version "" = whichever version serves the window) and of
// the given composing models; cache says whether the model's response cache is on.
func NewSource(admin client.Admin, model, version string, composing []client.EnsembleStep, cache bool) *Source {
	return &Source{admin: admin, model: model, version: version, composing: composing, cache: cache}
}

// Snapshot reads the statistics. For an ensemble it reads every model at once, as perf_analyzer
// does, so that all of them describe the same instant. A nil Source (no statistics to read)
// returns an empty Snapshot.
func (s *Source) Snapshot(ctx context.Context) (Snapshot, error) {
	if s == nil {
		return Snapshot{}, nil
	}
	name, version := s.model, s.version
	if len(s.composing) > 0 {
		name, version = "", ""
	}
	st, err := s.admin.Statistics(ctx, name, version)
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the model statistics of '%s': %w", s.model, err)
	}
	return Snapshot{stats: st}, nil
}

// Breakdown computes the breakdown of the window between two snapshots: the model's and, for an
// ensemble, each composing model's. A model version whose counters went down was reloaded: its
// delta restarts from zero rather than going negative.
func (s *Source) Breakdown(before, after Snapshot) (*results.ServerBreakdown, []results.ServerBreakdown, error) {
	top, err := pick(before, after, s.model, s.version)
	if err != nil {
		return nil, nil, err
	}
	if len(s.composing) == 0 {
		b := Averages(top, s.cache)
		return &b, nil, nil
	}
	var comp []results.ServerBreakdown
	var queueNs, computeNs, cacheNs uint64
	for _, step := range s.composing {
		ver := ""
		if step.ModelVersion >= 0 {
			ver = strconv.FormatInt(step.ModelVersion, 10)
		}
		d, err := pick(before, after, step.ModelName, ver)
		if err != nil {
			return nil, nil, err
		}
		b := Averages(d, s.cache)
		b.Composing = true
		comp = append(comp, b)
		queueNs += b.QueueNs
		computeNs += b.ComputeNs
		cacheNs += b.CacheNs
	}
	b := Averages(top, s.cache)
	// An ensemble's own queue and compute are the sums over its composing models (perf_analyzer
	// §3.3); its request latency stays its own.
	b.QueueNs, b.ComputeNs, b.CacheNs = queueNs, computeNs, cacheNs
	b.QueueUs, b.ComputeUs = queueNs/1000, computeNs/1000
	b.ComputeInputUs, b.ComputeInferUs, b.ComputeOutputUs = 0, 0, 0
	for _, c := range comp {
		b.ComputeInputUs += c.ComputeInputUs
		b.ComputeInferUs += c.ComputeInferUs
		b.ComputeOutputUs += c.ComputeOutputUs
	}
	b.OverheadUs = overhead(b.RequestUs*1000, queueNs+computeNs+cacheNs)
	return &b, comp, nil
}

// pick returns the delta of one model between two snapshots. With no version asked for, it takes
// the version whose queue count grew in the window (the highest if several), as perf_analyzer does.
func pick(before, after Snapshot, name, version string) (client.ModelStats, error) {
	var cands []client.ModelStats
	for _, a := range after.stats {
		if a.Name != name || (version != "" && a.Version != version) {
			continue
		}
		var b client.ModelStats
		for _, x := range before.stats {
			if x.Name == a.Name && x.Version == a.Version {
				b = x
			}
		}
		cands = append(cands, Diff(b, a))
	}
	if len(cands) == 0 {
		return client.ModelStats{}, fmt.Errorf("the server's statistics have no model '%s'%s", name, versionNote(version))
	}
	best := 0
	for i, d := range cands[1:] {
		grew, bestGrew := d.Queue.Count > 0, cands[best].Queue.Count > 0
		if (grew && !bestGrew) || (grew == bestGrew && versionLess(cands[best].Version, d.Version)) {
			best = i + 1
		}
	}
	return cands[best], nil
}

func versionNote(v string) string {
	if v == "" {
		return ""
	}
	return " version " + v
}

func versionLess(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	if errA != nil || errB != nil {
		return a < b
	}
	return x < y
}

// Diff returns after − before for every counter. A counter that went down means the model was
// reloaded (counters restart at zero), so the delta is the after value itself.
func Diff(before, after client.ModelStats) client.ModelStats {
	reset := after.Success.Count < before.Success.Count || after.Queue.Count < before.Queue.Count ||
		after.InferenceCount < before.InferenceCount || after.ExecutionCount < before.ExecutionCount
	if reset {
		before = client.ModelStats{}
	}
	d := after
	d.InferenceCount = sub(after.InferenceCount, before.InferenceCount)
	d.ExecutionCount = sub(after.ExecutionCount, before.ExecutionCount)
	d.Success = subD(after.Success, before.Success)
	d.Fail = subD(after.Fail, before.Fail)
	d.Queue = subD(after.Queue, before.Queue)
	d.ComputeInput = subD(after.ComputeInput, before.ComputeInput)
	d.ComputeInfer = subD(after.ComputeInfer, before.ComputeInfer)
	d.ComputeOutput = subD(after.ComputeOutput, before.ComputeOutput)
	d.CacheHit = subD(after.CacheHit, before.CacheHit)
	d.CacheMiss = subD(after.CacheMiss, before.CacheMiss)
	d.Batches = nil
	for _, ab := range after.Batches {
		var bb client.BatchStats
		for _, x := range before.Batches {
			if x.BatchSize == ab.BatchSize {
				bb = x
			}
		}
		if n := sub(ab.ComputeInfer.Count, bb.ComputeInfer.Count); n > 0 {
			d.Batches = append(d.Batches, client.BatchStats{BatchSize: ab.BatchSize,
				ComputeInput: subD(ab.ComputeInput, bb.ComputeInput), ComputeInfer: subD(ab.ComputeInfer, bb.ComputeInfer),
				ComputeOutput: subD(ab.ComputeOutput, bb.ComputeOutput)})
		}
	}
	return d
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

func subD(a, b client.Duration) client.Duration {
	return client.Duration{Count: sub(a.Count, b.Count), Ns: sub(a.Ns, b.Ns)}
}

// avgNs is ns/count, 0 when nothing was counted.
func avgNs(d client.Duration) uint64 {
	if d.Count == 0 {
		return 0
	}
	return d.Ns / d.Count
}

func overhead(requestNs, accountedNs uint64) uint64 {
	if requestNs <= accountedNs {
		return 0
	}
	return (requestNs - accountedNs) / 1000
}

// Averages computes perf_analyzer's per-request averages of one model's delta (its §3.3): each
// phase over its own count in whole microseconds, compute over the compute-input count, and the
// overhead as what the request average leaves after queue and compute, floored at zero. With the
// response cache on, hits and misses join the compute term as perf_analyzer combines them.
func Averages(d client.ModelStats, cache bool) results.ServerBreakdown {
	b := results.ServerBreakdown{
		Model: d.Name, Version: d.Version,
		InferenceCount: d.InferenceCount, ExecutionCount: d.ExecutionCount, SuccessCount: d.Success.Count,
		CacheHitCount: d.CacheHit.Count, CacheMissCount: d.CacheMiss.Count,
		RequestUs:       avgNs(d.Success) / 1000,
		QueueUs:         avgNs(d.Queue) / 1000,
		ComputeInputUs:  avgNs(d.ComputeInput) / 1000,
		ComputeInferUs:  avgNs(d.ComputeInfer) / 1000,
		ComputeOutputUs: avgNs(d.ComputeOutput) / 1000,
		QueueNs:         avgNs(d.Queue),
	}
	computeNs := d.ComputeInput.Ns + d.ComputeInfer.Ns + d.ComputeOutput.Ns
	if d.ComputeInput.Count > 0 {
		b.ComputeNs = computeNs / d.ComputeInput.Count
	}
	b.ComputeUs = b.ComputeNs / 1000
	accounted := b.QueueNs + b.ComputeNs
	if cache {
		b.CacheHitUs = avgNs(d.CacheHit) / 1000
		b.CacheMissUs = (avgNs(d.CacheMiss) + b.ComputeNs) / 1000
		if n := d.ComputeInput.Count + d.CacheHit.Count; n > 0 {
			b.CacheNs = (d.CacheHit.Ns + d.CacheMiss.Ns + computeNs) / n
			accounted = b.QueueNs + b.CacheNs
		}
	}
	b.OverheadUs = overhead(avgNs(d.Success), accounted)
	if len(d.Batches) > 0 {
		b.Batches = map[uint64]uint64{}
		for _, x := range d.Batches {
			b.Batches[x.BatchSize] = x.ComputeInfer.Count
		}
	}
	return b
}
