package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"inferperf/kserve"
	"inferperf/kserve/pb"
	"inferperf/server/fault"
	"inferperf/server/models"
	"inferperf/server/repository"
	"inferperf/server/scheduler"
	"inferperf/server/stats"
)

// Load loads or reloads a model. With configJSON it uses that configuration (Triton's `config`
// load parameter: a whole ModelConfig in JSON) instead of the repository's config.pbtxt. It
// returns once the new versions serve requests; the replaced versions finish their queued work in
// the background. Counters of the new versions start at zero.
func (s *Server) Load(ctx context.Context, name, configJSON string) error {
	if !s.explicit {
		return kserve.Errorf(kserve.Unavailable, "explicit model load / unload is not allowed if polling is enabled")
	}
	if s.closing.Load() {
		return kserve.Errorf(kserve.Unavailable, "Server is stopping")
	}
	var cfg *pb.ModelConfig
	if configJSON != "" {
		c, err := repository.ParseJSON([]byte(configJSON))
		if err != nil {
			return kserve.Errorf(kserve.InvalidArg, "failed to load '%s', %v", name, err)
		}
		if err := repository.Complete(c, name); err != nil {
			return kserve.Errorf(kserve.InvalidArg, "failed to load '%s', %v", name, err)
		}
		cfg = c
	} else if !s.repo.Has(name) {
		return kserve.Errorf(kserve.InvalidArg, "failed to load '%s', failed to poll from model repository", name)
	}
	if err := s.load(ctx, name, cfg); err != nil {
		return kserve.Errorf(kserve.InvalidArg, "failed to load '%s', %v", name, err)
	}
	return nil
}

// load builds the model's versions from cfg (or the repository when cfg is nil) and swaps them in.
func (s *Server) load(ctx context.Context, name string, cfg *pb.ModelConfig) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	s.setState(name, StateLoading, "")
	var err error
	// where names the configuration in the errors of building the model from it: its
	// config.pbtxt, or nothing for one given with the load request.
	where := ""
	if cfg == nil {
		cfg, err = s.repo.Config(name)
		where = s.repo.ConfigPath(name) + ": "
	}
	var numbers []int64
	if err == nil {
		numbers, err = s.repo.Versions(cfg)
	}
	var built []*version
	for _, n := range numbers {
		if err != nil {
			break
		}
		var v *version
		if v, err = s.newVersion(cfg, n); err != nil {
			err = fmt.Errorf("%s%w", where, err)
		}
		built = append(built, v)
	}
	if err != nil {
		for _, v := range built {
			if v != nil {
				v.sched.Close(ctx)
			}
		}
		s.setState(name, StateUnavailable, err.Error())
		return err
	}
	s.mu.Lock()
	m := s.models[name]
	old := m.versions
	m.versions, m.state, m.reason = built, StateReady, ""
	s.mu.Unlock()
	s.retire(old)
	s.log.Info("model loaded", "model", name, "versions", len(built), "backend", cfg.GetBackend(),
		"max_batch_size", cfg.GetMaxBatchSize(), "instances", repository.Instances(cfg), "dynamic_batching", cfg.GetDynamicBatching() != nil)
	return nil
}

func (s *Server) newVersion(cfg *pb.ModelConfig, number int64) (*version, error) {
	spec, err := repository.Spec(cfg)
	if err != nil {
		return nil, err
	}
	fc := s.faults
	if ps := cfg.GetParameters(); len(ps) > 0 {
		params := make(map[string]string, len(ps))
		for k, p := range ps {
			params[k] = p.GetStringValue()
		}
		if fc, err = fault.WithParameters(fc, params); err != nil {
			return nil, err
		}
	}
	inj := fault.New(fc)
	if inj != nil {
		s.faulty.Store(true)
	}
	m, err := models.New(spec, fault.Keys()...)
	if err != nil {
		return nil, err
	}
	st := stats.New()
	sched, err := scheduler.New(schedulerConfig(cfg), m, st)
	if err != nil {
		return nil, err
	}
	_, streams := m.(models.Decoupled)
	return &version{name: cfg.GetName(), number: number, label: strconv.FormatInt(number, 10), cfg: cfg, spec: spec, sched: sched, stats: st, faults: inj, streams: streams}, nil
}

// Unload unloads a model. Like Triton it returns without waiting: queued requests of the model
// still finish. Unloading a model that is not loaded succeeds.
func (s *Server) Unload(ctx context.Context, name string) error {
	if !s.explicit {
		return kserve.Errorf(kserve.Unavailable, "explicit model load / unload is not allowed if polling is enabled")
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	s.mu.Lock()
	m := s.models[name]
	if m == nil {
		s.mu.Unlock()
		if !s.repo.Has(name) {
			return kserve.Errorf(kserve.InvalidArg, "failed to unload '%s', no model of that name is known", name)
		}
		return nil
	}
	old := m.versions
	m.versions, m.state, m.reason = nil, StateUnavailable, "unloaded"
	s.mu.Unlock()
	s.retire(old)
	s.log.Info("model unloaded", "model", name)
	return nil
}

// retire closes the schedulers of versions that no longer take requests, in the background.
func (s *Server) retire(vs []*version) {
	for _, v := range vs {
		s.retired.Add(1)
		go func() {
			defer s.retired.Done()
			v.sched.Close(context.Background())
		}()
	}
}

func (s *Server) setState(name, state, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.models[name]
	if m == nil {
		m = &model{name: name}
		s.models[name] = m
	}
	m.state, m.reason = state, strings.TrimSpace(reason)
	if state == StateUnavailable {
		// A failed load leaves the previous versions serving, as Triton keeps the old model
		// when a reload fails.
		if len(m.versions) > 0 {
			m.state = StateReady
		}
	}
}
