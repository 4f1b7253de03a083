package tune

import (
	"fmt"
	"slices"
	"time"

	"inferperf/results"
)

// Observation is what the tuner saw at a configuration's operating point (the highest-throughput
// level inside the budget): the figures the rules read.
type Observation struct {
	Concurrency int
	Throughput  float64
	// Latency is the budget's figure (p95, or the average) at the operating point.
	Latency time.Duration
	// QueueUs and ComputeUs are the server's per-request queue and compute times (0 when the
	// server gives no statistics).
	QueueUs, ComputeUs float64
	// MeanBatch is the mean executed batch size, Batch1 the share of executions of batch 1
	// (0 when unknown).
	MeanBatch, Batch1 float64
	// GPUUtil is the GPUs' mean utilization (0-1) and GPUMem the largest share of a GPU's memory
	// in use, from the server's metrics (--collect-metrics); HasGPU says whether there were any.
	GPUUtil, GPUMem float64
	HasGPU          bool
	// CPUMem is the share of the server host's memory in use (HasCPU: whether the metrics gave
	// it). The host's CPU utilization is left out: the host is often shared with the load
	// generator, so no rule reads it (see Propose).
	CPUMem float64
	HasCPU bool
}

// memTightShare is the share of memory in use from which the tuner calls memory tight.
const memTightShare = 0.9

// MemoryTight says whether the accelerator's memory (or, without GPU metrics, the host's) is
// nearly full: another instance or larger batches could run out.
func (o Observation) MemoryTight() bool {
	if o.HasGPU {
		return o.GPUMem >= memTightShare
	}
	return o.HasCPU && o.CPUMem >= memTightShare
}

// memory describes the memory figure MemoryTight reads.
func (o Observation) memory() string {
	if o.HasGPU {
		return fmt.Sprintf("GPU memory %.0f%% used", 100*o.GPUMem)
	}
	return fmt.Sprintf("host memory %.0f%% used", 100*o.CPUMem)
}

// Utilization estimates how busy the instances are: executions per second (throughput over the
// mean batch) times the compute time of one execution, spread over the instances (0 when the
// server gives no statistics).
func (o Observation) Utilization(instances int) float64 {
	if o.ComputeUs == 0 || instances < 1 {
		return 0
	}
	mb := max(o.MeanBatch, 1)
	return o.Throughput / mb * o.ComputeUs / 1e6 / float64(instances)
}

// observe reads an Observation from a level.
func observe(l *results.Level, latency time.Duration) Observation {
	o := Observation{Concurrency: l.Concurrency, Throughput: l.Throughput, Latency: latency}
	if s := l.Server; s != nil {
		o.QueueUs, o.ComputeUs = float64(s.QueueNs)/1e3, float64(s.ComputeNs)/1e3
		if o.QueueUs == 0 && o.ComputeUs == 0 {
			o.QueueUs, o.ComputeUs = float64(s.QueueUs), float64(s.ComputeUs)
		}
		var execs, items, ones uint64
		for size, n := range s.Batches {
			execs += n
			items += size * n
			if size == 1 {
				ones += n
			}
		}
		if execs > 0 {
			o.MeanBatch, o.Batch1 = float64(items)/float64(execs), float64(ones)/float64(execs)
		}
	}
	for _, g := range l.GPUs {
		o.HasGPU = true
		o.GPUUtil += g.Utilization / float64(len(l.GPUs))
		if g.MemoryTotalBytes > 0 {
			o.GPUMem = max(o.GPUMem, float64(g.MemoryUsedBytes)/float64(g.MemoryTotalBytes))
		}
	}
	if c := l.CPU; c != nil {
		o.HasCPU = true
		if c.MemoryTotalBytes > 0 {
			o.CPUMem = float64(c.MemoryUsedBytes) / float64(c.MemoryTotalBytes)
		}
	}
	return o
}

// Limits bound the proposals.
type Limits struct {
	// Budget is the latency limit.
	Budget time.Duration
	// MaxInstances caps instance_group.count; MaxBatchSize caps max_batch_size.
	MaxInstances, MaxBatchSize int
}

