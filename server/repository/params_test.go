package repository_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"inferperf/server"
	"inferperf/server/repository"
)

// TestServerLoadsBuiltins: the built-in repository loads whole, its parameters included, with
// Triton's --exit-on-error.
func TestServerLoadsBuiltins(t *testing.T) {
	s, err := server.New(context.Background(), server.Options{ExitOnError: true})
	if err != nil {
		t.Fatalf("serving the built-in repository: %v", err)
	}
	s.Close(context.Background())
}

// TestServerRefusesParameters: a parameter the backend does not read, or a value it cannot parse,
// fails the load with one line naming the config file, the model, the key and, for an unknown
// key, the keys the backend reads; fault_* keys are still checked by the fault injector.
func TestServerRefusesParameters(t *testing.T) {
	const delay = `backend: "delay"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]
`
	param := func(k, v string) string {
		return `parameters { key: "` + k + `" value { string_value: "` + v + `" } }` + "\n"
	}
	for _, c := range []struct {
		name, params string
		// want begins the error, REPO standing for the repository; "" for success. Only the
		// fault injector's own message is left open after its start.
		want string
	}{
		{"known keys", param("fixed_delay_us", "10") + param("per_item_delay_us", "2.5") + param("fault_error_rate", "0"), ""},
		{"typo", param("fixed_delay_uss", "5000"),
			`REPO/m/config.pbtxt: model "m": unknown parameter "fixed_delay_uss" (did you mean "fixed_delay_us"?): backend "delay" reads fixed_delay_us, per_item_delay_us and the fault_* keys`},
		{"not a number", param("fixed_delay_us", "5ms"),
			`REPO/m/config.pbtxt: model "m": parameter fixed_delay_us: "5ms" is not a non-negative number (of microseconds) below a day`},
		{"unknown fault", param("fault_eror_rate", "0.1"),
			`REPO/m/config.pbtxt: parameter "fault_eror_rate": unknown fault`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "m", "1"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "m", "config.pbtxt"), []byte(delay+c.params), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := repository.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			s, err := server.New(context.Background(), server.Options{Repository: r, ExitOnError: true})
			if err == nil {
				s.Close(context.Background())
			}
			switch want := strings.ReplaceAll(c.want, "REPO", dir); {
			case want == "" && err != nil:
				t.Fatalf("loading m: %v; want success", err)
			case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
				t.Fatalf("loading m: error %v\nwant it to begin %s", err, want)
			}
		})
	}
}
