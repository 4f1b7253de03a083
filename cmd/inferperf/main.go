// Command inferperf measures inference servers that speak KServe v2 / the Open Inference Protocol
// (Triton, KServe, ...) and embeds a reference server to measure when there is none.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code out of a command.
type exitError struct {
	code int
	err  error
	// usage marks a command-line error: it is followed by where the options are listed.
	usage bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "inferperf",
		Short:         "Load generator and reference server for KServe v2 / Triton inference servers",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version, // --version prints "inferperf version X"
	}
	root.AddCommand(newServeCmd(), newProfileCmd(), newReportCmd(), newTuneCmd())
	return root
}

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args[1:])
	// Installed or linked as perf_analyzer, the binary is `inferperf profile`, and speaks as
	// perf_analyzer: its errors carry that name, and the help it points to is its own.
	prog, help := "inferperf", "inferperf profile --help"
	if filepath.Base(args[0]) == "perf_analyzer" {
		prog, help = "perf_analyzer", "perf_analyzer --help"
		root.SetArgs(append([]string{"profile"}, args[1:]...))
	}
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.usage {
			fmt.Fprintf(os.Stderr, "Run '%s' for the options.\n", help)
		}
		return ee.code
	}
	return 1
}
