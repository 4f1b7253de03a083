package httpclient

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"inferperf/client"
	"inferperf/kserve"
)

// prepared is a request encoded once for HTTP: the whole wire body (JSON header and blobs,
// compressed when the client compresses) and a request template whose header map and URL every
// send shares read-only.
type prepared struct {
	req  *kserve.InferRequest
	tmpl http.Request // Body is nil; each send sets its own reader over body
	body []byte
}

// Request returns the request p was prepared from.
func (p *prepared) Request() *kserve.InferRequest { return p.req }

// getBody lets the transport replay the body when a kept-alive connection turns out to be
// closed before anything was written (net/http retries such a request only if it can).
func (p *prepared) getBody() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(p.body)), nil
}

// Prepare encodes req once: the binary tensor data extension for the inputs when
// Options.BinaryInputs is set, every requested output binary or JSON as Options.BinaryOutputs
// says (the per-output binary_data flag when req lists outputs, binary_data_output when it lists
// none), the body compressed once when Options.Compression is set. req must not change while
// the prepared request is in use.
func (c *Client) Prepare(req *kserve.InferRequest) (client.Prepared, error) {
	if req == nil || req.ModelName == "" {
		return nil, client.Errorf(client.KindOther, 0, "prepare: the request names no model")
	}
	enc := *req
	if len(req.Outputs) == 0 {
		enc.BinaryDataOutput = req.BinaryDataOutput || c.opts.BinaryOutputs
	} else {
		enc.Outputs = make([]kserve.RequestedOutput, len(req.Outputs))
		copy(enc.Outputs, req.Outputs)
		for i := range enc.Outputs {
			enc.Outputs[i].Binary = c.opts.BinaryOutputs
		}
	}
	header, blobs, err := kserve.EncodeInferRequestHTTP(&enc, c.opts.BinaryInputs)
	if err != nil {
		return nil, client.Errorf(client.KindOther, 0, "encoding a request for model %q: %v", req.ModelName, err)
	}
	n := len(header)
	for _, b := range blobs {
		n += len(b)
	}
	body := make([]byte, 0, n)
	body = append(body, header...)
	for _, b := range blobs {
		body = append(body, b...)
	}

	h := c.headers.Clone()
	if h == nil {
		h = make(http.Header, 4)
	}
	if len(blobs) > 0 {
		h["Content-Type"] = []string{"application/octet-stream"}
		h["Inference-Header-Content-Length"] = []string{strconv.Itoa(len(header))}
	} else {
		h["Content-Type"] = []string{"application/json"}
	}
	if c.encoding != "" {
		if body, err = compress(c.encoding, body); err != nil {
			return nil, client.Errorf(client.KindOther, 0, "compressing a request for model %q: %v", req.ModelName, err)
		}
		h["Content-Encoding"] = []string{c.encoding}
		h["Accept-Encoding"] = []string{c.encoding}
	}

	p := &prepared{req: req, body: body}
	u := c.endpoint(modelPath(req.ModelName, req.ModelVersion) + "/infer")
	p.tmpl = http.Request{
		Method:        http.MethodPost,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		ContentLength: int64(len(body)),
		Host:          u.Host,
		GetBody:       p.getBody,
	}
	if c.hostHeader != "" {
		p.tmpl.Host = c.hostHeader
	}
	return p, nil
}

// own returns the HTTP form of a prepared request.
func own(p client.Prepared) (*prepared, error) {
	hp, ok := p.(*prepared)
	if !ok || hp == nil {
		return nil, client.Errorf(client.KindOther, 0, "request was not prepared by the HTTP client")
	}
	return hp, nil
}

// Infer sends p, reads the whole reply and checks it cheaply: a 200 status and an
// Inference-Header-Content-Length that fits the body. The tensors are not decoded. st, if not
// nil, receives the breakdown, failed requests included.
func (c *Client) Infer(ctx context.Context, p client.Prepared, st *client.Stamps) error {
	hp, err := own(p)
	if err != nil {
		return err
	}
	cl := callPool.Get().(*call)
	buf := getBuffer()
	status, headerLen, cerr := c.exchange(ctx, hp, cl, buf)
	if st != nil {
		cl.stamps(st)
	}
	if cerr == nil {
		// The reply was read to the end, and net/http holds a body reader at EOF until its
		// connection reader has finished with the request (eofc in transport.go), after the
		// writer has (pc.wroteRequest): the transport is done with this call's body and hooks,
		// so they can serve another request. After a failure it may still hold them; those
		// are left to the garbage collector.
		callPool.Put(cl)
		switch {
		case status != http.StatusOK:
			cerr = c.statusError(status, buf.Bytes())
		case buf.Len() == 0:
			cerr = client.Errorf(client.KindServer, status, "empty inference response")
		case headerLen > buf.Len():
			cerr = client.Errorf(client.KindServer, status,
				"inference response: Inference-Header-Content-Length %d exceeds the body length %d", headerLen, buf.Len())
		}
	}
	putBuffer(buf)
	if cerr != nil {
		return cerr
	}
	return nil
}

