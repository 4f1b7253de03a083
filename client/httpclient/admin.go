package httpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"inferperf/client"
	"inferperf/kserve"
)

// The Admin calls are not on the hot path: they use plain net/http requests and encoding/json,
// and are bounded by the caller's context only (Options.Timeout is an inference deadline; a
// model load may legitimately take far longer).

// roundTrip sends one control-plane request and returns the status and the whole reply body. Only a
// transport failure is an error here; the caller judges the status.
func (c *Client) roundTrip(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(path).String(), rd)
	if err != nil {
		return 0, nil, client.Errorf(client.KindOther, 0, "%s %s: %v", method, path, err)
	}
	for k, vs := range c.headers {
		req.Header[k] = vs
	}
	if c.hostHeader != "" {
		req.Host = c.hostHeader
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.admin.Do(req)
	if err != nil {
		return 0, nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, c.transportError(ctx, err)
	}
	return resp.StatusCode, reply, nil
}

// fetch sends a request that must succeed with 200 and decodes the JSON reply into out (nil:
// ignore the reply).
func (c *Client) fetch(ctx context.Context, method, path string, body []byte, out any) error {
	status, reply, err := c.roundTrip(ctx, method, path, body)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return c.statusError(status, reply)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(reply, out); err != nil {
		return client.Errorf(client.KindServer, status, "malformed reply to %s %s: %v", method, path, err)
	}
	return nil
}

// health asks /v2/health/{what}: a non-200 status is "no" (§3.3), and so is a 200 whose JSON
// body (some OIP servers send one) sets the flag to false.
func (c *Client) health(ctx context.Context, what string) (bool, error) {
	status, reply, err := c.roundTrip(ctx, http.MethodGet, "/v2/health/"+what, nil)
	if err != nil {
		return false, err
	}
	if status != http.StatusOK {
		return false, nil
	}
	if len(bytes.TrimSpace(reply)) > 0 {
		var flags map[string]json.RawMessage
		if json.Unmarshal(reply, &flags) == nil {
			if v, ok := flags[what]; ok && string(bytes.TrimSpace(v)) == "false" {
				return false, nil
			}
		}
	}
	return true, nil
}

// Live reports whether the server is live.
func (c *Client) Live(ctx context.Context) (bool, error) { return c.health(ctx, "live") }

// Ready reports whether the server is ready.
func (c *Client) Ready(ctx context.Context) (bool, error) { return c.health(ctx, "ready") }

// ServerMetadata reads GET /v2.
func (c *Client) ServerMetadata(ctx context.Context) (*client.ServerMetadata, error) {
	var m struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Extensions []string `json:"extensions"`
	}
	if err := c.fetch(ctx, http.MethodGet, "/v2", nil, &m); err != nil {
		return nil, err
	}
	return &client.ServerMetadata{Name: m.Name, Version: m.Version, Extensions: m.Extensions}, nil
}

// jsonTensorMetadata is one tensor of the model metadata reply.
type jsonTensorMetadata struct {
	Name     string    `json:"name"`
	Datatype string    `json:"datatype"`
	Shape    []flexInt `json:"shape"`
}

func (t jsonTensorMetadata) metadata() client.TensorMetadata {
	shape := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		shape[i] = int64(d)
	}
	return client.TensorMetadata{Name: t.Name, Datatype: kserve.DataType(t.Datatype), Shape: shape}
}

// ModelMetadata reads GET /v2/models/{name}[/versions/{version}].
func (c *Client) ModelMetadata(ctx context.Context, name, version string) (*client.ModelMetadata, error) {
	var m struct {
		Name     string               `json:"name"`
		Versions []string             `json:"versions"`
		Platform string               `json:"platform"`
		Inputs   []jsonTensorMetadata `json:"inputs"`
		Outputs  []jsonTensorMetadata `json:"outputs"`
	}
	if err := c.fetch(ctx, http.MethodGet, modelPath(name, version), nil, &m); err != nil {
		return nil, err
	}
	md := &client.ModelMetadata{Name: m.Name, Versions: m.Versions, Platform: m.Platform}
	for _, t := range m.Inputs {
		md.Inputs = append(md.Inputs, t.metadata())
	}
	for _, t := range m.Outputs {
		md.Outputs = append(md.Outputs, t.metadata())
	}
	return md, nil
}