// Proposal is one candidate change: the knobs after it, what it changes, and the rule that
// asked for it.
type Proposal struct {
	To     Knobs
	Change string
	Rule   string
}

// Propose lists the changes the seed's rules suggest for a configuration, most promising first.
// Every proposal changes one setting. The rules, in order:
//
//  0. memory-tight: more than one instance and memory nearly full (≥ 90% of the GPU's, or of
//     the host's without GPU metrics) → instance_group.count - 1, before anything else.
//  1. latency-high: the operating point's latency is within 20% of the budget and the batcher
//     holds requests (queue delay > 0) → halve max_queue_delay_microseconds.
//  2. enable-batching: the model batches (max_batch_size > 0), dynamic batching is off and
//     requests wait at least as long as they compute (queue ≥ compute) or more than one is in
//     flight → enable dynamic_batching (no queue delay: batch what is already waiting).
//  3. add-instance: the instances are busy — requests wait at least as long as they compute
//     (queue ≥ compute), or the estimated utilization (executions/s × compute time per
//     execution ÷ instances) is ≥ 70% — or the GPU is under-used (< 60%) while requests wait
//     (queue ≥ half the compute) → instance_group.count + 1, up to MaxInstances. Not when memory
//     is tight, nor when the GPUs are saturated (≥ 95%: another instance only shares them).
//  4. fill-batches: dynamic batching is on, executions average under half of max_batch_size and
//     the latency leaves room (< 80% of the budget) → raise max_queue_delay_microseconds (from 0
//     to a quarter of the compute time, at least 500 µs, then doubling; at most a quarter of the
//     budget).
//  5. preferred-batch: executions are mostly of batch 1 (≥ 50%) under load → set or raise
//     preferred_batch_size (half of max_batch_size first, then doubling, up to max_batch_size).
//  6. raise-max-batch: batches come out nearly full (mean ≥ 80% of max_batch_size), the latency
//     leaves room and memory is not tight → double max_batch_size, up to MaxBatchSize.
//  7. remove-instance: more than one instance and requests hardly wait (queue < 10% of compute:
//     instances sit idle) → instance_group.count - 1.
//
// The host's CPU utilization is not a rule's input: the load generator often shares the host,
// so it says little about the model's instances. The tuner tries the proposals in this order,
// skipping any already tried on the same configuration.
func Propose(k Knobs, o Observation, lim Limits) []Proposal {
	var out []Proposal
	add := func(rule, why string, to Knobs) {
		out = append(out, Proposal{To: to, Change: describe(k, to) + " (" + why + ")", Rule: rule})
	}
	clone := func() Knobs {
		c := k
		c.Preferred = slices.Clone(k.Preferred)
		return c
	}
	budget := float64(lim.Budget.Microseconds())
	lat := float64(o.Latency.Microseconds())
	busy := o.ComputeUs > 0 && (o.QueueUs >= o.ComputeUs || o.Utilization(k.Instances) >= 0.7)
	underUsed := o.HasGPU && o.GPUUtil < 0.6 && o.ComputeUs > 0 && o.QueueUs >= 0.5*o.ComputeUs
	saturated := o.HasGPU && o.GPUUtil >= 0.95
	tight := o.MemoryTight()
	roomy := lat < 0.8*budget

	if tight && k.Instances > 1 {
		to := clone()
		to.Instances--
		add("memory-tight", o.memory()+": free memory", to)
	}
	if k.Dynamic && k.QueueDelayUs > 0 && !roomy {
		to := clone()
		to.QueueDelayUs = k.QueueDelayUs / 2
		add("latency-high", fmt.Sprintf("latency %v is near the budget %v", o.Latency, lim.Budget), to)
	}
	if k.MaxBatch > 0 && !k.Dynamic && (busy || o.Concurrency > 1) {
		to := clone()
		to.Dynamic, to.QueueDelayUs = true, 0
		add("enable-batching", fmt.Sprintf("queue %.0fus vs compute %.0fus at concurrency %d: batch the waiting requests", o.QueueUs, o.ComputeUs, o.Concurrency), to)
	}
	if (busy || underUsed) && !saturated && !tight && k.Instances < lim.MaxInstances {
		to := clone()
		to.Instances++
		why := fmt.Sprintf("instances busy: utilization %.0f%%, queue %.0fus vs compute %.0fus", 100*o.Utilization(k.Instances), o.QueueUs, o.ComputeUs)
		if underUsed {
			why = fmt.Sprintf("GPU under-used (%.0f%%) while requests wait: queue %.0fus vs compute %.0fus", 100*o.GPUUtil, o.QueueUs, o.ComputeUs)
		}
		add("add-instance", why, to)
	}
	if k.Dynamic && k.MaxBatch > 1 && o.MeanBatch > 0 && o.MeanBatch < 0.5*float64(k.MaxBatch) && roomy {
		to := clone()
		if k.QueueDelayUs == 0 {
			to.QueueDelayUs = max(500, int64(o.ComputeUs/4))
		} else {
			to.QueueDelayUs = 2 * k.QueueDelayUs
		}
		if limit := int64(budget / 4); to.QueueDelayUs > limit {
			to.QueueDelayUs = limit
		}
		if to.QueueDelayUs > k.QueueDelayUs {
			add("fill-batches", fmt.Sprintf("batches average %.1f of %d and latency has room", o.MeanBatch, k.MaxBatch), to)
		}
	}
	if k.Dynamic && k.MaxBatch > 1 && o.Batch1 >= 0.5 && o.Concurrency > 1 {
		to := clone()
		cur := int64(0)
		for _, p := range k.Preferred {
			cur = max(cur, p)
		}
		next := max(1, int64(k.MaxBatch)/2)
		if cur > 0 {
			next = min(int64(k.MaxBatch), 2*cur)
		}
		if next > cur {
			to.Preferred = []int64{next}
			add("preferred-batch", fmt.Sprintf("%.0f%% of executions are batch 1 at concurrency %d", 100*o.Batch1, o.Concurrency), to)
		}
	}
	if k.Dynamic && k.MaxBatch > 0 && o.MeanBatch >= 0.8*float64(k.MaxBatch) && roomy && !tight && 2*k.MaxBatch <= lim.MaxBatchSize {
		to := clone()
		to.MaxBatch = 2 * k.MaxBatch
		add("raise-max-batch", fmt.Sprintf("batches average %.1f of %d: they come out full", o.MeanBatch, k.MaxBatch), to)
	}
	if k.Instances > 1 && !tight && o.ComputeUs > 0 && o.QueueUs < 0.1*o.ComputeUs {
		to := clone()
		to.Instances--
		add("remove-instance", fmt.Sprintf("queue %.0fus is under 10%% of compute %.0fus: instances sit idle", o.QueueUs, o.ComputeUs), to)
	}
	return out
}

// describe names what changes from a to b.
func describe(a, b Knobs) string {
	switch {
	case a.Dynamic != b.Dynamic && b.Dynamic:
		return fmt.Sprintf("enable dynamic_batching (max_queue_delay_microseconds %d)", b.QueueDelayUs)
	case a.Dynamic != b.Dynamic:
		return "disable dynamic_batching"
	case a.QueueDelayUs != b.QueueDelayUs:
		return fmt.Sprintf("dynamic_batching.max_queue_delay_microseconds %d -> %d", a.QueueDelayUs, b.QueueDelayUs)
	case !slices.Equal(a.Preferred, b.Preferred):
		return fmt.Sprintf("dynamic_batching.preferred_batch_size %v -> %v", a.Preferred, b.Preferred)
	case a.MaxBatch != b.MaxBatch:
		return fmt.Sprintf("max_batch_size %d -> %d", a.MaxBatch, b.MaxBatch)
	case a.Instances != b.Instances:
		return fmt.Sprintf("instance_group[0].count %d -> %d", a.Instances, b.Instances)
	}
	return "no change"
}