// InferResponse sends p and decodes the whole response (JSON and binary outputs alike). st, if
// not nil, receives the exchange's breakdown.
func (c *Client) InferResponse(ctx context.Context, p client.Prepared, st *client.Stamps) (*kserve.InferResponse, error) {
	hp, err := own(p)
	if err != nil {
		return nil, err
	}
	cl := callPool.Get().(*call)
	buf := getBuffer()
	defer putBuffer(buf)
	status, headerLen, cerr := c.exchange(ctx, hp, cl, buf)
	if st != nil {
		cl.stamps(st)
	}
	if cerr != nil {
		return nil, cerr
	}
	callPool.Put(cl)
	if status != http.StatusOK {
		return nil, c.statusError(status, buf.Bytes())
	}
	// The decoded tensors alias the body, so it must outlive the pooled buffer.
	body := bytes.Clone(buf.Bytes())
	resp, err := kserve.DecodeInferResponseHTTP(body, headerLen)
	if err != nil {
		return nil, client.Errorf(client.KindServer, status, "malformed inference response: %v", err)
	}
	return resp, nil
}

// exchange sends p and reads the whole reply into buf, decompressed. It returns the status and
// the Inference-Header-Content-Length (-1 when absent). A non-nil error means no complete reply.
func (c *Client) exchange(ctx context.Context, p *prepared, cl *call, buf *bytes.Buffer) (status, headerLen int, err *client.Error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	cl.reset()
	req := p.tmpl.WithContext(httptrace.WithClientTrace(ctx, &cl.trace))
	if len(p.body) > 0 {
		cl.reader.Reset(p.body)
		req.Body = cl.body
	} else {
		req.Body = http.NoBody
	}
	resp, rerr := c.tr.RoundTrip(req)
	if rerr != nil {
		cl.end = now()
		return 0, -1, c.transportError(ctx, rerr)
	}
	rerr = readBody(resp, buf)
	cl.noteWrites()
	resp.Body.Close()
	cl.end = now()
	if rerr != nil {
		if ce, ok := rerr.(*client.Error); ok {
			return resp.StatusCode, -1, ce
		}
		return 0, -1, c.transportError(ctx, rerr)
	}
	headerLen = -1
	if v := resp.Header["Inference-Header-Content-Length"]; len(v) > 0 {
		n, perr := strconv.Atoi(v[0])
		if perr != nil || n < 0 {
			return resp.StatusCode, -1, client.Errorf(client.KindServer, resp.StatusCode,
				"inference response: bad Inference-Header-Content-Length %q", v[0])
		}
		headerLen = n
	}
	return resp.StatusCode, headerLen, nil
}

// readBody reads the whole body into buf, undoing a Content-Encoding (§3.9).
func readBody(resp *http.Response, buf *bytes.Buffer) error {
	var enc string
	if v := resp.Header["Content-Encoding"]; len(v) > 0 {
		enc = v[0]
	}
	switch enc {
	case "", "identity":
		if n := resp.ContentLength; n > 0 && n < 1<<31 {
			buf.Grow(int(n) + bytes.MinRead)
		}
		_, err := buf.ReadFrom(resp.Body)
		return err
	case "gzip":
		zr, _ := gzipPool.Get().(*gzip.Reader)
		if zr == nil {
			zr = new(gzip.Reader)
		}
		err := zr.Reset(resp.Body)
		if err == nil {
			_, err = buf.ReadFrom(zr)
		}
		gzipPool.Put(zr)
		if err == nil {
			// Leave the connection clean for reuse: anything after the gzip stream is dropped.
			_, err = io.Copy(io.Discard, resp.Body)
		}
		return compressedErr(enc, resp.StatusCode, err)
	case "deflate":
		var zr io.ReadCloser
		var err error
		if pooled, _ := zlibPool.Get().(io.ReadCloser); pooled != nil {
			zr = pooled
			err = pooled.(zlib.Resetter).Reset(resp.Body, nil)
		} else {
			zr, err = zlib.NewReader(resp.Body)
		}
		if err == nil {
			_, err = buf.ReadFrom(zr)
			zlibPool.Put(zr)
		}
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
		}
		return compressedErr(enc, resp.StatusCode, err)
	}
	return client.Errorf(client.KindServer, resp.StatusCode, "response has unsupported Content-Encoding %q", enc)
}

// compressedErr tells a corrupt compressed body (the server's fault) from a broken connection.
func compressedErr(enc string, status int, err error) error {
	switch err {
	case nil:
		return nil
	case gzip.ErrHeader, gzip.ErrChecksum, zlib.ErrHeader, zlib.ErrChecksum, zlib.ErrDictionary:
		return client.Errorf(client.KindServer, status, "corrupt %s response body: %v", enc, err)
	}
	return err
}

