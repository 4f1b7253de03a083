// Package httpapi is the reference server's HTTP/REST front end (KServe v2 with Triton's
// extensions): it routes by path as Triton does, decodes requests, calls the server core and
// encodes replies, with Triton's status codes and error bodies.
package httpapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"inferperf/kserve"
	"inferperf/server"
	"inferperf/server/repository"
	"inferperf/server/stats"
	"inferperf/server/trace"
)

// DefaultMaxInputSize is Triton's --http-max-input-size: 64 MiB.
const DefaultMaxInputSize = 64 << 20

// Options configure the handler.
type Options struct {
	// MaxInputSize caps a request body, compressed and decompressed, in bytes; 0 means
	// DefaultMaxInputSize.
	MaxInputSize int64
}

// Handler serves the HTTP/REST protocol for a server.
type Handler struct {
	srv  *server.Server
	opts Options
}

// New returns the HTTP handler of srv.
func New(srv *server.Server, opts Options) *Handler {
	if opts.MaxInputSize <= 0 {
		opts.MaxInputSize = DefaultMaxInputSize
	}
	return &Handler{srv: srv, opts: opts}
}

// Triton's routes (protocol reference §10.1). The model-statistics route is matched before the
// model route, or "stats" would be taken for a model name. The model routes, inference among
// them, are matched by modelRoute rather than a regular expression: every request takes that
// path, and the regexp engine cost about a microsecond and two allocations per request.
var (
	reRepository = regexp.MustCompile(`^/v2/repository(?:/([^/]+))?/(?:(index)|models/([^/]+)/(load|unload))$`)
	reSharedMem  = regexp.MustCompile(`^/v2/(system|cuda)sharedmemory(?:/region/([^/]+))?/(status|register|unregister)$`)
)

// ServeHTTP routes a request by its path (the query string is ignored, as Triton ignores it).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var route modelRoute
	var traceModel string
	switch {
	case p == "/v2" || p == "/v2/":
		if method(w, r, http.MethodGet) {
			md := h.srv.Metadata()
			writeJSON(w, http.StatusOK, map[string]any{"name": md.Name, "version": md.Version, "extensions": md.Extensions})
		}
	case p == "/v2/health/live":
		if method(w, r, http.MethodGet) {
			healthReply(w, h.srv.Live())
		}
	case p == "/v2/health/ready":
		if method(w, r, http.MethodGet) {
			healthReply(w, h.srv.Ready())
		}
	case p == "/v2/models/stats":
		if method(w, r, http.MethodGet) {
			h.statistics(w, "", "")
		}
	case p == "/v2/trace/setting":
		h.traceSetting(w, r, "")
	case route.parse(p):
		name, ver := route.name, route.version
		switch route.action {
		case "infer":
			if method(w, r, http.MethodPost) {
				h.infer(w, r, name, ver)
			}
		case "ready":
			if method(w, r, http.MethodGet) {
				h.modelReady(w, name, ver)
			}
		case "config":
			if method(w, r, http.MethodGet) {
				h.config(w, name, ver)
			}
		case "stats":
			if method(w, r, http.MethodGet) {
				h.statistics(w, name, ver)
			}
		default:
			if method(w, r, http.MethodGet) {
				h.modelMetadata(w, name, ver)
			}
		}
	case traceRoute(p, &traceModel):
		// After the model routes, which it is not one of, so that inference pays nothing for it.
		h.traceSetting(w, r, traceModel)
	case reRepository.MatchString(p):
		m := reRepository.FindStringSubmatch(p)
		if method(w, r, http.MethodPost) {
			h.repository(w, r, m[1], m[2] == "index", m[3], m[4])
		}
	case reSharedMem.MatchString(p):
		writeError(w, kserve.Errorf(kserve.Unsupported, "shared memory is not supported by this server; send tensor data in the request body"))
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "Not Found"})
	}
}

// modelRoute is a path of the model routes, /v2/models/NAME[/versions/VERSION][/ACTION]: the
// parts of the path they match, which are substrings of it.
type modelRoute struct {
	name, version, action string
}