// jsonConfig is the part of a rendered ModelConfig the client reads (§3.10). Triton prints
// proto field names; the lowerCamelCase twins accept servers that print protojson's default
// names. 64-bit numbers may be numbers or strings.
type jsonConfig struct {
	Name              string          `json:"name"`
	Platform          string          `json:"platform"`
	Backend           string          `json:"backend"`
	MaxBatchSize      *flexInt        `json:"max_batch_size"`
	MaxBatchSizeCamel *flexInt        `json:"maxBatchSize"`
	Dynamic           json.RawMessage `json:"dynamic_batching"`
	DynamicCamel      json.RawMessage `json:"dynamicBatching"`
	Sequence          json.RawMessage `json:"sequence_batching"`
	SequenceCamel     json.RawMessage `json:"sequenceBatching"`
	Ensemble          *jsonEnsemble   `json:"ensemble_scheduling"`
	EnsembleCamel     *jsonEnsemble   `json:"ensembleScheduling"`
	Policy            *jsonPolicy     `json:"model_transaction_policy"`
	PolicyCamel       *jsonPolicy     `json:"modelTransactionPolicy"`
	Cache             *jsonCache      `json:"response_cache"`
	CacheCamel        *jsonCache      `json:"responseCache"`
}

type jsonEnsemble struct {
	Step []struct {
		ModelName         string   `json:"model_name"`
		ModelNameCamel    string   `json:"modelName"`
		ModelVersion      *flexInt `json:"model_version"`
		ModelVersionCamel *flexInt `json:"modelVersion"`
	} `json:"step"`
}

type jsonPolicy struct {
	Decoupled bool `json:"decoupled"`
}

type jsonCache struct {
	Enable bool `json:"enable"`
}

// present reports whether a sub-message was rendered (null counts as absent).
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// parseConfig reads a rendered ModelConfig. An empty body is the all-default configuration
// (Triton renders nothing then).
func parseConfig(raw []byte) (*client.ModelConfig, error) {
	cfg := &client.ModelConfig{JSON: raw}
	if len(bytes.TrimSpace(raw)) == 0 {
		return cfg, nil
	}
	var j jsonConfig
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, err
	}
	cfg.Name, cfg.Platform, cfg.Backend = j.Name, j.Platform, j.Backend
	if mbs := coalesce(j.MaxBatchSize, j.MaxBatchSizeCamel); mbs != nil {
		cfg.MaxBatchSize = int(*mbs)
	}
	cfg.DynamicBatching = present(j.Dynamic) || present(j.DynamicCamel)
	cfg.Sequence = present(j.Sequence) || present(j.SequenceCamel)
	if p := coalesce(j.Policy, j.PolicyCamel); p != nil {
		cfg.Decoupled = p.Decoupled
	}
	if rc := coalesce(j.Cache, j.CacheCamel); rc != nil {
		cfg.ResponseCache = rc.Enable
	}
	if e := coalesce(j.Ensemble, j.EnsembleCamel); e != nil {
		for _, s := range e.Step {
			step := client.EnsembleStep{ModelName: s.ModelName, ModelVersion: -1}
			if step.ModelName == "" {
				step.ModelName = s.ModelNameCamel
			}
			if v := coalesce(s.ModelVersion, s.ModelVersionCamel); v != nil {
				step.ModelVersion = int64(*v)
			}
			cfg.Ensemble = append(cfg.Ensemble, step)
		}
	}
	return cfg, nil
}

