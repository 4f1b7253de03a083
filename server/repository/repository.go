package repository

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"inferperf/kserve"
	"inferperf/kserve/pb"
	"inferperf/server/models"
)

// builtinFS holds the built-in models, each with its version directory 1/ (kept in git, and
// embedded, by a .gitkeep file, hence all:).
//
//go:embed all:builtin
var builtinFS embed.FS

// Repo is a model repository: a directory of `<model>/config.pbtxt` files.
type Repo struct {
	fsys fs.FS
	// where names the repository in messages.
	where string
}

// Open opens the repository at dir on disk.
func Open(dir string) (*Repo, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("model repository: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("model repository %s is not a directory", dir)
	}
	return &Repo{fsys: os.DirFS(dir), where: dir}, nil
}

// Builtin is the repository served when no --model-repository is given: the models `simple`,
// `identity`, `dense`, `delay` and `repeat` (decoupled), embedded in the binary.
func Builtin() *Repo {
	sub, err := fs.Sub(builtinFS, "builtin")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return &Repo{fsys: sub, where: "built-in repository"}
}

// String names the repository.
func (r *Repo) String() string { return r.where }

// Names lists the model directories of the repository, sorted. Like Triton, any directory counts;
// one without a config.pbtxt fails when it is loaded.
func (r *Repo) Names() ([]string, error) {
	entries, err := fs.ReadDir(r.fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.where, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && e.Name()[0] != '.' {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// Has reports whether the repository has a directory for the model.
func (r *Repo) Has(name string) bool {
	st, err := fs.Stat(r.fsys, name)
	return err == nil && st.IsDir()
}

// Config reads, completes and validates the configuration of a model from its config.pbtxt.
func (r *Repo) Config(name string) (*pb.ModelConfig, error) {
	if !fs.ValidPath(name) || path.Base(name) != name {
		return nil, fmt.Errorf("invalid model name %q", name)
	}
	file := path.Join(name, ConfigFile)
	data, err := fs.ReadFile(r.fsys, file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: model %q has no %s", r.where, name, ConfigFile)
		}
		return nil, err
	}
	cfg, err := ParseText(r.ConfigPath(name), data)
	if err != nil {
		return nil, err
	}
	if err := Complete(cfg, name); err != nil {
		return nil, fmt.Errorf("%s: %w", r.ConfigPath(name), err)
	}
	return cfg, nil
}

// ConfigPath names the config.pbtxt of a model in messages: its path on disk, or
// builtin:<model>/config.pbtxt in the built-in repository.
func (r *Repo) ConfigPath(name string) string {
	return r.display(path.Join(name, ConfigFile))
}

func (r *Repo) display(file string) string {
	if r.where == "built-in repository" {
		return "builtin:" + file
	}
	return path.Join(r.where, file)
}

// Versions lists the versions of a model to serve under its version policy. As in Triton, the
// model's versions are its subdirectories named by a non-negative integer (<model>/1/, ...), and a
// model needs at least one under its policy: a model with none fails to load with Triton's
// message, plus what the directory holds.
func (r *Repo) Versions(cfg *pb.ModelConfig) ([]int64, error) {
	name := cfg.GetName()
	var all []int64
	entries, err := fs.ReadDir(r.fsys, name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading the versions of model '%s': %w", name, err)
	}
	for _, e := range entries {
		if v, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && e.IsDir() && v >= 0 {
			all = append(all, v)
		}
	}
	out := PolicyVersions(cfg.GetVersionPolicy(), all)
	if len(out) > 0 {
		return out, nil
	}
	dir := r.display(name)
	why := fmt.Sprintf("%s has no version directory (a subdirectory named by a version number: create %s/1)", dir, dir)
	if len(all) > 0 {
		why = fmt.Sprintf("its version_policy %s selects none of the versions %v in %s", policyText(cfg.GetVersionPolicy()), all, dir)
	}
	// Triton's words (model_lifecycle.cc, AsyncLoad), then why.
	return nil, fmt.Errorf("at least one version must be available under the version policy of model '%s': %s", name, why)
}

// policyText writes a version policy as config.pbtxt does, for messages.
func policyText(p *pb.ModelVersionPolicy) string {
	switch {
	case p.GetAll() != nil:
		return "{ all { } }"
	case p.GetSpecific() != nil:
		vs := make([]string, len(p.GetSpecific().GetVersions()))
		for i, v := range p.GetSpecific().GetVersions() {
			vs[i] = strconv.FormatInt(v, 10)
		}
		return "{ specific { versions: [ " + strings.Join(vs, ", ") + " ] } }"
	}
	return fmt.Sprintf("{ latest { num_versions: %d } }", max(1, p.GetLatest().GetNumVersions()))
}

// PolicyVersions applies a version policy to the available versions: the versions to serve,
// ascending, none when the policy selects none of them.
func PolicyVersions(p *pb.ModelVersionPolicy, available []int64) []int64 {
	slices.Sort(available)
	var out []int64
	switch {
	case p.GetAll() != nil:
		out = available
	case p.GetSpecific() != nil:
		for _, v := range p.GetSpecific().GetVersions() {
			if slices.Contains(available, v) {
				out = append(out, v)
			}
		}
	default:
		n := int(p.GetLatest().GetNumVersions())
		if n <= 0 {
			n = 1
		}
		out = available[max(0, len(available)-n):]
	}
	return out
}

// Complete fills the defaults Triton fills and validates what the reference server can run.
// dirName is the model's directory name (the name it is served under).
func Complete(cfg *pb.ModelConfig, dirName string) error {
	if cfg.Name == "" {
		cfg.Name = dirName
	}
	if cfg.Name != dirName {
		return fmt.Errorf("model name %q in the configuration differs from its directory %q", cfg.Name, dirName)
	}
	if cfg.VersionPolicy == nil {
		cfg.VersionPolicy = &pb.ModelVersionPolicy{PolicyChoice: &pb.ModelVersionPolicy_Latest_{Latest: &pb.ModelVersionPolicy_Latest{NumVersions: 1}}}
	}
	if cfg.Optimization == nil {
		cfg.Optimization = &pb.ModelOptimizationPolicy{
			InputPinnedMemory:  &pb.ModelOptimizationPolicy_PinnedMemoryBuffer{Enable: true},
			OutputPinnedMemory: &pb.ModelOptimizationPolicy_PinnedMemoryBuffer{Enable: true},
		}
	}
	if cfg.ModelTransactionPolicy == nil {
		// Triton's config endpoint always shows the policy, decoupled false by default.
		cfg.ModelTransactionPolicy = &pb.ModelTransactionPolicy{}
	}
	if len(cfg.InstanceGroup) == 0 {
		cfg.InstanceGroup = []*pb.ModelInstanceGroup{{Kind: pb.ModelInstanceGroup_KIND_CPU, Count: 1}}
	}
	for i, g := range cfg.InstanceGroup {
		if g.Name == "" {
			g.Name = fmt.Sprintf("%s_%d", cfg.Name, i)
		}
		if g.Count < 0 {
			return fmt.Errorf("instance_group %q: count %d is negative", g.Name, g.Count)
		}
		if g.Count == 0 {
			g.Count = 1
		}
		if g.Kind == pb.ModelInstanceGroup_KIND_AUTO {
			// No GPU executes the built-in models, so AUTO resolves to CPU as Triton's does
			// when the listed GPUs are absent.
			g.Kind = pb.ModelInstanceGroup_KIND_CPU
		}
	}
	backends := strings.Join(models.Backends(), ", ")
	switch {
	case cfg.Backend == "" && cfg.Platform != "":
		return fmt.Errorf("model %q sets platform %q and no backend: the reference server runs only its built-in backends; set backend to one of %s", cfg.Name, cfg.Platform, backends)
	case cfg.Backend == "":
		return fmt.Errorf("model %q sets no backend: set backend to one of the built-in backends %s", cfg.Name, backends)
	case !slices.Contains(models.Backends(), cfg.Backend):
		return fmt.Errorf("model %q: unknown backend %q: the reference server runs only its built-in backends %s", cfg.Name, cfg.Backend, backends)
	}
	_, err := Spec(cfg)
	return err
}

// Instances is the number of parallel executors of a configuration: for GPU groups `count` per
// listed GPU (one if none are listed), for the others `count`; passive groups take no requests.
func Instances(cfg *pb.ModelConfig) int {
	n := 0
	for _, g := range cfg.GetInstanceGroup() {
		if g.GetPassive() {
			continue
		}
		c := int(g.GetCount())
		if g.GetKind() == pb.ModelInstanceGroup_KIND_GPU && len(g.GetGpus()) > 1 {
			c *= len(g.GetGpus())
		}
		n += c
	}
	return n
}

// Spec converts a configuration to the Spec a built-in model is built from, refusing what the
// reference server cannot honour rather than silently ignoring it.
func Spec(cfg *pb.ModelConfig) (models.Spec, error) {
	spec := models.Spec{
		Name:         cfg.GetName(),
		Backend:      cfg.GetBackend(),
		MaxBatchSize: int(cfg.GetMaxBatchSize()),
		Parameters:   map[string]string{},
		// Honoured: a decoupled model is served on ModelStreamInfer only, with one stream
		// response per model response, and refused on ModelInfer and HTTP infer, as Triton does.
		Decoupled:       cfg.GetModelTransactionPolicy().GetDecoupled(),
		DynamicBatching: cfg.GetDynamicBatching() != nil,
	}
	if spec.MaxBatchSize < 0 {
		return spec, fmt.Errorf("max_batch_size %d is negative", spec.MaxBatchSize)
	}
	switch {
	case cfg.GetSequenceBatching() != nil:
		return spec, fmt.Errorf("sequence_batching is %w", ErrUnsupported)
	case cfg.GetEnsembleScheduling() != nil:
		return spec, fmt.Errorf("ensemble_scheduling is %w", ErrUnsupported)
	}
	if db := cfg.GetDynamicBatching(); db != nil {
		for _, p := range db.GetPreferredBatchSize() {
			if p < 1 || (spec.MaxBatchSize > 0 && int(p) > spec.MaxBatchSize) {
				return spec, fmt.Errorf("dynamic_batching: preferred_batch_size %d must be in [1, max_batch_size %d]", p, spec.MaxBatchSize)
			}
		}
		if db.GetPriorityLevels() > 0 || len(db.GetPriorityQueuePolicy()) > 0 {
			return spec, fmt.Errorf("dynamic_batching priority levels are %w", ErrUnsupported)
		}
	}
	if Instances(cfg) < 1 {
		return spec, fmt.Errorf("no instance_group can take requests (all passive)")
	}
	seen := map[string]bool{}
	tensors := func(kind string, name string, dt pb.DataType, dims []int64) (models.TensorSpec, error) {
		if name == "" {
			return models.TensorSpec{}, fmt.Errorf("an %s has no name", kind)
		}
		if seen[kind+name] {
			return models.TensorSpec{}, fmt.Errorf("%s %q is declared twice", kind, name)
		}
		seen[kind+name] = true
		t := kserve.FromConfigName(dt.String())
		if t == kserve.Invalid {
			return models.TensorSpec{}, fmt.Errorf("%s %q has data_type %s", kind, name, dt)
		}
		for _, d := range dims {
			if d < -1 {
				return models.TensorSpec{}, fmt.Errorf("%s %q has dimension %d (must be -1 or non-negative)", kind, name, d)
			}
		}
		return models.TensorSpec{Name: name, Datatype: t, Dims: slices.Clone(dims)}, nil
	}
	for _, in := range cfg.GetInput() {
		ts, err := tensors("input", in.GetName(), in.GetDataType(), in.GetDims())
		if err != nil {
			return spec, err
		}
		ts.Optional = in.GetOptional()
		spec.Inputs = append(spec.Inputs, ts)
	}
	for _, out := range cfg.GetOutput() {
		ts, err := tensors("output", out.GetName(), out.GetDataType(), out.GetDims())
		if err != nil {
			return spec, err
		}
		spec.Outputs = append(spec.Outputs, ts)
	}
	if len(spec.Inputs) == 0 || len(spec.Outputs) == 0 {
		return spec, fmt.Errorf("model %q needs at least one input and one output", spec.Name)
	}
	for k, v := range cfg.GetParameters() {
		spec.Parameters[k] = v.GetStringValue()
	}
	return spec, nil
}
