package httpapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"inferperf/server/fault"
)

// slowReader reads a request body in chunks of fault.SlowChunk bytes with a pause before each:
// the slow-read fault.
type slowReader struct {
	io.ReadCloser
	pause time.Duration
	ctx   context.Context
}

func (s *slowReader) Read(p []byte) (int, error) {
	if err := sleep(s.ctx, s.pause); err != nil {
		return 0, err
	}
	return s.ReadCloser.Read(p[:min(len(p), fault.SlowChunk)])
}

// sleep pauses for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeFaultyReply writes an inference reply under an injected fault: with a reset, it sends
// the headers and the first half of the body, then resets the connection (TCP RST), so the
// client sees a connection broken in the middle of a response, not a clean error; with a slow
// read, it trickles the body in chunks with a pause before each. Replies under faults are never
// compressed, to keep the cut and the chunks where the fault puts them.
func (h *Handler) writeFaultyReply(w http.ResponseWriter, r *http.Request, act fault.Action, header []byte, blobs [][]byte) {
	body := header
	if len(blobs) > 0 {
		body = append([]byte(nil), header...)
		for _, b := range blobs {
			body = append(body, b...)
		}
	}
	hdr := w.Header()
	setReplyType(hdr, header, blobs)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if act.Reset {
		w.Write(body[:len(body)/2])
		rc.Flush() // Hijack sends the headers, but not a body still in the response's buffer
		conn, _, err := rc.Hijack()
		if err != nil {
			// Not hijackable (HTTP/2): abort the handler, which resets the stream.
			panic(http.ErrAbortHandler)
		}
		fault.Abort(conn)
		return
	}
	for len(body) > 0 {
		if sleep(r.Context(), act.SlowRead) != nil {
			return
		}
		n := min(len(body), fault.SlowChunk)
		if _, err := w.Write(body[:n]); err != nil {
			return
		}
		rc.Flush()
		body = body[n:]
	}
}
