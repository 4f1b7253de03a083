package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

// TestReadBodyMatchesReadAll checks that readBody returns what io.ReadAll returns, data and
// error, whatever Content-Length announces and however the reader splits the body.
func TestReadBodyMatchesReadAll(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789"), 300)
	errBroken := errors.New("broken")
	readers := map[string]func(n int) io.Reader{
		"whole":    func(n int) io.Reader { return bytes.NewReader(body[:n]) },
		"one byte": func(n int) io.Reader { return iotest.OneByteReader(bytes.NewReader(body[:n])) },
		"data+EOF": func(n int) io.Reader { return iotest.DataErrReader(bytes.NewReader(body[:n])) },
		"error":    func(n int) io.Reader { return io.MultiReader(bytes.NewReader(body[:n]), iotest.ErrReader(errBroken)) },
		// Over the limit: http.MaxBytesReader's error, as the handler reads through it.
		"limited": func(n int) io.Reader {
			return http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(bytes.NewReader(body[:n])), 100)
		},
	}
	for name, reader := range readers {
		for _, n := range []int{0, 1, 99, 100, 101, 511, 512, 513, 2999, 3000} {
			// Content-Length: absent, exact, short of the body, beyond it.
			for _, cl := range []int64{-1, 0, int64(n), int64(n / 2), int64(n + 7)} {
				want, wantErr := io.ReadAll(reader(n))
				got, err := readBody(reader(n), cl)
				if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%s: readBody(%d bytes, %d) = %d bytes, %v; io.ReadAll gives %d bytes, %v", name, n, cl, len(got), err, len(want), wantErr)
				}
				var tooBig, wantTooBig *http.MaxBytesError
				if errors.As(err, &tooBig) != errors.As(wantErr, &wantTooBig) {
					t.Errorf("%s: readBody(%d bytes, %d) error %v; io.ReadAll's is %v", name, n, cl, err, wantErr)
				}
			}
		}
	}
}

// TestReadBodyPresizeCap checks that an announced length is not allocated beyond presizeLimit
// before the bytes arrive.
func TestReadBodyPresizeCap(t *testing.T) {
	got, err := readBody(bytes.NewReader([]byte("{}")), 1<<30)
	if err != nil || string(got) != "{}" || cap(got) > presizeLimit {
		t.Errorf("readBody({}, 1<<30) = %q (cap %d), %v; want \"{}\" with cap <= %d", got, cap(got), err, presizeLimit)
	}
}