var (
	gzipPool sync.Pool // *gzip.Reader
	zlibPool sync.Pool // zlib reader (io.ReadCloser + zlib.Resetter)
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	callPool = sync.Pool{New: func() any { return newCall() }}
)

// maxPooledBuffer keeps one huge response from pinning its buffer in the pool for ever.
const maxPooledBuffer = 64 << 20

func getBuffer() *bytes.Buffer {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		bufPool.Put(b)
	}
}

// epoch anchors the call timestamps: now() is monotonic nanoseconds since it, plus one so that
// zero can mean "not seen".
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) + 1 }

// call is the per-request state of the trace hooks, pooled with its hooks and body reader so
// that a send allocates no closures. GotConn runs on the caller's goroutine, WroteRequest on the
// connection's writer goroutine, GotFirstResponseByte on its reader goroutine; hence atomics.
type call struct {
	trace httptrace.ClientTrace // what the request carries; WithClientTrace may compose into it
	hooks httptrace.ClientTrace // the pristine hooks trace is reset to before each use
	// reader and body are the request body. body is io.NopCloser(reader) on purpose: the
	// transport recognises that as an in-memory body and writes headers and body with one
	// flush, where any other body type gets its headers flushed first and costs a second
	// write (and a misleading "request written" time).
	reader bytes.Reader
	body   io.ReadCloser
	conn   atomic.Pointer[timedConn] // the connection the request went out on (set by GotConn)
	// Monotonic timestamps (see now): the request started, a connection was obtained, the
	// last write of the request began and ended (read off conn before it is released), the
	// transport reported the request written, the first response byte arrived, the body was
	// fully read.
	start, end, writeStart, writeEnd int64
	gotConn, wrote, firstByte        atomic.Int64
}

func newCall() *call {
	cl := &call{}
	cl.body = io.NopCloser(&cl.reader)
	cl.hooks = httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			cl.gotConn.Store(now())
			cl.conn.Store(unwrapConn(info.Conn))
		},
		WroteRequest:         func(httptrace.WroteRequestInfo) { cl.wrote.Store(now()) },
		GotFirstResponseByte: func() { cl.firstByte.Store(now()) },
	}
	return cl
}

func (cl *call) reset() {
	cl.trace = cl.hooks
	cl.conn.Store(nil)
	cl.gotConn.Store(0)
	cl.wrote.Store(0)
	cl.firstByte.Store(0)
	cl.start, cl.end, cl.writeStart, cl.writeEnd = now(), 0, 0, 0
}

// noteWrites copies the connection's last write times; call it while the response body is still
// open, before the connection can carry another request.
func (cl *call) noteWrites() {
	if c := cl.conn.Load(); c != nil {
		cl.writeStart, cl.writeEnd = c.writeStart.Load(), c.writeEnd.Load()
	}
}

// stamps fills st as perf_analyzer's HTTP client does (§3.4): send runs from having a connection
// (dialling excluded) to the request written, wait from there to the first response byte, recv
// from there to the body fully read. Missing events (a failed request) collapse onto the next
// known one, so the parts never overlap and never exceed the call.
//
// "Written" is the end of the request's last write on the socket. The transport's WroteRequest
// hook runs on the writer goroutine after that write, and the scheduler may run it only after
// the reader has seen the response; the write's own times are stored right around the syscall.
// A time outside [connection obtained, first byte] belongs to another request or came late,
// and the next candidate is used: write end, write start, WroteRequest, first byte.
func (cl *call) stamps(st *client.Stamps) {
	end := cl.end
	if end == 0 {
		end = now()
	}
	first := cl.firstByte.Load()
	if first == 0 || first > end {
		first = end
	}
	from := cl.gotConn.Load()
	if from == 0 || from > first {
		from = min(cl.start, first)
	}
	wrote := first
	for _, t := range [...]int64{cl.writeEnd, cl.writeStart, cl.wrote.Load()} {
		if t >= from && t <= first {
			wrote = t
			break
		}
	}
	st.Send = time.Duration(wrote - from)
	st.Wait = time.Duration(first - wrote)
	st.Recv = time.Duration(end - first)
}

// timedConn is a client connection that notes when its last write began and ended. HTTP/1.1
// carries one request at a time, so while a call holds the connection these are its writes.
type timedConn struct {
	net.Conn
	writeStart, writeEnd atomic.Int64
}

// Write writes b, noting the time before and after.
func (c *timedConn) Write(b []byte) (int, error) {
	c.writeStart.Store(now())
	n, err := c.Conn.Write(b)
	c.writeEnd.Store(now())
	return n, err
}

// unwrapConn finds the timedConn under a connection (a *tls.Conn wraps it).
func unwrapConn(c net.Conn) *timedConn {
	for c != nil {
		if tc, ok := c.(*timedConn); ok {
			return tc
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

// timedDialer dials connections that note their write times.
func timedDialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &timedConn{Conn: c}, nil
	}
}
