package scrape

import "sort"

// GPUSummary is one GPU's figures over a load level. Its fields match results.GPU's one for
// one, so results.GPU(summary) converts it.
type GPUSummary struct {
	UUID string
	// Utilization (0-1) and PowerW (W) are the means over the samples that reported them.
	Utilization, PowerW float64
	// MemoryUsedBytes is the largest seen, MemoryTotalBytes the first seen.
	MemoryUsedBytes, MemoryTotalBytes uint64
}

// CPUSummary is the host's figures over a load level.
type CPUSummary struct {
	// Utilization is the mean busy fraction (0-1) over the samples that reported it.
	Utilization float64
	// MemoryUsedBytes is the largest seen, MemoryTotalBytes the first seen.
	MemoryUsedBytes, MemoryTotalBytes uint64
}

// Aggregate merges the samples of a level (perf_analyzer flattens those of the last three
// windows) per GPU, as perf_analyzer does (its §5): utilization and power are averaged, memory
// used is the maximum, memory total the first value seen; and likewise for the host, whose
// utilization is averaged and memory used maximal. Each mean is over the samples that reported
// the figure, so a scrape that missed one does not pull it towards zero. The GPUs are sorted by
// UUID; cpu is nil when no sample has a CPU figure.
func Aggregate(samples []Sample) (gpus []GPUSummary, cpu *CPUSummary) {
	type acc struct {
		sum  GPUSummary
		n    [2]int // samples with utilization, with power
		seen Field  // figures seen so far (for "first total")
	}
	byUUID := map[string]*acc{}
	var c CPUSummary
	var cpuN int
	var cpuSeen Field
	for _, s := range samples {
		for id, r := range s.GPUs {
			a := byUUID[id]
			if a == nil {
				a = &acc{sum: GPUSummary{UUID: id}}
				byUUID[id] = a
			}
			if r.Has&HasUtilization != 0 {
				a.sum.Utilization += r.Utilization
				a.n[0]++
			}
			if r.Has&HasPower != 0 {
				a.sum.PowerW += r.PowerW
				a.n[1]++
			}
			if r.Has&HasMemoryUsed != 0 {
				a.sum.MemoryUsedBytes = max(a.sum.MemoryUsedBytes, r.MemoryUsedBytes)
			}
			if r.Has&HasMemoryTotal != 0 && a.seen&HasMemoryTotal == 0 {
				a.sum.MemoryTotalBytes = r.MemoryTotalBytes
			}
			a.seen |= r.Has
		}
		if r := s.CPU; r != nil {
			if r.Has&HasUtilization != 0 {
				c.Utilization += r.Utilization
				cpuN++
			}
			if r.Has&HasMemoryUsed != 0 {
				c.MemoryUsedBytes = max(c.MemoryUsedBytes, r.MemoryUsedBytes)
			}
			if r.Has&HasMemoryTotal != 0 && cpuSeen&HasMemoryTotal == 0 {
				c.MemoryTotalBytes = r.MemoryTotalBytes
			}
			cpuSeen |= r.Has
		}
	}
	for _, a := range byUUID {
		if a.seen == 0 {
			continue
		}
		if a.n[0] > 0 {
			a.sum.Utilization /= float64(a.n[0])
		}
		if a.n[1] > 0 {
			a.sum.PowerW /= float64(a.n[1])
		}
		gpus = append(gpus, a.sum)
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].UUID < gpus[j].UUID })
	if cpuSeen != 0 {
		if cpuN > 0 {
			c.Utilization /= float64(cpuN)
		}
		cpu = &c
	}
	return gpus, cpu
}