// parse reports whether p is a model route and if so sets r to its parts. It matches exactly
// what `^/v2/models/([^/]+)(?:/versions/([0-9]+))?(?:/(infer|ready|config|stats))?$` matches,
// with the same submatches: NAME is any non-empty text without '/', VERSION decimal digits,
// ACTION one of infer, ready, config and stats (the tests compare the two).
func (r *modelRoute) parse(p string) bool {
	rest, ok := strings.CutPrefix(p, "/v2/models/")
	if !ok {
		return false
	}
	name, rest, more := strings.Cut(rest, "/")
	if name == "" {
		return false
	}
	*r = modelRoute{name: name}
	if !more {
		return true
	}
	seg, after, more := strings.Cut(rest, "/")
	if seg == "versions" && more {
		ver, tail, more := strings.Cut(after, "/")
		if ver != "" && allDigits(ver) && (!more || isAction(tail)) {
			r.version = ver
			if more {
				r.action = tail
			}
			return true
		}
		// Not a version: "versions" is tried as an action below, which it is not.
	}
	if !more && isAction(seg) {
		r.action = seg
		return true
	}
	return false
}

// isAction reports whether s is one of the model routes' actions.
func isAction(s string) bool {
	switch s {
	case "infer", "ready", "config", "stats":
		return true
	}
	return false
}

// allDigits reports whether s holds nothing but ASCII decimal digits.
func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// traceRoute reports whether p is /v2/models/NAME/trace/setting (Triton's trace setting route
// takes no version), and if so sets *model to NAME.
func traceRoute(p string, model *string) bool {
	rest, ok := strings.CutPrefix(p, "/v2/models/")
	if !ok {
		return false
	}
	name, ok := strings.CutSuffix(rest, "/trace/setting")
	if !ok || name == "" || strings.Contains(name, "/") {
		return false
	}
	*model = name
	return true
}

// traceSetting serves Triton's trace extension: GET reads the trace setting of the server or of
// a model, POST updates it (a JSON object of the settings to change, null clearing one) and
// answers the setting as it then is. Other methods get 405, as on Triton's trace and logging
// routes.
func (h *Handler) traceSetting(w http.ResponseWriter, r *http.Request, model string) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "Method Not Allowed"})
		return
	}
	// The model is checked first, as Triton checks it before it reads the body.
	st, err := h.srv.TraceSetting(model)
	if err == nil && r.Method == http.MethodPost {
		var body []byte
		if body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxInputSize)); err != nil {
			err = kserve.Errorf(kserve.InvalidArg, "reading the request body: %v", err)
		} else if u, perr := trace.ParseJSON(body); perr != nil {
			err = kserve.Errorf(kserve.InvalidArg, "%v", perr)
		} else {
			st, err = h.srv.UpdateTraceSetting(model, u)
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	body := st.JSON()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

func method(w http.ResponseWriter, r *http.Request, want string) bool {
	if r.Method == want {
		return true
	}
	w.Header().Set("Allow", want)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "Method Not Allowed"})
	return false
}

// healthReply answers as Triton does: the status code carries the answer, the body is empty.
func healthReply(w http.ResponseWriter, ok bool) {
	w.Header().Set("Content-Length", "0")
	if ok {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusBadRequest)
	}
}

func (h *Handler) modelReady(w http.ResponseWriter, name, ver string) {
	ready, err := h.srv.ModelReady(name, ver)
	switch {
	case err != nil:
		writeError(w, err)
	case !ready:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Model version not ready"})
	default:
		healthReply(w, true)
	}
}

type tensorMetadata struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

type modelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []tensorMetadata `json:"inputs"`
	Outputs  []tensorMetadata `json:"outputs"`
}