// coalesce returns the first non-nil pointer.
func coalesce[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

// ModelConfig reads GET /v2/models/{name}[/versions/{version}]/config. The reply is kept as it
// came in ModelConfig.JSON.
func (c *Client) ModelConfig(ctx context.Context, name, version string) (*client.ModelConfig, error) {
	path := modelPath(name, version) + "/config"
	status, reply, err := c.roundTrip(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, c.statusError(status, reply)
	}
	cfg, perr := parseConfig(reply)
	if perr != nil {
		return nil, client.Errorf(client.KindServer, status, "malformed configuration of model %q: %v", name, perr)
	}
	return cfg, nil
}

// jsonDuration is a statistic {count, ns}.
type jsonDuration struct {
	Count flexUint `json:"count"`
	Ns    flexUint `json:"ns"`
}

func (d jsonDuration) duration() client.Duration {
	return client.Duration{Count: uint64(d.Count), Ns: uint64(d.Ns)}
}

// jsonModelStats is one model_stats entry (§3.11); objects an older server leaves out stay zero.
type jsonModelStats struct {
	Name           string     `json:"name"`
	Version        flexString `json:"version"`
	LastInference  flexUint   `json:"last_inference"`
	InferenceCount flexUint   `json:"inference_count"`
	ExecutionCount flexUint   `json:"execution_count"`
	InferenceStats struct {
		Success       jsonDuration `json:"success"`
		Fail          jsonDuration `json:"fail"`
		Queue         jsonDuration `json:"queue"`
		ComputeInput  jsonDuration `json:"compute_input"`
		ComputeInfer  jsonDuration `json:"compute_infer"`
		ComputeOutput jsonDuration `json:"compute_output"`
		CacheHit      jsonDuration `json:"cache_hit"`
		CacheMiss     jsonDuration `json:"cache_miss"`
	} `json:"inference_stats"`
	BatchStats []struct {
		BatchSize     flexUint     `json:"batch_size"`
		ComputeInput  jsonDuration `json:"compute_input"`
		ComputeInfer  jsonDuration `json:"compute_infer"`
		ComputeOutput jsonDuration `json:"compute_output"`
	} `json:"batch_stats"`
}

func (s *jsonModelStats) stats() client.ModelStats {
	is := &s.InferenceStats
	out := client.ModelStats{
		Name:           s.Name,
		Version:        string(s.Version),
		LastInference:  uint64(s.LastInference),
		InferenceCount: uint64(s.InferenceCount),
		ExecutionCount: uint64(s.ExecutionCount),
		Success:        is.Success.duration(),
		Fail:           is.Fail.duration(),
		Queue:          is.Queue.duration(),
		ComputeInput:   is.ComputeInput.duration(),
		ComputeInfer:   is.ComputeInfer.duration(),
		ComputeOutput:  is.ComputeOutput.duration(),
		CacheHit:       is.CacheHit.duration(),
		CacheMiss:      is.CacheMiss.duration(),
	}
	for _, b := range s.BatchStats {
		out.Batches = append(out.Batches, client.BatchStats{
			BatchSize:     uint64(b.BatchSize),
			ComputeInput:  b.ComputeInput.duration(),
			ComputeInfer:  b.ComputeInfer.duration(),
			ComputeOutput: b.ComputeOutput.duration(),
		})
	}
	return out
}

// Statistics reads GET /v2/models[/{name}[/versions/{version}]]/stats.
func (c *Client) Statistics(ctx context.Context, name, version string) ([]client.ModelStats, error) {
	path := "/v2/models/stats"
	if name != "" {
		path = modelPath(name, version) + "/stats"
	}
	var reply struct {
		ModelStats []jsonModelStats `json:"model_stats"`
	}
	if err := c.fetch(ctx, http.MethodGet, path, nil, &reply); err != nil {
		return nil, err
	}
	out := make([]client.ModelStats, len(reply.ModelStats))
	for i := range reply.ModelStats {
		out[i] = reply.ModelStats[i].stats()
	}
	return out, nil
}

// RepositoryIndex reads POST /v2/repository/index.
func (c *Client) RepositoryIndex(ctx context.Context, readyOnly bool) ([]client.IndexEntry, error) {
	body := []byte(`{"ready":false}`)
	if readyOnly {
		body = []byte(`{"ready":true}`)
	}
	var entries []struct {
		Name    string     `json:"name"`
		Version flexString `json:"version"`
		State   string     `json:"state"`
		Reason  string     `json:"reason"`
	}
	if err := c.fetch(ctx, http.MethodPost, "/v2/repository/index", body, &entries); err != nil {
		return nil, err
	}
	out := make([]client.IndexEntry, len(entries))
	for i, e := range entries {
		out[i] = client.IndexEntry{Name: e.Name, Version: string(e.Version), State: e.State, Reason: e.Reason}
	}
	return out, nil
}

// Load sends POST /v2/repository/models/{name}/load, with {"parameters":{"config":"..."}} when
// configJSON is given (§3.12: the value is the configuration as a JSON string). It returns once
// the server has loaded the model or failed to.
func (c *Client) Load(ctx context.Context, name, configJSON string) error {
	var body []byte
	if configJSON != "" {
		var err error
		body, err = json.Marshal(map[string]map[string]string{"parameters": {"config": configJSON}})
		if err != nil {
			return client.Errorf(client.KindOther, 0, "load %q: %v", name, err)
		}
	}
	return c.fetch(ctx, http.MethodPost, "/v2/repository/models/"+url.PathEscape(name)+"/load", body, nil)
}

// Unload sends POST /v2/repository/models/{name}/unload; the server does not wait for the unload
// to finish.
func (c *Client) Unload(ctx context.Context, name string) error {
	return c.fetch(ctx, http.MethodPost, "/v2/repository/models/"+url.PathEscape(name)+"/unload", nil, nil)
}

// UpdateTraceSetting posts the settings to /v2/models/{model}/trace/setting: trace_level as an
// array of strings, every other setting as a string, as Triton's trace extension takes them.
func (c *Client) UpdateTraceSetting(ctx context.Context, model string, settings map[string][]string) (map[string][]string, error) {
	body := map[string]any{}
	for k, v := range settings {
		if k == "trace_level" {
			body[k] = v
		} else if len(v) > 0 {
			body[k] = v[0]
		}
	}
	req, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var reply map[string]json.RawMessage
	if err := c.fetch(ctx, http.MethodPost, "/v2/models/"+url.PathEscape(model)+"/trace/setting", req, &reply); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for k, raw := range reply {
		var one string
		var many []string
		switch {
		case json.Unmarshal(raw, &many) == nil:
			out[k] = many
		case json.Unmarshal(raw, &one) == nil:
			out[k] = []string{one}
		}
	}
	return out, nil
}

// flexUint is an unsigned counter that may come as a JSON number or a numeric string.
type flexUint uint64

// UnmarshalJSON accepts 12, "12" and null.
func (f *flexUint) UnmarshalJSON(b []byte) error {
	s, null := unquote(b)
	if null {
		return nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return err
	}
	*f = flexUint(v)
	return nil
}

// flexInt is a signed 64-bit number that may come as a JSON number or a numeric string.
type flexInt int64

// UnmarshalJSON accepts -1, "-1" and null.
func (f *flexInt) UnmarshalJSON(b []byte) error {
	s, null := unquote(b)
	if null {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return err
	}
	*f = flexInt(v)
	return nil
}

// flexString is a string that a lax server may send as a number ("version": 1).
type flexString string

// UnmarshalJSON accepts "1", 1 and null.
func (f *flexString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
		return nil
	}
	s, null := unquote(b)
	if !null {
		*f = flexString(s)
	}
	return nil
}

// unquote returns the text of a JSON number or of a simple string holding one.
func unquote(b []byte) (string, bool) {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return "", true
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		b = b[1 : len(b)-1]
	}
	return string(b), false
}
