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
	// usage, on a command-line error, names the subcommand whose --help lists the options
	// ("profile", "tune"); run prints where to look after the error.
	usage string
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
	prog, asPerfAnalyzer := "inferperf", filepath.Base(args[0]) == "perf_analyzer"
	if asPerfAnalyzer {
		prog = "perf_analyzer"
		root.SetArgs(append([]string{"profile"}, args[1:]...))
	}
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
	var ee *exitError
	if errors.As(err, &ee) {
		switch {
		case asPerfAnalyzer && ee.usage != "":
			fmt.Fprintln(os.Stderr, "Run 'perf_analyzer --help' for the options.")
		case ee.usage != "":
			fmt.Fprintf(os.Stderr, "Run 'inferperf %s --help' for the options.\n", ee.usage)
		}
		return ee.code
	}
	return 1
}
