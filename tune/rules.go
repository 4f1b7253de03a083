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

// Utilization estimates the share of the time the instances spend computing: executions per
// second (throughput over the mean batch) times the compute time of one execution, spread over the
// instances; 0 when the server gives no statistics.
//
// The figure is clamped to [0, 1]. The server's compute time is a per-request mean, and Triton
// (like the reference server) charges every request of a batch the batch's whole compute time, so
// with mixed batch sizes the long, large executions weigh by their request count and the mean
// overstates one execution's time; and the throughput is the client's count over its windows
// while the compute time comes from the server's statistics over the span bracketing them. With
// instances that compute all the time the estimate is therefore near 1 and may land above it (the
// embedded delay model at batch 8: 330.9 infer/s / 8 × 23974 µs = 0.99); an instance cannot
// compute more than all the time, so what is over 1 reads as 1. Exact busy time would need the
// per-batch-size compute durations of the statistics' batch_stats, which the level does not keep.
func (o Observation) Utilization(instances int) float64 {
	if o.ComputeUs == 0 || instances < 1 {
		return 0
	}
	mb := max(o.MeanBatch, 1)
	return min(1, max(0, o.Throughput/mb*o.ComputeUs/1e6/float64(instances)))
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

// Held is a change a rule asks for that a limit forbids: the rule, why it fired, and the limit
// that stops it.
type Held struct {
	Rule, Why, Limit string
}

// String is the line the step log prints for it.
func (h Held) String() string {
	return fmt.Sprintf("%s: %s, so no change (%s)", h.Rule, h.Limit, h.Why)
}

// Thresholds of the instance rules, on Utilization. In a single queue with random arrivals and a
// fixed service time (M/D/1), the mean wait reaches the service time at 2/3 load and half of it at
// 1/2 load: a request waits about as long as it computes only once the instances are two-thirds
// busy. A queue wait that long at a lower utilization is not the instances' doing (the batcher's
// delay, the server's scheduling around a tiny compute time), and another instance would not
// shorten it.
const (
	busyShare    = 0.7 // the instances are busy: another one can take work
	waitingShare = 0.5 // busy enough that a wait of half the compute time is theirs
)

// Propose lists the changes the rules below suggest for a configuration, most promising first,
// and the changes a rule asks for that a limit holds back. Every proposal changes one setting.
// The rules, in order:
//
//  0. memory-tight: more than one instance and memory nearly full (≥ 90% of the GPU's, or of
//     the host's without GPU metrics) → instance_group.count - 1, before anything else.
//  1. latency-high: the operating point's latency is within 20% of the budget and the batcher
//     holds requests (queue delay > 0) → halve max_queue_delay_microseconds.
//  2. enable-batching: the model batches (max_batch_size > 0), dynamic batching is off and more
//     than one request is in flight or the instances are busy (utilization ≥ 70%, as for
//     add-instance) → enable dynamic_batching (no queue delay: batch what is already waiting).
//  3. add-instance: the instances are busy — the estimated utilization (executions/s × compute
//     time per execution ÷ instances, see Utilization) is ≥ 70% — or the GPU is under-used
//     (< 60%) while requests wait on instances at least half busy (queue ≥ half the compute,
//     utilization ≥ 50%) → instance_group.count + 1. Not when memory is tight, nor when the GPUs
//     are saturated (≥ 95%: another instance only shares them). At MaxInstances the change is
//     returned as held instead.
//  4. fill-batches: dynamic batching is on, executions average under half of max_batch_size and
//     the latency leaves room (< 80% of the budget) → raise max_queue_delay_microseconds (from 0
//     to a quarter of the compute time, at least 500 µs, then doubling; at most a quarter of the
//     budget).
//  5. preferred-batch: executions are mostly of batch 1 (≥ 50%) under load → set or raise
//     preferred_batch_size (half of max_batch_size first, then doubling, up to max_batch_size).
//  6. raise-max-batch: batches come out nearly full (mean ≥ 80% of max_batch_size), the latency
//     leaves room and memory is not tight → double max_batch_size, up to MaxBatchSize.
//  7. remove-instance: more than one instance, requests hardly wait (queue < 10% of compute) and
//     one instance fewer would stay under the busy mark (utilization × n/(n-1) < 70%, so that
//     add-instance would not ask for it back) → instance_group.count - 1.
//
// The host's CPU utilization is not a rule's input: the load generator often shares the host,
// so it says little about the model's instances. The tuner tries the proposals in this order,
// skipping any already tried on the same configuration.
func Propose(k Knobs, o Observation, lim Limits) (out []Proposal, held []Held) {
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
	util := o.Utilization(k.Instances)
	busy := util >= busyShare
	underUsed := o.HasGPU && o.GPUUtil < 0.6 && util >= waitingShare && o.QueueUs >= 0.5*o.ComputeUs
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
		why := fmt.Sprintf("%d requests in flight, queue %.0fus vs compute %.0fus: batch the waiting requests", o.Concurrency, o.QueueUs, o.ComputeUs)
		if o.Concurrency <= 1 {
			why = fmt.Sprintf("instances %.0f%% busy: batch the requests as they come", 100*util)
		}
		add("enable-batching", why, to)
	}
	if (busy || underUsed) && !saturated && !tight {
		why := fmt.Sprintf("instances busy: %.0f%% utilization of %d at %.0fus compute per execution, queue %.0fus", 100*util, k.Instances, o.ComputeUs, o.QueueUs)
		if !busy {
			why = fmt.Sprintf("GPU under-used (%.0f%%) while requests wait on instances %.0f%% busy: queue %.0fus vs compute %.0fus", 100*o.GPUUtil, 100*util, o.QueueUs, o.ComputeUs)
		}
		if k.Instances < lim.MaxInstances {
			to := clone()
			to.Instances++
			add("add-instance", why, to)
		} else {
			held = append(held, Held{Rule: "add-instance", Why: why, Limit: fmt.Sprintf("instance_group.count is at --max-instances %d", lim.MaxInstances)})
		}
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
		// The same work on one instance fewer; at the busy mark, add-instance would undo it.
		if fewer := util * float64(k.Instances) / float64(k.Instances-1); fewer < busyShare {
			to := clone()
			to.Instances--
			add("remove-instance", fmt.Sprintf("instances %.0f%% busy and queue %.0fus under 10%% of compute %.0fus: %d would be %.0f%% busy", 100*util, o.QueueUs, o.ComputeUs, k.Instances-1, 100*fewer), to)
		}
	}
	return out, held
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
