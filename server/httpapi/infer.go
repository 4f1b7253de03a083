package httpapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"inferperf/kserve"
	"inferperf/server"
	"inferperf/server/fault"
	"inferperf/server/trace"
)

// headerContentLength is the binary tensor data extension's header (protocol reference §3.8).
const headerContentLength = "Inference-Header-Content-Length"

func (h *Handler) infer(w http.ResponseWriter, r *http.Request, name, ver string) {
	// net/http has read the request's headers by now; the receive is stamped from here to the
	// end of the body. One atomic load while tracing is off.
	tr := h.srv.SampleTrace(name)
	if tr != nil {
		tr.Mark(trace.HTTPRecvStart)
		defer tr.Finish()
	}
	if r.ContentLength > h.opts.MaxInputSize {
		// Refused before reading: a client announcing a body over the limit gets its answer at
		// once, not after sending it (or after the read timeout, if it never does).
		h.refuse(w, name, ver, kserve.Errorf(kserve.InvalidArg, "request body of %d bytes exceeds the %d-byte limit (--http-max-input-size)", r.ContentLength, h.opts.MaxInputSize))
		return
	}
	act := h.srv.Fault(name, ver)
	src := r.Body
	if act.SlowRead > 0 {
		src = &slowReader{ReadCloser: src, pause: act.SlowRead, ctx: r.Context()}
	}
	body, err := readBody(http.MaxBytesReader(w, src, h.opts.MaxInputSize), r.ContentLength)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.refuse(w, name, ver, kserve.Errorf(kserve.InvalidArg, "request body exceeds the %d-byte limit (--http-max-input-size)", tooBig.Limit))
		} else {
			h.refuse(w, name, ver, kserve.Errorf(kserve.InvalidArg, "reading the request body: %v", err))
		}
		return
	}
	if tr != nil {
		tr.Mark(trace.HTTPRecvEnd)
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" {
		if body, err = decompress(enc, body, h.opts.MaxInputSize); err != nil {
			var ke *kserve.Error
			if errors.As(err, &ke) && ke.Code == kserve.Unsupported {
				w.Header().Set("Accept-Encoding", "gzip, deflate")
			}
			h.refuse(w, name, ver, err)
			return
		}
	}
	headerLen := -1
	if hv := r.Header.Get(headerContentLength); hv != "" {
		n, err := strconv.Atoi(strings.TrimSpace(hv))
		if err != nil || n < 0 || n > len(body) {
			h.refuse(w, name, ver, kserve.Errorf(kserve.InvalidArg, "%s: %q must be an integer between 0 and the body length %d", headerContentLength, hv, len(body)))
			return
		}
		headerLen = n
	}
	req, err := kserve.DecodeInferRequestHTTP(body, headerLen)
	if errors.Is(err, kserve.ErrRawBinaryRequest) {
		req, err = h.rawRequest(name, ver, body)
	}
	if err != nil {
		h.refuse(w, name, ver, err)
		return
	}
	req.ModelName, req.ModelVersion = name, ver
	if act != (fault.Action{}) {
		if err := act.Wait(r.Context(), h.srv.FaultGate()); err != nil {
			writeError(w, err)
			return
		}
	}
	resp, err := h.srv.InferTraced(r.Context(), req, tr)
	if errors.Is(err, server.ErrDecoupled) {
		err = errDecoupled
	}
	if err != nil {
		writeError(w, err)
		return
	}
	if tr != nil {
		tr.Mark(trace.InferResponseComplete)
	}
	header, blobs, err := kserve.EncodeInferResponseHTTP(resp, kserve.BinaryOutputSelector(req))
	if err != nil {
		writeError(w, err) // an *kserve.Error: FP16 asked for as JSON is the client's fault (400)
		return
	}
	if tr != nil {
		tr.Mark(trace.HTTPSendStart)
	}
	if act.Reset || act.SlowRead > 0 {
		h.writeFaultyReply(w, r, act, header, blobs)
		return
	}
	h.writeInferReply(w, r, header, blobs)
	if tr != nil {
		// net/http would send the buffered reply once the handler returns; a traced one is sent
		// now, so that HTTP_SEND_END marks the reply written to the connection, as Triton's does.
		http.NewResponseController(w).Flush()
		tr.Mark(trace.HTTPSendEnd)
	}
}

// errDecoupled is Triton's answer to an HTTP inference on a decoupled model (http_server.cc): 501,
// as such a model answers on gRPC streaming only.
var errDecoupled = kserve.Errorf(kserve.Unsupported, "HTTP end point doesn't support models with decoupled transaction policy")

// refuse answers a request that failed before it reached the core. Triton checks the model's
// transaction policy before anything else, so a request to a decoupled model is refused as such
// whatever else is wrong with it; the check costs nothing to a request that succeeds.
func (h *Handler) refuse(w http.ResponseWriter, name, ver string, err error) {
	if h.srv.Decoupled(name, ver) {
		err = errDecoupled
	}
	writeError(w, err)
}

