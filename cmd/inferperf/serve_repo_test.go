package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"inferperf/internal/testfs"
)

// TestServeModelRepository runs `inferperf serve --model-repository` on repositories as a user
// writes them: a model that cannot load stops the start (--exit-on-error, as tritonserver's
// default) with one line naming its file and position or, for versions, the model in Triton's
// words; with --exit-on-error=false it is listed UNAVAILABLE with that reason while the others
// serve; an empty repository starts with a warning naming it; examples/models serves every model.
func TestServeModelRepository(t *testing.T) {
	const tensors = `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
`
	good := map[string]string{"g/config.pbtxt": `backend: "identity"` + "\n" + tensors, "g/1/": ""}
	noVersion := map[string]string{"m/config.pbtxt": `backend: "identity"` + "\n" + tensors}
	noVersionWhy := "at least one version must be available under the version policy of model 'm': REPO/m has no version directory (a subdirectory named by a version number: create REPO/m/1)"
	cases := []struct {
		name  string
		files map[string]string // path in the repository: contents; a path ending in / is a directory
		repo  string            // a repository to serve instead of files
		args  []string
		// exit is the error line of a serve that refuses to start; empty: it starts.
		exit string
		// warn is a warning serve logs; index is the repository index while it serves.
		warn, index string
	}{
		{name: "empty repository", files: map[string]string{},
			warn:  `level=WARN msg="model repository REPO holds no model directory (<model>/config.pbtxt beside a version directory <model>/1/): the server starts with no models"`,
			index: `[]`},
		{name: "no version directory", files: noVersion, exit: "inferperf: " + noVersionWhy},
		{name: "no version directory, --exit-on-error=false", files: merge(good, noVersion), args: []string{"--exit-on-error=false"},
			index: `[{"name":"g","version":"1","state":"READY"},{"name":"m","state":"UNAVAILABLE","reason":"` + noVersionWhy + `"}]`},
		{name: "truncated config", files: map[string]string{"m/config.pbtxt": `backend: "identity"` + "\n" + `input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]` + "\noutput [ { name: \"OUTPUT0\"\n", "m/1/": ""},
			exit: "inferperf: REPO/m/config.pbtxt:3:27: unexpected end of file: the text stops inside a field, a { } message, a [ ] list or a string"},
		{name: "malformed config", files: map[string]string{"m/config.pbtxt": `backend: "identity"` + "\nmax_batch_size: 8 }\n" + tensors, "m/1/": ""},
			exit: "inferperf: REPO/m/config.pbtxt:2:19: syntax error: invalid field name: }"},
		{name: "unknown backend", files: map[string]string{"m/config.pbtxt": `backend: "onnxruntime"` + "\n" + tensors, "m/1/": ""},
			exit: `inferperf: REPO/m/config.pbtxt: model "m": unknown backend "onnxruntime": the reference server runs only its built-in backends delay, dense, identity, repeat, simple`},
		{name: "config the backend refuses", files: map[string]string{"m/config.pbtxt": `backend: "simple"` + "\n" + tensors, "m/1/": ""},
			exit: `inferperf: REPO/m/config.pbtxt: model "m": backend "simple" needs inputs INPUT0 and INPUT1 and outputs OUTPUT0 and OUTPUT1, all TYPE_INT32 with the same dims: it has 1 inputs and 1 outputs`},
		{name: "examples/models", repo: filepath.Join("..", "..", "examples", "models"),
			index: `[{"name":"delay","version":"1","state":"READY"},{"name":"dense","version":"1","state":"READY"},{"name":"identity","version":"1","state":"READY"},{"name":"repeat","version":"1","state":"READY"},{"name":"simple","version":"1","state":"READY"}]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			repo := c.repo
			if repo == "" {
				repo = writeRepo(t, c.files)
			}
			args := append([]string{"serve", "--model-repository", repo, "--http-port", "0", "--grpc-port", "0", "--allow-metrics=false"}, c.args...)
			expand := func(s string) string { return strings.ReplaceAll(s, "REPO", repo) }
			code, index, stderr := runServe(t, args)
			if c.exit != "" {
				if code != 1 || stderr != expand(c.exit)+"\n" {
					t.Errorf("serve: exit %d, stderr:\n%s\nwant exit 1 and the one line\n%s", code, stderr, expand(c.exit))
				}
				return
			}
			if code != 0 || index != expand(c.index) {
				t.Errorf("serve: exit %d, repository index\n%s\nwant exit 0 and\n%s\nstderr:\n%s", code, index, expand(c.index), stderr)
			}
			if c.warn != "" && !strings.Contains(stderr, expand(c.warn)) {
				t.Errorf("serve's stderr lacks\n%s\nin\n%s", expand(c.warn), stderr)
			}
		})
	}
}

// runServe runs serve with args. When it starts (it prints its endpoints), runServe reads the
// repository index over HTTP and stops it with SIGTERM; when it exits instead, index is empty.
// It returns serve's exit code, the index and all serve wrote to stderr.
func runServe(t *testing.T, args []string) (code int, index, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first line, or end of file when serve exits without listening.
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	var ierr error
	if m := regexp.MustCompile(`HTTP (\S+),`).FindStringSubmatch(line); m != nil {
		var resp *http.Response
		if resp, ierr = http.Post("http://"+m[1]+"/v2/repository/index", "application/json", nil); ierr == nil {
			var body []byte
			body, ierr = io.ReadAll(resp.Body)
			resp.Body.Close()
			index = string(body)
		}
		cmd.Process.Signal(syscall.SIGTERM)
	} else if line != "" {
		cmd.Process.Kill()
		ierr = fmt.Errorf("serve printed %q", line)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		t.Fatalf("%v; stderr:\n%s", ierr, errb.String())
	}
	return code, index, errb.String()
}

// writeRepo writes a model repository into a temporary directory (see testfs.Write).
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	testfs.Write(t, dir, files)
	return dir
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