func (h *Handler) modelMetadata(w http.ResponseWriter, name, ver string) {
	md, err := h.srv.ModelMetadata(name, ver)
	if err != nil {
		writeError(w, err)
		return
	}
	out := modelMetadata{Name: md.Name, Versions: md.Versions, Platform: md.Platform, Inputs: []tensorMetadata{}, Outputs: []tensorMetadata{}}
	for _, t := range md.Inputs {
		out.Inputs = append(out.Inputs, tensorMetadata{t.Name, string(t.Datatype), t.Shape})
	}
	for _, t := range md.Outputs {
		out.Outputs = append(out.Outputs, tensorMetadata{t.Name, string(t.Datatype), t.Shape})
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) config(w http.ResponseWriter, name, ver string) {
	cfg, err := h.srv.ModelConfig(name, ver)
	if err != nil {
		writeError(w, err)
		return
	}
	body, err := repository.RenderJSON(cfg)
	if err != nil {
		writeError(w, kserve.Errorf(kserve.Internal, "rendering the configuration of '%s': %v", name, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// Statistics JSON mirrors the proto messages with the same key names (protocol reference §3.11).
type duration struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

type inferStats struct {
	Success       duration `json:"success"`
	Fail          duration `json:"fail"`
	Queue         duration `json:"queue"`
	ComputeInput  duration `json:"compute_input"`
	ComputeInfer  duration `json:"compute_infer"`
	ComputeOutput duration `json:"compute_output"`
	CacheHit      duration `json:"cache_hit"`
	CacheMiss     duration `json:"cache_miss"`
}

type batchStats struct {
	BatchSize     uint64   `json:"batch_size"`
	ComputeInput  duration `json:"compute_input"`
	ComputeInfer  duration `json:"compute_infer"`
	ComputeOutput duration `json:"compute_output"`
}

type responseStats struct {
	ComputeInfer  duration `json:"compute_infer"`
	ComputeOutput duration `json:"compute_output"`
	Success       duration `json:"success"`
	Fail          duration `json:"fail"`
	EmptyResponse duration `json:"empty_response"`
	Cancel        duration `json:"cancel"`
}

type modelStats struct {
	Name           string                   `json:"name"`
	Version        string                   `json:"version"`
	LastInference  uint64                   `json:"last_inference"`
	InferenceCount uint64                   `json:"inference_count"`
	ExecutionCount uint64                   `json:"execution_count"`
	InferenceStats inferStats               `json:"inference_stats"`
	ResponseStats  map[string]responseStats `json:"response_stats"`
	BatchStats     []batchStats             `json:"batch_stats"`
	MemoryUsage    []any                    `json:"memory_usage"`
}

func d(x stats.Duration) duration { return duration{x.Count, x.Ns} }

func (h *Handler) statistics(w http.ResponseWriter, name, ver string) {
	snaps, err := h.srv.Statistics(name, ver)
	if err != nil {
		writeError(w, err)
		return
	}
	out := struct {
		ModelStats []modelStats `json:"model_stats"`
	}{ModelStats: make([]modelStats, 0, len(snaps))}
	for _, s := range snaps {
		ms := modelStats{
			Name: s.Model, Version: s.Version, LastInference: s.LastInference,
			InferenceCount: s.InferenceCount, ExecutionCount: s.ExecutionCount,
			InferenceStats: inferStats{d(s.Success), d(s.Fail), d(s.Queue), d(s.ComputeInput), d(s.ComputeInfer), d(s.ComputeOutput), d(s.CacheHit), d(s.CacheMiss)},
			ResponseStats:  map[string]responseStats{}, BatchStats: []batchStats{}, MemoryUsage: []any{},
		}
		for i, r := range s.Responses {
			ms.ResponseStats[strconv.Itoa(i)] = responseStats{d(r.ComputeInfer), d(r.ComputeOutput), d(r.Success), d(r.Fail), d(r.EmptyResponse), d(r.Cancel)}
		}
		for _, b := range s.Batches {
			ms.BatchStats = append(ms.BatchStats, batchStats{b.BatchSize, d(b.ComputeInput), d(b.ComputeInfer), d(b.ComputeOutput)})
		}
		out.ModelStats = append(out.ModelStats, ms)
	}
	writeJSON(w, http.StatusOK, out)
}

type indexEntry struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (h *Handler) repository(w http.ResponseWriter, r *http.Request, repo string, index bool, name, action string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxInputSize))
	if err != nil {
		writeError(w, kserve.Errorf(kserve.InvalidArg, "reading the request body: %v", err))
		return
	}
	if index {
		var req struct {
			Ready bool `json:"ready"`
		}
		if len(bytes.TrimSpace(body)) > 0 {
			if err := json.Unmarshal(body, &req); err != nil {
				writeError(w, kserve.Errorf(kserve.InvalidArg, "failed to parse the request JSON buffer: %v", err))
				return
			}
		}
		entries, err := h.srv.Index(req.Ready)
		if err != nil {
			writeError(w, err)
			return
		}
		out := make([]indexEntry, 0, len(entries))
		for _, e := range entries {
			out = append(out, indexEntry(e))
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	if repo != "" {
		writeError(w, kserve.Errorf(kserve.Unsupported, "'repository_name' specification is not supported"))
		return
	}
	var req struct {
		Parameters map[string]json.RawMessage `json:"parameters"`
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &req); err != nil {
			writeError(w, kserve.Errorf(kserve.InvalidArg, "failed to parse the request JSON buffer: %v", err))
			return
		}
	}
	if action == "unload" {
		for k, v := range req.Parameters {
			var b bool
			if k != "unload_dependents" || json.Unmarshal(v, &b) != nil {
				writeError(w, kserve.Errorf(kserve.InvalidArg, "unrecognized unload parameter '%s' (only the boolean 'unload_dependents' is accepted)", k))
				return
			}
		}
		if err := h.srv.Unload(r.Context(), name); err != nil {
			writeError(w, err)
			return
		}
		healthReply(w, true)
		return
	}
	var config string
	for k, v := range req.Parameters {
		switch {
		case k == "config":
			if err := json.Unmarshal(v, &config); err != nil {
				writeError(w, kserve.Errorf(kserve.InvalidArg, "load parameter 'config' must be a JSON string holding the model configuration"))
				return
			}
		case strings.HasPrefix(k, "file:"):
			writeError(w, kserve.Errorf(kserve.InvalidArg, "load parameter '%s': the built-in backends use no model files", k))
			return
		default:
			writeError(w, kserve.Errorf(kserve.InvalidArg, "unrecognized load parameter '%s'", k))
			return
		}
	}
	if err := h.srv.Load(r.Context(), name, config); err != nil {
		writeError(w, err)
		return
	}
	healthReply(w, true)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"error":"encoding the reply failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeError answers with Triton's error body and the status of the error's class.
func writeError(w http.ResponseWriter, err error) {
	code := kserve.Internal
	var ke *kserve.Error
	if errors.As(err, &ke) {
		code = ke.Code
	}
	writeJSON(w, code.HTTPStatus(), map[string]string{"error": err.Error()})
}

// decompress undoes a request's Content-Encoding: gzip, deflate (zlib-wrapped, as Triton reads it)
// or identity. The decompressed size is capped too, so a small bomb cannot exhaust memory.
func decompress(encoding string, body []byte, limit int64) ([]byte, error) {
	var zr io.ReadCloser
	var err error
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return body, nil
	case "gzip":
		zr, err = gzip.NewReader(bytes.NewReader(body))
	case "deflate":
		zr, err = zlib.NewReader(bytes.NewReader(body))
	default:
		return nil, kserve.Errorf(kserve.Unsupported, "Unsupported compression type '%s'", encoding)
	}
	if err != nil {
		return nil, kserve.Errorf(kserve.InvalidArg, "failed to decompress the request body: %v", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, kserve.Errorf(kserve.InvalidArg, "failed to decompress the request body: %v", err)
	}
	if int64(len(out)) > limit {
		return nil, kserve.Errorf(kserve.InvalidArg, "decompressed request body exceeds the %d-byte limit (--http-max-input-size)", limit)
	}
	return out, nil
}

var _ = fmt.Sprint