// rawRequest builds the request of Triton's raw binary form (Inference-Header-Content-Length: 0):
// the body is the data of the model's single input, whose shape must be deducible.
func (h *Handler) rawRequest(name, ver string, body []byte) (*kserve.InferRequest, error) {
	md, err := h.srv.ModelMetadata(name, ver)
	if err != nil {
		return nil, err
	}
	if len(md.Inputs) != 1 {
		return nil, kserve.Errorf(kserve.InvalidArg, "raw binary request is only allowed for models with a single input; '%s' has %d", name, len(md.Inputs))
	}
	in := md.Inputs[0]
	dims := in.Shape
	var shape []int64
	if md.MaxBatchSize > 0 {
		dims, shape = dims[1:], []int64{1}
	}
	if in.Datatype == kserve.Bytes {
		for _, d := range dims {
			if d != 1 && d != -1 {
				return nil, kserve.Errorf(kserve.InvalidArg, "raw binary request for BYTES input '%s' needs shape [1]", in.Name)
			}
		}
		for range dims {
			shape = append(shape, 1)
		}
	} else {
		known, variable := int64(1), -1
		for i, d := range dims {
			if d < 0 {
				if variable >= 0 {
					return nil, kserve.Errorf(kserve.InvalidArg, "raw binary request: the shape of input '%s' has more than one variable dimension", in.Name)
				}
				variable = i
				continue
			}
			known *= d
		}
		size := int64(in.Datatype.ElementSize())
		for i, d := range dims {
			if i == variable {
				if known == 0 || int64(len(body))%(known*size) != 0 {
					return nil, kserve.Errorf(kserve.InvalidArg, "raw binary request: %d bytes do not fit input '%s'", len(body), in.Name)
				}
				d = int64(len(body)) / (known * size)
			}
			shape = append(shape, d)
		}
	}
	return &kserve.InferRequest{Inputs: []kserve.Tensor{{Name: in.Name, Datatype: in.Datatype, Shape: shape, Data: body}}, BinaryDataOutput: true}, nil
}

// readBody reads a request body whole, as io.ReadAll does (same data, same errors), into a
// buffer sized from the request's Content-Length when it announces one: io.ReadAll starts at
// 512 bytes and grows, which costs a typical JSON request two or three allocations and copies.
// The extra byte lets the read that finds EOF happen without growing the buffer. The size is
// capped at presizeLimit, so that a client announcing a large body and sending little cannot
// make the server reserve the whole of it up front.
func readBody(src io.Reader, contentLength int64) ([]byte, error) {
	if contentLength <= 0 {
		return io.ReadAll(src)
	}
	b := make([]byte, 0, min(contentLength+1, presizeLimit))
	for {
		n, err := src.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			// A body over presizeLimit, or more than announced (only a handler test can send
			// that): grow as io.ReadAll does.
			b = append(b, 0)[:len(b)]
		}
	}
}

// presizeLimit is the most readBody allocates before the body's bytes arrive.
const presizeLimit = 1 << 20

// The content types of inference replies, shared by every reply so that setting them allocates
// nothing. net/http only reads header values, never writes into them.
var (
	contentTypeJSON   = []string{"application/json"}
	contentTypeBinary = []string{"application/octet-stream"}
)

// setReplyType sets an inference reply's content type: binary (with the JSON header's length)
// when it carries output blobs, JSON otherwise. The keys are canonical and assigned directly,
// which is what Header.Set does after canonicalizing them and allocating the value slice.
func setReplyType(hdr http.Header, header []byte, blobs [][]byte) {
	if len(blobs) > 0 {
		hdr["Content-Type"] = contentTypeBinary
		hdr[headerContentLength] = []string{strconv.Itoa(len(header))}
	} else {
		hdr["Content-Type"] = contentTypeJSON
	}
}

// writeInferReply writes an inference reply, compressed if the client accepts it.
func (h *Handler) writeInferReply(w http.ResponseWriter, r *http.Request, header []byte, blobs [][]byte) {
	hdr := w.Header()
	setReplyType(hdr, header, blobs)
	if enc := pickEncoding(r.Header.Get("Accept-Encoding")); enc != "" {
		var buf bytes.Buffer
		var zw io.WriteCloser
		if enc == "gzip" {
			zw = gzip.NewWriter(&buf)
		} else {
			zw = zlib.NewWriter(&buf)
		}
		zw.Write(header)
		for _, b := range blobs {
			zw.Write(b)
		}
		zw.Close()
		hdr.Set("Content-Encoding", enc)
		hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
		w.WriteHeader(http.StatusOK)
		w.Write(buf.Bytes())
		return
	}
	n := len(header)
	for _, b := range blobs {
		n += len(b)
	}
	hdr["Content-Length"] = []string{strconv.Itoa(n)}
	w.WriteHeader(http.StatusOK)
	w.Write(header)
	for _, b := range blobs {
		w.Write(b)
	}
}

// pickEncoding chooses the highest-weighted of gzip and deflate in an Accept-Encoding header, or
// "" for identity (no compression), as Triton does.
//
// It walks the header with iterators rather than splitting it into slices: it runs on every
// reply, and most clients send no Accept-Encoding at all.
func pickEncoding(accept string) string {
	if accept == "" {
		return ""
	}
	best, bestQ := "", 0.0
	identityQ := 0.001 // identity wins ties: compress only when asked
	for part := range strings.SplitSeq(accept, ",") {
		coding, params, _ := strings.Cut(part, ";")
		name := strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		for f := range strings.SplitSeq(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(f), "q="); ok {
				if p, err := strconv.ParseFloat(v, 64); err == nil {
					q = p
				}
			}
		}
		switch name {
		case "gzip", "deflate":
			if q > bestQ {
				best, bestQ = name, q
			}
		case "identity":
			identityQ = q
		}
	}
	if bestQ <= 0 || bestQ < identityQ {
		return ""
	}
	return best
}
